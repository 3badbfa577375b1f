#include "metrics/histogram.h"

#include <gtest/gtest.h>

#include <cmath>

#include "metrics/text_format.h"

namespace natcd::metrics {
namespace {

// etcd's etcd_disk_wal_fsync_duration_seconds buckets, as Prometheus shows
// them for etcd.
TEST(HistogramTest, ExponentialBucketsPrintAsGoPrintsThem) {
  std::vector<double> b = ExponentialBuckets(0.001, 2, 14);
  ASSERT_EQ(b.size(), 14u);
  std::string printed;
  for (double v : b) {
    AppendValue(&printed, v);
    printed += ' ';
  }
  EXPECT_EQ(printed,
            "0.001 0.002 0.004 0.008 0.016 0.032 0.064 0.128 0.256 0.512 1.024 2.048 "
            "4.096 8.192 ");
}

TEST(HistogramTest, LinearBuckets) {
  EXPECT_EQ(LinearBuckets(1, 2, 3), (std::vector<double>{1, 3, 5}));
}

TEST(HistogramTest, BoundsAreInclusiveAndNaNGoesToInf) {
  Histogram h({1, 2});
  h.Observe(-5);
  h.Observe(1);
  h.Observe(1.0000001);
  h.Observe(2);
  h.Observe(3);
  h.Observe(NAN);
  Histogram::Snapshot s = h.Read();
  EXPECT_EQ(s.cumulative, (std::vector<uint64_t>{2, 4, 6}));
  EXPECT_EQ(s.count, 6u);
  EXPECT_TRUE(std::isnan(s.sum));
}

TEST(HistogramTest, NoBoundsCountsInInfOnly) {
  Histogram h({});
  h.Observe(1);
  h.Observe(2);
  Histogram::Snapshot s = h.Read();
  EXPECT_EQ(s.cumulative, (std::vector<uint64_t>{2}));
  EXPECT_EQ(s.sum, 3);
}

}  // namespace
}  // namespace natcd::metrics
