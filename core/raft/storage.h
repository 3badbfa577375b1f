// Storage: what Raft reads of its own stable log. The application writes
// to it (entries and hard state from a Ready, before calling Advance);
// Raft only reads. MemoryStorage is the simulator's; DurableRaftStorage is
// natcd's.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "natcd/status.h"
#include "raft/types.h"

namespace natcd::raft {

// Errors Storage returns. Raft handles each: a compacted index sends a
// snapshot instead; an unavailable one is retried later.
Status ErrLogCompacted();       // the index is below FirstIndex()
Status ErrLogUnavailable();     // the index is above LastIndex()
Status ErrSnapshotOutOfDate();  // a snapshot older than the one held
bool IsLogCompacted(const Status& status);

class Storage {
 public:
  virtual ~Storage() = default;

  virtual HardState InitialHardState() const = 0;
  virtual ConfState InitialConfState() const = 0;
  // Entries [lo, hi), at least one if any, at most max_bytes in all
  // (counting data bytes).
  virtual Result<std::vector<Entry>> Entries(uint64_t lo, uint64_t hi,
                                             uint64_t max_bytes) const = 0;
  // The term of entry i, which must be in [FirstIndex() - 1, LastIndex()].
  virtual Result<uint64_t> Term(uint64_t i) const = 0;
  // The first index still in the log (the snapshot's index + 1).
  virtual uint64_t FirstIndex() const = 0;
  virtual uint64_t LastIndex() const = 0;
  virtual Result<Snapshot> GetSnapshot() const = 0;
};

// Everything in memory. Index 0 of ents_ is a dummy carrying the
// snapshot's index and term, so Term(FirstIndex() - 1) answers.
class MemoryStorage final : public Storage {
 public:
  MemoryStorage();

  HardState InitialHardState() const override { return hard_state_; }
  ConfState InitialConfState() const override { return snapshot_.meta.conf_state; }
  Result<std::vector<Entry>> Entries(uint64_t lo, uint64_t hi, uint64_t max_bytes) const override;
  Result<uint64_t> Term(uint64_t i) const override;
  uint64_t FirstIndex() const override { return ents_.front().index + 1; }
  uint64_t LastIndex() const override { return ents_.front().index + ents_.size() - 1; }
  Result<Snapshot> GetSnapshot() const override { return snapshot_; }

  void SetHardState(const HardState& hs) { hard_state_ = hs; }
  // Replaces everything with the snapshot (a follower receiving one).
  Status ApplySnapshot(Snapshot snapshot);
  // Records the state machine at index i (<= the applied index) as the
  // snapshot; the log is kept until Compact.
  Status CreateSnapshot(uint64_t i, const ConfState& cs, std::string data);
  // Drops entries before index i.
  Status Compact(uint64_t i);
  // Appends entries, replacing any conflicting suffix.
  Status Append(const std::vector<Entry>& entries);

 private:
  HardState hard_state_;
  Snapshot snapshot_;
  std::vector<Entry> ents_;
};

// Entries from the front of `entries` whose data adds up to at most
// max_bytes, and always at least one.
void LimitSize(std::vector<Entry>* entries, uint64_t max_bytes);

}  // namespace natcd::raft
