// The workload generators: the keys, ranges and values every target uses.
#include "plugin/natcd-bench/workload.h"

#include <gtest/gtest.h>

#include <set>

namespace natcd::bench {
namespace {

TEST(WorkloadTest, PutsAndGetsCoverTenThousandDistinctKeys) {
  std::set<std::string> keys;
  for (uint64_t i = 0; i < 3 * kDataKeys; ++i) {
    const std::string put = KeyOf(Op::kPut, i);
    ASSERT_EQ(put, KeyOf(Op::kGet, i)) << "a get reads what the put of the same number wrote";
    keys.insert(put);
  }
  EXPECT_EQ(keys.size(), kDataKeys);
  EXPECT_EQ(KeyOf(Op::kPut, 42), "k/000042");
  EXPECT_EQ(SlashKey(KeyOf(Op::kPut, 42)), "/bench/k/000042");
  EXPECT_EQ(DotKey(KeyOf(Op::kPut, 42)), "k.000042");
}

TEST(WorkloadTest, WatchPutsStayUnderTheWatchedPrefix) {
  std::set<std::string> keys;
  for (uint64_t i = 0; i < 5'000; ++i) {
    const std::string key = SlashKey(KeyOf(Op::kWatchPut, i));
    ASSERT_EQ(key.rfind("/bench/w/", 0), 0u);
    keys.insert(key);
  }
  EXPECT_EQ(keys.size(), kWatchKeys);
}

TEST(WorkloadTest, FillAndLeaseKeysAreDistinct) {
  EXPECT_NE(KeyOf(Op::kFill, 99'999), KeyOf(Op::kFill, 9'999));
  EXPECT_EQ(KeyOf(Op::kFill, 99'999), "f/099999");
  EXPECT_EQ(KeyOf(Op::kPutLeased, 7), "l/000007");
}

TEST(WorkloadTest, EachRangeHoldsExactlyOneHundredDataKeysAndTheyTileTheKeys) {
  std::vector<int> hits(kDataKeys, 0);
  for (uint64_t i = 0; i < kDataKeys / kRangeKeys; ++i) {
    const KeyRange r = RangeOf(i);
    int inside = 0;
    for (uint64_t k = 0; k < kDataKeys; ++k) {
      const std::string key = SlashKey(KeyOf(Op::kPut, k));
      if (key >= r.key && key < r.range_end) {
        ++inside;
        ++hits[k];
      }
    }
    EXPECT_EQ(inside, static_cast<int>(kRangeKeys)) << r.key;
  }
  for (uint64_t k = 0; k < kDataKeys; ++k) EXPECT_EQ(hits[k], 1) << k;
  EXPECT_EQ(RangeOf(100).key, RangeOf(0).key);
}

TEST(WorkloadTest, PrefixEnd) {
  EXPECT_EQ(PrefixEnd("/a/"), "/a0");
  EXPECT_EQ(PrefixEnd("ab"), "ac");
  EXPECT_EQ(PrefixEnd(std::string("a\xff", 2)), "b");
  EXPECT_EQ(PrefixEnd(std::string("\xff\xff", 2)), std::string(1, '\0'));
  EXPECT_EQ(PrefixEnd(""), std::string(1, '\0'));
}

TEST(WorkloadTest, ValuesAreOneHundredBytesAndDiffer) {
  EXPECT_EQ(ValueOf(1).size(), kValueBytes);
  EXPECT_EQ(ValueOf(123456).size(), kValueBytes);
  EXPECT_NE(ValueOf(1), ValueOf(2));
  EXPECT_EQ(TimestampedValue(5).size(), kValueBytes);
}

TEST(WorkloadTest, TimestampRoundTrips) {
  for (int64_t t : {int64_t{0}, int64_t{1}, int64_t{1'234'567'890'123'456}, INT64_MAX}) {
    const std::string v = TimestampedValue(t);
    auto back = TimestampOf(v.data(), v.size());
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(*back, t);
  }
  EXPECT_FALSE(TimestampOf("short", 5).has_value());
  EXPECT_FALSE(TimestampOf(nullptr, 0).has_value());
}

TEST(WorkloadTest, SelectKeepsTheRunOrderAndRejectsUnknownNames) {
  std::string unknown;
  auto all = SelectWorkloads("all", &unknown);
  ASSERT_TRUE(all.has_value());
  EXPECT_EQ(all->size(), AllWorkloads().size());
  auto some = SelectWorkloads("keepalive-256,put-seq", &unknown);
  ASSERT_TRUE(some.has_value());
  ASSERT_EQ(some->size(), 2u);
  EXPECT_EQ((*some)[0].name, "put-seq");
  EXPECT_EQ((*some)[1].name, "keepalive-256");
  EXPECT_FALSE(SelectWorkloads("put-seq,nope", &unknown).has_value());
  EXPECT_EQ(unknown, "nope");
}

TEST(WorkloadTest, EveryWorkloadOfTheIssueIsThere) {
  std::set<int> numbers;
  for (const Workload& w : AllWorkloads()) numbers.insert(w.number);
  EXPECT_EQ(numbers, (std::set<int>{1, 2, 3, 4, 5, 6, 7, 8}));
}

TEST(WorkloadTest, QuickIsSmallerThanFull) {
  const Scale quick = QuickScale(), full = FullScale();
  EXPECT_LT(quick.load_ms, full.load_ms);
  EXPECT_LT(quick.expiry_leases, full.expiry_leases);
  EXPECT_LT(quick.footprint_keys, full.footprint_keys);
  EXPECT_EQ(full.expiry_leases, 100'000u);
  EXPECT_EQ(full.footprint_keys, 100'000u);
  EXPECT_EQ(full.watchers, (std::vector<int>{1, 100, 1'000}));
}

}  // namespace
}  // namespace natcd::bench
