#include "metrics/text_format.h"

#include <gtest/gtest.h>

#include <cmath>

namespace natcd::metrics {
namespace {

std::string Value(double v) {
  std::string out;
  AppendValue(&out, v);
  return out;
}

TEST(TextFormatTest, Values) {
  EXPECT_EQ(Value(0), "0");
  EXPECT_EQ(Value(-0.0), "0");
  EXPECT_EQ(Value(42), "42");
  EXPECT_EQ(Value(-3), "-3");
  EXPECT_EQ(Value(4096000), "4096000");  // not 4.096e+06
  EXPECT_EQ(Value(0.1), "0.1");
  EXPECT_EQ(Value(1.5e-7), "1.5e-07");
  EXPECT_EQ(Value(1e300), "1e+300");
  EXPECT_EQ(Value(INFINITY), "+Inf");
  EXPECT_EQ(Value(-INFINITY), "-Inf");
  EXPECT_EQ(Value(NAN), "NaN");
}

TEST(TextFormatTest, Escaping) {
  std::string help;
  AppendEscapedHelp(&help, "a\\b\nc\"d");
  EXPECT_EQ(help, "a\\\\b\\nc\"d");
  std::string label;
  AppendEscapedLabelValue(&label, "a\\b\nc\"d");
  EXPECT_EQ(label, "a\\\\b\\nc\\\"d");
}

TEST(TextFormatTest, Names) {
  EXPECT_TRUE(IsValidMetricName("etcd_server_has_leader"));
  EXPECT_TRUE(IsValidMetricName("a:b_c9"));
  EXPECT_TRUE(IsValidMetricName("_x"));
  EXPECT_FALSE(IsValidMetricName(""));
  EXPECT_FALSE(IsValidMetricName("9x"));
  EXPECT_FALSE(IsValidMetricName("a-b"));
  EXPECT_FALSE(IsValidMetricName("a.b"));
  EXPECT_TRUE(IsValidLabelName("endpoint"));
  EXPECT_TRUE(IsValidLabelName("_x1"));
  EXPECT_FALSE(IsValidLabelName("__name__"));
  EXPECT_FALSE(IsValidLabelName("a:b"));
  EXPECT_FALSE(IsValidLabelName("1a"));
  EXPECT_FALSE(IsValidLabelName(""));
}

}  // namespace
}  // namespace natcd::metrics
