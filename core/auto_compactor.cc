#include "natcd/auto_compactor.h"

#include <algorithm>

namespace natcd {

std::optional<int64_t> AutoCompactor::Due(int64_t now_ms, int64_t current_revision,
                                          int64_t compact_revision) {
  if (mode_ == Mode::kOff || retention_ <= 0 || now_ms < next_check_ms_) return std::nullopt;
  std::optional<int64_t> target;
  if (mode_ == Mode::kRevision) {
    next_check_ms_ = now_ms + check_interval_ms_;
    target = current_revision - retention_;
  } else {
    next_check_ms_ = now_ms + std::max<int64_t>(1, retention_ / 10);
    samples_.emplace_back(now_ms, current_revision);
    // The newest sample at least `retention` old is what may be dropped.
    while (samples_.size() > 1 && now_ms - samples_[1].first >= retention_) samples_.pop_front();
    if (now_ms - samples_.front().first >= retention_) target = samples_.front().second;
  }
  if (!target || *target <= compact_revision || *target > current_revision) return std::nullopt;
  return target;
}

}  // namespace natcd
