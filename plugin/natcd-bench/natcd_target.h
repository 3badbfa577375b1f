// natcd over NATS: etcd's messages (etcd_messages.h) on natcd's subjects,
// pipelined on one connection (nats_requests.h); watches through natcd's
// watch protocol, acknowledging every message as a client must.
#pragma once

#include <nats/nats.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "plugin/natcd-bench/nats_requests.h"
#include "plugin/natcd-bench/target.h"

namespace natcd::bench {

class NatcdTarget final : public Target {
 public:
  // nc is borrowed and must outlive the target. watch_groups: watchers
  // join watch groups (PROTOCOL.md), each subscribing its group's subject
  // as a separate client would.
  NatcdTarget(natsConnection* nc, std::string prefix, bool watch_groups = true);
  ~NatcdTarget() override;

  std::string name() const override { return "natcd"; }
  bool Supports(Op) const override { return true; }
  bool BeginLoad(int slots, ReplySink* sink) override;
  void Issue(int slot, Op op, uint64_t i) override;
  void EndLoad() override;
  bool PrepareKeepAlive() override;
  void ReserveLeases(uint64_t leases) override;
  void SetLeaseTtl(int64_t seconds) override { lease_ttl_s_ = seconds; }
  bool ResetCounter() override;
  bool ReadCounter(Counter* out) override;
  CasOutcome SwapCounter(const Counter& seen, Counter* now, bool* now_known) override;
  bool OpenWatchers(int watchers, EventSink* sink) override;
  void CloseWatchers() override;
  WatchGaps WatchGapsSeen() const override;
  int64_t CountKeys(const std::string& space) override;

 private:
  bool Judge(int slot, natsMsg* reply);
  // A synchronous request; false on no reply or an error reply.
  bool Call(const std::string& subject, const std::string& body, std::string* reply);
  static void OnWatchMessage(natsConnection*, natsSubscription*, natsMsg* msg, void* closure);
  static void OnGroupMessage(natsConnection*, natsSubscription*, natsMsg* msg, void* closure);
  void Ack(int64_t watch_id, uint64_t seq, bool group_subscribed, int64_t group_id);

  // A watcher's side of its group: the subscription and, once joined, the
  // group_seq its group messages start at.
  struct GroupMember {
    NatcdTarget* self = nullptr;
    int64_t watch_id = 0;
    int64_t group_id = 0;
    natsSubscription* sub = nullptr;
    std::atomic<uint64_t> join_seq{0};
    // The group_seq due next once joined (0: none seen yet); the group
    // subscriptions' one delivery thread only.
    uint64_t next_seq = 0;
  };

  natsConnection* const nc_;
  const std::string prefix_;
  NatsRequests requests_;
  // Per slot: the request outstanding on it (its reply may carry a lease).
  std::vector<Op> slot_op_;
  std::vector<uint64_t> slot_request_;
  std::vector<int64_t> leases_;  // lease of kLeaseGrant request i
  int64_t keepalive_lease_ = 0;
  int64_t lease_ttl_s_ = kGrantTtlS;

  // Watchers.
  EventSink* event_sink_ = nullptr;
  natsSubscription* watch_sub_ = nullptr;
  std::string watch_inbox_;
  std::vector<int64_t> watch_ids_;
  const bool watch_groups_;
  // Group subscriptions go on a connection of their own, with one delivery
  // thread for all (nats.c's global delivery) instead of one per watcher.
  natsConnection* group_nc_ = nullptr;
  std::vector<std::unique_ptr<GroupMember>> members_;  // by watcher index
  std::atomic<int> joined_{0};
  std::atomic<uint64_t> group_gaps_{0};
  std::atomic<uint64_t> group_messages_missed_{0};
};

}  // namespace natcd::bench
