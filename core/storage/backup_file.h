// A backup file: what `natcdctl snapshot save` (and `etcdctl snapshot
// save` over natcd's gRPC API) writes. Its layout is etcd's: the database
// (a consistent copy of a member's SQLite database, sqlite_snapshot.h),
// then the SHA-256 of those bytes (32 bytes), exactly the stream the
// server sends. A SQLite database is a whole number of pages (512 bytes at
// least), so the file's size modulo 512 is 32, as etcd checks for its own.
//
// ExtractBackup checks a file and writes its database part elsewhere;
// ReadDatabaseFacts says what a database holds. Neither changes the backup.
//
// Thread safety: plain functions over files the caller names; any thread.
#pragma once

#include <cstdint>
#include <string>

#include "natcd/status.h"

namespace natcd {

// Bytes of the trailer after the database.
inline constexpr uint64_t kBackupTrailerBytes = 32;

struct ExtractedBackup {
  uint64_t database_bytes = 0;  // the database part (the file less its trailer)
  std::string sha256_hex;       // the trailer, checked
  uint32_t crc32c = 0;          // of the database part: natcdctl snapshot status's hash
};

// Checks the backup at backup_path (its size, its SHA-256 trailer) while
// copying its database part to out_path (replaced; fsync'd). On any error
// out_path is removed. Errors: NotFound (no such file); Corruption with a
// message saying what is wrong (too small or truncated, checksum mismatch);
// IOError.
Result<ExtractedBackup> ExtractBackup(const std::string& backup_path, const std::string& out_path);

// What a natcd database holds, read through a read-only connection.
struct DatabaseFacts {
  int64_t revision = 0;          // the store's revision (its newest row, or the compact revision)
  int64_t compact_revision = 0;  // 0: never compacted
  int64_t total_keys = 0;        // rows of the kv table: every stored revision of every key
  int64_t leases = 0;
  uint64_t applied_index = 0;  // the Raft index the database stands for
};

// Corruption when the file is no SQLite database, fails SQLite's
// quick_check (unless quick_check is false: a copy just made), or is not
// natcd's (no kv/meta/lease tables).
Result<DatabaseFacts> ReadDatabaseFacts(const std::string& db_path, bool quick_check = true);

}  // namespace natcd
