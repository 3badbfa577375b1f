// SpareSegment: the file the log's next segment will be, made ready before
// it is needed (etcd's wal filePipeline). A spare is zero-filled to the
// segment size and synced under a name of its own (kSpareName); rotation
// writes the new segment's first records into it and renames it into
// place.
//
// Why zeros and not fallocate(2) alone: ext4 leaves fallocated extents
// "unwritten", so the first write into each block makes fdatasync commit
// the journal (the extent's conversion); in a zero-filled file an append
// is a data write only. Filling takes a while (64 MiB by default), so with
// `background` the next spare is filled on a thread of its own while the
// current segment fills, and rotation does not wait for it; without (a
// caller that needs every step on one thread: the simulator, the tests
// that crash the log at each file-system call) Take fills it there and
// then.
//
// A spare a crash left behind is an unused file: the log's Open removes it
// before it starts a new one (raft_log_file.h).
//
// Thread safety: one thread calls Start and Take (the log's); the filling
// thread touches only the spare's own file, through fs, which must allow
// that (PosixLogFs holds no state).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "natcd/status.h"
#include "storage/raft_log/log_fs.h"

namespace natcd::raftlog {

inline constexpr std::string_view kSpareName = "spare.wal.tmp";

class SpareSegment {
 public:
  SpareSegment(LogFs* fs, std::string path, uint64_t bytes, bool background)
      : fs_(fs), path_(std::move(path)), bytes_(bytes), background_(background) {}
  ~SpareSegment();
  SpareSegment(const SpareSegment&) = delete;
  SpareSegment& operator=(const SpareSegment&) = delete;

  // With background, starts filling the next spare on its thread (nothing
  // if one is being filled or is ready); without, does nothing.
  void Start();
  // The spare, open, zero-filled to bytes and synced at path(): the one
  // Start began (waiting for it) or, if none, one filled now.
  Result<std::unique_ptr<LogFile>> Take();
  const std::string& path() const { return path_; }

 private:
  Result<std::unique_ptr<LogFile>> Fill();

  LogFs* const fs_;
  const std::string path_;
  const uint64_t bytes_;
  const bool background_;
  std::thread filler_;
  // Set by the filling thread; read only after joining it.
  std::optional<Result<std::unique_ptr<LogFile>>> filled_;
};

}  // namespace natcd::raftlog
