// A client nobody here wrote: the npm `etcd3` package (microsoft/etcd3)
// against natcd's etcd gRPC API — KV, txn, count, put's options (touch,
// ignoreLease, an unknown lease), namespaces, STM, a lease kept alive
// past its TTL and revoked, one left to expire, watches (two on one
// stream, filters, prev_kv), a watch replayed from an old revision, a
// watch and a lease keep-alive that etcd3 resumes itself after its
// connection was cut (through a TCP relay this test cuts and heals), its
// try-lock, its election, Status and MemberList, and compaction's errors.
// Runs tests/js/etcd3_client.mjs with node, which prints one JSON line per
// check; skipped when node or tests/js/node_modules/etcd3 is missing
// (`make deps` installs it). Auth is not exercised: natcd does not serve
// etcd's Auth service yet.
#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "grpc/etcdctl_fixture.h"
#include "support/json.h"
#include "support/tcp_proxy.h"

namespace natcd::testing {
namespace {

using Etcd3JsTest = EtcdctlTest;

constexpr const char* kScript = "tests/js/etcd3_client.mjs";
constexpr const char* kModule = "tests/js/node_modules/etcd3/package.json";

// The checks the script makes, in the order it prints them.
const std::vector<std::string> kChecks = {"kv",
                                          "txn",
                                          "count",
                                          "put_options",
                                          "stm",
                                          "lease_keepalive",
                                          "lease_expires",
                                          "watch",
                                          "watch_resume",
                                          "reconnect",
                                          "lock",
                                          "election",
                                          "maintenance",
                                          "compaction"};

TEST_F(Etcd3JsTest, Etcd3ClientKvTxnLeaseWatchLockElection) {
  if (system("command -v node >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "node is not installed (apt-get install nodejs): etcd3 test skipped";
  }
  if (!std::filesystem::exists(kModule) || !std::filesystem::exists(kScript)) {
    GTEST_SKIP() << kModule << " is missing (run `make deps`, or `cd tests/js && npm ci`) "
                 << "in the repository root: etcd3 test skipped";
  }
  static int run = 0;
  const std::string prefix = "/etcd3js/" + std::to_string(run++) + "/";
  const int n = counter_++;
  const std::string out = dir_->File("etcd3-out-" + std::to_string(n));
  const std::string err = dir_->File("etcd3-err-" + std::to_string(n));
  const int port = std::stoi(endpoint_.substr(endpoint_.rfind(':') + 1));
  TcpProxy proxy(port);
  ASSERT_TRUE(proxy.Start());
  const std::string via_proxy = "127.0.0.1:" + std::to_string(proxy.port());
  // stdin a pipe: the script waits there for the relay to be cut and healed.
  int in[2];
  ASSERT_EQ(pipe2(in, O_CLOEXEC), 0);
  pid_t pid = SpawnProcess({"/usr/bin/env", "node", kScript, endpoint_, prefix, via_proxy}, "", out,
                           err, {}, in[0]);
  close(in[0]);
  BackgroundProcess node(pid, out, in[1]);
  auto context = [&] { return "stdout:\n" + node.Output() + "stderr:\n" + ReadFile(err); };
  // Until the script asks (false once it finished or gave up without
  // asking: the end of the run says why).
  auto asks = [&](const std::string& what, std::chrono::seconds timeout) {
    const std::string request = R"({"await":")" + what + R"("})";
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      const std::string output = node.Output();
      if (output.find(request) != std::string::npos) return true;
      if (output.find(R"({"done":)") != std::string::npos) return false;
      if (output.find(R"({"error":)") != std::string::npos) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  };
  // Bounded by the script's own checks (each 20 s at most).
  if (asks("cut", std::chrono::seconds(60))) {
    proxy.Cut();
    EXPECT_TRUE(node.Send("cut\n"));
    if (asks("heal", std::chrono::seconds(20))) {
      proxy.Heal();
      EXPECT_TRUE(node.Send("healed\n"));
    }
  }
  // The script gives up by itself after 60 s; this bound only catches a hung node.
  const int code = node.Wait(std::chrono::seconds(90));
  const std::string transcript = node.Output();

  std::vector<std::string> checks;
  bool done = false;
  std::istringstream lines(transcript);
  std::string line;
  while (std::getline(lines, line)) {
    auto json = Json::Parse(line);
    ASSERT_TRUE(json && json->is_object()) << "not a JSON line from the script: " << line << "\n"
                                           << context();
    const Json& j = *json;
    EXPECT_FALSE(j.has("error") && !j.has("check")) << j["error"].text;
    if (j.has("check")) {
      checks.push_back(j["check"].text);
      EXPECT_TRUE(j["ok"].boolean) << "etcd3 check " << j["check"].text << " failed ("
                                   << j["class"].text << "): " << j["error"].text;
    }
    if (j["done"].boolean) {
      done = true;
      EXPECT_EQ(j["failed"].text, "0");
    }
  }
  EXPECT_EQ(checks, kChecks) << context();
  EXPECT_TRUE(done) << context();
  EXPECT_EQ(code, 0) << context();

  // One service: what etcd3 wrote, etcdctl reads.
  CommandResult got = Run({"get", prefix + "count/", "--prefix", "--keys-only"});
  ASSERT_EQ(got.code, 0) << got.err;
  std::string want;
  for (int i = 0; i < 5; i++) want += prefix + "count/" + std::to_string(i) + "\n\n";
  EXPECT_EQ(got.out, want);
  got = Run({"get", prefix + "stm/counter", "--print-value-only"});
  ASSERT_EQ(got.code, 0) << got.err;
  EXPECT_EQ(got.out, "2\n");
}

}  // namespace
}  // namespace natcd::testing
