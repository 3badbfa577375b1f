#include "storage/sqlite_snapshot.h"

#include <errno.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <string>

#include "storage/durable_file.h"
#include "storage/sqlite_backend.h"

namespace natcd {
namespace {

// A read-only connection, closed on every path.
class ReadOnlyDb {
 public:
  ~ReadOnlyDb() { sqlite3_close(db_); }

  Status Open(const std::string& path) {
    // NOMUTEX: the connection never leaves this function's thread.
    int rc =
        sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr);
    if (rc != SQLITE_OK) return SqliteStatus(db_, rc, ("open " + path).c_str());
    sqlite3_extended_result_codes(db_, 1);
    // A WAL reader can meet SQLITE_BUSY for a moment while the writer
    // restarts the WAL or a crashed writer's WAL is recovered: wait it out
    // rather than fail a snapshot that costs the leader nothing to retry.
    sqlite3_busy_timeout(db_, 10'000);
    return Status::OK();
  }

  sqlite3* get() const { return db_; }

 private:
  sqlite3* db_ = nullptr;
};

class Stmt {
 public:
  ~Stmt() { sqlite3_finalize(stmt_); }
  Status Prepare(sqlite3* db, const char* sql) {
    int rc = sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr);
    return rc == SQLITE_OK ? Status::OK() : SqliteStatus(db, rc, sql);
  }
  sqlite3_stmt* get() const { return stmt_; }

 private:
  sqlite3_stmt* stmt_ = nullptr;
};

Status CopyInto(const std::string& db_path, const std::string& tmp_path) {
  ReadOnlyDb db;
  NATCD_RETURN_IF_ERROR(db.Open(db_path));
  Stmt vacuum;
  NATCD_RETURN_IF_ERROR(vacuum.Prepare(db.get(), "VACUUM INTO ?1"));
  sqlite3_bind_text(vacuum.get(), 1, tmp_path.c_str(), -1, SQLITE_TRANSIENT);
  int rc = sqlite3_step(vacuum.get());
  return rc == SQLITE_DONE ? Status::OK() : SqliteStatus(db.get(), rc, "vacuum into");
}

// The applied index the copy holds. Read from the copy rather than the
// source: the source has moved on since.
Result<uint64_t> AppliedIndexOf(const std::string& path) {
  ReadOnlyDb db;
  NATCD_RETURN_IF_ERROR(db.Open(path));
  Stmt meta;
  Status s = meta.Prepare(db.get(), "SELECT value FROM meta WHERE name = ?1");
  if (!s.ok()) return Status::Corruption("not a natcd database (no meta table): " + s.ToString());
  const std::string_view name = SqliteBackend::kMetaAppliedIndex;
  sqlite3_bind_text(meta.get(), 1, name.data(), static_cast<int>(name.size()), SQLITE_STATIC);
  int rc = sqlite3_step(meta.get());
  if (rc == SQLITE_DONE) return uint64_t{0};  // never applied a Raft entry
  if (rc != SQLITE_ROW) return SqliteStatus(db.get(), rc, "read applied index");
  int64_t index = sqlite3_column_int64(meta.get(), 0);
  if (index < 0) return Status::Corruption("negative applied index in " + path);
  return static_cast<uint64_t>(index);
}

Result<uint64_t> WriteVia(const std::string& db_path, const std::string& tmp_path,
                          const std::string& out_path) {
  // VACUUM INTO refuses an existing non-empty target: a leftover of a
  // crashed attempt must go first.
  NATCD_RETURN_IF_ERROR(RemoveFileIfExists(tmp_path));
  NATCD_RETURN_IF_ERROR(CopyInto(db_path, tmp_path));
  // SQLite does not sync VACUUM INTO's output; the rename must not reach
  // the disk before the data does.
  NATCD_RETURN_IF_ERROR(SyncFile(tmp_path));
  Result<uint64_t> applied = AppliedIndexOf(tmp_path);
  if (!applied.ok()) return applied.status();
  NATCD_RETURN_IF_ERROR(RenameDurably(tmp_path, out_path));
  return applied;
}

}  // namespace

Result<uint64_t> WriteDatabaseSnapshot(const std::string& db_path, const std::string& out_path) {
  // Checked first: a read-only open of a missing file would only say
  // "unable to open database file".
  struct stat st;
  if (stat(db_path.c_str(), &st) != 0) {
    int err = errno;
    if (err != ENOENT) return ErrnoStatus("stat", db_path, err);
    return Status::NotFound("ErrNoDatabase", "snapshot source " + db_path + " does not exist");
  }
  const std::string tmp_path = out_path + ".tmp";
  Result<uint64_t> applied = WriteVia(db_path, tmp_path, out_path);
  if (!applied.ok()) (void)RemoveFileIfExists(tmp_path);  // best effort; the error says why
  return applied;
}

}  // namespace natcd
