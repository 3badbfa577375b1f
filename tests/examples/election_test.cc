// examples/election.c: two candidates and an observer; the leader killed
// with SIGKILL is replaced by the other candidate within the session TTL.
#include <chrono>

#include "examples/example_helpers.h"

namespace natcd::testing {
namespace {

using ElectionExampleTest = ExampleTest;

TEST_F(ElectionExampleTest, FailoverWithinTtl) {
  ExampleProcess observer("election", {"jobs", "--observe"}, server_.url(), dir_.path());
  ASSERT_TRUE(observer.Start());
  ASSERT_TRUE(observer.WaitForLine("observed: no leader", 5000)) << observer.Output();

  ExampleProcess a("election", {"jobs", "a", "--ttl", "2"}, server_.url(), dir_.path());
  ASSERT_TRUE(a.Start());
  ASSERT_TRUE(a.WaitForLine("leader: a", 5000)) << a.Output();
  ASSERT_TRUE(observer.WaitForLine("observed leader: a", 2000)) << observer.Output();

  ExampleProcess b("election", {"jobs", "b", "--ttl", "2"}, server_.url(), dir_.path());
  ASSERT_TRUE(b.Start());
  ASSERT_TRUE(
      WaitUntil([&] { return b.Output().find("campaigning as b") != std::string::npos; }, 5000))
      << b.Output();
  EXPECT_FALSE(b.WaitForLine("leader: b", 1500)) << "two leaders:\n" << b.Output();

  auto killed = std::chrono::steady_clock::now();
  a.Kill();
  ASSERT_TRUE(b.WaitForLine("leader: b", 3500)) << b.Output();
  EXPECT_LE(std::chrono::steady_clock::now() - killed, std::chrono::milliseconds(3000));
  EXPECT_TRUE(observer.WaitForLine("observed leader: b", 2000)) << observer.Output();
  EXPECT_TRUE(WaitUntil([&] { return b.Output().find("b working") != std::string::npos; }, 2000))
      << b.Output();

  // A clean stop resigns at once.
  EXPECT_EQ(b.Terminate(), 0) << b.Output();
  size_t after_b = 0;
  EXPECT_TRUE(observer.WaitForLine("observed leader: b", 100, &after_b));
  EXPECT_TRUE(observer.WaitForLine("observed: no leader", 1500, &after_b)) << observer.Output();
  EXPECT_EQ(observer.Terminate(), 0) << observer.Output();
}

}  // namespace
}  // namespace natcd::testing
