// natcd-bench's cluster figures (issue 6) end to end, with the real
// binaries: `--members 3` runs a workload against a 3-member natcd without a
// failed or unanswered request and says how many members natcd had;
// `catch-up` loads a cluster, adds a learner and reports its promotion;
// --members refuses systems that would not run as a cluster.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "natcd-bench/bench_test_support.h"
#include "plugin/natcd-bench/process.h"

namespace natcd::bench {
namespace {

std::string Bench() { return Env("NATCD_BENCH_BIN", "build/bin/natcd-bench"); }
std::string Natcd() { return Env("NATCD_BIN", "build/bin/natcd"); }

TEST(ClusterBenchTest, QuickPutsAgainstThreeMembers) {
  const std::string dir = MakeTempDir("natcd-bench-cluster", "");
  ASSERT_FALSE(dir.empty());
  std::string output;
  // --strict: exit 3 on any failed or unanswered request.
  const int code = RunCommand("'" + Bench() +
                                  "' --quick --strict --systems natcd --members 3 --workloads "
                                  "put-seq --natcd-bin '" +
                                  Natcd() + "' --report-dir '" + dir + "' --tmp-dir '" + dir + "'",
                              &output);
  EXPECT_EQ(code, 0) << output;
  EXPECT_NE(output.find("put-seq"), std::string::npos) << output;
  EXPECT_NE(output.find("errors=0 timeouts=0"), std::string::npos) << output;
  EXPECT_NE(output.find("natcd: 3 members (m1..m3)"), std::string::npos) << output;
  std::ifstream in(dir + "/report.md");
  std::stringstream report;
  report << in.rdbuf();
  const std::string md = report.str();
  EXPECT_NE(md.find("| 1 | put-seq | p50 µs ↓ |"), std::string::npos) << md;
  EXPECT_EQ(md.find("| 1 | put-seq | p50 µs ↓ | n/a"), std::string::npos) << "natcd has a figure";
  EXPECT_NE(md.find("natcd as a cluster of 3 members (m1..m3)"), std::string::npos) << md;
  RemoveTree(dir);
}

TEST(ClusterBenchTest, CatchUpPromotesTheAddedMember) {
  const std::string dir = MakeTempDir("natcd-bench-catch-up", "");
  ASSERT_FALSE(dir.empty());
  std::string output;
  const int code = RunCommand("'" + Bench() + "' catch-up --keys 2000 --natcd-bin '" + Natcd() +
                                  "' --tmp-dir '" + dir + "'",
                              &output);
  EXPECT_EQ(code, 0) << output;
  EXPECT_NE(output.find("loaded 2,000 keys"), std::string::npos) << output;
  EXPECT_NE(output.find("caught up and promoted in"), std::string::npos) << output;
  // Its temporary folder is gone: nothing but what the test made is left.
  std::string left;
  EXPECT_EQ(RunCommand("ls -A '" + dir + "'", &left), 0);
  EXPECT_EQ(left, "") << "left behind: " << left;
  RemoveTree(dir);
}

TEST(ClusterBenchTest, MembersAreNatcdsAlone) {
  std::string output;
  EXPECT_EQ(RunCommand("'" + Bench() + "' --members 3 --systems natcd,jetstream", &output), 2)
      << output;
  EXPECT_NE(output.find("use --systems natcd"), std::string::npos) << output;
  output.clear();
  EXPECT_EQ(RunCommand("'" + Bench() + "' --members 3 --nats-url nats://127.0.0.1:1", &output), 2)
      << output;
  EXPECT_NE(output.find("--nats-url"), std::string::npos) << output;
}

}  // namespace
}  // namespace natcd::bench
