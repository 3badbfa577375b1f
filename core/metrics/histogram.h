// Histogram: observations counted into buckets (Prometheus "histogram").
//
// A histogram has fixed upper bounds b0 < b1 < ... < bn-1, chosen at
// creation, plus the implicit +Inf. An observation v is counted in the first
// bucket whose bound is >= v (Prometheus' `le`, "less or equal"); NaN goes
// to +Inf, as client_golang does. The exposition reports the buckets
// cumulatively, their sum and the number of observations.
//
// Thread safety: any thread may Observe at any time, concurrently with
// Read. Observe is a binary search over the bounds and two atomic updates:
// no lock, no allocation. An observation adds to one bucket only and Read
// derives the count from the buckets, so `_count` always equals the `+Inf`
// bucket; `_sum` may be an observation ahead of or behind the buckets
// during a concurrent Observe (the price of a lock-free write).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

namespace natcd::metrics {

// Buckets as client_golang's ExponentialBuckets(start, factor, count):
// start, start*factor, start*factor^2, ... (count bounds, each the previous
// times factor, so they print as Go prints them). start > 0, factor > 1,
// count >= 1.
std::vector<double> ExponentialBuckets(double start, double factor, int count);
// client_golang's LinearBuckets(start, width, count).
std::vector<double> LinearBuckets(double start, double width, int count);

class Histogram {
 public:
  // upper_bounds: finite, strictly increasing, may be empty (+Inf only).
  explicit Histogram(std::vector<double> upper_bounds);
  Histogram(const Histogram&) = delete;
  Histogram& operator=(const Histogram&) = delete;

  void Observe(double v);

  struct Snapshot {
    std::vector<uint64_t> cumulative;  // one per bound, then +Inf
    uint64_t count = 0;                // == cumulative.back()
    double sum = 0;
  };
  Snapshot Read() const;
  const std::vector<double>& upper_bounds() const { return upper_bounds_; }

 private:
  const std::vector<double> upper_bounds_;
  // One per bound, then +Inf; not cumulative (Read adds them up).
  std::unique_ptr<std::atomic<uint64_t>[]> counts_;
  std::atomic<double> sum_{0};
};

}  // namespace natcd::metrics
