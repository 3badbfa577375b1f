// examples/registry.c: two providers and a consumer; a provider killed with
// SIGKILL leaves the consumer's table within its lease TTL, one stopped
// with SIGTERM at once.
#include <chrono>

#include "examples/example_helpers.h"

namespace natcd::testing {
namespace {

using RegistryExampleTest = ExampleTest;

TEST_F(RegistryExampleTest, ConsumerSeesProvidersComeAndGo) {
  ExampleProcess a("registry", {"provide", "web", "a", "10.0.0.1:80", "--ttl", "2"}, server_.url(),
                   dir_.path());
  ExampleProcess b("registry", {"provide", "web", "b", "10.0.0.2:80", "--ttl", "2"}, server_.url(),
                   dir_.path());
  ASSERT_TRUE(a.Start());
  ASSERT_TRUE(b.Start());
  ASSERT_TRUE(WaitUntil([&] { return a.Output().find("registered") != std::string::npos; }, 5000))
      << a.Output();
  ASSERT_TRUE(WaitUntil([&] { return b.Output().find("registered") != std::string::npos; }, 5000))
      << b.Output();

  ExampleProcess consumer("registry", {"consume", "web"}, server_.url(), dir_.path());
  ASSERT_TRUE(consumer.Start());
  ASSERT_TRUE(consumer.WaitForLine("table: a=10.0.0.1:80 b=10.0.0.2:80", 5000))
      << consumer.Output();

  // A crash: nobody revokes the lease; it expires within its TTL (2 s).
  auto killed = std::chrono::steady_clock::now();
  a.Kill();
  ASSERT_TRUE(consumer.WaitForLine("- a", 3500)) << consumer.Output();
  auto gone_after = std::chrono::steady_clock::now() - killed;
  EXPECT_LE(gone_after, std::chrono::milliseconds(3000));
  EXPECT_TRUE(consumer.WaitForLine("table: b=10.0.0.2:80", 1000)) << consumer.Output();
  EXPECT_FALSE(Exists("/services/web/a"));

  // A clean stop revokes the lease at once.
  EXPECT_EQ(b.Terminate(), 0) << b.Output();
  EXPECT_TRUE(consumer.WaitForLine("- b", 1000)) << consumer.Output();
  EXPECT_TRUE(consumer.WaitForLine("table: (empty)", 1000)) << consumer.Output();
  EXPECT_EQ(consumer.Terminate(), 0) << consumer.Output();
}

}  // namespace
}  // namespace natcd::testing
