// A real nats-server child process for tests.
//
//   natcd::testing::NatsServer server;           // not started yet
//   ASSERT_TRUE(server.Start());                 // free loopback port, waits
//   natsConnection_ConnectTo(&nc, server.url().c_str());
//   ASSERT_TRUE(server.Restart());               // same port
//
// The server listens on 127.0.0.1 only, on a port picked by binding port 0
// (so tests can run in parallel), and never talks to any other address.
// Start/Restart return once the port accepts TCP connections, or fail after
// NatsServerOptions::start_timeout with the server's log in the message.
// The destructor stops the server (SIGTERM, then SIGKILL after
// stop_timeout) and removes its JetStream directory.
//
// The child gets PR_SET_PDEATHSIG(SIGKILL), so it dies with the test
// process even on a crash. (Linux ties that to the thread that forked it:
// create servers from a thread that outlives them, e.g. the test thread.)
//
// The nats-server binary is $NATCD_NATS_SERVER if set, else `nats-server`
// from PATH, else /usr/sbin/nats-server or /usr/bin/nats-server.
//
// Thread safety: none; use one NatsServer from one thread.
#pragma once

#include <gtest/gtest.h>
#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace natcd::testing {

// A port on 127.0.0.1 that was free a moment ago (-1 if none): for servers
// whose ports must be known before they start (a NATS cluster's routes).
int PickFreeLoopbackPort();

struct NatsServerOptions {
  // Run with JetStream (-js), storing in a fresh temporary directory (-sd).
  bool jetstream = false;
  // Extra command-line arguments for nats-server (e.g. "-DV" to trace).
  std::vector<std::string> extra_args;
  // How long Start/Restart wait for the port to accept connections.
  std::chrono::milliseconds start_timeout{10000};
  // How long Stop waits after SIGTERM before sending SIGKILL.
  std::chrono::milliseconds stop_timeout{5000};
};

class NatsServer {
 public:
  explicit NatsServer(NatsServerOptions options = {});
  ~NatsServer();
  NatsServer(const NatsServer&) = delete;
  NatsServer& operator=(const NatsServer&) = delete;

  // Picks a free port (first call only) and starts the server on it. Fails
  // if the server is already running, cannot be started, exits early or
  // does not accept connections in time.
  ::testing::AssertionResult Start();

  // Stops the server: SIGTERM, and SIGKILL if it has not exited within
  // stop_timeout. Does nothing if it is not running.
  void Stop();

  // Kills the server at once with SIGKILL (a crash, as clients see it).
  void Kill();

  // Stop() then Start() on the same port (and the same JetStream directory).
  ::testing::AssertionResult Restart();

  bool running() const { return pid_ > 0; }
  // "nats://127.0.0.1:<port>". Valid after the first Start().
  const std::string& url() const { return url_; }
  int port() const { return port_; }
  // The JetStream store directory ("" without JetStream).
  const std::string& store_dir() const { return store_dir_; }
  // Everything the server wrote to stdout/stderr so far.
  std::string Log() const;

 private:
  void Signal(int signo, std::chrono::milliseconds wait);

  const NatsServerOptions options_;
  pid_t pid_ = -1;
  int port_ = 0;
  std::string url_;
  std::string work_dir_;   // temporary: log file, JetStream store
  std::string store_dir_;  // work_dir_/js when JetStream is on
  std::string log_path_;
};

}  // namespace natcd::testing
