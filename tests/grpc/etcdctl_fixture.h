// End-to-end fixture for etcd's gRPC API: one nats-server and one natcd
// serving the API on a free loopback port for the whole suite (each test
// uses its own keys), driven by etcdctl 3.4 from Debian's etcd-client — a
// client nobody here wrote — run as a child process.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "support/child_process.h"
#include "support/natcd_process.h"
#include "support/nats_server.h"
#include "testutil.h"

namespace natcd::testing {

// The host:port natcd printed for its etcd API ("natcd etcd API on
// http://127.0.0.1:PORT"); empty when it printed none.
inline std::string EtcdEndpointOf(const NatcdProcess& natcd) {
  std::smatch m;
  const std::string log = natcd.Log();
  if (!std::regex_search(log, m, std::regex("etcd API on https?://([0-9.:]+)"))) return "";
  return m[1];
}

// Runs `argv` (etcdctl and its arguments) to completion, killed after
// `timeout`, its stdin `input`; the files go in `dir`, named by `n`.
inline CommandResult RunEtcdctl(const TempDir& dir, int n, const std::vector<std::string>& argv,
                                const std::string& input = "",
                                std::chrono::seconds timeout = std::chrono::seconds(20)) {
  const std::string in = dir.File("in-" + std::to_string(n));
  const std::string out = dir.File("out-" + std::to_string(n));
  const std::string err = dir.File("err-" + std::to_string(n));
  {
    std::ofstream f(in);
    f << input;
  }
  pid_t pid = SpawnProcess(argv, in, out, err, {{"ETCDCTL_API", "3"}});
  CommandResult r;
  r.code = WaitProcess(pid, timeout);
  r.out = ReadFile(out);
  r.err = ReadFile(err);
  return r;
}

// The header revision in etcdctl's `-w json` output (0 if none, as etcd's
// JSON leaves a zero out): a watch
// started with --rev of one more than it sees every later write, however
// long etcdctl takes to set the watch up.
inline int64_t HeaderRevision(const std::string& json) {
  std::smatch m;
  if (!std::regex_search(json, m, std::regex("\"revision\":([0-9]+)"))) return 0;
  return std::stoll(m[1]);
}

class EtcdctlTest : public ::testing::Test {
 public:
  static void SetUpTestSuite() { StartSuite({}); }
  // A suite whose natcd needs flags of its own (a small backend quota)
  // hides SetUpTestSuite with one that calls this.
  static void StartSuite(const std::vector<std::string>& extra_args) {
    dir_ = new TempDir;
    server_ = new NatsServer;
    ASSERT_TRUE(server_->Start());
    std::vector<std::string> args = {"--lease-ttl-min",      "1",
                                     "--log-level",          "warn",
                                     "--listen-client-urls", "http://127.0.0.1:0"};
    args.insert(args.end(), extra_args.begin(), extra_args.end());
    natcd_ = new NatcdProcess(server_->url(), dir_->path(), args);
    ASSERT_TRUE(natcd_->Start());
    endpoint_ = EtcdEndpointOf(*natcd_);
    ASSERT_FALSE(endpoint_.empty()) << natcd_->Log();
  }
  static void TearDownTestSuite() {
    delete natcd_;
    delete server_;
    delete dir_;
    natcd_ = nullptr;
    server_ = nullptr;
    dir_ = nullptr;
  }
  void TearDown() override {
    if (HasFailure() && natcd_) std::cerr << "natcd log:\n" << natcd_->Log() << "\n";
  }

  static std::string Etcdctl() { return "/usr/bin/etcdctl"; }
  static std::string Natcdctl() {
    const char* bin = getenv("NATCDCTL_BIN");
    return bin ? bin : "build/bin/natcdctl";
  }

  static std::vector<std::string> Argv(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {Etcdctl(), "--endpoints",       endpoint_, "--dial-timeout",
                                     "5s",      "--command-timeout", "10s"};
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  }

  // Runs etcdctl to completion (killed after 20 s); stdin from `input`.
  static CommandResult Run(const std::vector<std::string>& args, const std::string& input = "") {
    return RunArgv(Argv(args), input);
  }
  static CommandResult RunArgv(const std::vector<std::string>& argv,
                               const std::string& input = "") {
    return RunEtcdctl(*dir_, counter_++, argv, input);
  }

  // etcdctl in the background (watch, lock, elect); stderr with stdout.
  static std::unique_ptr<BackgroundProcess> Start(const std::vector<std::string>& args) {
    const int n = counter_++;
    const std::string out = dir_->File("bg-" + std::to_string(n));
    const std::string in = dir_->File("bgin-" + std::to_string(n));
    { std::ofstream f(in); }
    pid_t pid = SpawnProcess(Argv(args), in, out, out, {{"ETCDCTL_API", "3"}});
    return std::make_unique<BackgroundProcess>(pid, out);
  }

  static inline TempDir* dir_ = nullptr;
  static inline NatsServer* server_ = nullptr;
  static inline NatcdProcess* natcd_ = nullptr;
  static inline std::string endpoint_;
  static inline int counter_ = 0;
};

}  // namespace natcd::testing
