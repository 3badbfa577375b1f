// End-to-end fixture for natcdctl: one nats-server and one natcd for the
// whole suite (each test uses its own keys), and the natcdctl binary
// ($NATCDCTL_BIN, else build/bin/natcdctl) run as a child process.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "support/child_process.h"
#include "support/natcd_process.h"
#include "support/nats_server.h"
#include "testutil.h"

namespace natcd::testing {

using CtlResult = CommandResult;
using CtlProcess = BackgroundProcess;

class NatcdctlTest : public ::testing::Test {
 public:
  static void SetUpTestSuite() { StartSuite({}); }
  // A suite whose natcd needs flags of its own (a small backend quota)
  // hides SetUpTestSuite with one that calls this.
  static void StartSuite(const std::vector<std::string>& extra_args) {
    dir_ = new TempDir;
    server_ = new NatsServer;
    ASSERT_TRUE(server_->Start());
    std::vector<std::string> args = {"--lease-ttl-min", "1", "--log-level", "warn"};
    args.insert(args.end(), extra_args.begin(), extra_args.end());
    natcd_ = new NatcdProcess(server_->url(), dir_->path(), args);
    ASSERT_TRUE(natcd_->Start());
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

  static std::string Binary() {
    const char* bin = getenv("NATCDCTL_BIN");
    return bin ? bin : "build/bin/natcdctl";
  }
  static std::string Url() { return server_->url(); }

  // Forks natcdctl with args (after --nats-url unless `no_url`), stdin from
  // `input` (or the pipe `stdin_fd` when >= 0), stdout to `out`, stderr to `err`.
  static pid_t Spawn(const std::vector<std::string>& args, const std::string& input,
                     const std::string& out, const std::string& err, const Env& env, bool no_url,
                     int stdin_fd = -1) {
    std::string in_path = dir_->File("stdin-" + std::to_string(counter_++));
    {
      std::ofstream f(in_path);
      f << input;
    }
    std::string bin = Binary();
    std::vector<std::string> argv = {bin};
    if (!no_url) {
      argv.push_back("--nats-url");
      argv.push_back(Url());
    }
    argv.insert(argv.end(), args.begin(), args.end());
    return SpawnProcess(argv, in_path, out, err, env, stdin_fd);
  }

  // Runs natcdctl to completion (killed after 15 s).
  static CtlResult Ctl(const std::vector<std::string>& args, const std::string& input = "",
                       const Env& env = {}, bool no_url = false) {
    int n = counter_++;
    std::string out = dir_->File("out-" + std::to_string(n));
    std::string err = dir_->File("err-" + std::to_string(n));
    pid_t pid = Spawn(args, input, out, err, env, no_url);
    CtlResult r;
    r.code = WaitProcess(pid, std::chrono::seconds(15));
    r.out = ReadFile(out);
    r.err = ReadFile(err);
    return r;
  }

  // Runs natcdctl in the background; stderr goes along with stdout.
  static std::unique_ptr<CtlProcess> Start(const std::vector<std::string>& args,
                                           const Env& env = {}) {
    std::string out = dir_->File("bg-" + std::to_string(counter_++));
    pid_t pid = Spawn(args, "", out, out, env, false);
    return std::make_unique<CtlProcess>(pid, out);
  }

  // Runs natcdctl in the background with its stdin a pipe (CtlProcess::Send);
  // stderr goes along with stdout.
  static std::unique_ptr<CtlProcess> StartInteractive(const std::vector<std::string>& args) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return nullptr;
    std::string out = dir_->File("bg-" + std::to_string(counter_++));
    pid_t pid = Spawn(args, "", out, out, {}, false, fds[0]);
    close(fds[0]);
    return std::make_unique<CtlProcess>(pid, out, fds[1]);
  }

  // The store's current revision (from a JSON get's header).
  static int64_t Revision() {
    CtlResult r = Ctl({"get", "-w", "json", "/no-such-key"});
    std::smatch m;
    if (r.code != 0) return -1;
    // JSON leaves a zero out (omitempty): a fresh store is at revision 0.
    if (!std::regex_search(r.out, m, std::regex("\"revision\":([0-9]+)"))) return 0;
    return std::stoll(m[1]);
  }

  static inline TempDir* dir_ = nullptr;
  static inline NatsServer* server_ = nullptr;
  static inline NatcdProcess* natcd_ = nullptr;
  static inline int counter_ = 0;
};

}  // namespace natcd::testing
