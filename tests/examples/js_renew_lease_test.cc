// examples/js/renew_lease.mjs: nats.js alone keeps a lease granted by the
// C client alive for more than 2 TTLs; once it stops, the lease and its key
// expire within the TTL. Skipped when node or tests/js/node_modules/nats is
// missing (`make deps` installs it).
#include <stdio.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "examples/example_helpers.h"

namespace natcd::testing {
namespace {

using JsRenewLeaseExampleTest = ExampleTest;

constexpr const char* kScript = "examples/js/renew_lease.mjs";
constexpr const char* kModule = "tests/js/node_modules/nats/package.json";

std::string NodeBinary() {
  FILE* out = popen("command -v node 2>/dev/null", "r");
  if (out == nullptr) return "";
  char buf[512] = {0};
  std::string path = fgets(buf, sizeof buf, out) ? buf : "";
  pclose(out);
  while (!path.empty() && (path.back() == '\n' || path.back() == '\r')) path.pop_back();
  return path;
}

TEST_F(JsRenewLeaseExampleTest, PlainNatsClientKeepsLeaseAlive) {
  std::string node = NodeBinary();
  if (node.empty()) {
    GTEST_SKIP() << "node is not installed (apt-get install nodejs): renew_lease.mjs test skipped";
  }
  if (!std::filesystem::exists(kModule)) {
    GTEST_SKIP() << kModule << " is missing (run `make deps`, or `cd tests/js && npm install`) "
                 << "in the repository root: renew_lease.mjs test skipped";
  }

  int64_t lease = 0, ttl = 0;
  ASSERT_EQ(natcdLease_Grant(&lease, &ttl, client_, 2, 0), natcdStatus_OK);
  ASSERT_EQ(ttl, 2);
  natcdPutOptions put = {};
  put.lease = lease;
  ASSERT_EQ(natcdKV_Put(nullptr, client_, NATCD_STR("/js/alive"), NATCD_STR("yes"), &put),
            natcdStatus_OK);
  char hex[32];
  snprintf(hex, sizeof hex, "%llx", static_cast<unsigned long long>(lease));

  ExampleProcess script(node, {std::filesystem::absolute(kScript).string(), server_.url(), hex},
                        server_.url(), dir_.path());
  ASSERT_TRUE(script.Start());
  std::string renewed = "renewed " + std::string(hex) + ": ttl 2";
  ASSERT_TRUE(script.WaitForLine(renewed, 5000)) << script.Output();

  // More than 2 TTLs: without the script the key would be gone by now.
  std::this_thread::sleep_for(std::chrono::milliseconds(4500));
  EXPECT_TRUE(Exists("/js/alive")) << script.Output();
  size_t renewals = 0;
  for (const std::string& line : script.Lines()) renewals += line == renewed;
  EXPECT_GE(renewals, 6u) << "expected a renewal every TTL/3:\n" << script.Output();

  EXPECT_EQ(script.Terminate(), 0) << script.Output();
  auto stopped = std::chrono::steady_clock::now();
  ASSERT_TRUE(WaitUntil([&] { return !Exists("/js/alive"); }, 4000))
      << "the key outlived its lease after the script stopped";
  EXPECT_LE(std::chrono::steady_clock::now() - stopped, std::chrono::milliseconds(3000));
  EXPECT_EQ(natcdLease_KeepAliveOnce(&ttl, client_, lease), natcdStatus_NotFound);
}

}  // namespace
}  // namespace natcd::testing
