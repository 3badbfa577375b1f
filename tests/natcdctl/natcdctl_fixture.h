// End-to-end fixture for natcdctl: one nats-server and one natcd for the
// whole suite (each test uses its own keys), and the natcdctl binary
// ($NATCDCTL_BIN, else build/bin/natcdctl) run as a child process.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "support/natcd_process.h"
#include "support/nats_server.h"
#include "testutil.h"

namespace natcd::testing {

using Env = std::vector<std::pair<std::string, std::string>>;

struct CtlResult {
  int code = -1;
  std::string out;
  std::string err;
};

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A natcdctl running in the background (watch, lock, elect, keep-alive).
class CtlProcess {
 public:
  CtlProcess(pid_t pid, std::string out, int stdin_fd = -1)
      : pid_(pid), out_(std::move(out)), stdin_(stdin_fd) {}
  ~CtlProcess() {
    Stop();
    CloseStdin();
  }
  // With StartInteractive: writes to its stdin, and closes it (EOF).
  bool Send(const std::string& text) {
    return stdin_ >= 0 && write(stdin_, text.data(), text.size()) == ssize_t(text.size());
  }
  void CloseStdin() {
    if (stdin_ >= 0) close(stdin_);
    stdin_ = -1;
  }
  // Waits (bounded) for it to end by itself; its exit code, or -1 if it did not.
  int Wait(std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (pid_ > 0 && std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return -1;
  }
  std::string Output() const { return ReadFile(out_); }
  // Waits until the output holds `text`; false after `timeout`.
  bool WaitFor(const std::string& text,
               std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      if (Output().find(text) != std::string::npos) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }
  // SIGTERM (etcdctl's commands end on it cleanly); returns the exit code.
  int Stop() {
    if (pid_ <= 0) return -1;
    kill(pid_, SIGTERM);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

 private:
  pid_t pid_;
  std::string out_;
  int stdin_;
};

class NatcdctlTest : public ::testing::Test {
 public:
  static void SetUpTestSuite() {
    dir_ = new TempDir;
    server_ = new NatsServer;
    ASSERT_TRUE(server_->Start());
    natcd_ = new NatcdProcess(server_->url(), dir_->path(),
                              {"--lease-ttl-min", "1", "--log-level", "warn"});
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
    pid_t pid = fork();
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
      int in = stdin_fd >= 0 ? stdin_fd : open(in_path.c_str(), O_RDONLY);
      int o = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      // One file for both: one open file description, so neither overwrites the other.
      int e = err == out ? dup(o) : open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(in, STDIN_FILENO);
      dup2(o, STDOUT_FILENO);
      dup2(e, STDERR_FILENO);
      std::vector<char*> a;
      for (auto& s : argv) a.push_back(s.data());
      a.push_back(nullptr);
      execv(bin.c_str(), a.data());
      _exit(127);
    }
    return pid;
  }

  // Runs natcdctl to completion (killed after 15 s).
  static CtlResult Ctl(const std::vector<std::string>& args, const std::string& input = "",
                       const Env& env = {}, bool no_url = false) {
    int n = counter_++;
    std::string out = dir_->File("out-" + std::to_string(n));
    std::string err = dir_->File("err-" + std::to_string(n));
    pid_t pid = Spawn(args, input, out, err, env, no_url);
    CtlResult r;
    int status = 0;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
    while (waitpid(pid, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
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
