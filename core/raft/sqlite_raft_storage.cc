#include "raft/sqlite_raft_storage.h"

#include <errno.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "storage/durable_file.h"
#include "storage/sqlite_backend.h"

namespace natcd::raft {
namespace {

// raft_state rows "member/<16 hex digits of the ID>" hold member names.
constexpr const char* kMemberNamePrefix = "member/";
// DO NOT CHANGE: persisted. "member-urls/<id in hex>": the member's client
// URLs, one per line.
constexpr const char* kMemberUrlsPrefix = "member-urls/";

// The log is kept in runs of consecutive entries, one row per Append (so
// per Ready): a row per entry cost a leader or single member a tenth of its
// CPU under write load, and a follower an eighth (the insert, and the delete
// again at compaction).
constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS raft_log_run (
  first_idx INTEGER PRIMARY KEY,
  last_idx INTEGER NOT NULL,
  entries BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS raft_state (name TEXT PRIMARY KEY, value BLOB NOT NULL) WITHOUT ROWID;
)sql";

void PutU32(std::string* out, uint32_t v) {
  for (int i = 0; i < 4; i++) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void PutU64(std::string* out, uint64_t v) {
  for (int i = 0; i < 8; i++) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
bool GetU64(std::string_view in, size_t* pos, uint64_t* v) {
  if (*pos + 8 > in.size()) return false;
  *v = 0;
  for (int i = 0; i < 8; i++) {
    *v |= static_cast<uint64_t>(static_cast<uint8_t>(in[*pos + i])) << (8 * i);
  }
  *pos += 8;
  return true;
}
bool GetU32(std::string_view in, size_t* pos, uint32_t* v) {
  if (*pos + 4 > in.size()) return false;
  *v = 0;
  for (int i = 0; i < 4; i++) {
    *v |= static_cast<uint32_t>(static_cast<uint8_t>(in[*pos + i])) << (8 * i);
  }
  *pos += 4;
  return true;
}

// A run's entries, each: term (u64), type (u8), data size (u32), data; all
// little-endian. Their indexes are the run's first_idx, first_idx + 1, ...
void EncodeRunEntry(const Entry& e, std::string* out) {
  PutU64(out, e.term);
  out->push_back(static_cast<char>(e.type));
  PutU32(out, static_cast<uint32_t>(e.data.size()));
  out->append(e.data);
}
// Decodes the entry at *pos into *entry (its index: `index`), advancing *pos.
bool DecodeRunEntry(std::string_view in, size_t* pos, uint64_t index, Entry* entry) {
  uint64_t term = 0;
  uint32_t size = 0;
  if (!GetU64(in, pos, &term) || *pos >= in.size()) return false;
  const auto type = static_cast<uint8_t>(in[(*pos)++]);
  if (!GetU32(in, pos, &size) || size > in.size() - *pos) return false;
  if (type != static_cast<uint8_t>(EntryType::kNormal) &&
      type != static_cast<uint8_t>(EntryType::kConfChange)) {
    return false;
  }
  entry->index = index;
  entry->term = term;
  entry->type = static_cast<EntryType>(type);
  entry->data.assign(in.substr(*pos, size));
  *pos += size;
  return true;
}

void PutIds(std::string* out, const std::vector<NodeId>& ids) {
  PutU64(out, ids.size());
  for (NodeId id : ids) PutU64(out, id);
}
bool GetIds(const std::string& in, size_t* pos, std::vector<NodeId>* ids) {
  uint64_t n = 0;
  if (!GetU64(in, pos, &n) || n > (in.size() - *pos) / 8) return false;
  ids->resize(n);
  for (uint64_t i = 0; i < n; i++) {
    if (!GetU64(in, pos, &(*ids)[i])) return false;
  }
  return true;
}

std::string EncodeSnapshotMeta(const SnapshotMeta& meta) {
  std::string out;
  PutU64(&out, meta.index);
  PutU64(&out, meta.term);
  PutIds(&out, meta.conf_state.voters);
  PutIds(&out, meta.conf_state.learners);
  return out;
}
bool DecodeSnapshotMeta(const std::string& in, SnapshotMeta* meta) {
  size_t pos = 0;
  return GetU64(in, &pos, &meta->index) && GetU64(in, &pos, &meta->term) &&
         GetIds(in, &pos, &meta->conf_state.voters) &&
         GetIds(in, &pos, &meta->conf_state.learners) && pos == in.size();
}

class Reset {
 public:
  explicit Reset(sqlite3_stmt* stmt) : stmt_(stmt) {}
  ~Reset() { sqlite3_reset(stmt_); }

 private:
  sqlite3_stmt* stmt_;
};

std::string Column(sqlite3_stmt* stmt, int column) {
  const void* data = sqlite3_column_blob(stmt, column);
  int size = sqlite3_column_bytes(stmt, column);
  return data ? std::string(static_cast<const char*>(data), size) : std::string();
}

}  // namespace

Result<std::unique_ptr<SqliteRaftStorage>> SqliteRaftStorage::Open(SqliteBackend* backend) {
  std::unique_ptr<SqliteRaftStorage> storage(new SqliteRaftStorage(backend));
  NATCD_RETURN_IF_ERROR(storage->Init());
  NATCD_RETURN_IF_ERROR(storage->Load());
  return storage;
}

SqliteRaftStorage::~SqliteRaftStorage() {
  for (sqlite3_stmt* stmt :
       {insert_run_, run_before_, update_run_, delete_from_, delete_through_, put_state_}) {
    sqlite3_finalize(stmt);
  }
}

Status SqliteRaftStorage::Init() {
  sqlite3* db = backend_->handle();
  char* err = nullptr;
  int rc = sqlite3_exec(db, kSchema, nullptr, nullptr, &err);
  sqlite3_free(err);
  if (rc != SQLITE_OK) return SqliteStatus(db, rc, "create raft tables");
  auto prepare = [db](const char* sql, sqlite3_stmt** stmt) {
    int rc = sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, stmt, nullptr);
    return rc == SQLITE_OK ? Status::OK() : SqliteStatus(db, rc, sql);
  };
  NATCD_RETURN_IF_ERROR(
      prepare("INSERT OR REPLACE INTO raft_log_run (first_idx, last_idx, entries) VALUES (?, ?, ?)",
              &insert_run_));
  NATCD_RETURN_IF_ERROR(
      prepare("SELECT first_idx, last_idx, entries FROM raft_log_run "
              "WHERE first_idx < ? ORDER BY first_idx DESC LIMIT 1",
              &run_before_));
  NATCD_RETURN_IF_ERROR(prepare(
      "UPDATE raft_log_run SET last_idx = ?, entries = ? WHERE first_idx = ?", &update_run_));
  NATCD_RETURN_IF_ERROR(prepare("DELETE FROM raft_log_run WHERE first_idx >= ?", &delete_from_));
  // Whole runs only: a run reaching past `index` stays (Load skips what
  // it holds below the log start).
  NATCD_RETURN_IF_ERROR(prepare("DELETE FROM raft_log_run WHERE first_idx <= ?1 AND last_idx <= ?1",
                                &delete_through_));
  NATCD_RETURN_IF_ERROR(
      prepare("INSERT OR REPLACE INTO raft_state (name, value) VALUES (?, ?)", &put_state_));
  return MigrateEntryTable();
}

Status SqliteRaftStorage::Load() {
  sqlite3* db = backend_->handle();
  std::string hard_state, log_start, snapshot;
  {
    sqlite3_stmt* stmt = nullptr;
    int rc = sqlite3_prepare_v2(db, "SELECT name, value FROM raft_state", -1, &stmt, nullptr);
    if (rc != SQLITE_OK) return SqliteStatus(db, rc, "read raft state");
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
      std::string name = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
      std::string value = Column(stmt, 1);
      if (name == "hard_state") hard_state = value;
      if (name == "log_start") log_start = value;
      if (name == "snapshot") snapshot = value;
      if (name == "boot_existing") booted_over_existing_data_ = true;
      if (name.rfind(kMemberNamePrefix, 0) == 0) {
        char* end = nullptr;
        const char* hex = name.c_str() + strlen(kMemberNamePrefix);
        const NodeId id = strtoull(hex, &end, 16);
        if (end != hex && *end == '\0') member_names_[id] = value;
      }
      if (name.rfind(kMemberUrlsPrefix, 0) == 0) {
        char* end = nullptr;
        const char* hex = name.c_str() + strlen(kMemberUrlsPrefix);
        const NodeId id = strtoull(hex, &end, 16);
        if (end != hex && *end == '\0') {
          std::vector<std::string>& urls = member_client_urls_[id];
          for (size_t start = 0; start < value.size();) {
            size_t nl = value.find('\n', start);
            if (nl == std::string::npos) nl = value.size();
            if (nl > start) urls.push_back(value.substr(start, nl - start));
            start = nl + 1;
          }
        }
      }
    }
    sqlite3_finalize(stmt);
    if (rc != SQLITE_DONE) return SqliteStatus(db, rc, "read raft state");
  }
  // The entry before the first kept one becomes the in-memory dummy.
  if (!log_start.empty()) {
    size_t pos = 0;
    Snapshot start;
    if (!GetU64(log_start, &pos, &start.meta.index) || !GetU64(log_start, &pos, &start.meta.term)) {
      return Status::Corruption("raft log_start does not decode");
    }
    SnapshotMeta meta;
    if (!DecodeSnapshotMeta(snapshot, &meta)) return Status::Corruption("raft snapshot metadata");
    start.meta.conf_state = meta.conf_state;
    if (start.meta.index > 0) NATCD_RETURN_IF_ERROR(mirror_.ApplySnapshot(start));
  }
  {
    sqlite3_stmt* stmt = nullptr;
    int rc = sqlite3_prepare_v2(
        db, "SELECT first_idx, last_idx, entries FROM raft_log_run ORDER BY first_idx", -1, &stmt,
        nullptr);
    if (rc != SQLITE_OK) return SqliteStatus(db, rc, "read raft log");
    std::vector<Entry> entries;
    Status s;
    while (s.ok() && (rc = sqlite3_step(stmt)) == SQLITE_ROW) {
      const auto first = static_cast<uint64_t>(sqlite3_column_int64(stmt, 0));
      const auto last = static_cast<uint64_t>(sqlite3_column_int64(stmt, 1));
      const void* blob = sqlite3_column_blob(stmt, 2);
      const std::string_view run(static_cast<const char*>(blob),
                                 blob ? static_cast<size_t>(sqlite3_column_bytes(stmt, 2)) : 0);
      size_t pos = 0;
      for (uint64_t index = first; s.ok() && index >= first && index <= last; ++index) {
        Entry e;
        if (!DecodeRunEntry(run, &pos, index, &e)) {
          s = Status::Corruption("raft log run at " + std::to_string(first) + " does not decode");
        } else if (index < mirror_.FirstIndex()) {
          continue;  // compacted: below the log start
        } else if (!entries.empty() && index != entries.back().index + 1) {
          s = Status::Corruption("raft log has a gap before index " + std::to_string(index));
        } else {
          entries.push_back(std::move(e));
        }
      }
      if (s.ok() && (last < first || pos != run.size())) {
        s = Status::Corruption("raft log run at " + std::to_string(first) + " does not decode");
      }
    }
    sqlite3_finalize(stmt);
    NATCD_RETURN_IF_ERROR(s);
    if (rc != SQLITE_DONE) return SqliteStatus(db, rc, "read raft log");
    if (!entries.empty() && entries.front().index != mirror_.FirstIndex()) {
      return Status::Corruption("raft log starts at " + std::to_string(entries.front().index) +
                                ", expected " + std::to_string(mirror_.FirstIndex()));
    }
    NATCD_RETURN_IF_ERROR(mirror_.Append(entries));
  }
  if (!snapshot.empty()) {
    SnapshotMeta meta;
    if (!DecodeSnapshotMeta(snapshot, &meta)) return Status::Corruption("raft snapshot metadata");
    if (meta.index > mirror_.GetSnapshot().value().meta.index) {
      NATCD_RETURN_IF_ERROR(mirror_.CreateSnapshot(meta.index, meta.conf_state, ""));
    }
  }
  if (!hard_state.empty()) {
    size_t pos = 0;
    HardState hs;
    if (!GetU64(hard_state, &pos, &hs.term) || !GetU64(hard_state, &pos, &hs.vote) ||
        !GetU64(hard_state, &pos, &hs.commit)) {
      return Status::Corruption("raft hard state does not decode");
    }
    mirror_.SetHardState(hs);
  }
  return Status::OK();
}

bool SqliteRaftStorage::Initialized() const {
  return !mirror_.InitialHardState().empty() || mirror_.LastIndex() > 0;
}

Status SqliteRaftStorage::SetMemberName(NodeId id, const std::string& name) {
  char key[40];
  snprintf(key, sizeof key, "%s%016llx", kMemberNamePrefix, static_cast<unsigned long long>(id));
  NATCD_RETURN_IF_ERROR(PutState(key, name));
  member_names_[id] = name;
  return Status::OK();
}

Status SqliteRaftStorage::SetMemberClientUrls(NodeId id, const std::vector<std::string>& urls) {
  char key[40];
  snprintf(key, sizeof key, "%s%016llx", kMemberUrlsPrefix, static_cast<unsigned long long>(id));
  std::string value;
  for (const std::string& url : urls) value += url + "\n";
  NATCD_RETURN_IF_ERROR(PutState(key, value));
  member_client_urls_[id] = urls;
  return Status::OK();
}

Status SqliteRaftStorage::PutState(const char* name, const std::string& value) {
  NATCD_RETURN_IF_ERROR(backend_->BeginBatch());
  Reset reset(put_state_);
  sqlite3_bind_text(put_state_, 1, name, -1, SQLITE_STATIC);
  sqlite3_bind_blob64(put_state_, 2, value.data(), value.size(), SQLITE_STATIC);
  int rc = sqlite3_step(put_state_);
  return rc == SQLITE_DONE ? Status::OK() : SqliteStatus(backend_->handle(), rc, "put raft state");
}

Status SqliteRaftStorage::TruncateLogFrom(uint64_t index) {
  sqlite3* db = backend_->handle();
  // The run holding `index`, if it starts before it, keeps what precedes it.
  std::string kept;
  uint64_t first = 0;
  {
    Reset reset(run_before_);
    sqlite3_bind_int64(run_before_, 1, static_cast<int64_t>(index));
    int rc = sqlite3_step(run_before_);
    if (rc == SQLITE_ROW && static_cast<uint64_t>(sqlite3_column_int64(run_before_, 1)) >= index) {
      first = static_cast<uint64_t>(sqlite3_column_int64(run_before_, 0));
      const std::string run = Column(run_before_, 2);
      size_t pos = 0;
      Entry skipped;
      for (uint64_t i = first; i < index; ++i) {
        if (!DecodeRunEntry(run, &pos, i, &skipped)) {
          return Status::Corruption("raft log run at " + std::to_string(first) +
                                    " does not decode");
        }
      }
      kept = run.substr(0, pos);
    } else if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
      return SqliteStatus(db, rc, "read raft log run");
    }
  }
  if (first != 0) {
    Reset reset(update_run_);
    sqlite3_bind_int64(update_run_, 1, static_cast<int64_t>(index - 1));
    sqlite3_bind_blob64(update_run_, 2, kept.data(), kept.size(), SQLITE_STATIC);
    sqlite3_bind_int64(update_run_, 3, static_cast<int64_t>(first));
    int rc = sqlite3_step(update_run_);
    if (rc != SQLITE_DONE) return SqliteStatus(db, rc, "truncate raft log run");
  }
  Reset reset(delete_from_);
  sqlite3_bind_int64(delete_from_, 1, static_cast<int64_t>(index));
  int rc = sqlite3_step(delete_from_);
  return rc == SQLITE_DONE ? Status::OK() : SqliteStatus(db, rc, "truncate raft log");
}

Status SqliteRaftStorage::DeleteLogThrough(uint64_t index) {
  Reset reset(delete_through_);
  sqlite3_bind_int64(delete_through_, 1, static_cast<int64_t>(index));
  int rc = sqlite3_step(delete_through_);
  return rc == SQLITE_DONE ? Status::OK()
                           : SqliteStatus(backend_->handle(), rc, "compact raft log");
}

Status SqliteRaftStorage::SaveLogStart() {
  std::string start;
  uint64_t index = mirror_.FirstIndex() - 1;
  PutU64(&start, index);
  PutU64(&start, mirror_.Term(index).value());
  return PutState("log_start", start);
}

Status SqliteRaftStorage::Append(const std::vector<Entry>& entries) {
  if (entries.empty()) return Status::OK();
  NATCD_RETURN_IF_ERROR(backend_->BeginBatch());
  // What the mirror keeps is what the table must hold: the same rule
  // (skip compacted entries, replace a conflicting suffix).
  const uint64_t first = mirror_.FirstIndex();
  const uint64_t last = mirror_.LastIndex();
  NATCD_RETURN_IF_ERROR(mirror_.Append(entries));
  const uint64_t from = std::max(first, entries.front().index);
  if (entries.back().index < from) return Status::OK();  // all compacted already
  if (from <= last) NATCD_RETURN_IF_ERROR(TruncateLogFrom(from));
  run_.clear();
  for (const Entry& e : entries) {
    if (e.index >= from) EncodeRunEntry(e, &run_);
  }
  return InsertRun(from, entries.back().index, run_);
}

Status SqliteRaftStorage::InsertRun(uint64_t first, uint64_t last, const std::string& entries) {
  Reset reset(insert_run_);
  sqlite3_bind_int64(insert_run_, 1, static_cast<int64_t>(first));
  sqlite3_bind_int64(insert_run_, 2, static_cast<int64_t>(last));
  sqlite3_bind_blob64(insert_run_, 3, entries.data(), entries.size(), SQLITE_STATIC);
  int rc = sqlite3_step(insert_run_);
  return rc == SQLITE_DONE ? Status::OK()
                           : SqliteStatus(backend_->handle(), rc, "append raft entries");
}

// Before runs the log was a row per entry, in raft_log: read once,
// rewritten as runs and dropped, in one transaction.
Status SqliteRaftStorage::MigrateEntryTable() {
  sqlite3* db = backend_->handle();
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(
      db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'raft_log'", -1, &stmt,
      nullptr);
  if (rc != SQLITE_OK) return SqliteStatus(db, rc, "look for the raft entry table");
  rc = sqlite3_step(stmt);
  sqlite3_finalize(stmt);
  if (rc == SQLITE_DONE) return Status::OK();  // nothing to migrate
  if (rc != SQLITE_ROW) return SqliteStatus(db, rc, "look for the raft entry table");

  NATCD_RETURN_IF_ERROR(backend_->BeginBatch());
  rc = sqlite3_prepare_v2(db, "SELECT idx, term, type, data FROM raft_log ORDER BY idx", -1, &stmt,
                          nullptr);
  Status s = rc == SQLITE_OK ? Status::OK() : SqliteStatus(db, rc, "read the raft entry table");
  // Consecutive entries become one run (a gap starts another: Load reports it).
  constexpr size_t kRunBytesMax = 1 << 20;
  std::string run;
  uint64_t first = 0;
  uint64_t last = 0;
  while (s.ok() && (rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    Entry e;
    e.index = static_cast<uint64_t>(sqlite3_column_int64(stmt, 0));
    e.term = static_cast<uint64_t>(sqlite3_column_int64(stmt, 1));
    e.type = static_cast<EntryType>(sqlite3_column_int(stmt, 2));
    e.data = Column(stmt, 3);
    if (!run.empty() && (e.index != last + 1 || run.size() >= kRunBytesMax)) {
      s = InsertRun(first, last, run);
      run.clear();
    }
    if (run.empty()) first = e.index;
    last = e.index;
    EncodeRunEntry(e, &run);
  }
  if (s.ok() && rc != SQLITE_DONE) s = SqliteStatus(db, rc, "read the raft entry table");
  sqlite3_finalize(stmt);
  if (s.ok() && !run.empty()) s = InsertRun(first, last, run);
  if (s.ok() &&
      (rc = sqlite3_exec(db, "DROP TABLE raft_log", nullptr, nullptr, nullptr)) != SQLITE_OK) {
    s = SqliteStatus(db, rc, "drop the raft entry table");
  }
  if (!s.ok()) {
    backend_->RollbackBatch();
    return s;
  }
  return backend_->CommitBatch();
}

Status SqliteRaftStorage::SetHardState(const HardState& hs) {
  std::string value;
  PutU64(&value, hs.term);
  PutU64(&value, hs.vote);
  PutU64(&value, hs.commit);
  NATCD_RETURN_IF_ERROR(PutState("hard_state", value));
  mirror_.SetHardState(hs);
  return Status::OK();
}

Status SqliteRaftStorage::CreateSnapshot(const SnapshotMeta& meta, uint64_t compact_to) {
  NATCD_RETURN_IF_ERROR(mirror_.CreateSnapshot(meta.index, meta.conf_state, ""));
  SnapshotMeta stored = mirror_.GetSnapshot().value().meta;
  NATCD_RETURN_IF_ERROR(PutState("snapshot", EncodeSnapshotMeta(stored)));
  if (compact_to > mirror_.FirstIndex() - 1 && compact_to <= stored.index) {
    NATCD_RETURN_IF_ERROR(mirror_.Compact(compact_to));
    NATCD_RETURN_IF_ERROR(DeleteLogThrough(compact_to));
    NATCD_RETURN_IF_ERROR(SaveLogStart());
  } else if (mirror_.FirstIndex() == 1) {
    NATCD_RETURN_IF_ERROR(SaveLogStart());
  }
  return Status::OK();
}

Status SqliteRaftStorage::ApplySnapshot(const SnapshotMeta& meta) {
  Snapshot snapshot;
  snapshot.meta = meta;
  NATCD_RETURN_IF_ERROR(mirror_.ApplySnapshot(snapshot));
  NATCD_RETURN_IF_ERROR(backend_->BeginBatch());
  NATCD_RETURN_IF_ERROR(TruncateLogFrom(0));
  NATCD_RETURN_IF_ERROR(PutState("snapshot", EncodeSnapshotMeta(meta)));
  return SaveLogStart();
}

Status SqliteRaftStorage::PrepareReceivedSnapshot(const std::string& path, const SnapshotMeta& meta,
                                                  const HardState& keep_hard_state) {
  // SqliteBackend::Open would make up an empty database in its place.
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    int err = errno;
    if (err != ENOENT) return ErrnoStatus("stat", path, err);
    return Status::NotFound("ErrNoSnapshot", "received snapshot " + path + " does not exist");
  }
  // sync: this file becomes the member's database; what is prepared here
  // must be on disk before the member acts on it.
  Result<std::unique_ptr<SqliteBackend>> opened = SqliteBackend::Open(BackendOptions{path, true});
  if (!opened.ok()) return opened.status();
  SqliteBackend& backend = *opened.value();
  Result<int64_t> applied = backend.GetMeta(SqliteBackend::kMetaAppliedIndex, 0);
  if (!applied.ok()) return applied.status();
  if (static_cast<uint64_t>(*applied) != meta.index) {
    return Status::Corruption("received snapshot " + path + " holds applied index " +
                              std::to_string(*applied) + ", its metadata says " +
                              std::to_string(meta.index));
  }
  sqlite3* db = backend.handle();
  auto exec = [db](const char* sql) {
    char* err = nullptr;
    int rc = sqlite3_exec(db, sql, nullptr, nullptr, &err);
    sqlite3_free(err);
    return rc == SQLITE_OK ? Status::OK() : SqliteStatus(db, rc, sql);
  };
  auto put = [db](const char* name, const std::string& value) {
    sqlite3_stmt* stmt = nullptr;
    int rc = sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO raft_state (name, value) VALUES (?, ?)",
                                -1, &stmt, nullptr);
    if (rc == SQLITE_OK) {
      sqlite3_bind_text(stmt, 1, name, -1, SQLITE_STATIC);
      sqlite3_bind_blob64(stmt, 2, value.data(), value.size(), SQLITE_STATIC);
      rc = sqlite3_step(stmt);
    }
    sqlite3_finalize(stmt);
    return rc == SQLITE_DONE ? Status::OK() : SqliteStatus(db, rc, "put raft state");
  };
  std::string log_start;
  PutU64(&log_start, meta.index);
  PutU64(&log_start, meta.term);
  std::string hard_state;
  PutU64(&hard_state, keep_hard_state.term);
  PutU64(&hard_state, keep_hard_state.vote);
  PutU64(&hard_state, std::max(keep_hard_state.commit, meta.index));

  // The copy of a leader always has the Raft tables; a database written
  // before natcd had Raft would not, and then they start empty.
  NATCD_RETURN_IF_ERROR(exec(kSchema));
  NATCD_RETURN_IF_ERROR(backend.BeginBatch());
  Status s = exec("DELETE FROM raft_log_run");
  if (s.ok()) s = exec("DROP TABLE IF EXISTS raft_log");  // a leader from before runs
  if (s.ok()) s = exec("DELETE FROM raft_state WHERE name = 'boot_existing'");
  if (s.ok()) s = put("snapshot", EncodeSnapshotMeta(meta));
  if (s.ok()) s = put("log_start", log_start);
  if (s.ok()) s = put("hard_state", hard_state);
  if (s.ok()) s = backend.CommitBatch();
  if (!s.ok()) backend.RollbackBatch();
  return s;
}

Status SqliteRaftStorage::MarkBootedOverExistingData() {
  NATCD_RETURN_IF_ERROR(PutState("boot_existing", "1"));
  booted_over_existing_data_ = true;
  return Status::OK();
}

}  // namespace natcd::raft
