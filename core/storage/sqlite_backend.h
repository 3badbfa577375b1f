// SqliteBackend: the durable half of the engine. One SQLite database in WAL
// mode holds every uncompacted revision of every key, the lease table and a
// few counters (schema version, compact revision, applied index).
//
// Thread safety: none; one owner thread.
//
// Writes happen inside a batch: BeginBatch() opens one SQLite transaction,
// any number of writes follow, CommitBatch() commits it with one fsync
// (synchronous=FULL). That is the engine's group commit. After a failed
// CommitBatch the batch is rolled back and the caller must treat its
// in-memory state as stale (reopen).
//
// Persisted format (DO NOT CHANGE without bumping kSchemaVersion):
//   meta(name TEXT PRIMARY KEY, value INTEGER)
//   kv(rev, sub, key, value, create_rev, version, lease, tombstone)
//      PRIMARY KEY (rev, sub): one row per write, in revision order
//   lease(id INTEGER PRIMARY KEY, ttl, remaining_ms)
//   request(id BLOB PRIMARY KEY, expires_ms, outcome): remembered outcomes
//      of requests that carried a request id (idempotent retries)
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "natcd/status.h"
#include "natcd/types.h"

struct sqlite3;
struct sqlite3_stmt;

namespace natcd {

// One stored write: the key's state written at (rev, sub). A tombstone row
// records a delete: only key, rev and sub are meaningful.
struct RevisionRow {
  int64_t rev = 0;
  int64_t sub = 0;
  bool tombstone = false;
  KeyValue kv;  // kv.mod_revision == rev
};

struct LeaseRow {
  int64_t id = 0;
  int64_t ttl_s = 0;
  int64_t remaining_ms = 0;  // 0: no checkpoint, the full TTL applies
};

struct RequestRow {
  std::string id;
  int64_t expires_ms = 0;  // wall clock
  std::string outcome;
};

struct BackendOptions {
  std::string path;  // the database file; created if missing
  bool sync = true;  // synchronous=FULL; false only for tests and benchmarks
  // SQLite's page cache, per database (SQLite's own default size). Reads of
  // the latest values are mostly served from memory (ValueCache) and rows are
  // appended in revision order, so a bigger cache mostly holds pages nobody
  // reads again: at 64 MiB it grew with the data (about 16 MiB more RSS
  // after 100,000 writes) with no measurable gain; the OS page cache still
  // keeps the file's hot pages.
  int64_t cache_kib = 2'048;
};

class SqliteBackend {
 public:
  static constexpr int64_t kSchemaVersion = 1;

  // Meta counters. DO NOT CHANGE: persisted names.
  static constexpr std::string_view kMetaCompactRevision = "compact_revision";
  static constexpr std::string_view kMetaAppliedIndex = "applied_index";

  static Result<std::unique_ptr<SqliteBackend>> Open(const BackendOptions& options);
  ~SqliteBackend();
  SqliteBackend(const SqliteBackend&) = delete;
  SqliteBackend& operator=(const SqliteBackend&) = delete;

  // Batch control. BeginBatch is idempotent while a batch is open.
  Status BeginBatch();
  Status CommitBatch();
  // The next batch commits without an fsync (synchronous=NORMAL for that
  // one commit; SQLite cannot change it inside a transaction, so this does
  // nothing while a batch is open). In WAL mode the database is still a
  // prefix of its commits after a power loss, and the next synced commit
  // makes this one durable too: for state that can be rebuilt after a crash
  // (applied from a Raft log that is durable already).
  Status SkipSyncOfNextCommit();
  // Back to the steady mode if no commit came since SkipSyncOfNextCommit or
  // SyncNextCommit (the caller wrote nothing after all): a later batch must
  // not inherit it.
  Status EndSkipSync();
  // Whether commits fsync (synchronous=FULL, the default) or not
  // (synchronous=NORMAL): the member's database is a prefix of its commits
  // after a power loss, rebuilt from its Raft log file, which is durable on
  // its own. Between batches only (Internal inside one: a bug). Nothing
  // changes when BackendOptions::sync is false (synchronous=OFF).
  Status SetCommitsSynced(bool synced);
  // The next batch commits with an fsync even when commits are not synced:
  // in WAL mode that makes every earlier commit durable too (one fsync of
  // the WAL file). Between batches only (Internal inside one: a bug).
  Status SyncNextCommit();
  void RollbackBatch();
  bool in_batch() const { return in_batch_; }

  // Writes; a batch must be open.
  // One write of kv.key at (rev, sub); for a tombstone only the key counts.
  // The bytes are read during the call only.
  Status InsertRow(int64_t rev, int64_t sub, bool tombstone, const KeyValue& kv);
  Status DeleteRow(int64_t rev, int64_t sub);
  Status PutLease(const LeaseRow& lease);
  Status DeleteLease(int64_t id);
  Status SetMeta(std::string_view name, int64_t value);
  Status PutRequest(const RequestRow& row);
  Status DeleteRequest(const std::string& id);

  // Reads (see the open batch's writes).
  Result<int64_t> GetMeta(std::string_view name, int64_t default_value);
  // NotFound when no such row.
  Result<RevisionRow> GetRow(int64_t rev, int64_t sub);
  // Every row in (rev, sub) order. The visitor returns false to stop early.
  Status ScanRows(int64_t from_rev, const std::function<bool(RevisionRow&&)>& visit,
                  bool with_values = true);
  Status ScanLeases(const std::function<void(const LeaseRow&)>& visit);
  Status ScanRequests(const std::function<void(RequestRow&&)>& visit);

  // Bytes the database file occupies (page_count * page_size).
  Result<int64_t> SizeBytes();
  // Bytes of it in use: the pages not on SQLite's freelist ((page_count -
  // freelist_count) * page_size). Compaction frees pages; Vacuum gives them
  // back to the file system.
  Result<int64_t> SizeInUseBytes();
  // Rewrites the database without its free pages (VACUUM), then truncates
  // the WAL the rewrite went through, so the file shrinks. Not inside a
  // batch. Atomic: on failure (no room for the copy) nothing changed.
  // The copy is built in a temporary file (SQLite's temp directory:
  // SQLITE_TMPDIR, TMPDIR, /var/tmp, /tmp), not in memory: it is as large
  // as the data.
  Status Vacuum();

  // The connection, for state that must be durable exactly when the
  // engine's writes are (the Raft log shares the database and its batches:
  // one fsync covers both). Its users write only inside BeginBatch.
  sqlite3* handle() const { return db_; }

 private:
  SqliteBackend() = default;
  Status Init(const BackendOptions& options);
  Status Exec(const char* sql);
  Status Prepare(const char* sql, sqlite3_stmt** stmt);
  Status Error(const char* what) const;

  sqlite3* db_ = nullptr;
  bool sync_ = true;            // BackendOptions::sync
  bool commits_synced_ = true;  // the steady mode: FULL (true) or NORMAL
  bool skipping_sync_ = false;  // the other mode until the next commit
  bool in_batch_ = false;
  sqlite3_stmt* begin_ = nullptr;
  sqlite3_stmt* commit_ = nullptr;
  sqlite3_stmt* rollback_ = nullptr;
  sqlite3_stmt* insert_row_ = nullptr;
  sqlite3_stmt* delete_row_ = nullptr;
  sqlite3_stmt* get_row_ = nullptr;
  sqlite3_stmt* put_lease_ = nullptr;
  sqlite3_stmt* delete_lease_ = nullptr;
  sqlite3_stmt* set_meta_ = nullptr;
  sqlite3_stmt* get_meta_ = nullptr;
  sqlite3_stmt* put_request_ = nullptr;
  sqlite3_stmt* delete_request_ = nullptr;
  sqlite3_stmt* page_count_ = nullptr;
  sqlite3_stmt* page_size_ = nullptr;
};

// Maps an SQLite result code to a Status, keeping the extended code and
// message in the text (BUSY/LOCKED -> Busy, CORRUPT/NOTADB -> Corruption,
// everything else -> IOError).
Status SqliteStatus(sqlite3* db, int rc, const char* what);

}  // namespace natcd
