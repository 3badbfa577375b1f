#include "storage/raft_log/spare_segment.h"

#include <utility>

namespace natcd::raftlog {

SpareSegment::~SpareSegment() {
  if (filler_.joinable()) filler_.join();
}

void SpareSegment::Start() {
  if (!background_ || filler_.joinable() || filled_) return;
  filler_ = std::thread([this] { filled_.emplace(Fill()); });
}

Result<std::unique_ptr<LogFile>> SpareSegment::Take() {
  if (filler_.joinable()) filler_.join();
  if (!filled_) return Fill();
  Result<std::unique_ptr<LogFile>> spare = std::move(*filled_);
  filled_.reset();
  return spare;
}

Result<std::unique_ptr<LogFile>> SpareSegment::Fill() {
  Result<std::unique_ptr<LogFile>> file = fs_->OpenFile(path_, true);
  if (!file.ok()) return file.status();
  // A spare filled before and not taken (one an error interrupted) starts
  // again from nothing.
  Status s = file.value()->Truncate(0);
  if (s.ok()) s = file.value()->Preallocate(bytes_);
  if (s.ok()) s = file.value()->Sync();
  if (!s.ok()) return s;
  return file;
}

}  // namespace natcd::raftlog
