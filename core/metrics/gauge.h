// Gauge: a value that goes up and down (Prometheus "gauge").
//
// Thread safety: any thread may Set or Add at any time, concurrently with a
// scrape. Set is one atomic store and Add one lock-free compare-and-swap
// loop: no lock, no allocation.
#pragma once

#include <atomic>

namespace natcd::metrics {

class Gauge {
 public:
  static_assert(std::atomic<double>::is_always_lock_free);

  Gauge() = default;
  Gauge(const Gauge&) = delete;
  Gauge& operator=(const Gauge&) = delete;

  void Set(double v) { value_.store(v, std::memory_order_relaxed); }
  void Add(double delta) { value_.fetch_add(delta, std::memory_order_relaxed); }
  void Sub(double delta) { Add(-delta); }
  void Inc() { Add(1); }
  void Dec() { Add(-1); }
  double Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

}  // namespace natcd::metrics
