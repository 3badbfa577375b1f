#include "raft/progress.h"

#include <algorithm>

namespace natcd::raft {

void Progress::BecomeProbe() {
  // After a snapshot, the follower has at least the snapshot's entries.
  if (state == ProgressState::kSnapshot) {
    next = std::max(match + 1, pending_snapshot + 1);
  } else {
    next = match + 1;
  }
  state = ProgressState::kProbe;
  pending_snapshot = 0;
  probe_sent = false;
  inflights.Reset();
}

void Progress::BecomeReplicate() {
  state = ProgressState::kReplicate;
  next = match + 1;
  pending_snapshot = 0;
  probe_sent = false;
  inflights.Reset();
}

void Progress::BecomeSnapshot(uint64_t snapshot_index) {
  state = ProgressState::kSnapshot;
  pending_snapshot = snapshot_index;
  probe_sent = false;
  inflights.Reset();
}

bool Progress::MaybeUpdate(uint64_t n) {
  bool updated = false;
  if (match < n) {
    match = n;
    updated = true;
    probe_sent = false;
  }
  next = std::max(next, n + 1);
  return updated;
}

bool Progress::MaybeDecrTo(uint64_t rejected, uint64_t match_hint) {
  if (state == ProgressState::kReplicate) {
    // Appends are pipelined: only a rejection above match is news, and
    // then everything after match is resent.
    if (rejected <= match) return false;
    next = match + 1;
    return true;
  }
  // Probing: only the answer to the probe in flight counts.
  if (next == 0 || next - 1 != rejected) return false;
  next = std::max<uint64_t>(std::min(rejected, match_hint + 1), 1);
  probe_sent = false;
  return true;
}

bool Progress::IsPaused() const {
  switch (state) {
    case ProgressState::kProbe:
      return probe_sent;
    case ProgressState::kReplicate:
      return inflights.Full();
    case ProgressState::kSnapshot:
      return true;
  }
  return true;
}

}  // namespace natcd::raft
