// Time is an input. The lease manager and the node read a monotonic clock
// through this interface so that tests drive time by hand and every run is
// deterministic.
#pragma once

#include <cstdint>

namespace natcd {

class Clock {
 public:
  virtual ~Clock() = default;
  // Milliseconds on a clock that never goes backwards; the epoch is arbitrary.
  virtual int64_t MonotonicMs() = 0;
};

// The process's CLOCK_MONOTONIC.
class SystemClock final : public Clock {
 public:
  int64_t MonotonicMs() override;
};

// A clock that only moves when told to. Not thread-safe.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(int64_t start_ms = 1'000'000) : now_ms_(start_ms) {}
  int64_t MonotonicMs() override { return now_ms_; }
  void AdvanceMs(int64_t delta_ms) { now_ms_ += delta_ms; }

 private:
  int64_t now_ms_;
};

}  // namespace natcd
