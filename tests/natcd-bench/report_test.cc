// The report: figures, ratios and the goals judged from them.
#include "plugin/natcd-bench/report.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace natcd::bench {
namespace {

TEST(ReportTest, FormatsFigures) {
  EXPECT_EQ(FormatValue(1234567.4, 0), "1,234,567");
  EXPECT_EQ(FormatValue(999, 0), "999");
  EXPECT_EQ(FormatValue(1000, 0), "1,000");
  EXPECT_EQ(FormatValue(12.345, 2), "12.35");
  EXPECT_EQ(FormatValue(-1500.5, 1), "-1,500.5");
}

TEST(ReportTest, RatioNeedsBothFigures) {
  EXPECT_EQ(Ratio(250.0, 100.0), "2.50");
  EXPECT_EQ(Ratio(std::nullopt, 100.0), "—");
  EXPECT_EQ(Ratio(1.0, std::nullopt), "—");
  EXPECT_EQ(Ratio(1.0, 0.0), "—");
}

TEST(ReportTest, TableHasOneColumnPerSystemAndTheRatios) {
  Report report({"natcd", "etcd", "JetStream KV"});
  report.Set(2, "put-256", "puts/s", true, 0, "natcd", 40'000);
  report.Set(2, "put-256", "puts/s", true, 0, "etcd", 10'000);
  report.Set(2, "put-256", "puts/s", true, 0, "JetStream KV", 80'000);
  report.Set(4, "range100-64", "ranges/s", true, 0, "natcd", 15'000);
  report.SetFloor("put-256", "puts/s", true, 0, 100'000, "echo");
  report.SetFloor("fsync", "p50 µs", false, 0, 120, "fsync");
  const std::string text = report.Text();
  EXPECT_NE(text.find("natcd/etcd"), std::string::npos);
  EXPECT_NE(text.find("natcd/JetStream KV"), std::string::npos);
  EXPECT_NE(text.find("natcd/floor"), std::string::npos);
  EXPECT_NE(text.find("4.00"), std::string::npos);  // natcd/etcd
  EXPECT_NE(text.find("0.50"), std::string::npos);  // natcd/JetStream
  EXPECT_NE(text.find("0.40"), std::string::npos);  // natcd/floor
  EXPECT_NE(text.find("n/a"), std::string::npos);   // JetStream KV has no range
  const std::string md = report.MarkdownTable();
  // Header, separator, three rows.
  EXPECT_EQ(std::count(md.begin(), md.end(), '\n'), 5);
  EXPECT_EQ(report.Get("put-256", "puts/s", "etcd"), 10'000);
  EXPECT_FALSE(report.Get("range100-64", "ranges/s", "etcd").has_value());
  EXPECT_EQ(report.Floor("put-256", "puts/s"), 100'000);
}

const Goal* Find(const std::vector<Goal>& goals, const std::string& prefix) {
  for (const Goal& g : goals) {
    if (g.text.rfind(prefix, 0) == 0) return &g;
  }
  return nullptr;
}

TEST(ReportTest, GoalsAreJudgedFromTheFigures) {
  Report report({"natcd", "etcd", "JetStream KV"});
  report.Set(2, "put-256", "puts/s", true, 0, "natcd", 50'000);
  report.Set(2, "put-256", "puts/s", true, 0, "etcd", 10'000);           // 2.5x: 25,000 -> met
  report.Set(2, "put-256", "puts/s", true, 0, "JetStream KV", 100'000);  // 0.8x: 80,000 -> missed
  report.Set(1, "put-seq", "p50 µs", false, 0, "natcd", 300);
  report.SetFloor("put-seq", "p50 µs", false, 0, 250, "fsync + echo");  // 300 > 250 -> missed
  report.Set(8, "footprint", "server RSS MiB", false, 1, "natcd", 20);
  report.Set(8, "footprint", "server RSS MiB", false, 1, "JetStream KV", 20);  // equal -> met
  const auto goals = report.Goals();
  ASSERT_NE(Find(goals, "puts at 256 in flight >= 2.5x etcd"), nullptr);
  EXPECT_EQ(Find(goals, "puts at 256 in flight >= 2.5x etcd")->met, true);
  EXPECT_EQ(Find(goals, "puts at 256 in flight >= 0.8x JetStream")->met, false);
  EXPECT_EQ(Find(goals, "single-client put p50")->met, false);
  EXPECT_EQ(Find(goals, "RSS after")->met, true);
  // No keep-alive figures: not judged.
  EXPECT_FALSE(Find(goals, "keepalives")->met.has_value());
  EXPECT_EQ(Find(goals, "keepalives")->measured, "not measured");
}

}  // namespace
}  // namespace natcd::bench
