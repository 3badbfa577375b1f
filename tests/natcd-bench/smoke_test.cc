// `natcd-bench --quick` end to end against natcd (and etcd where it is
// installed and natcd-bench has its target): every workload runs without a
// failed request, an unanswered one or a lost event (--strict), and the
// report has natcd's figures.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "natcd-bench/bench_test_support.h"
#include "plugin/natcd-bench/deployment.h"
#include "plugin/natcd-bench/process.h"

namespace natcd::bench {
namespace {

TEST(SmokeTest, QuickRunAgainstNatcd) {
  const std::string bench = Env("NATCD_BENCH_BIN", "build/bin/natcd-bench");
  const std::string natcd = Env("NATCD_BIN", "build/bin/natcd");
  const std::string dir = MakeTempDir("natcd-bench-smoke", "");
  ASSERT_FALSE(dir.empty());
  std::string systems = "natcd";
#ifdef NATCD_BENCH_ETCD
  if (!Deployment::EtcdBinary().empty()) systems += ",etcd";
#endif
  std::string output;
  const int code =
      RunCommand("'" + bench + "' --quick --strict --systems " + systems + " --natcd-bin '" +
                     natcd + "' --report-dir '" + dir + "' --tmp-dir '" + dir + "'",
                 &output);
  EXPECT_EQ(code, 0) << output;
  std::ifstream in(dir + "/report.md");
  std::stringstream report;
  report << in.rdbuf();
  const std::string md = report.str();
  EXPECT_NE(md.find("| 1 | put-seq | p50 µs ↓ |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 8 | footprint | server RSS MiB ↓ |"), std::string::npos) << md;
  EXPECT_NE(md.find("## The issue's goals"), std::string::npos);
  EXPECT_EQ(md.find("| 1 | put-seq | p50 µs ↓ | n/a"), std::string::npos) << "natcd has a figure";
  RemoveTree(dir);
}

TEST(SmokeTest, UnknownWorkloadIsRefused) {
  std::string output;
  EXPECT_EQ(RunCommand("'" + Env("NATCD_BENCH_BIN", "build/bin/natcd-bench") + "' --workloads nope",
                       &output),
            2)
      << output;
  EXPECT_NE(output.find("unknown workload nope"), std::string::npos);
}

}  // namespace
}  // namespace natcd::bench
