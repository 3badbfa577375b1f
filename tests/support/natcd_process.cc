#include "support/natcd_process.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

namespace natcd::testing {

NatcdProcess::NatcdProcess(std::string nats_url, std::string data_dir,
                           std::vector<std::string> extra_args)
    : nats_url_(std::move(nats_url)),
      data_dir_(std::move(data_dir)),
      extra_args_(std::move(extra_args)),
      log_path_(data_dir_ + "/natcd.log") {}

NatcdProcess::~NatcdProcess() { Kill(); }

std::string NatcdProcess::Binary() {
  const char* bin = getenv("NATCD_BIN");
  return bin ? bin : "build/bin/natcd";
}

std::string NatcdProcess::Log() const {
  std::ifstream in(log_path_);
  std::stringstream out;
  out << in.rdbuf();
  return out.str();
}

::testing::AssertionResult NatcdProcess::Start() {
  if (running()) return ::testing::AssertionFailure() << "natcd already running";
  std::string binary = Binary();
  // A small Raft log segment: each is zero-filled when made (64 MiB by default).
  std::vector<std::string> args = {binary,    "--nats-url", nats_url_,   "--data-dir",
                                   data_dir_, "--config",   "/dev/null", "--raft-log-segment-bytes",
                                   "1048576"};
  args.insert(args.end(), extra_args_.begin(), extra_args_.end());
  // Each start appends to the log; remember where this run begins.
  std::ifstream existing(log_path_, std::ios::ate);
  std::streamoff offset = existing ? static_cast<std::streamoff>(existing.tellg()) : 0;

  start_exit_status_ = -1;
  pid_t pid = fork();
  if (pid < 0) return ::testing::AssertionFailure() << "fork failed";
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    int fd = open(log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      dup2(fd, STDOUT_FILENO);
      dup2(fd, STDERR_FILENO);
      close(fd);
    }
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(binary.c_str(), argv.data());
    _exit(127);
  }
  pid_ = pid;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (std::chrono::steady_clock::now() < deadline) {
    std::string log = Log();
    if (log.find("serving", offset) != std::string::npos) return ::testing::AssertionSuccess();
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      start_exit_status_ = status;
      return ::testing::AssertionFailure() << "natcd exited at start (" << binary << "):\n" << log;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return ::testing::AssertionFailure() << "natcd did not start in 15 s:\n" << Log();
}

int NatcdProcess::Stop() {
  if (!running()) return -1;
  kill(pid_, SIGTERM);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
  return status;
}

bool NatcdProcess::StopWithin(std::chrono::milliseconds limit) {
  if (!running()) return false;
  kill(pid_, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
      pid_ = -1;
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  Kill();
  return false;
}

void NatcdProcess::Kill() {
  if (!running()) return;
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

}  // namespace natcd::testing
