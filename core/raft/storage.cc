#include "raft/storage.h"

#include <algorithm>

namespace natcd::raft {

Status ErrLogCompacted() {
  return Status(Status::Code::kLogCompacted, "ErrRaftCompacted",
                "raft: requested index is unavailable due to compaction");
}
Status ErrLogUnavailable() {
  return Status(Status::Code::kUnavailable, "ErrRaftUnavailable",
                "raft: requested entry at index is unavailable");
}
Status ErrSnapshotOutOfDate() {
  return Status(Status::Code::kInvalidArgument, "ErrSnapOutOfDate",
                "raft: requested index is older than the existing snapshot");
}
bool IsLogCompacted(const Status& status) { return status.code() == Status::Code::kLogCompacted; }

void LimitSize(std::vector<Entry>* entries, uint64_t max_bytes) {
  if (entries->empty()) return;
  uint64_t size = (*entries)[0].data.size();
  size_t n = 1;
  for (; n < entries->size(); n++) {
    size += (*entries)[n].data.size();
    if (size > max_bytes) break;
  }
  entries->resize(n);
}

MemoryStorage::MemoryStorage() : ents_(1) {}

Result<std::vector<Entry>> MemoryStorage::Entries(uint64_t lo, uint64_t hi,
                                                  uint64_t max_bytes) const {
  uint64_t offset = ents_.front().index;
  if (lo <= offset) return ErrLogCompacted();
  if (hi > LastIndex() + 1) return ErrLogUnavailable();
  std::vector<Entry> out(ents_.begin() + (lo - offset), ents_.begin() + (hi - offset));
  LimitSize(&out, max_bytes);
  return out;
}

Result<uint64_t> MemoryStorage::Term(uint64_t i) const {
  uint64_t offset = ents_.front().index;
  if (i < offset) return ErrLogCompacted();
  if (i - offset >= ents_.size()) return ErrLogUnavailable();
  return ents_[i - offset].term;
}

Status MemoryStorage::ApplySnapshot(Snapshot snapshot) {
  if (snapshot.meta.index <= snapshot_.meta.index) return ErrSnapshotOutOfDate();
  ents_.assign(1, Entry{snapshot.meta.term, snapshot.meta.index, EntryType::kNormal, {}});
  snapshot_ = std::move(snapshot);
  return Status::OK();
}

Status MemoryStorage::CreateSnapshot(uint64_t i, const ConfState& cs, std::string data) {
  if (i <= snapshot_.meta.index) return ErrSnapshotOutOfDate();
  if (i > LastIndex()) return ErrLogUnavailable();
  snapshot_.meta.index = i;
  snapshot_.meta.term = ents_[i - ents_.front().index].term;
  snapshot_.meta.conf_state = cs;
  snapshot_.data = std::move(data);
  return Status::OK();
}

Status MemoryStorage::Compact(uint64_t i) {
  uint64_t offset = ents_.front().index;
  if (i <= offset) return ErrLogCompacted();
  if (i > LastIndex()) return ErrLogUnavailable();
  ents_.erase(ents_.begin(), ents_.begin() + (i - offset));
  ents_.front().data.clear();  // the dummy keeps index and term only
  return Status::OK();
}

Status MemoryStorage::Append(const std::vector<Entry>& entries) {
  if (entries.empty()) return Status::OK();
  uint64_t first = FirstIndex();
  uint64_t last = entries.back().index;
  if (last < first) return Status::OK();  // all already compacted
  size_t skip = first > entries.front().index ? first - entries.front().index : 0;
  uint64_t start = entries[skip].index;
  if (start > LastIndex() + 1) return ErrLogUnavailable();  // a gap: a caller bug
  ents_.resize(start - ents_.front().index);
  ents_.insert(ents_.end(), entries.begin() + skip, entries.end());
  return Status::OK();
}

}  // namespace natcd::raft
