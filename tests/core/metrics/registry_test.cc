// The registry's exposition, checked line by line against the Prometheus
// text format 0.0.4 and by the strict parser the integration tests use.
#include "metrics/registry.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "support/prometheus_text.h"

namespace natcd::metrics {
namespace {

using natcd::testing::ParsedExposition;
using natcd::testing::ParseExposition;

TEST(RegistryTest, CounterAndGaugeLines) {
  Registry r;
  Counter& c = r.AddCounter("b_total", "A counter.");
  Gauge& g = r.AddGauge("a_gauge", "A gauge.");
  c.Inc();
  c.Add(41);
  g.Set(2.5);
  g.Sub(1);
  EXPECT_EQ(r.TextExposition(),
            "# HELP a_gauge A gauge.\n"
            "# TYPE a_gauge gauge\n"
            "a_gauge 1.5\n"
            "# HELP b_total A counter.\n"
            "# TYPE b_total counter\n"
            "b_total 42\n");
}

TEST(RegistryTest, HistogramIsCumulativeWithSumAndCount) {
  Registry r;
  Histogram& h = r.AddHistogram("d_seconds", "Durations.", {0.001, 0.002, 0.004});
  h.Observe(0.001);   // le 0.001: a bound is inclusive
  h.Observe(0.0015);  // le 0.002
  h.Observe(0.5);     // +Inf only
  EXPECT_EQ(r.TextExposition(),
            "# HELP d_seconds Durations.\n"
            "# TYPE d_seconds histogram\n"
            "d_seconds_bucket{le=\"0.001\"} 1\n"
            "d_seconds_bucket{le=\"0.002\"} 2\n"
            "d_seconds_bucket{le=\"0.004\"} 2\n"
            "d_seconds_bucket{le=\"+Inf\"} 3\n"
            "d_seconds_sum 0.5025\n"
            "d_seconds_count 3\n");
}

TEST(RegistryTest, LabelsAreSortedAndEscaped) {
  Registry r;
  Family<Counter>& f = r.AddCounterFamily("req_total", "Requests.", {"endpoint", "code"});
  f.WithLabels({"kv.put", "ok"}).Add(2);
  f.WithLabels({"a\\b\"c\nd", "x"}).Inc();
  f.WithLabels({"kv.put", "ok"}).Inc();  // the same child again
  EXPECT_EQ(r.TextExposition(),
            "# HELP req_total Requests.\n"
            "# TYPE req_total counter\n"
            "req_total{endpoint=\"a\\\\b\\\"c\\nd\",code=\"x\"} 1\n"
            "req_total{endpoint=\"kv.put\",code=\"ok\"} 3\n");
  ParsedExposition p;
  ASSERT_EQ(ParseExposition(r.TextExposition(), &p), "");
  EXPECT_EQ(p.Find("req_total", {{"endpoint", "a\\b\"c\nd"}, {"code", "x"}}), 1);
}

TEST(RegistryTest, HelpIsEscaped) {
  Registry r;
  r.AddGauge("g", "back\\slash and\nnewline \"quotes stay\"");
  EXPECT_EQ(r.TextExposition(),
            "# HELP g back\\\\slash and\\nnewline \"quotes stay\"\n"
            "# TYPE g gauge\n"
            "g 0\n");
  ParsedExposition p;
  ASSERT_EQ(ParseExposition(r.TextExposition(), &p), "");
  EXPECT_EQ(p.families["g"].help, "back\\slash and\nnewline \"quotes stay\"");
}

TEST(RegistryTest, HistogramFamilyPutsLeLast) {
  Registry r;
  auto& f = r.AddHistogramFamily("lat_seconds", "Latency.", {"endpoint"}, {1});
  f.WithLabels({"kv.range"}).Observe(2);
  std::string text = r.TextExposition();
  EXPECT_NE(text.find("lat_seconds_bucket{endpoint=\"kv.range\",le=\"1\"} 0\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("lat_seconds_bucket{endpoint=\"kv.range\",le=\"+Inf\"} 1\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("lat_seconds_count{endpoint=\"kv.range\"} 1\n"), std::string::npos) << text;
  ParsedExposition p;
  EXPECT_EQ(ParseExposition(text, &p), "");
}

TEST(RegistryTest, FuncsAreReadAtScrapeAndMayHaveNoValue) {
  Registry r;
  double value = 1;
  bool present = true;
  r.AddGaugeFunc("f", "Read at scrape.", [&]() -> std::optional<double> {
    if (!present) return std::nullopt;
    return value;
  });
  r.AddCounterFunc("c_total", "Read at scrape.", [] { return std::optional<double>(7.25); });
  value = 3;
  EXPECT_NE(r.TextExposition().find("\nf 3\n"), std::string::npos);
  EXPECT_NE(r.TextExposition().find("\nc_total 7.25\n"), std::string::npos);
  present = false;
  std::string text = r.TextExposition();
  EXPECT_EQ(text.find("\nf "), std::string::npos) << text;
  EXPECT_NE(text.find("# TYPE f gauge\n"), std::string::npos) << text;
  ParsedExposition p;
  EXPECT_EQ(ParseExposition(text, &p), "");
}

TEST(RegistryTest, EmptyRegistryIsEmpty) {
  Registry r;
  EXPECT_EQ(r.TextExposition(), "");
}

// Updates from several threads while another scrapes: every increment is
// counted, and every scrape parses (run under TSan/ASan in CI's asan build).
TEST(RegistryTest, ConcurrentUpdatesAndScrapes) {
  Registry r;
  Counter& c = r.AddCounter("c_total", "C.");
  Gauge& g = r.AddGauge("g", "G.");
  Histogram& h = r.AddHistogram("h", "H.", ExponentialBuckets(1, 2, 4));
  constexpr int kThreads = 4;
  constexpr int kEach = 20'000;
  std::atomic<bool> done{false};
  std::thread scraper([&] {
    while (!done.load()) {
      ParsedExposition p;
      std::string text = r.TextExposition();
      ASSERT_EQ(ParseExposition(text, &p), "") << text;
    }
  });
  std::vector<std::thread> writers;
  for (int t = 0; t < kThreads; ++t) {
    writers.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        c.Inc();
        g.Add(1);
        h.Observe(static_cast<double>((i + t) % 20));
      }
    });
  }
  for (auto& w : writers) w.join();
  done = true;
  scraper.join();
  EXPECT_EQ(c.Value(), uint64_t{kThreads * kEach});
  EXPECT_EQ(g.Value(), double{kThreads * kEach});
  EXPECT_EQ(h.Read().count, uint64_t{kThreads * kEach});
}

}  // namespace
}  // namespace natcd::metrics
