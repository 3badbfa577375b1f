// Command-line programs run by tests as child processes (natcdctl,
// etcdctl, node): to completion with their output captured, or in the
// background (watch, lock, elect) with their output in a file.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace natcd::testing {

using Env = std::vector<std::pair<std::string, std::string>>;

struct CommandResult {
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

// Forks argv[0] with argv, stdin from the file `in_path` (or the pipe
// `stdin_fd` when >= 0), stdout to `out`, stderr to `err` (the same file
// when equal). The child dies with the test.
inline pid_t SpawnProcess(const std::vector<std::string>& argv, const std::string& in_path,
                          const std::string& out, const std::string& err, const Env& env,
                          int stdin_fd = -1) {
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
    for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
    a.push_back(nullptr);
    execv(argv[0].c_str(), a.data());
    _exit(127);
  }
  return pid;
}

// Waits for pid (killed after `timeout`); its exit code, 128 + signal when killed.
inline int WaitProcess(pid_t pid, std::chrono::milliseconds timeout) {
  int status = 0;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// A program running in the background.
class BackgroundProcess {
 public:
  BackgroundProcess(pid_t pid, std::string out, int stdin_fd = -1)
      : pid_(pid), out_(std::move(out)), stdin_(stdin_fd) {}
  ~BackgroundProcess() {
    Stop();
    CloseStdin();
  }
  BackgroundProcess(const BackgroundProcess&) = delete;
  BackgroundProcess& operator=(const BackgroundProcess&) = delete;
  // With a pipe for stdin: writes to it, and closes it (EOF).
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
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_;
  std::string out_;
  int stdin_;
};

}  // namespace natcd::testing
