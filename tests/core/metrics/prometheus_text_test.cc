// The strict exposition parser the metrics tests rely on refuses what it
// must (a parser that accepts everything would make those tests pass
// vacuously).
#include "support/prometheus_text.h"

#include <gtest/gtest.h>

namespace natcd::testing {
namespace {

std::string Parse(const std::string& text) {
  ParsedExposition p;
  return ParseExposition(text, &p);
}

TEST(PrometheusTextTest, AcceptsValidText) {
  EXPECT_EQ(
      Parse("# HELP a A.\n# TYPE a counter\na 1\n"
            "# TYPE h histogram\nh_bucket{x=\"1\",le=\"1\"} 1\nh_bucket{x=\"1\",le=\"+Inf\"} 2\n"
            "h_sum{x=\"1\"} 3.5\nh_count{x=\"1\"} 2\n"),
      "");
}

TEST(PrometheusTextTest, RefusesInvalidText) {
  for (const char* bad : {
           "a 1\n",                                         // no TYPE
           "# TYPE a counter\na 1",                         // no final newline
           "# TYPE a counter\na{b=\"1\"}1\n",               // no space
           "# TYPE a counter\na{b=1} 1\n",                  // unquoted
           "# TYPE a counter\na{b=\"1\",} 1\n",             // trailing comma
           "# TYPE a counter\na{b=\"\\x\"} 1\n",            // bad escape
           "# TYPE a counter\na one\n",                     // bad value
           "# TYPE a counter\na 1\na 2\n",                  // series twice
           "# TYPE a counter\n# TYPE b gauge\nb 1\na 1\n",  // not contiguous
           "# TYPE a widget\na 1\n",                        // unknown type
           "# TYPE a counter\n\na 1\n",                     // empty line
           "# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\n"
           "h_sum 0\nh_count 1\n",                                               // not cumulative
           "# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_sum 0\nh_count 1\n",     // no +Inf
           "# TYPE h histogram\nh_bucket{le=\"+Inf\"} 2\nh_sum 0\nh_count 1\n",  // count
           "# TYPE h histogram\nh_bucket{le=\"+Inf\"} 1\nh_count 1\n",           // no sum
       }) {
    EXPECT_NE(Parse(bad), "") << bad;
  }
}

}  // namespace
}  // namespace natcd::testing
