#include "raft/raft_log.h"

#include <algorithm>
#include <cassert>

namespace natcd::raft {

RaftLog::RaftLog(const Storage* storage, uint64_t max_applying_bytes)
    : storage_(storage), max_applying_bytes_(max_applying_bytes) {
  uint64_t first = storage_->FirstIndex();
  uint64_t last = storage_->LastIndex();
  unstable_offset_ = last + 1;
  committed_ = first - 1;
  applied_ = first - 1;
}

uint64_t RaftLog::FirstIndex() const {
  if (unstable_snapshot_) return unstable_snapshot_->meta.index + 1;
  return storage_->FirstIndex();
}

uint64_t RaftLog::LastIndex() const {
  if (!unstable_entries_.empty()) return unstable_offset_ + unstable_entries_.size() - 1;
  if (unstable_snapshot_) return unstable_snapshot_->meta.index;
  return storage_->LastIndex();
}

std::optional<uint64_t> RaftLog::UnstableTerm(uint64_t i) const {
  if (i < unstable_offset_) {
    if (unstable_snapshot_ && unstable_snapshot_->meta.index == i) {
      return unstable_snapshot_->meta.term;
    }
    return std::nullopt;
  }
  if (unstable_entries_.empty() || i > LastIndex()) return std::nullopt;
  return unstable_entries_[i - unstable_offset_].term;
}

Result<uint64_t> RaftLog::Term(uint64_t i) const {
  // The valid range is [index of dummy entry, last index].
  uint64_t dummy = FirstIndex() - 1;
  if (i < dummy) return ErrLogCompacted();
  if (i > LastIndex()) return ErrLogUnavailable();
  if (auto t = UnstableTerm(i)) return *t;
  return storage_->Term(i);
}

uint64_t RaftLog::TermOr0(uint64_t i) const {
  auto t = Term(i);
  return t.ok() ? t.value() : 0;
}

uint64_t RaftLog::LastTerm() const { return TermOr0(LastIndex()); }

bool RaftLog::MatchTerm(uint64_t i, uint64_t term) const {
  auto t = Term(i);
  return t.ok() && t.value() == term;
}

bool RaftLog::IsUpToDate(uint64_t last_index, uint64_t term) const {
  uint64_t my_term = LastTerm();
  return term > my_term || (term == my_term && last_index >= LastIndex());
}

uint64_t RaftLog::FindConflict(const std::vector<Entry>& entries) const {
  for (const Entry& e : entries) {
    if (!MatchTerm(e.index, e.term)) return e.index;
  }
  return 0;
}

std::pair<uint64_t, uint64_t> RaftLog::FindConflictByTerm(uint64_t index, uint64_t term) const {
  for (; index > 0; index--) {
    auto t = Term(index);
    // An unknown term (compacted or missing) ends the search: the leader
    // probes from there.
    if (!t.ok()) return {index, 0};
    if (t.value() <= term) return {index, t.value()};
  }
  return {0, 0};
}

std::optional<uint64_t> RaftLog::MaybeAppend(uint64_t index, uint64_t log_term, uint64_t committed,
                                             const std::vector<Entry>& entries) {
  if (!MatchTerm(index, log_term)) return std::nullopt;
  uint64_t last_new = index + entries.size();
  uint64_t conflict = FindConflict(entries);
  if (conflict != 0) {
    // A conflict at or below the commit index would mean Raft is broken.
    assert(conflict > committed_);
    std::vector<Entry> rest(entries.begin() + (conflict - (index + 1)), entries.end());
    Append(rest);
  }
  CommitTo(std::min(committed, last_new));
  return last_new;
}

uint64_t RaftLog::Append(const std::vector<Entry>& entries) {
  if (entries.empty()) return LastIndex();
  uint64_t after = entries.front().index - 1;
  assert(after >= committed_);
  if (after + 1 == unstable_offset_ + unstable_entries_.size()) {
    unstable_entries_.insert(unstable_entries_.end(), entries.begin(), entries.end());
  } else if (after + 1 <= unstable_offset_) {
    // Replaces the whole unstable tail (and shadows storage after `after`).
    unstable_offset_ = after + 1;
    unstable_entries_ = entries;
  } else {
    unstable_entries_.resize(after + 1 - unstable_offset_);
    unstable_entries_.insert(unstable_entries_.end(), entries.begin(), entries.end());
  }
  return LastIndex();
}

Status RaftLog::CheckOutOfBounds(uint64_t lo, uint64_t hi) const {
  assert(lo <= hi);
  if (lo < FirstIndex()) return ErrLogCompacted();
  if (hi > LastIndex() + 1) return ErrLogUnavailable();
  return Status::OK();
}

Result<std::vector<Entry>> RaftLog::Slice(uint64_t lo, uint64_t hi, uint64_t max_bytes) const {
  NATCD_RETURN_IF_ERROR(CheckOutOfBounds(lo, hi));
  std::vector<Entry> out;
  if (lo == hi) return out;
  if (lo < unstable_offset_) {
    auto stored = storage_->Entries(lo, std::min(hi, unstable_offset_), max_bytes);
    if (!stored.ok()) return stored.status();
    out = std::move(stored.value());
    // Storage stopped early because of the size limit: done.
    if (out.size() < std::min(hi, unstable_offset_) - lo) return out;
  }
  if (hi > unstable_offset_) {
    uint64_t from = std::max(lo, unstable_offset_);
    out.insert(out.end(), unstable_entries_.begin() + (from - unstable_offset_),
               unstable_entries_.begin() + (hi - unstable_offset_));
  }
  LimitSize(&out, max_bytes);
  return out;
}

Result<std::vector<Entry>> RaftLog::EntriesFrom(uint64_t i, uint64_t max_bytes) const {
  if (i > LastIndex()) return std::vector<Entry>{};
  return Slice(i, LastIndex() + 1, max_bytes);
}

std::vector<Entry> RaftLog::NextCommittedEntries() const {
  if (unstable_snapshot_) return {};  // the snapshot is applied first
  uint64_t lo = std::max(applied_ + 1, FirstIndex());
  if (committed_ + 1 <= lo) return {};
  auto entries = Slice(lo, committed_ + 1, max_applying_bytes_);
  assert(entries.ok());
  return entries.ok() ? std::move(entries.value()) : std::vector<Entry>{};
}

bool RaftLog::HasNextCommittedEntries() const {
  if (unstable_snapshot_) return false;
  return committed_ + 1 > std::max(applied_ + 1, FirstIndex());
}

Result<Snapshot> RaftLog::GetSnapshot() const {
  if (unstable_snapshot_) return *unstable_snapshot_;
  return storage_->GetSnapshot();
}

void RaftLog::CommitTo(uint64_t index) {
  if (index > committed_) {
    assert(index <= LastIndex());
    committed_ = index;
  }
}

bool RaftLog::MaybeCommit(uint64_t max_index, uint64_t term) {
  // Only an entry of the leader's own term commits by counting (Raft §5.4.2).
  if (max_index > committed_ && TermOr0(max_index) == term) {
    CommitTo(max_index);
    return true;
  }
  return false;
}

void RaftLog::AppliedTo(uint64_t index) {
  if (index == 0) return;
  assert(index <= committed_ && index >= applied_);
  applied_ = index;
}

void RaftLog::StableTo(uint64_t index, uint64_t term) {
  auto t = UnstableTerm(index);
  // Only when the entry is still the one that was persisted: a newer
  // leader may have replaced it meanwhile.
  if (t && *t == term && index >= unstable_offset_) {
    unstable_entries_.erase(unstable_entries_.begin(),
                            unstable_entries_.begin() + (index + 1 - unstable_offset_));
    unstable_offset_ = index + 1;
  }
}

void RaftLog::StableSnapTo(uint64_t index) {
  if (unstable_snapshot_ && unstable_snapshot_->meta.index == index) unstable_snapshot_.reset();
}

void RaftLog::Restore(Snapshot snapshot) {
  committed_ = snapshot.meta.index;
  unstable_offset_ = snapshot.meta.index + 1;
  unstable_entries_.clear();
  unstable_snapshot_ = std::move(snapshot);
}

}  // namespace natcd::raft
