#include "plugin/natcd-bench/histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace natcd::bench {

int Histogram::BucketOf(int64_t value) {
  const uint64_t v = value < 0 ? 0 : static_cast<uint64_t>(value);
  if (v < (uint64_t{1} << kSubBucketBits)) return static_cast<int>(v);
  // shift >= 1; v >> shift lies in [kHalf, 2 * kHalf).
  const int shift = std::bit_width(v) - kSubBucketBits;
  return shift * kHalf + static_cast<int>(v >> shift);
}

int64_t Histogram::BucketLow(int bucket) {
  if (bucket < 2 * kHalf) return bucket;
  const int shift = bucket / kHalf - 1;
  const int64_t top = bucket - shift * kHalf;
  return top << shift;
}

int64_t Histogram::BucketWidth(int bucket) {
  if (bucket < 2 * kHalf) return 1;
  return int64_t{1} << (bucket / kHalf - 1);
}

void Histogram::Record(int64_t value_ns) {
  const int64_t v = std::max<int64_t>(value_ns, 0);
  ++counts_[BucketOf(v)];
  ++count_;
  min_ = std::min(min_, v);
  max_ = std::max(max_, v);
  sum_ += v;
}

void Histogram::Merge(const Histogram& other) {
  for (int b = 0; b < kBuckets; ++b) counts_[b] += other.counts_[b];
  count_ += other.count_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
  sum_ += other.sum_;
}

int64_t Histogram::Percentile(double p) const {
  if (count_ == 0) return 0;
  p = std::clamp(p, 0.0, 100.0);
  // Nearest rank, at least the first value.
  const uint64_t rank =
      std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(p / 100.0 * count_ - 1e-9)));
  // The first and the last value are known exactly.
  if (rank == 1) return min_;
  if (rank >= count_) return max_;
  uint64_t seen = 0;
  for (int b = 0; b < kBuckets; ++b) {
    seen += counts_[b];
    if (seen >= rank) {
      const int64_t mid = BucketLow(b) + (BucketWidth(b) - 1) / 2;
      return std::clamp(mid, min_, max_);
    }
  }
  return max_;
}

std::vector<std::pair<int64_t, double>> Histogram::Cdf() const {
  std::vector<std::pair<int64_t, double>> points;
  uint64_t seen = 0;
  for (int b = 0; b < kBuckets && seen < count_; ++b) {
    if (counts_[b] == 0) continue;
    seen += counts_[b];
    // Width - 1 first: the last bucket ends at INT64_MAX.
    const int64_t top = std::clamp(BucketLow(b) + (BucketWidth(b) - 1), min_, max_);
    points.emplace_back(top, static_cast<double>(seen) / count_);
  }
  return points;
}

}  // namespace natcd::bench
