// A client nobody here wrote: nats.js (npm package `nats`) renews a lease on
// natcd.lease.keepalive.<hex id> (a request, then a plain publish) and
// follows natcd.ev.>. Runs tests/js/keepalive_and_events.mjs with node;
// skipped when node or tests/js/node_modules/nats is missing (`make deps`
// installs it).
#include <stdio.h>
#include <sys/wait.h>

#include <filesystem>
#include <vector>

#include "natcd/natcd_fixture.h"
#include "natcd/natcd_helpers.h"

namespace natcd::testing {
namespace {

using JsClientTest = NatcdTest;

constexpr const char* kScript = "tests/js/keepalive_and_events.mjs";
constexpr const char* kModule = "tests/js/node_modules/nats/package.json";

TEST_F(JsClientTest, NatsJsRenewsLeaseAndFollowsEvents) {
  if (system("command -v node >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "node is not installed (apt-get install nodejs): nats.js test skipped";
  }
  if (!std::filesystem::exists(kModule) || !std::filesystem::exists(kScript)) {
    GTEST_SKIP() << kModule << " is missing (run `make deps`, or `cd tests/js && npm install`) "
                 << "in the repository root: nats.js test skipped";
  }
  int64_t lease = client_->Grant(3);
  ASSERT_GT(lease, 0);
  std::string command = "timeout 20 node " + std::string(kScript) + " " + server_.url() + " " +
                        LeaseHex(lease) + " 2 2>&1";
  FILE* out = popen(command.c_str(), "r");
  ASSERT_NE(out, nullptr);
  std::vector<Json> lines;
  std::string transcript;
  auto next = [&]() -> const Json* {
    char buf[8192];
    if (fgets(buf, sizeof buf, out) == nullptr) return nullptr;
    transcript += buf;
    std::string line(buf);
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
    auto json = Json::Parse(line);
    EXPECT_TRUE(json) << "not a JSON line from the script: " << line;
    lines.push_back(json ? *json : Json());
    return &lines.back();
  };

  const Json* line = nullptr;
  while ((line = next()) != nullptr && !(*line)["ready"].boolean) {
  }
  ASSERT_NE(line, nullptr) << "the script never subscribed:\n" << transcript;

  ASSERT_EQ(client_->Put("/js/svc/10.0.0.1:80", "up", lease), 2);
  ASSERT_EQ(client_->Delete("/js/svc/10.0.0.1:80"), 1);

  std::vector<Json> events;
  bool requested = false, published = false, done = false;
  while ((line = next()) != nullptr) {
    const Json& j = *line;
    if (j.has("subject")) events.push_back(j);
    if (j["keepalive"].text == "request") {
      requested = true;
      EXPECT_EQ(j["id"].text, std::to_string(lease));
      EXPECT_EQ(j["ttl"].text, "3");
    }
    if (j["keepalive"].text == "publish") {
      published = true;
      // 1.2 s after the request renewed it: floor(1.8) = 1 left without
      // this publish, 2 with it.
      EXPECT_TRUE(WaitFor([&] { return TimeToLive(client_.get(), lease)->ttl == 2; }, 1000))
          << "a plain publish from nats.js did not renew the lease";
    }
    if (j["done"].boolean) done = true;
    EXPECT_FALSE(j.has("error")) << transcript;
  }
  int status = pclose(out);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "script exit status " << status << ":\n"
      << transcript;
  EXPECT_TRUE(requested && published && done) << transcript;
  ASSERT_EQ(events.size(), 2u) << transcript;
  EXPECT_EQ(events[0]["subject"].text, "natcd.ev.js.svc.10%2E0%2E0%2E1:80");
  EXPECT_EQ(events[0]["op"].text, "PUT");
  EXPECT_EQ(events[0]["revision"].text, "2");
  EXPECT_EQ(events[0]["key"].text, "/js/svc/10.0.0.1:80");
  EXPECT_EQ(events[0]["value"].text, "up");
  EXPECT_EQ(events[1]["subject"].text, "natcd.ev.js.svc.10%2E0%2E0%2E1:80");
  EXPECT_EQ(events[1]["op"].text, "DEL");
  EXPECT_EQ(events[1]["revision"].text, "3");
}

}  // namespace
}  // namespace natcd::testing
