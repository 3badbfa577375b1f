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
  // Milliseconds since the Unix epoch (wall time: may jump). Only for
  // things that must mean the same after a restart, such as how long a
  // request id is remembered.
  virtual int64_t RealtimeMs() = 0;
  // Nanoseconds on the monotonic clock, for durations that are measured
  // (metrics), never for deadlines.
  virtual int64_t MonotonicNs() { return MonotonicMs() * 1'000'000; }
};

// The process's CLOCK_MONOTONIC.
class SystemClock final : public Clock {
 public:
  int64_t MonotonicMs() override;
  int64_t RealtimeMs() override;
  int64_t MonotonicNs() override;
};

// A clock that only moves when told to. Not thread-safe.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(int64_t start_ms = 1'000'000) : now_ms_(start_ms) {}
  int64_t MonotonicMs() override { return now_ms_; }
  // Wall time moves with the monotonic time, from a fixed date.
  int64_t RealtimeMs() override { return kRealtimeBaseMs + now_ms_; }
  void AdvanceMs(int64_t delta_ms) { now_ms_ += delta_ms; }
  static constexpr int64_t kRealtimeBaseMs = 1'800'000'000'000;

 private:
  int64_t now_ms_;
};

}  // namespace natcd
