#include "storage/sqlite_backend.h"

#include <sqlite3.h>

#include <string>

namespace natcd {
namespace {

// Binds a byte string; SQLITE_STATIC is safe because every statement is
// stepped and reset before the bound buffer goes away.
int BindBlob(sqlite3_stmt* stmt, int index, std::string_view bytes) {
  return sqlite3_bind_blob64(stmt, index, bytes.data(), bytes.size(), SQLITE_STATIC);
}

std::string ColumnBlob(sqlite3_stmt* stmt, int column) {
  const void* data = sqlite3_column_blob(stmt, column);
  int size = sqlite3_column_bytes(stmt, column);
  return data ? std::string(static_cast<const char*>(data), size) : std::string();
}

// Rows are read with the column order of kSelectRow.
void ReadRow(sqlite3_stmt* stmt, bool with_value, RevisionRow* row) {
  row->rev = sqlite3_column_int64(stmt, 0);
  row->sub = sqlite3_column_int64(stmt, 1);
  row->kv.key = ColumnBlob(stmt, 2);
  if (with_value) row->kv.value = ColumnBlob(stmt, 3);
  row->kv.create_revision = sqlite3_column_int64(stmt, 4);
  row->kv.version = sqlite3_column_int64(stmt, 5);
  row->kv.lease = sqlite3_column_int64(stmt, 6);
  row->tombstone = sqlite3_column_int64(stmt, 7) != 0;
  row->kv.mod_revision = row->rev;
}

class StmtReset {
 public:
  explicit StmtReset(sqlite3_stmt* stmt) : stmt_(stmt) {}
  // Every statement rebinds all its parameters before each step, so the
  // bindings need no clearing (SQLITE_STATIC blobs are never read again).
  ~StmtReset() { sqlite3_reset(stmt_); }

 private:
  sqlite3_stmt* stmt_;
};

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS kv (
  rev INTEGER NOT NULL,
  sub INTEGER NOT NULL,
  key BLOB NOT NULL,
  value BLOB,
  create_rev INTEGER NOT NULL,
  version INTEGER NOT NULL,
  lease INTEGER NOT NULL,
  tombstone INTEGER NOT NULL,
  PRIMARY KEY (rev, sub)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS lease (
  id INTEGER PRIMARY KEY,
  ttl INTEGER NOT NULL,
  remaining_ms INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS request (
  id BLOB PRIMARY KEY,
  expires_ms INTEGER NOT NULL,
  outcome BLOB NOT NULL
) WITHOUT ROWID;
)sql";

constexpr const char* kSelectRow =
    "SELECT rev, sub, key, value, create_rev, version, lease, tombstone FROM kv";

}  // namespace

Result<std::unique_ptr<SqliteBackend>> SqliteBackend::Open(const BackendOptions& options) {
  std::unique_ptr<SqliteBackend> backend(new SqliteBackend());
  Status s = backend->Init(options);
  if (!s.ok()) return s;
  return backend;
}

Status SqliteBackend::Init(const BackendOptions& options) {
  int rc =
      sqlite3_open_v2(options.path.c_str(), &db_,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) return SqliteStatus(db_, rc, "open");
  sqlite3_extended_result_codes(db_, 1);
  // WAL: one fsync of the log per commit, readers never block the writer.
  // synchronous=FULL: a commit that returned is on disk (the ack promise).
  // (synchronous first: switching to WAL already syncs when it is FULL.)
  sync_ = options.sync;
  NATCD_RETURN_IF_ERROR(Exec(options.sync ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=OFF"));
  NATCD_RETURN_IF_ERROR(Exec("PRAGMA journal_mode=WAL"));
  NATCD_RETURN_IF_ERROR(Exec(("PRAGMA cache_size=-" + std::to_string(options.cache_kib)).c_str()));
  NATCD_RETURN_IF_ERROR(Exec("PRAGMA temp_store=MEMORY"));
  // A bigger checkpoint threshold means fewer, larger WAL checkpoints inside
  // commits; 4096 pages is 16 MiB of WAL.
  NATCD_RETURN_IF_ERROR(Exec("PRAGMA wal_autocheckpoint=4096"));
  NATCD_RETURN_IF_ERROR(Exec(kSchema));

  NATCD_RETURN_IF_ERROR(Prepare("BEGIN IMMEDIATE", &begin_));
  NATCD_RETURN_IF_ERROR(Prepare("COMMIT", &commit_));
  NATCD_RETURN_IF_ERROR(Prepare("ROLLBACK", &rollback_));
  NATCD_RETURN_IF_ERROR(
      Prepare("INSERT INTO kv (rev, sub, key, value, create_rev, version, lease, tombstone) "
              "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
              &insert_row_));
  NATCD_RETURN_IF_ERROR(Prepare("DELETE FROM kv WHERE rev = ? AND sub = ?", &delete_row_));
  NATCD_RETURN_IF_ERROR(
      Prepare((std::string(kSelectRow) + " WHERE rev = ? AND sub = ?").c_str(), &get_row_));
  NATCD_RETURN_IF_ERROR(Prepare(
      "INSERT OR REPLACE INTO lease (id, ttl, remaining_ms) VALUES (?, ?, ?)", &put_lease_));
  NATCD_RETURN_IF_ERROR(Prepare("DELETE FROM lease WHERE id = ?", &delete_lease_));
  NATCD_RETURN_IF_ERROR(
      Prepare("INSERT OR REPLACE INTO meta (name, value) VALUES (?, ?)", &set_meta_));
  NATCD_RETURN_IF_ERROR(Prepare("SELECT value FROM meta WHERE name = ?", &get_meta_));
  NATCD_RETURN_IF_ERROR(Prepare(
      "INSERT OR REPLACE INTO request (id, expires_ms, outcome) VALUES (?, ?, ?)", &put_request_));
  NATCD_RETURN_IF_ERROR(Prepare("DELETE FROM request WHERE id = ?", &delete_request_));
  // Asked on every write turn (the backend quota): prepared once, since
  // preparing the pragma's table-valued form costs more than the put.
  NATCD_RETURN_IF_ERROR(Prepare("PRAGMA page_count", &page_count_));
  NATCD_RETURN_IF_ERROR(Prepare("PRAGMA page_size", &page_size_));

  Result<int64_t> version = GetMeta("schema_version", 0);
  if (!version.ok()) return version.status();
  if (*version == 0) {
    NATCD_RETURN_IF_ERROR(BeginBatch());
    NATCD_RETURN_IF_ERROR(SetMeta("schema_version", kSchemaVersion));
    NATCD_RETURN_IF_ERROR(CommitBatch());
  } else if (*version != kSchemaVersion) {
    return Status::Corruption("database schema version " + std::to_string(*version) + " is not " +
                              std::to_string(kSchemaVersion));
  }
  return Status::OK();
}

SqliteBackend::~SqliteBackend() {
  if (in_batch_) RollbackBatch();
  for (sqlite3_stmt* stmt :
       {begin_, commit_, rollback_, insert_row_, delete_row_, get_row_, put_lease_, delete_lease_,
        set_meta_, get_meta_, put_request_, delete_request_, page_count_, page_size_}) {
    sqlite3_finalize(stmt);
  }
  sqlite3_close(db_);
}

Status SqliteBackend::Exec(const char* sql) {
  char* err = nullptr;
  int rc = sqlite3_exec(db_, sql, nullptr, nullptr, &err);
  sqlite3_free(err);
  return rc == SQLITE_OK ? Status::OK() : SqliteStatus(db_, rc, sql);
}

Status SqliteBackend::Prepare(const char* sql, sqlite3_stmt** stmt) {
  int rc = sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, stmt, nullptr);
  return rc == SQLITE_OK ? Status::OK() : SqliteStatus(db_, rc, sql);
}

Status SqliteBackend::Error(const char* what) const {
  return SqliteStatus(db_, sqlite3_errcode(db_), what);
}

Status SqliteBackend::BeginBatch() {
  if (in_batch_) return Status::OK();
  StmtReset reset(begin_);
  if (sqlite3_step(begin_) != SQLITE_DONE) return Error("begin");
  in_batch_ = true;
  return Status::OK();
}

Status SqliteBackend::SkipSyncOfNextCommit() {
  if (in_batch_ || !sync_ || !commits_synced_ || skipping_sync_) return Status::OK();
  NATCD_RETURN_IF_ERROR(Exec("PRAGMA synchronous=NORMAL"));
  skipping_sync_ = true;
  return Status::OK();
}

Status SqliteBackend::SyncNextCommit() {
  if (in_batch_) {
    return Status::Internal("a synced commit must be chosen before a batch opens");
  }
  if (!sync_ || commits_synced_ || skipping_sync_) return Status::OK();
  NATCD_RETURN_IF_ERROR(Exec("PRAGMA synchronous=FULL"));
  skipping_sync_ = true;
  return Status::OK();
}

Status SqliteBackend::EndSkipSync() {
  if (!skipping_sync_ || in_batch_) return Status::OK();
  skipping_sync_ = false;
  return Exec(commits_synced_ ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL");
}

Status SqliteBackend::SetCommitsSynced(bool synced) {
  if (in_batch_) {
    return Status::Internal("the commit mode changes between batches only");
  }
  commits_synced_ = synced;
  skipping_sync_ = false;
  if (!sync_) return Status::OK();
  return Exec(synced ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL");
}

Status SqliteBackend::CommitBatch() {
  if (!in_batch_) return Status::OK();
  int rc;
  {
    StmtReset reset(commit_);
    rc = sqlite3_step(commit_);
  }
  if (rc != SQLITE_DONE) {
    Status s = Error("commit");
    RollbackBatch();
    return s;
  }
  in_batch_ = false;
  return EndSkipSync();
}

void SqliteBackend::RollbackBatch() {
  if (!in_batch_) return;
  StmtReset reset(rollback_);
  sqlite3_step(rollback_);
  in_batch_ = false;
}

Status SqliteBackend::InsertRow(int64_t rev, int64_t sub, bool tombstone, const KeyValue& kv) {
  StmtReset reset(insert_row_);
  sqlite3_bind_int64(insert_row_, 1, rev);
  sqlite3_bind_int64(insert_row_, 2, sub);
  BindBlob(insert_row_, 3, kv.key);
  if (tombstone) {
    sqlite3_bind_null(insert_row_, 4);
  } else {
    BindBlob(insert_row_, 4, kv.value);
  }
  sqlite3_bind_int64(insert_row_, 5, tombstone ? 0 : kv.create_revision);
  sqlite3_bind_int64(insert_row_, 6, tombstone ? 0 : kv.version);
  sqlite3_bind_int64(insert_row_, 7, tombstone ? 0 : kv.lease);
  sqlite3_bind_int64(insert_row_, 8, tombstone ? 1 : 0);
  return sqlite3_step(insert_row_) == SQLITE_DONE ? Status::OK() : Error("insert kv");
}

Status SqliteBackend::DeleteRow(int64_t rev, int64_t sub) {
  StmtReset reset(delete_row_);
  sqlite3_bind_int64(delete_row_, 1, rev);
  sqlite3_bind_int64(delete_row_, 2, sub);
  return sqlite3_step(delete_row_) == SQLITE_DONE ? Status::OK() : Error("delete kv");
}

Status SqliteBackend::PutLease(const LeaseRow& lease) {
  StmtReset reset(put_lease_);
  sqlite3_bind_int64(put_lease_, 1, lease.id);
  sqlite3_bind_int64(put_lease_, 2, lease.ttl_s);
  sqlite3_bind_int64(put_lease_, 3, lease.remaining_ms);
  return sqlite3_step(put_lease_) == SQLITE_DONE ? Status::OK() : Error("put lease");
}

Status SqliteBackend::DeleteLease(int64_t id) {
  StmtReset reset(delete_lease_);
  sqlite3_bind_int64(delete_lease_, 1, id);
  return sqlite3_step(delete_lease_) == SQLITE_DONE ? Status::OK() : Error("delete lease");
}

Status SqliteBackend::SetMeta(std::string_view name, int64_t value) {
  StmtReset reset(set_meta_);
  sqlite3_bind_text(set_meta_, 1, name.data(), static_cast<int>(name.size()), SQLITE_STATIC);
  sqlite3_bind_int64(set_meta_, 2, value);
  return sqlite3_step(set_meta_) == SQLITE_DONE ? Status::OK() : Error("set meta");
}

Status SqliteBackend::PutRequest(const RequestRow& row) {
  StmtReset reset(put_request_);
  BindBlob(put_request_, 1, row.id);
  sqlite3_bind_int64(put_request_, 2, row.expires_ms);
  BindBlob(put_request_, 3, row.outcome);
  return sqlite3_step(put_request_) == SQLITE_DONE ? Status::OK() : Error("put request");
}

Status SqliteBackend::DeleteRequest(const std::string& id) {
  StmtReset reset(delete_request_);
  BindBlob(delete_request_, 1, id);
  return sqlite3_step(delete_request_) == SQLITE_DONE ? Status::OK() : Error("delete request");
}

Status SqliteBackend::ScanRequests(const std::function<void(RequestRow&&)>& visit) {
  sqlite3_stmt* stmt = nullptr;
  NATCD_RETURN_IF_ERROR(Prepare("SELECT id, expires_ms, outcome FROM request", &stmt));
  int rc;
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    visit(RequestRow{ColumnBlob(stmt, 0), sqlite3_column_int64(stmt, 1), ColumnBlob(stmt, 2)});
  }
  Status s = rc == SQLITE_DONE ? Status::OK() : Error("scan request");
  sqlite3_finalize(stmt);
  return s;
}

Result<int64_t> SqliteBackend::GetMeta(std::string_view name, int64_t default_value) {
  StmtReset reset(get_meta_);
  sqlite3_bind_text(get_meta_, 1, name.data(), static_cast<int>(name.size()), SQLITE_STATIC);
  int rc = sqlite3_step(get_meta_);
  if (rc == SQLITE_ROW) return sqlite3_column_int64(get_meta_, 0);
  if (rc == SQLITE_DONE) return default_value;
  return Error("get meta");
}

Result<RevisionRow> SqliteBackend::GetRow(int64_t rev, int64_t sub) {
  StmtReset reset(get_row_);
  sqlite3_bind_int64(get_row_, 1, rev);
  sqlite3_bind_int64(get_row_, 2, sub);
  int rc = sqlite3_step(get_row_);
  if (rc == SQLITE_DONE) {
    return Status::NotFound("ErrRevisionNotFound", "no row at revision " + std::to_string(rev) +
                                                       "." + std::to_string(sub));
  }
  if (rc != SQLITE_ROW) return Error("get kv");
  RevisionRow row;
  ReadRow(get_row_, true, &row);
  return row;
}

Status SqliteBackend::ScanRows(int64_t from_rev, const std::function<bool(RevisionRow&&)>& visit,
                               bool with_values) {
  // A fresh statement: scans may nest inside other statements' use.
  std::string sql = std::string(kSelectRow) + " WHERE rev >= ? ORDER BY rev, sub";
  sqlite3_stmt* stmt = nullptr;
  NATCD_RETURN_IF_ERROR(Prepare(sql.c_str(), &stmt));
  sqlite3_bind_int64(stmt, 1, from_rev);
  int rc;
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    RevisionRow row;
    ReadRow(stmt, with_values, &row);
    if (!visit(std::move(row))) {
      rc = SQLITE_DONE;
      break;
    }
  }
  Status s = rc == SQLITE_DONE ? Status::OK() : Error("scan kv");
  sqlite3_finalize(stmt);
  return s;
}

Status SqliteBackend::ScanLeases(const std::function<void(const LeaseRow&)>& visit) {
  sqlite3_stmt* stmt = nullptr;
  NATCD_RETURN_IF_ERROR(Prepare("SELECT id, ttl, remaining_ms FROM lease ORDER BY id", &stmt));
  int rc;
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    visit(LeaseRow{sqlite3_column_int64(stmt, 0), sqlite3_column_int64(stmt, 1),
                   sqlite3_column_int64(stmt, 2)});
  }
  Status s = rc == SQLITE_DONE ? Status::OK() : Error("scan lease");
  sqlite3_finalize(stmt);
  return s;
}

Result<int64_t> SqliteBackend::SizeBytes() {
  int64_t pages = 0;
  int64_t page_bytes = 0;
  for (auto [stmt, out] : {std::pair{page_count_, &pages}, std::pair{page_size_, &page_bytes}}) {
    if (sqlite3_step(stmt) != SQLITE_ROW) {
      Status s = Error("size");
      sqlite3_reset(stmt);
      return s;
    }
    *out = sqlite3_column_int64(stmt, 0);
    sqlite3_reset(stmt);
  }
  return pages * page_bytes;
}

Result<int64_t> SqliteBackend::SizeInUseBytes() {
  sqlite3_stmt* stmt = nullptr;
  NATCD_RETURN_IF_ERROR(
      Prepare("SELECT (page_count - freelist_count) * page_size "
              "FROM pragma_page_count(), pragma_freelist_count(), pragma_page_size()",
              &stmt));
  int64_t size = 0;
  int rc = sqlite3_step(stmt);
  if (rc == SQLITE_ROW) size = sqlite3_column_int64(stmt, 0);
  sqlite3_finalize(stmt);
  if (rc != SQLITE_ROW) return Error("size in use");
  return size;
}

Status SqliteBackend::Vacuum() {
  if (in_batch_) return Status::Internal("vacuum inside a batch");
  // temp_store=MEMORY (Init) would hold the whole copy in memory.
  NATCD_RETURN_IF_ERROR(Exec("PRAGMA temp_store=FILE"));
  Status s = Exec("VACUUM");
  Status restored = Exec("PRAGMA temp_store=MEMORY");
  NATCD_RETURN_IF_ERROR(s);
  NATCD_RETURN_IF_ERROR(restored);
  // The rewritten pages went through the WAL; until a checkpoint copies
  // them back the file keeps its old size (and the WAL is as large again).
  return Exec("PRAGMA wal_checkpoint(TRUNCATE)");
}

}  // namespace natcd
