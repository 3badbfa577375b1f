#include "metrics/histogram.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace natcd::metrics {

std::vector<double> ExponentialBuckets(double start, double factor, int count) {
  assert(start > 0 && factor > 1 && count >= 1);
  std::vector<double> bounds;
  bounds.reserve(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) {
    bounds.push_back(start);
    start *= factor;
  }
  return bounds;
}

std::vector<double> LinearBuckets(double start, double width, int count) {
  assert(width > 0 && count >= 1);
  std::vector<double> bounds;
  bounds.reserve(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) {
    bounds.push_back(start);
    start += width;
  }
  return bounds;
}

Histogram::Histogram(std::vector<double> upper_bounds)
    : upper_bounds_(std::move(upper_bounds)),
      counts_(new std::atomic<uint64_t>[upper_bounds_.size() + 1]) {
  for (size_t i = 0; i < upper_bounds_.size(); ++i) {
    assert(std::isfinite(upper_bounds_[i]));
    assert(i == 0 || upper_bounds_[i - 1] < upper_bounds_[i]);
  }
  for (size_t i = 0; i <= upper_bounds_.size(); ++i) counts_[i].store(0);
}

void Histogram::Observe(double v) {
  size_t bucket =
      std::isnan(v)
          ? upper_bounds_.size()
          : static_cast<size_t>(std::lower_bound(upper_bounds_.begin(), upper_bounds_.end(), v) -
                                upper_bounds_.begin());
  counts_[bucket].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(v, std::memory_order_relaxed);
}

Histogram::Snapshot Histogram::Read() const {
  Snapshot s;
  s.cumulative.reserve(upper_bounds_.size() + 1);
  uint64_t running = 0;
  for (size_t i = 0; i <= upper_bounds_.size(); ++i) {
    running += counts_[i].load(std::memory_order_relaxed);
    s.cumulative.push_back(running);
  }
  s.count = running;
  s.sum = sum_.load(std::memory_order_relaxed);
  return s;
}

}  // namespace natcd::metrics
