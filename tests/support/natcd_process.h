// A real natcd daemon child process for integration tests.
//
//   NatcdProcess natcd(server.url(), dir.path());
//   ASSERT_TRUE(natcd.Start());   // waits for its "serving" line
//   natcd.Kill();                 // SIGKILL: a crash
//   ASSERT_TRUE(natcd.Start());   // same data dir: recovery
//
// The binary is $NATCD_BIN (set by `make check`), else build/bin/natcd.
// Every extra flag is passed through (short watch timeouts for tests...).
#pragma once

#include <gtest/gtest.h>
#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace natcd::testing {

class NatcdProcess {
 public:
  NatcdProcess(std::string nats_url, std::string data_dir,
               std::vector<std::string> extra_args = {});
  ~NatcdProcess();  // SIGKILL if still running
  NatcdProcess(const NatcdProcess&) = delete;
  NatcdProcess& operator=(const NatcdProcess&) = delete;

  // Starts natcd and waits (bounded) until it prints that it is serving.
  ::testing::AssertionResult Start();
  // SIGTERM and wait: a clean shutdown. Returns the exit status.
  int Stop();
  // SIGTERM, then SIGKILL if natcd has not exited within `limit`: whether
  // it exited by itself in time (a bounded clean shutdown).
  bool StopWithin(std::chrono::milliseconds limit);
  // SIGKILL and wait: a crash.
  void Kill();
  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  // How natcd exited when Start saw it exit before serving (waitpid's
  // status; -1 if it did not).
  int start_exit_status() const { return start_exit_status_; }
  // What natcd wrote to stdout and stderr so far.
  std::string Log() const;

  static std::string Binary();

 private:
  std::string nats_url_;
  std::string data_dir_;
  std::vector<std::string> extra_args_;
  std::string log_path_;
  pid_t pid_ = -1;
  int start_exit_status_ = -1;
};

}  // namespace natcd::testing
