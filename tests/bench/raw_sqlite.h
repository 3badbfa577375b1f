// RawSqlite: natcd's kv table written with raw SQLite and no natcd code,
// the physical floor the engine benchmarks are compared with (used by
// sqlite_baseline and by engine_bench's paired benchmarks). It applies the
// same file settings as core/storage/sqlite_backend.cc and writes the same
// row shape with prepared statements bound the same way.
//
// Every setting, in the order RawSqlite applies it:
//   PRAGMA page_size=4096             (SQLite's default; set before the schema;
//                                     RawSqliteOptions::page_size)
//   PRAGMA journal_mode=WAL           one WAL append + one fsync per commit
//   PRAGMA synchronous=FULL           sync:1 (the engine's durable mode)
//   PRAGMA synchronous=OFF            sync:0 (the engine's sync=false)
//   PRAGMA synchronous=NORMAL         only for the pipelined prototype
//                                     (RawSqliteOptions::synchronous): in WAL
//                                     mode a commit does not fsync; the
//                                     caller fsyncs the WAL itself
//   PRAGMA cache_size=-65536          64 MiB page cache, as the engine
//   PRAGMA temp_store=MEMORY
//   PRAGMA wal_autocheckpoint=4096    16 MiB of WAL between checkpoints
//                                     (RawSqliteOptions::autocheckpoint)
//   PRAGMA locking_mode=NORMAL        (default)
//   PRAGMA mmap_size=0                (default: reads go through the cache)
// Connection: sqlite3_open_v2(READWRITE | CREATE | NOMUTEX), extended result
// codes on, statements prepared with SQLITE_PREPARE_PERSISTENT, blobs bound
// SQLITE_STATIC, each statement reset and its bindings cleared after use.
// Transactions: BEGIN IMMEDIATE ... COMMIT.
//
// Row shape (identical to the engine's kv table):
//   kv(rev INTEGER, sub INTEGER, key BLOB, value BLOB, create_rev INTEGER,
//      version INTEGER, lease INTEGER, tombstone INTEGER,
//      PRIMARY KEY (rev, sub)) WITHOUT ROWID
//
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace natcd::bench {

[[noreturn]] inline void DieSqlite(sqlite3* db, const char* what) {
  std::fprintf(stderr, "bench: %s: %s\n", what, db ? sqlite3_errmsg(db) : "no database");
  std::abort();
}

struct RawSqliteOptions {
  bool sync = true;  // synchronous=FULL, else OFF
  // When set, overrides sync: the synchronous mode, e.g. "NORMAL".
  const char* synchronous = nullptr;
  int64_t page_size = 4096;
  int64_t autocheckpoint = 4096;
};

class RawSqlite {
 public:
  RawSqlite(const std::string& path, const RawSqliteOptions& options) {
    if (sqlite3_open_v2(path.c_str(), &db_,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                        nullptr) != SQLITE_OK) {
      DieSqlite(db_, "open");
    }
    sqlite3_extended_result_codes(db_, 1);
    Exec(("PRAGMA page_size=" + std::to_string(options.page_size)).c_str());
    Exec("PRAGMA journal_mode=WAL");
    if (options.synchronous != nullptr) {
      Exec((std::string("PRAGMA synchronous=") + options.synchronous).c_str());
    } else {
      Exec(options.sync ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=OFF");
    }
    Exec("PRAGMA cache_size=-65536");
    Exec("PRAGMA temp_store=MEMORY");
    Exec(("PRAGMA wal_autocheckpoint=" + std::to_string(options.autocheckpoint)).c_str());
    Exec("PRAGMA locking_mode=NORMAL");
    Exec("PRAGMA mmap_size=0");
    Exec(R"sql(
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
)sql");
    begin_ = Prepare("BEGIN IMMEDIATE");
    commit_ = Prepare("COMMIT");
    insert_ = Prepare(
        "INSERT INTO kv (rev, sub, key, value, create_rev, version, lease, tombstone) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
    set_meta_ = Prepare("INSERT OR REPLACE INTO meta (name, value) VALUES (?, ?)");
  }
  ~RawSqlite() {
    for (sqlite3_stmt* stmt : {begin_, commit_, insert_, set_meta_}) sqlite3_finalize(stmt);
    sqlite3_close(db_);
  }
  RawSqlite(const RawSqlite&) = delete;
  RawSqlite& operator=(const RawSqlite&) = delete;

  void Begin() { Step(begin_, "begin"); }
  void Commit() { Step(commit_, "commit"); }

  void Insert(int64_t rev, const std::string& key, const std::string& value, int64_t version) {
    sqlite3_bind_int64(insert_, 1, rev);
    sqlite3_bind_int64(insert_, 2, 0);
    sqlite3_bind_blob64(insert_, 3, key.data(), key.size(), SQLITE_STATIC);
    sqlite3_bind_blob64(insert_, 4, value.data(), value.size(), SQLITE_STATIC);
    sqlite3_bind_int64(insert_, 5, 1);
    sqlite3_bind_int64(insert_, 6, version);
    sqlite3_bind_int64(insert_, 7, 0);
    sqlite3_bind_int64(insert_, 8, 0);
    Step(insert_, "insert");
  }

  void SetMeta(const char* name, int64_t value) {
    sqlite3_bind_text(set_meta_, 1, name, -1, SQLITE_STATIC);
    sqlite3_bind_int64(set_meta_, 2, value);
    Step(set_meta_, "set meta");
  }

 private:
  void Exec(const char* sql) {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
      std::fprintf(stderr, "bench: %s: %s\n", sql, err ? err : "?");
      std::abort();
    }
  }
  sqlite3_stmt* Prepare(const char* sql) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt, nullptr) != SQLITE_OK) {
      DieSqlite(db_, sql);
    }
    return stmt;
  }
  void Step(sqlite3_stmt* stmt, const char* what) {
    int rc = sqlite3_step(stmt);
    sqlite3_reset(stmt);
    sqlite3_clear_bindings(stmt);
    if (rc != SQLITE_DONE) DieSqlite(db_, what);
  }

  sqlite3* db_ = nullptr;
  sqlite3_stmt* begin_ = nullptr;
  sqlite3_stmt* commit_ = nullptr;
  sqlite3_stmt* insert_ = nullptr;
  sqlite3_stmt* set_meta_ = nullptr;
};

}  // namespace natcd::bench
