// The file system as the Raft log file sees it: a handful of calls, behind
// an interface so that tests can fail any one of them (a write, an
// fdatasync, a rename) or stop the process in the middle of one. PosixLogFs
// is the real one.
//
// Every error is an IOError Status naming the call, the path and errno's
// text. Thread safety: PosixLogFs and its files hold no state beyond the
// descriptor; a LogFile is used by one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "natcd/status.h"

namespace natcd::raftlog {

class LogFile {
 public:
  virtual ~LogFile() = default;
  // Exactly n bytes from offset into *out (replaced). Reading past the end
  // of the file is an IOError.
  virtual Status Read(uint64_t offset, size_t n, std::string* out) = 0;
  // All of data at offset (pwrite(2) until done).
  virtual Status Write(uint64_t offset, std::string_view data) = 0;
  // fdatasync(2): what was written, and the size, are on disk.
  virtual Status Sync() = 0;
  // ftruncate(2).
  virtual Status Truncate(uint64_t size) = 0;
  // Makes the file at least size bytes long, zeros past its old end
  // written out (not only allocated: spare_segment.h says why), so that
  // later writes there change no metadata fdatasync must write.
  virtual Status Preallocate(uint64_t size) = 0;
  virtual Result<uint64_t> Size() = 0;
};

class LogFs {
 public:
  virtual ~LogFs() = default;
  // Opens path for reading and writing; creates it (empty) when create is
  // true and it is missing. NotFound when it is missing and create is false.
  virtual Result<std::unique_ptr<LogFile>> OpenFile(const std::string& path, bool create) = 0;
  // Names (not paths) of the entries of dir, in no particular order.
  virtual Result<std::vector<std::string>> ListDir(const std::string& dir) = 0;
  // mkdir(2); an existing directory is success.
  virtual Status CreateDir(const std::string& dir) = 0;
  virtual Status Rename(const std::string& from, const std::string& to) = 0;
  virtual Status Remove(const std::string& path) = 0;
  // fsync(2) of the directory: names created, renamed or removed in it
  // survive a power loss.
  virtual Status SyncDir(const std::string& dir) = 0;
};

class PosixLogFs final : public LogFs {
 public:
  Result<std::unique_ptr<LogFile>> OpenFile(const std::string& path, bool create) override;
  Result<std::vector<std::string>> ListDir(const std::string& dir) override;
  Status CreateDir(const std::string& dir) override;
  Status Rename(const std::string& from, const std::string& to) override;
  Status Remove(const std::string& path) override;
  Status SyncDir(const std::string& dir) override;
};

}  // namespace natcd::raftlog
