// The process metrics, read from this test process's real /proc.
#include "metrics/process_metrics.h"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <vector>

#include "support/prometheus_text.h"

namespace natcd::metrics {
namespace {

TEST(ProcessMetricsTest, StatsOfThisProcess) {
  std::optional<ProcessStats> s = ReadProcessStats("/proc/self");
  ASSERT_TRUE(s.has_value());
  EXPECT_GT(s->resident_memory_bytes, 1 << 20);
  EXPECT_GE(s->virtual_memory_bytes, s->resident_memory_bytes);
  EXPECT_GE(s->cpu_seconds, 0);
  double now = static_cast<double>(::time(nullptr));
  // Started before now, and not before the test binary could have (1 h).
  EXPECT_LE(s->start_time_seconds, now + 1);
  EXPECT_GT(s->start_time_seconds, now - 3600);
}

TEST(ProcessMetricsTest, OpenFdsFollowOpens) {
  std::optional<double> before = CountOpenFds("/proc/self");
  ASSERT_TRUE(before.has_value());
  std::vector<int> fds;
  for (int i = 0; i < 5; ++i) fds.push_back(open("/dev/null", O_RDONLY));
  EXPECT_EQ(CountOpenFds("/proc/self"), *before + 5);
  for (int fd : fds) close(fd);
  EXPECT_EQ(CountOpenFds("/proc/self"), *before);
}

TEST(ProcessMetricsTest, MissingProcessHasNoStats) {
  EXPECT_FALSE(ReadProcessStats("/proc/no-such-process").has_value());
  EXPECT_FALSE(CountOpenFds("/proc/no-such-process").has_value());
}

TEST(ProcessMetricsTest, RegisteredUnderPrometheusNames) {
  Registry r;
  AddProcessMetrics(r);
  natcd::testing::ParsedExposition p;
  ASSERT_EQ(natcd::testing::ParseExposition(r.TextExposition(), &p), "") << r.TextExposition();
  EXPECT_EQ(p.families["process_cpu_seconds_total"].type, "counter");
  for (const char* name : {"process_resident_memory_bytes", "process_virtual_memory_bytes",
                           "process_open_fds", "process_max_fds", "process_start_time_seconds"}) {
    EXPECT_EQ(p.families[name].type, "gauge") << name;
    EXPECT_GT(p.Find(name).value_or(0), 0) << name;
  }
}

}  // namespace
}  // namespace natcd::metrics
