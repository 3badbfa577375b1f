#include "storage/backup_file.h"

#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "storage/crc32c.h"
#include "storage/durable_file.h"
#include "storage/sha256.h"
#include "storage/sqlite_backend.h"

namespace natcd {
namespace {

constexpr uint64_t kPageBytesMin = 512;  // SQLite's smallest page
constexpr size_t kCopyBytes = 1 << 20;

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  int get() const { return fd_; }
  // Closes now, reporting close(2)'s error (a deferred write error).
  int Close() {
    int rc = close(fd_);
    fd_ = -1;
    return rc;
  }

 private:
  int fd_;
};

// Reads exactly n bytes (the file was measured: a short read is a file
// that changed under us).
Status ReadFully(int fd, void* buf, size_t n, const std::string& path) {
  auto* p = static_cast<char*>(buf);
  while (n > 0) {
    ssize_t got = read(fd, p, n);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return ErrnoStatus("read", path, errno);
    if (got == 0) return Status::Corruption("snapshot file " + path + " shrank while being read");
    p += got;
    n -= static_cast<size_t>(got);
  }
  return Status::OK();
}

Status WriteFully(int fd, const void* buf, size_t n, const std::string& path) {
  auto* p = static_cast<const char*>(buf);
  while (n > 0) {
    ssize_t put = write(fd, p, n);
    if (put < 0 && errno == EINTR) continue;
    if (put < 0) return ErrnoStatus("write", path, errno);
    p += put;
    n -= static_cast<size_t>(put);
  }
  return Status::OK();
}

Result<ExtractedBackup> Extract(const std::string& backup_path, const std::string& out_path) {
  Fd in(open(backup_path.c_str(), O_RDONLY | O_CLOEXEC));
  if (in.get() < 0) {
    const int err = errno;
    if (err == ENOENT) {
      return Status::NotFound("ErrNoSnapshot", "snapshot file " + backup_path + " does not exist");
    }
    return ErrnoStatus("open", backup_path, err);
  }
  struct stat st;
  if (fstat(in.get(), &st) != 0) return ErrnoStatus("stat", backup_path, errno);
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size < kPageBytesMin + kBackupTrailerBytes ||
      (size - kBackupTrailerBytes) % kPageBytesMin != 0) {
    return Status::Corruption("snapshot file " + backup_path +
                              " is truncated or not a snapshot: " + std::to_string(size) +
                              " bytes is not a database (whole 512-byte pages) followed by its "
                              "32-byte SHA-256");
  }
  ExtractedBackup out;
  out.database_bytes = size - kBackupTrailerBytes;
  Fd dst(open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  if (dst.get() < 0) return ErrnoStatus("create", out_path, errno);
  Sha256 sha;
  std::vector<char> buf(kCopyBytes);
  for (uint64_t left = out.database_bytes; left > 0;) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(left, buf.size()));
    NATCD_RETURN_IF_ERROR(ReadFully(in.get(), buf.data(), n, backup_path));
    sha.Update(buf.data(), n);
    out.crc32c = Crc32cExtend(out.crc32c, buf.data(), n);
    NATCD_RETURN_IF_ERROR(WriteFully(dst.get(), buf.data(), n, out_path));
    left -= n;
  }
  Sha256::Digest trailer;
  NATCD_RETURN_IF_ERROR(ReadFully(in.get(), trailer.data(), trailer.size(), backup_path));
  const Sha256::Digest computed = sha.Final();
  if (computed != trailer) {
    return Status::Corruption("snapshot file " + backup_path + " is damaged: expected sha256 " +
                              HexOf(trailer) + ", got " + HexOf(computed));
  }
  out.sha256_hex = HexOf(trailer);
  if (fsync(dst.get()) != 0) return ErrnoStatus("fsync", out_path, errno);
  if (dst.Close() != 0) return ErrnoStatus("close", out_path, errno);
  return out;
}

class ReadOnlyConnection {
 public:
  ~ReadOnlyConnection() { sqlite3_close(db_); }
  Status Open(const std::string& path) {
    const int rc = sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READONLY, nullptr);
    if (rc != SQLITE_OK) return SqliteStatus(db_, rc, ("open " + path).c_str());
    sqlite3_extended_result_codes(db_, 1);
    return Status::OK();
  }
  // The first column of the first row of `sql` as an integer (`none` when
  // there is no row or it is NULL) into *out.
  Status Integer(const char* sql, int64_t none, int64_t* out) {
    *out = none;
    sqlite3_stmt* stmt = nullptr;
    int rc = sqlite3_prepare_v2(db_, sql, -1, &stmt, nullptr);
    if (rc != SQLITE_OK) return SqliteStatus(db_, rc, sql);
    rc = sqlite3_step(stmt);
    if (rc == SQLITE_ROW && sqlite3_column_type(stmt, 0) != SQLITE_NULL) {
      *out = sqlite3_column_int64(stmt, 0);
    }
    Status s = rc == SQLITE_ROW || rc == SQLITE_DONE ? Status::OK() : SqliteStatus(db_, rc, sql);
    sqlite3_finalize(stmt);
    return s;
  }
  Status Text(const char* sql, std::string* out) {
    out->clear();
    sqlite3_stmt* stmt = nullptr;
    int rc = sqlite3_prepare_v2(db_, sql, -1, &stmt, nullptr);
    if (rc != SQLITE_OK) return SqliteStatus(db_, rc, sql);
    rc = sqlite3_step(stmt);
    if (rc == SQLITE_ROW) {
      const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
      if (text != nullptr) *out = text;
    }
    Status s = rc == SQLITE_ROW || rc == SQLITE_DONE ? Status::OK() : SqliteStatus(db_, rc, sql);
    sqlite3_finalize(stmt);
    return s;
  }

 private:
  sqlite3* db_ = nullptr;
};

}  // namespace

Result<ExtractedBackup> ExtractBackup(const std::string& backup_path, const std::string& out_path) {
  Result<ExtractedBackup> out = Extract(backup_path, out_path);
  if (!out.ok()) (void)RemoveFileIfExists(out_path);  // best effort; the error says why
  return out;
}

Result<DatabaseFacts> ReadDatabaseFacts(const std::string& db_path, bool quick_check) {
  ReadOnlyConnection db;
  NATCD_RETURN_IF_ERROR(db.Open(db_path));
  auto corrupt = [&](const Status& why) {
    return Status::Corruption(db_path + " is not a sound natcd database: " + why.ToString());
  };
  if (quick_check) {
    std::string check;
    Status s = db.Text("PRAGMA quick_check", &check);
    if (!s.ok()) return corrupt(s);
    if (check != "ok") return Status::Corruption(db_path + " fails SQLite's quick_check: " + check);
  }
  int64_t compact = 0, applied = 0, newest = 0, rows = 0, leases = 0;
  for (auto [sql, out] : {
           std::pair{"SELECT value FROM meta WHERE name = 'compact_revision'", &compact},
           std::pair{"SELECT value FROM meta WHERE name = 'applied_index'", &applied},
           std::pair{"SELECT MAX(rev) FROM kv", &newest},
           std::pair{"SELECT COUNT(*) FROM kv", &rows},
           std::pair{"SELECT COUNT(*) FROM lease", &leases},
       }) {
    Status s = db.Integer(sql, 0, out);
    if (!s.ok()) return corrupt(s);
  }
  if (applied < 0) return Status::Corruption(db_path + ": negative applied index");
  DatabaseFacts facts;
  facts.compact_revision = compact;
  // As KvStore::Load derives it: compaction keeps every row at or above
  // the compact revision, so the newest row is the revision.
  facts.revision = std::max(newest, compact);
  facts.total_keys = rows;
  facts.leases = leases;
  facts.applied_index = static_cast<uint64_t>(applied);
  return facts;
}

}  // namespace natcd
