// A natcd cluster of real processes for fault injection: N natcd members on
// M nats-servers (one server, or a NATS cluster with routes on loopback,
// member i connected to server i % M), with the controls a nemesis needs:
// kill -9 and restart of a member, SIGSTOP/SIGCONT, loss and restart of a
// nats-server, a member's NATS connection cut (through a TcpProxy), and a
// server's routes cut (every route runs through a TcpProxy of its own).
//
//   FaultCluster cluster(TopologyOptions{.members = 3, .nats_servers = 3});
//   ASSERT_TRUE(cluster.Start());
//   cluster.PauseMember(cluster.LeaderIndex());
//   cluster.HealAll();
//
// Everything listens on 127.0.0.1. Controls are called from the thread that
// called Start, which must outlive the processes: a child gets
// PR_SET_PDEATHSIG, which Linux ties to the thread that forked it.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "support/natcd_process.h"
#include "support/nats_server.h"
#include "support/tcp_proxy.h"
#include "support/wire_client.h"
#include "testutil.h"

namespace natcd::testing {

struct TopologyOptions {
  int members = 3;
  int nats_servers = 1;
  // Each member reaches its nats-server through a TcpProxy (CutMember).
  // With several servers a member whose proxy is cut fails over to the
  // servers it learnt from its server's INFO: that is the realistic case.
  bool proxy_members = false;
  // Every route between two servers runs through a TcpProxy (CutRoutes).
  bool proxy_routes = false;
  int election_timeout_ms = 1000;
  int heartbeat_interval_ms = 100;
  int watch_heartbeat_ms = 500;
  // Member index whose data directory is a tmpfs of its own (mounted by
  // Start, unmounted by the destructor; needs root), so FillDisk can fill
  // it. -1: none.
  int tmpfs_member = -1;
  // Room for the Raft log file's first segment, preallocated whole (64
  // MiB, raft_log_file.h), and the database beside it.
  int64_t tmpfs_bytes = 96 << 20;
  std::vector<std::string> extra_member_args;
};

class FaultCluster {
 public:
  explicit FaultCluster(TopologyOptions options);
  ~FaultCluster();
  FaultCluster(const FaultCluster&) = delete;
  FaultCluster& operator=(const FaultCluster&) = delete;

  // Starts the servers, then the members, and waits for a leader.
  ::testing::AssertionResult Start();

  const TopologyOptions& options() const { return options_; }
  int members() const { return options_.members; }
  int servers() const { return options_.nats_servers; }
  const std::string& MemberName(int i) const { return names_[i]; }
  // Every server's URL, comma-separated: what clients connect to.
  std::string ClientUrls() const;
  // One server's URL (a client pinned to it).
  std::string ServerUrl(int s) const;

  // The index of the leader, -1 when none is known within timeout_ms: the
  // member whose log says it leads in the highest term any member logged.
  // (A paused leader still counts until another member logs a higher term.)
  int LeaderIndex(int timeout_ms = 5000);

  // kill -9; RestartMember starts it again on its data directory.
  void KillMember(int i);
  ::testing::AssertionResult RestartMember(int i);
  // SIGTERM: whether the member exited by itself within `limit` (it is
  // killed otherwise); RestartMember starts it again.
  bool StopMemberWithin(int i, std::chrono::milliseconds limit);
  // SIGSTOP / SIGCONT.
  void PauseMember(int i);
  void ResumeMember(int i);
  // The member's NATS connection is dropped and refused (proxy_members).
  void CutMember(int i);
  // A silent partition: the connection stays open, nothing flows (nats-server
  // notices only when its pings go unanswered).
  void FreezeMember(int i);
  void HealMember(int i);
  // kill -9 of a nats-server; RestartServer starts it on the same ports.
  void KillServer(int s);
  ::testing::AssertionResult RestartServer(int s);
  // Fills member i's disk (tmpfs_member) with a file until ENOSPC; FreeDisk
  // removes the file (a member that failed to persist rejoins by itself).
  ::testing::AssertionResult FillDisk(int i);
  void FreeDisk(int i);
  // Every route of server s is dropped and refused (proxy_routes).
  void CutRoutes(int s);
  void HealRoutes(int s);

  // Undoes every fault still in place: resumes, heals, restarts.
  ::testing::AssertionResult HealAll();

  bool member_running(int i) const { return members_[i]->running(); }
  pid_t member_pid(int i) const { return members_[i]->pid(); }
  bool member_paused(int i) const { return paused_[i]; }
  // Every member's log, for a failure message.
  std::string Logs() const;

 private:
  std::vector<std::string> ServerArgs(int s) const;
  int LeaderFromLogs() const;

  const TopologyOptions options_;
  std::vector<std::string> names_;
  std::vector<int> cluster_ports_;  // each server's route listener
  std::vector<int> monitor_ports_;  // each server's HTTP monitoring port
  std::vector<std::unique_ptr<NatsServer>> servers_;
  // route_proxies_[{a, b}]: a's route to b (a solicits through it).
  std::map<std::pair<int, int>, std::unique_ptr<TcpProxy>> route_proxies_;
  std::vector<std::unique_ptr<TcpProxy>> member_proxies_;
  std::vector<std::unique_ptr<TempDir>> dirs_;
  std::vector<std::unique_ptr<NatcdProcess>> members_;
  std::vector<bool> paused_;
  std::vector<bool> cut_;
  std::vector<bool> server_down_;
  std::vector<bool> routes_cut_;
  bool tmpfs_mounted_ = false;
  bool disk_full_ = false;
};

}  // namespace natcd::testing
