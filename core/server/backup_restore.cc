#include "server/backup_restore.h"

#include <errno.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include "raft/durable_raft_storage.h"
#include "storage/durable_file.h"
#include "storage/sqlite_backend.h"

namespace natcd::server {
namespace {

// What belongs to the old cluster, by the persisted formats of
// raft/durable_raft_storage.h (raft_state; raft_log_run and raft_log from
// before the log file) and storage/sqlite_backend.h (request,
// meta.applied_index). DurableRaftStorage::Open creates its tables again,
// empty: a member that has no Raft state, to found the new cluster or wait
// to be added (its log file starts empty beside the database).
constexpr const char* kForgetCluster = R"sql(
BEGIN;
DROP TABLE IF EXISTS raft_log_run;
DROP TABLE IF EXISTS raft_log;
DROP TABLE IF EXISTS raft_state;
DELETE FROM request;
DELETE FROM meta WHERE name = 'applied_index';
COMMIT;
)sql";

Status ForgetCluster(const std::string& path) {
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr);
  Status s = rc == SQLITE_OK ? Status::OK() : SqliteStatus(db, rc, ("open " + path).c_str());
  if (s.ok()) {
    sqlite3_extended_result_codes(db, 1);
    char* error = nullptr;
    rc = sqlite3_exec(db, kForgetCluster, nullptr, nullptr, &error);
    if (rc != SQLITE_OK) {
      s = Status::Corruption("cannot reset the old cluster's state in " + path + ": " +
                             (error ? error : sqlite3_errstr(rc)));
    }
    sqlite3_free(error);
  }
  // Closing commits nothing more; a rollback journal left by a failure goes
  // with the file.
  sqlite3_close(db);
  return s;
}

Result<RestoredBackup> Restore(const std::string& backup_path, const std::string& tmp_path,
                               const std::string& db_path) {
  RestoredBackup out;
  Result<ExtractedBackup> extracted = ExtractBackup(backup_path, tmp_path);
  if (!extracted.ok()) return extracted.status();
  out.backup = *extracted;
  Result<DatabaseFacts> facts = ReadDatabaseFacts(tmp_path);
  if (!facts.ok()) return facts.status();
  NATCD_RETURN_IF_ERROR(ForgetCluster(tmp_path));
  Result<DatabaseFacts> after = ReadDatabaseFacts(tmp_path, /*quick_check=*/false);
  if (!after.ok()) return after.status();
  out.facts = *after;
  NATCD_RETURN_IF_ERROR(SyncFile(tmp_path));
  NATCD_RETURN_IF_ERROR(RenameDurably(tmp_path, db_path));
  return out;
}

}  // namespace

Result<RestoredBackup> RestoreBackup(const std::string& backup_path, const std::string& db_path) {
  struct stat st;
  if (stat(db_path.c_str(), &st) == 0) {
    return Status::InvalidArgument("ErrDataDirExists",
                                   "a database exists at " + db_path + "; restore makes a new one");
  }
  if (errno != ENOENT) return ErrnoStatus("stat", db_path, errno);
  // A Raft log left without its database is another cluster's: the new
  // member must start with none.
  const std::string log_dir = raft::DurableRaftStorage::LogDirOf(db_path);
  if (stat(log_dir.c_str(), &st) == 0) {
    return Status::InvalidArgument("ErrDataDirExists",
                                   "a Raft log exists at " + log_dir + "; restore makes a new one");
  }
  const std::string tmp_path = db_path + ".tmp";
  Result<RestoredBackup> out = Restore(backup_path, tmp_path, db_path);
  if (!out.ok()) {
    (void)RemoveFileIfExists(tmp_path);  // best effort; the error says why
    (void)RemoveFileIfExists(tmp_path + "-journal");
  }
  return out;
}

}  // namespace natcd::server
