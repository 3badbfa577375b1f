// The fault harness's clients, all through natcd's C client library (its
// retries with request ids included): KV clients doing puts,
// compare-and-swap txns and linearizable reads on a few keys at a time;
// watchers following every KV key from the first revision; a lease client
// that keeps one lease alive and abandons others. Everything they do goes
// into the histories of history.h.
//
// Keys rotate: the KV clients use "/f/e<epoch>/k<j>" with the epoch moving
// every key_epoch_ms, so an operation left unknown (which the
// linearizability check must let take effect at any later time) weighs on
// the few operations of its epoch only, not on the whole run.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "adapters/nats/natcd_client.h"
#include "faults/history.h"

namespace natcd::testing {

// The prefix of every key the KV clients write.
inline constexpr const char* kKvPrefix = "/f/";

struct WorkloadOptions {
  // Client c connects to client_urls[c % size] (comma-separated lists).
  std::vector<std::string> client_urls;
  int kv_clients = 4;
  int watchers = 2;
  bool leases = true;
  int lock_clients = 2;
  int64_t lock_session_ttl_s = 5;
  int64_t lock_hold_ms = 150;
  int64_t request_timeout_ms = 1000;
  int retries = 3;
  int64_t op_pause_ms = 40;
  int64_t key_epoch_ms = 3000;
  int keys_per_epoch = 3;
  int64_t kept_lease_ttl_s = 5;
  int64_t abandoned_lease_ttl_s = 2;
  int64_t abandon_every_ms = 5000;
  uint64_t seed = 1;
};

// Connects a natcd client with the harness's timeouts to urls
// (comma-separated, tried in order); nullptr on failure. Destroy it with
// DestroyClient (it owns its connection).
natcdClient* ConnectClient(const std::string& urls, int64_t timeout_ms, int retries);
void DestroyClient(natcdClient* client);

class Workload {
 public:
  Workload(WorkloadOptions options, const RunClock* clock);
  ~Workload();
  Workload(const Workload&) = delete;
  Workload& operator=(const Workload&) = delete;

  // Connects every client, creates the watches (from revision 1: run it on
  // an empty store), grants the kept lease, then starts the threads.
  ::testing::AssertionResult Start();
  // Stops the KV and lease clients (the watches go on: see StopWatches).
  void StopClients();
  void StopWatches();

  std::vector<KvRecord> KvRecords() const { return kv_.Snapshot(); }
  std::vector<WatchEvent> WatchEvents(int watcher) const;
  int64_t WatchLastRevision(int watcher) const;
  std::string WatchStats(int watcher) const;
  int watchers() const { return static_cast<int>(watches_.size()); }
  std::vector<LeaseHistory> Leases() const;
  std::vector<LockHold> LockHolds() const;

 private:
  struct Watcher {
    natcdClient* client = nullptr;
    natcdWatch* watch = nullptr;
    mutable std::mutex mu;
    std::vector<WatchEvent> events;  // guarded by mu
    const RunClock* clock = nullptr;
  };
  static void OnWatchNotice(natcdWatch* watch, const natcdWatchNotice* notice, void* closure);
  void RunKvClient(int c, natcdClient* client);
  // The index of the lease in leases_, -1 when the grant or the put failed.
  int GrantLease(natcdClient* client, int64_t ttl_s, const std::string& key, bool kept);
  LeaseRecord ReadLeaseKey(natcdClient* client, const std::string& key);
  void Record(int lease, LeaseRecord record);
  void RunKeptLease(natcdClient* client);
  void RunAbandonedLeases(natcdClient* client);
  void RunLockClient(int c, natcdClient* client);

  const WorkloadOptions options_;
  const RunClock* clock_;
  KvHistory kv_;
  std::atomic<bool> stop_{false};
  std::vector<natcdClient*> clients_;
  std::vector<std::thread> threads_;
  std::vector<std::unique_ptr<Watcher>> watches_;
  mutable std::mutex lease_mu_;
  std::vector<LeaseHistory> leases_;  // guarded by lease_mu_
  mutable std::mutex lock_mu_;
  std::vector<LockHold> lock_holds_;  // guarded by lock_mu_
};

}  // namespace natcd::testing
