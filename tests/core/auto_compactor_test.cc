// Auto-compaction policy, as etcd's revision and periodic compactors.
#include "natcd/auto_compactor.h"

#include <gtest/gtest.h>

namespace natcd {
namespace {

TEST(AutoCompactorTest, OffNeverCompacts) {
  AutoCompactor off(AutoCompactor::Mode::kOff, 10);
  EXPECT_FALSE(off.Due(1'000'000, 1'000, 0));
}

TEST(AutoCompactorTest, RevisionModeKeepsTheLastRetentionRevisions) {
  AutoCompactor c(AutoCompactor::Mode::kRevision, 100, /*check_interval_ms=*/1'000);
  EXPECT_FALSE(c.Due(0, 50, 0));         // not enough history yet
  EXPECT_FALSE(c.Due(500, 500, 0));      // before the next check
  EXPECT_EQ(c.Due(1'000, 500, 0), 400);  // current - retention
  EXPECT_FALSE(c.Due(2'000, 500, 400));  // nothing new
  EXPECT_EQ(c.Due(3'000, 900, 400), 800);
}

TEST(AutoCompactorTest, PeriodicModeCompactsToTheRevisionOfRetentionAgo) {
  AutoCompactor c(AutoCompactor::Mode::kPeriodic, /*retention ms=*/10'000);
  int64_t compacted = 0;
  // One revision per 100 ms; sampled every second.
  for (int64_t t = 0; t <= 30'000; t += 100) {
    int64_t rev = t / 100;
    if (auto due = c.Due(t, rev, compacted)) {
      // What remains covers at least the last 10 s, and not much more.
      EXPECT_LE(rev - *due, 100 + 10);
      EXPECT_GE(rev - *due, 100);
      compacted = *due;
    }
  }
  EXPECT_GE(compacted, 190);
}

}  // namespace
}  // namespace natcd
