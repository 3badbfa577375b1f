// Helpers for the example tests: a fixture with a real nats-server, a real
// natcd (short lease minimum and watch heartbeat) and a C client, and
// ExampleProcess, which runs one example binary with its output in a file.
//
//   ExampleProcess p("registry", {"consume", "web"}, server_.url(), dir_.path());
//   ASSERT_TRUE(p.Start());
//   ASSERT_TRUE(p.WaitForLine("+ a 10.0.0.1:80", 5000)) << p.Output();
//   p.Kill();                     // SIGKILL
//   EXPECT_EQ(p.Terminate(), 0);  // SIGTERM, wait (bounded), exit status
//
// Binaries: $EXAMPLES_BIN_DIR/example-<name> (set by `make check-examples`),
// else build/bin/example-<name>. Every wait is bounded.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "natcd/client.h"
#include "support/natcd_process.h"
#include "support/nats_server.h"
#include "testutil.h"

namespace natcd::testing {

// Polls `done` every 10 ms for at most timeout_ms.
inline bool WaitUntil(const std::function<bool()>& done, int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

inline std::string ExampleBinary(const std::string& name) {
  const char* dir = getenv("EXAMPLES_BIN_DIR");
  return std::string(dir ? dir : "build/bin") + "/example-" + name;
}

inline std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

class ExampleProcess {
 public:
  // Runs `program args...` (program: an absolute path, or an example name)
  // with NATS_URL=url and stdout+stderr into <dir>/<log name>.
  ExampleProcess(std::string program, std::vector<std::string> args, std::string url,
                 const std::string& dir)
      : program_(program.find('/') == std::string::npos ? ExampleBinary(program) : program),
        args_(std::move(args)),
        url_(std::move(url)),
        log_path_(dir + "/out-" + std::to_string(++Counter()) + ".log") {}
  ~ExampleProcess() { Kill(); }
  ExampleProcess(const ExampleProcess&) = delete;
  ExampleProcess& operator=(const ExampleProcess&) = delete;

  ::testing::AssertionResult Start() {
    if (access(program_.c_str(), X_OK) != 0) {
      return ::testing::AssertionFailure() << program_ << " is not built (make examples)";
    }
    pid_t pid = fork();
    if (pid < 0) return ::testing::AssertionFailure() << "fork failed";
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      int fd = open(log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd >= 0) {
        dup2(fd, STDOUT_FILENO);
        dup2(fd, STDERR_FILENO);
        close(fd);
      }
      setenv("NATS_URL", url_.c_str(), 1);
      std::vector<char*> argv{const_cast<char*>(program_.c_str())};
      for (auto& a : args_) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      execv(program_.c_str(), argv.data());
      _exit(127);
    }
    pid_ = pid;
    return ::testing::AssertionSuccess();
  }

  std::string Output() const {
    std::ifstream in(log_path_);
    std::stringstream out;
    out << in.rdbuf();
    return out.str();
  }
  std::vector<std::string> Lines() const { return SplitLines(Output()); }

  // Waits for a whole output line equal to `line`, found at or after the
  // `*from`-th line (then *from is set past it).
  bool WaitForLine(const std::string& line, int timeout_ms, size_t* from = nullptr) {
    size_t start = from ? *from : 0;
    return WaitUntil(
        [&] {
          auto lines = Lines();
          for (size_t i = start; i < lines.size(); i++) {
            if (lines[i] == line) {
              if (from) *from = i + 1;
              return true;
            }
          }
          return false;
        },
        timeout_ms);
  }

  void Kill() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

  // SIGTERM, then waits at most timeout_ms (SIGKILL after that). Returns the
  // exit status, or -1 if it had to be killed or did not exit normally.
  int Terminate(int timeout_ms = 5000) {
    if (pid_ <= 0) return -1;
    kill(pid_, SIGTERM);
    return Wait(timeout_ms);
  }

  // Waits at most timeout_ms for it to exit (SIGKILL after that).
  int Wait(int timeout_ms) {
    if (pid_ <= 0) return -1;
    int status = 0;
    bool exited = WaitUntil([&] { return waitpid(pid_, &status, WNOHANG) == pid_; }, timeout_ms);
    if (!exited) {
      Kill();
      return -1;
    }
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  bool running() const { return pid_ > 0; }

 private:
  static int& Counter() {
    static int n = 0;
    return n;
  }

  std::string program_;
  std::vector<std::string> args_;
  std::string url_;
  std::string log_path_;
  pid_t pid_ = -1;
};

// nats-server + natcd (lease TTLs from 1 s, 200 ms watch heartbeats) + a
// C client on it.
class ExampleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.Start());
    natcd_ = std::make_unique<NatcdProcess>(
        server_.url(), dir_.path(),
        std::vector<std::string>{"--lease-ttl-min", "1", "--watch-heartbeat-ms", "200",
                                 "--log-level", "warn"});
    ASSERT_TRUE(natcd_->Start());
    natcdClientOptions opts;
    natcdClientOptions_Init(&opts);
    opts.timeout_ms = 1000;
    ASSERT_EQ(natcdClient_Connect(&client_, server_.url().c_str(), &opts), natcdStatus_OK);
  }
  void TearDown() override {
    natcdClient_Destroy(client_);
    client_ = nullptr;
    if (HasFailure() && natcd_) std::cerr << "natcd log:\n" << natcd_->Log() << "\n";
  }

  bool Exists(const std::string& key) {
    natcdRangeResponse* resp = nullptr;
    if (natcdKV_Get(&resp, client_, key.data(), key.size(), nullptr) != natcdStatus_OK) {
      return false;
    }
    bool found = resp->n_kvs == 1;
    natcdRangeResponse_Destroy(resp);
    return found;
  }

  TempDir dir_;
  NatsServer server_;
  std::unique_ptr<NatcdProcess> natcd_;
  natcdClient* client_ = nullptr;
};

}  // namespace natcd::testing
