// examples/js/watch_group.mjs: nats.js alone follows a watch through the
// group protocol (PROTOCOL.md "Watch groups"): the history on its inbox, the
// join, then live events from the group subject, each printed once, in
// order. Skipped when node or tests/js/node_modules/nats is missing (`make
// deps` installs it).
#include <stdio.h>

#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "examples/example_helpers.h"

namespace natcd::testing {
namespace {

using JsWatchGroupExampleTest = ExampleTest;

constexpr const char* kScript = "examples/js/watch_group.mjs";
constexpr const char* kModule = "tests/js/node_modules/nats/package.json";

TEST_F(JsWatchGroupExampleTest, PlainNatsClientFollowsAGroupExactlyOnce) {
  if (system("command -v node >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "node is not installed (apt-get install nodejs): watch_group.mjs test skipped";
  }
  if (!std::filesystem::exists(kModule)) {
    GTEST_SKIP() << kModule << " is missing (run `make deps`, or `cd tests/js && npm install`) "
                 << "in the repository root: watch_group.mjs test skipped";
  }
  auto put = [&](const std::string& key, const std::string& value) {
    natcdPutResponse* r = nullptr;
    EXPECT_EQ(natcdKV_Put(&r, client_, key.data(), key.size(), value.data(), value.size(), nullptr),
              natcdStatus_OK);
    natcdPutResponse_Destroy(r);
  };
  put("/jsg/a", "1");  // revision 2: history for the script
  put("/other", "x");  // revision 3: not watched
  ExampleProcess script(
      "/usr/bin/env",
      {"node", std::filesystem::absolute(kScript).string(), server_.url(), "/jsg/", "--from", "1"},
      server_.url(), dir_.path());
  ASSERT_TRUE(script.Start());
  ASSERT_TRUE(script.WaitForLine("PUT /jsg/a = 1 @2", 10000)) << script.Output();
  bool joined = false;
  for (int i = 0; i < 100 && !joined; ++i) {
    for (const std::string& line : script.Lines()) joined |= line.rfind("joined group ", 0) == 0;
    if (!joined) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(joined) << script.Output();
  put("/jsg/b", "2");  // 4
  natcdDeleteResponse* d = nullptr;
  ASSERT_EQ(natcdKV_Delete(&d, client_, "/jsg/a", 6, nullptr), natcdStatus_OK);  // 5
  natcdDeleteResponse_Destroy(d);
  put("/jsg/c", "3");  // 6
  ASSERT_TRUE(script.WaitForLine("PUT /jsg/c = 3 @6", 5000)) << script.Output();
  // A few heartbeats (200 ms) go by: acked, nothing printed, no resume.
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  std::vector<std::string> events;
  for (const std::string& line : script.Lines()) {
    if (line.rfind("PUT ", 0) == 0 || line.rfind("DELETE ", 0) == 0) events.push_back(line);
    EXPECT_EQ(line.rfind("resumed", 0), std::string::npos) << script.Output();
    EXPECT_EQ(line.rfind("error", 0), std::string::npos) << script.Output();
  }
  EXPECT_EQ(events, (std::vector<std::string>{"PUT /jsg/a = 1 @2", "PUT /jsg/b = 2 @4",
                                              "DELETE /jsg/a @5", "PUT /jsg/c = 3 @6"}))
      << script.Output();
  EXPECT_EQ(script.Terminate(), 0) << script.Output();
}

}  // namespace
}  // namespace natcd::testing
