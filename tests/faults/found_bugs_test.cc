// Bugs the fault harness ran into, each as the smallest test that failed
// before its fix.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <thread>

#include "adapters/nats/natcd_client.h"
#include "support/natcd_process.h"
#include "support/nats_server.h"
#include "testutil.h"

namespace natcd::testing {
namespace {

using Clock = std::chrono::steady_clock;

// A URL where nothing listens.
std::string DeadUrl() { return "nats://127.0.0.1:" + std::to_string(PickFreeLoopbackPort()); }

// natcd_client.h says natcdClient_Connect takes "comma-separated URLs"; it
// handed the string to natsOptions_SetURL, which takes one URL (nats.c
// splits lists in natsConnection_ConnectTo and natsOptions_SetServers
// only): any list failed with ConnectionError.
TEST(FoundBugs, ClientConnectTakesACommaSeparatedList) {
  NatsServer server;
  ASSERT_TRUE(server.Start());
  const std::string urls = server.url() + "," + DeadUrl();
  natcdClient* client = nullptr;
  EXPECT_EQ(natcdClient_Connect(&client, urls.c_str(), nullptr), natcdStatus_OK);
  natcdClient_Destroy(client);
}

// natcd --nats-url documents "NATS server URL(s), comma-separated", and
// plugin/natcd/main.cc passed it to natsOptions_SetURL too: with a list
// natcd never connected (it retried for ever) and never said it serves.
TEST(FoundBugs, NatcdServesWithACommaSeparatedNatsUrl) {
  NatsServer server;
  ASSERT_TRUE(server.Start());
  TempDir dir;
  NatcdProcess natcd(server.url() + "," + DeadUrl(), dir.path());
  EXPECT_TRUE(natcd.Start());
}

// Issue 16: "a clean shutdown finishes within a bounded time (say 5 s)
// even when NATS is unreachable". natcd started while its NATS server is
// unreachable sat in natsConnection_Connect's retries and ignored SIGTERM
// (it was still running minutes later).
TEST(FoundBugs, NatcdExitsOnSigtermWhileNatsIsUnreachable) {
  TempDir dir;
  std::vector<std::string> args = {NatcdProcess::Binary(),
                                   "--nats-url",
                                   DeadUrl(),
                                   "--data-dir",
                                   dir.path(),
                                   "--config",
                                   "/dev/null"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    execv(argv[0], argv.data());
    _exit(127);
  }
  std::this_thread::sleep_for(std::chrono::seconds(2));
  kill(pid, SIGTERM);
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  bool exited = false;
  while (!exited && Clock::now() < deadline) {
    exited = waitpid(pid, nullptr, WNOHANG) == pid;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (!exited) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
  EXPECT_TRUE(exited) << "natcd did not exit within 5 s of SIGTERM";
}

}  // namespace
}  // namespace natcd::testing
