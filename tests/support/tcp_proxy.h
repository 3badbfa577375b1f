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
// One thread relays everything with poll(). Only 127.0.0.1 is used.
#pragma once

#include <atomic>
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
  void Run();
  void Wake();
  void CloseAll();

  const int target_port_;
  int port_ = 0;
  int listener_ = -1;
  int wake_[2] = {-1, -1};  // a pipe: Cut/Heal/stop interrupt poll()
  std::atomic<bool> cut_{false};
  std::atomic<bool> frozen_{false};
  std::atomic<bool> stopping_{false};
  std::vector<std::pair<int, int>> pairs_;  // (client, server); relay thread only
  std::thread thread_;
};

}  // namespace natcd::testing
