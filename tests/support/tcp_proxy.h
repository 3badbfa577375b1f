// A TCP relay on loopback that a test can cut and heal, to take one process
// off the network without stopping it (a partition, as the process sees
// it: its connections drop and new ones are refused).
//
//   TcpProxy proxy(server_port);            // listens on a free loopback port
//   ASSERT_TRUE(proxy.Start());
//   ... connect the process to 127.0.0.1:proxy.port() ...
//   proxy.Cut();   // every relayed connection is closed; new ones are refused
//   proxy.Freeze();  // a silent partition: connections stay open, nothing
//                    // flows either way, new ones are not answered
//   proxy.Heal();  // connections are relayed again (a frozen one resumes)
//
// One thread accepts; each relayed connection has a thread per direction.
// Only 127.0.0.1 is used.
#pragma once

#include <atomic>
#include <list>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace natcd::testing {

class TcpProxy {
 public:
  explicit TcpProxy(int target_port) : target_port_(target_port) {}
  ~TcpProxy();
  TcpProxy(const TcpProxy&) = delete;
  TcpProxy& operator=(const TcpProxy&) = delete;

  bool Start();
  int port() const { return port_; }
  void Cut();
  void Heal();
  void Freeze();

 private:
  // One relayed connection: a thread per direction, so that a peer that
  // stops reading holds up its own direction only (one thread for both
  // deadlocked a member and its server: each blocked writing to the other).
  struct Pair {
    int client = -1;
    int server = -1;
    std::atomic<int> running{2};  // directions still relaying
    std::thread to_server;
    std::thread to_client;
  };
  void Accept();
  void RelayDirection(Pair* pair, int from, int to);
  void ShutdownAll();
  // Joins and frees the pairs whose both directions ended (all: every one).
  void Reap(bool all);

  const int target_port_;
  int port_ = 0;
  int listener_ = -1;
  int wake_[2] = {-1, -1};  // a pipe: Freeze/Heal/stop interrupt the accept loop
  std::atomic<bool> cut_{false};
  std::atomic<bool> frozen_{false};
  std::atomic<bool> stopping_{false};
  std::mutex mu_;  // guards pairs_
  std::list<std::unique_ptr<Pair>> pairs_;
  std::thread thread_;  // accepts
};

}  // namespace natcd::testing
