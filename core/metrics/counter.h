// Counter: a value that only goes up (Prometheus "counter").
//
// Thread safety: any thread may Add at any time, concurrently with a scrape.
// An increment is one relaxed atomic add: no lock, no allocation, so the
// engine thread can count on its hot path.
#pragma once

#include <atomic>
#include <cstdint>

namespace natcd::metrics {

class Counter {
 public:
  Counter() = default;
  Counter(const Counter&) = delete;
  Counter& operator=(const Counter&) = delete;

  void Inc() { Add(1); }
  void Add(uint64_t n) { value_.fetch_add(n, std::memory_order_relaxed); }
  uint64_t Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> value_{0};
};

}  // namespace natcd::metrics
