// RaftLog: the log as Raft sees it — what is on stable storage, plus the
// unstable tail (entries, or a snapshot) that the application has been
// handed in a Ready but has not yet confirmed persisted. As etcd's
// raftLog/unstable pair.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "raft/storage.h"
#include "raft/types.h"

namespace natcd::raft {

class RaftLog {
 public:
  RaftLog(const Storage* storage, uint64_t max_applying_bytes);

  uint64_t committed() const { return committed_; }
  uint64_t applied() const { return applied_; }
  uint64_t FirstIndex() const;
  uint64_t LastIndex() const;
  uint64_t LastTerm() const;
  // The term of entry i; 0 when i is out of range, compacted or unavailable.
  uint64_t TermOr0(uint64_t i) const;
  Result<uint64_t> Term(uint64_t i) const;
  bool MatchTerm(uint64_t i, uint64_t term) const;
  // Whether a log ending at (last_index, term) is at least as up to date
  // as this one (Raft §5.4.1).
  bool IsUpToDate(uint64_t last_index, uint64_t term) const;

  // A follower's append: entries after (index, log_term) if it matches.
  // Returns the new last index, or nullopt when (index, log_term) does not
  // match (the leader must back off).
  std::optional<uint64_t> MaybeAppend(uint64_t index, uint64_t log_term, uint64_t committed,
                                      const std::vector<Entry>& entries);
  // Appends to the unstable tail (truncating a conflicting suffix).
  uint64_t Append(const std::vector<Entry>& entries);
  // The first index in entries whose term differs from the log's, or 0.
  uint64_t FindConflict(const std::vector<Entry>& entries) const;
  // The largest (index', term') with index' <= index and term' <= term:
  // lets a leader skip a whole term of conflicting entries at once.
  std::pair<uint64_t, uint64_t> FindConflictByTerm(uint64_t index, uint64_t term) const;

  // Entries [lo, hi), at most max_bytes (at least one).
  Result<std::vector<Entry>> Slice(uint64_t lo, uint64_t hi, uint64_t max_bytes) const;
  Result<std::vector<Entry>> EntriesFrom(uint64_t i, uint64_t max_bytes) const;
  // The unstable entries the application must persist.
  const std::vector<Entry>& UnstableEntries() const { return unstable_entries_; }
  const std::optional<Snapshot>& UnstableSnapshot() const { return unstable_snapshot_; }
  // Committed entries not yet applied, up to max_applying_bytes.
  std::vector<Entry> NextCommittedEntries() const;
  bool HasNextCommittedEntries() const;
  Result<Snapshot> GetSnapshot() const;

  void CommitTo(uint64_t index);
  bool MaybeCommit(uint64_t max_index, uint64_t term);
  void AppliedTo(uint64_t index);
  void StableTo(uint64_t index, uint64_t term);
  void StableSnapTo(uint64_t index);
  // Replaces the log with a snapshot (in the unstable part until persisted).
  void Restore(Snapshot snapshot);

 private:
  uint64_t UnstableOffset() const { return unstable_offset_; }
  std::optional<uint64_t> UnstableTerm(uint64_t i) const;
  Status CheckOutOfBounds(uint64_t lo, uint64_t hi) const;

  const Storage* storage_;
  uint64_t max_applying_bytes_;
  // Unstable part: an optional incoming snapshot and entries starting at
  // unstable_offset_.
  std::optional<Snapshot> unstable_snapshot_;
  std::vector<Entry> unstable_entries_;
  uint64_t unstable_offset_;
  uint64_t committed_;
  uint64_t applied_;
};

}  // namespace natcd::raft
