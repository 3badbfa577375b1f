// AutoCompactor: decides when to compact on its own, as etcd's
// --auto-compaction-mode/--auto-compaction-retention do.
//
//   kRevision: keep the last `retention` revisions; checked every
//     check_interval_ms (etcd: 5 minutes), compacting at current - retention.
//   kPeriodic: keep `retention` milliseconds of history: the revision seen
//     `retention` ago is sampled every retention/10 and compacted to.
//
// Pure policy: time comes in as an argument, nothing is applied here.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <utility>

namespace natcd {

class AutoCompactor {
 public:
  enum class Mode { kOff, kRevision, kPeriodic };

  AutoCompactor(Mode mode, int64_t retention, int64_t check_interval_ms = 300'000)
      : mode_(mode), retention_(retention), check_interval_ms_(check_interval_ms) {}

  // The revision to compact at now, if any (always above compact_revision
  // and at most current_revision).
  std::optional<int64_t> Due(int64_t now_ms, int64_t current_revision, int64_t compact_revision);

 private:
  Mode mode_;
  int64_t retention_;
  int64_t check_interval_ms_;
  int64_t next_check_ms_ = 0;
  // kPeriodic: (time, revision) samples, oldest first.
  std::deque<std::pair<int64_t, int64_t>> samples_;
};

}  // namespace natcd
