// A latency histogram with bounded relative error, in the style of
// HdrHistogram: values below 128 ns are counted exactly; above, each power
// of two is split into 64 equal buckets, so a bucket's width is at most
// 1/64 (1.6 %) of the values it holds. Memory is fixed (about 30 KiB) no
// matter how many values are recorded, so a run of millions of requests
// costs no more than one of ten, and histograms of several threads merge
// exactly.
//
// Min, max, count and mean are exact; percentiles are exact below 128 ns
// and for the first and last value (p0, p100), and otherwise the midpoint
// of the bucket holding the nearest-rank value, clamped to [min, max].
//
// Thread safety: none; record from one thread or under a lock, or record
// into one histogram per thread and Merge.
#pragma once

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

namespace natcd::bench {

class Histogram {
 public:
  // Negative values count as 0.
  void Record(int64_t value_ns);
  void Merge(const Histogram& other);

  uint64_t count() const { return count_; }
  int64_t min() const { return count_ ? min_ : 0; }
  int64_t max() const { return count_ ? max_ : 0; }
  double mean() const { return count_ ? static_cast<double>(sum_) / count_ : 0; }

  // Nearest rank: the smallest recorded value (as above) such that at least
  // p % of the values are at or below it. p in [0, 100]; 0 with no values.
  int64_t Percentile(double p) const;

  // (value, fraction of values <= value) for each non-empty bucket, in
  // increasing order; the last fraction is 1. For plotting a CDF.
  std::vector<std::pair<int64_t, double>> Cdf() const;

  // Bucket arithmetic, public for tests.
  static constexpr int kSubBucketBits = 7;
  static constexpr int kHalf = 1 << (kSubBucketBits - 1);  // 64 buckets per octave
  // Values below 2 * kHalf, then kHalf buckets for each shift 1 .. 56 (the
  // largest int64 has 63 bits: 63 - kSubBucketBits).
  static constexpr int kBuckets = 2 * kHalf + (63 - kSubBucketBits) * kHalf;
  static int BucketOf(int64_t value);
  static int64_t BucketLow(int bucket);    // smallest value in the bucket
  static int64_t BucketWidth(int bucket);  // number of values in it

 private:
  std::array<uint64_t, kBuckets> counts_{};
  uint64_t count_ = 0;
  int64_t min_ = INT64_MAX;
  int64_t max_ = 0;
  __int128 sum_ = 0;
};

}  // namespace natcd::bench
