// The latency histogram: exact where it promises to be, within its error
// bound elsewhere (checked against sorting every value), mergeable.
#include "plugin/natcd-bench/histogram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace natcd::bench {
namespace {

// Nearest-rank percentile of the exact values: the reference.
int64_t Exact(std::vector<int64_t> values, double p) {
  std::sort(values.begin(), values.end());
  const uint64_t rank =
      std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(p / 100.0 * values.size() - 1e-9)));
  return values[rank - 1];
}

TEST(HistogramTest, EmptyIsZero) {
  Histogram h;
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.Percentile(50), 0);
  EXPECT_EQ(h.min(), 0);
  EXPECT_EQ(h.max(), 0);
  EXPECT_TRUE(h.Cdf().empty());
}

TEST(HistogramTest, SmallValuesAreExact) {
  Histogram h;
  for (int64_t v = 1; v <= 100; ++v) h.Record(v);
  EXPECT_EQ(h.Percentile(50), 50);
  EXPECT_EQ(h.Percentile(99), 99);
  EXPECT_EQ(h.Percentile(100), 100);
  EXPECT_EQ(h.Percentile(0), 1);
  EXPECT_EQ(h.min(), 1);
  EXPECT_EQ(h.max(), 100);
  EXPECT_DOUBLE_EQ(h.mean(), 50.5);
}

TEST(HistogramTest, NegativeCountsAsZero) {
  Histogram h;
  h.Record(-5);
  EXPECT_EQ(h.count(), 1u);
  EXPECT_EQ(h.max(), 0);
}

TEST(HistogramTest, ExtremeValues) {
  Histogram h;
  h.Record(0);
  h.Record(INT64_MAX);
  EXPECT_EQ(h.Percentile(100), INT64_MAX);
  EXPECT_EQ(h.Percentile(50), 0);
  EXPECT_EQ(h.Cdf().back().first, INT64_MAX);
}

TEST(HistogramTest, BucketsTileTheValues) {
  // Every value falls in the bucket whose range holds it, and consecutive
  // buckets leave no gap.
  for (int b = 0; b + 1 < Histogram::kBuckets; ++b) {
    ASSERT_EQ(Histogram::BucketLow(b) + Histogram::BucketWidth(b), Histogram::BucketLow(b + 1))
        << "bucket " << b;
  }
  std::mt19937_64 rng(7);
  for (int n = 0; n < 100'000; ++n) {
    const int64_t v = static_cast<int64_t>(rng() >> (rng() % 63 + 1));
    const int b = Histogram::BucketOf(v);
    ASSERT_LE(Histogram::BucketLow(b), v);
    ASSERT_LT(v - Histogram::BucketLow(b), Histogram::BucketWidth(b));
    // The promised bound: a bucket is at most 1/64 of its values wide.
    if (v >= 128) {
      ASSERT_LE(Histogram::BucketWidth(b) * 64, Histogram::BucketLow(b));
    }
  }
  EXPECT_EQ(Histogram::BucketOf(INT64_MAX), Histogram::kBuckets - 1);
  EXPECT_EQ(Histogram::BucketLow(Histogram::kBuckets - 1) +
                (Histogram::BucketWidth(Histogram::kBuckets - 1) - 1),
            INT64_MAX);
}

TEST(HistogramTest, PercentilesWithinRelativeErrorOfSortedValues) {
  // Latency-like values: log-normal around 300 µs with a long tail.
  std::mt19937_64 rng(42);
  std::lognormal_distribution<double> dist(std::log(300'000.0), 0.8);
  std::vector<int64_t> values;
  Histogram h;
  for (int n = 0; n < 50'000; ++n) {
    const auto v = static_cast<int64_t>(dist(rng));
    values.push_back(v);
    h.Record(v);
  }
  for (double p : {1.0, 10.0, 50.0, 90.0, 99.0, 99.9, 100.0}) {
    const double exact = static_cast<double>(Exact(values, p));
    EXPECT_NEAR(static_cast<double>(h.Percentile(p)), exact, exact / 64.0) << "p" << p;
  }
  EXPECT_EQ(h.min(), *std::min_element(values.begin(), values.end()));
  EXPECT_EQ(h.max(), *std::max_element(values.begin(), values.end()));
}

TEST(HistogramTest, MergeEqualsRecordingEverything) {
  Histogram a, b, all;
  for (int64_t v = 0; v < 10'000; v += 7) {
    (v % 2 ? a : b).Record(v * 1'000);
    all.Record(v * 1'000);
  }
  a.Merge(b);
  EXPECT_EQ(a.count(), all.count());
  EXPECT_EQ(a.min(), all.min());
  EXPECT_EQ(a.max(), all.max());
  EXPECT_DOUBLE_EQ(a.mean(), all.mean());
  for (double p : {5.0, 50.0, 95.0, 99.0}) EXPECT_EQ(a.Percentile(p), all.Percentile(p));
}

TEST(HistogramTest, CdfRisesToOne) {
  Histogram h;
  for (int64_t v = 1; v <= 1'000'000; v += 997) h.Record(v);
  const auto cdf = h.Cdf();
  ASSERT_FALSE(cdf.empty());
  for (size_t i = 1; i < cdf.size(); ++i) {
    EXPECT_GT(cdf[i].first, cdf[i - 1].first);
    EXPECT_GT(cdf[i].second, cdf[i - 1].second);
  }
  EXPECT_DOUBLE_EQ(cdf.back().second, 1.0);
  EXPECT_EQ(cdf.back().first, h.max());
}

}  // namespace
}  // namespace natcd::bench
