// Progress: what a leader knows of one follower's log, and how it sends to
// it (etcd's tracker.Progress). Probe: one append at a time until the match
// point is found. Replicate: appends pipelined optimistically, at most
// max_inflight unacknowledged. Snapshot: waiting for a snapshot to land.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>

namespace natcd::raft {

enum class ProgressState : uint8_t { kProbe, kReplicate, kSnapshot };

// The last indexes of appends sent but not yet acknowledged, bounded.
class Inflights {
 public:
  explicit Inflights(size_t capacity) : capacity_(capacity) {}
  bool Full() const { return indexes_.size() >= capacity_; }
  size_t Count() const { return indexes_.size(); }
  void Add(uint64_t last_index) { indexes_.push_back(last_index); }
  // Frees every append whose last index is <= index.
  void FreeTo(uint64_t index) {
    while (!indexes_.empty() && indexes_.front() <= index) indexes_.pop_front();
  }
  void FreeFirstOne() {
    if (!indexes_.empty()) indexes_.pop_front();
  }
  void Reset() { indexes_.clear(); }

 private:
  size_t capacity_;
  std::deque<uint64_t> indexes_;
};

struct Progress {
  explicit Progress(size_t max_inflight) : inflights(max_inflight) {}

  uint64_t match = 0;
  uint64_t next = 1;
  ProgressState state = ProgressState::kProbe;
  uint64_t pending_snapshot = 0;  // kSnapshot: the index of the snapshot sent
  // Heard from since the last check-quorum round.
  bool recent_active = false;
  // kProbe: an append is out; wait for its answer (or a heartbeat's).
  bool probe_sent = false;
  bool is_learner = false;
  // The highest commit index sent to it (in an append or a heartbeat).
  uint64_t sent_commit = 0;
  Inflights inflights;

  void BecomeProbe();
  void BecomeReplicate();
  void BecomeSnapshot(uint64_t snapshot_index);
  // The follower acknowledged up to n. False when that is old news.
  bool MaybeUpdate(uint64_t n);
  void OptimisticUpdate(uint64_t n) { next = n + 1; }
  // The follower rejected an append at `rejected`; its log ends at or
  // before match_hint. False when the rejection is stale.
  bool MaybeDecrTo(uint64_t rejected, uint64_t match_hint);
  bool IsPaused() const;
};

}  // namespace natcd::raft
