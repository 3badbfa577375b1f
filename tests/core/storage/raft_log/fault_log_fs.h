// FaultLogFs: the real file system (PosixLogFs) with faults a test asks
// for, in the manner of SQLite's test_vfs.c and leveldb's
// fault_injection_test.cc:
//   - FailNth(op, n): the nth call of op from now fails with an IOError
//     (and does nothing), once;
//   - CrashAt(n): the process SIGKILLs itself at the nth call of any op,
//     a write first writing part of its bytes (a torn write);
//   - LosePower(rng): what was written and not yet synced is lost, a run
//     of it at a time (kept whole, kept in part, or zeroed), as after a
//     power cut; the log must then be closed and reopened.
//   - set_full(true): a full disk: every write and preallocation fails
//     with ENOSPC's text (and does nothing) until set_full(false).
// Thread safety: none (one test thread).
#pragma once

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "storage/raft_log/log_fs.h"

namespace natcd::raftlog::testing {

enum class FsOp { kOpen, kWrite, kSync, kTruncate, kPreallocate, kRename, kRemove, kSyncDir };

class FaultLogFs final : public LogFs {
 public:
  FaultLogFs() = default;

  void FailNth(FsOp op, int n) { fail_[op] = n; }
  void set_full(bool full) { full_ = full; }
  bool full() const { return full_; }
  // n counts every call of every op from the start (1 = the first).
  void CrashAt(long n, uint32_t seed) {
    crash_at_ = n;
    crash_rng_.seed(seed);
  }
  long calls() const { return calls_; }
  int count(FsOp op) const {
    auto it = counts_.find(op);
    return it == counts_.end() ? 0 : it->second;
  }
  // Drops unsynced writes as a power cut would (see above). The files
  // must be closed: the log that wrote them destroyed first.
  void LosePower(std::mt19937* rng);
  // Unsynced bytes written so far (all files).
  uint64_t unsynced_bytes() const;

  Result<std::unique_ptr<LogFile>> OpenFile(const std::string& path, bool create) override;
  Result<std::vector<std::string>> ListDir(const std::string& dir) override {
    return base_.ListDir(dir);
  }
  Status CreateDir(const std::string& dir) override { return base_.CreateDir(dir); }
  Status Rename(const std::string& from, const std::string& to) override;
  Status Remove(const std::string& path) override;
  Status SyncDir(const std::string& dir) override;

  // Called by the files: counts the call, crashes or fails it as asked.
  // An error Status means: fail the call with it.
  Status Enter(FsOp op, const std::string& path);
  // For a write the crash hook lands in: part of it is written first.
  bool CrashesNow() const { return crash_at_ > 0 && calls_ + 1 == crash_at_; }
  [[noreturn]] void CrashMidWrite(LogFile* file, uint64_t offset, std::string_view data);
  // path: the name the file was opened under (renames are followed).
  void NoteWrite(const std::string& path, uint64_t offset, uint64_t n) {
    unsynced_[Resolve(path)].push_back({offset, n});
  }
  void NoteSync(const std::string& path) { unsynced_.erase(Resolve(path)); }
  void NoteTruncate(const std::string& path, uint64_t size);

 private:
  // The file's name now: an open file keeps writing after a rename.
  std::string Resolve(const std::string& path) const {
    std::string p = path;
    for (auto it = renamed_.find(p); it != renamed_.end(); it = renamed_.find(p)) p = it->second;
    return p;
  }

  PosixLogFs base_;
  std::map<std::string, std::string> renamed_;  // from -> to
  std::map<FsOp, int> fail_;
  std::map<FsOp, int> counts_;
  long calls_ = 0;
  long crash_at_ = 0;
  bool full_ = false;
  std::mt19937 crash_rng_;
  // Per path: (offset, length) of each write since its last sync.
  std::map<std::string, std::vector<std::pair<uint64_t, uint64_t>>> unsynced_;
};

}  // namespace natcd::raftlog::testing
