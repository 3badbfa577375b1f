// The member's PeerTransport over NATS (docs/PROTOCOL.md "Clusters"): Raft
// messages on P.raft.<cluster>.<member>, snapshot chunks on <member>.snap
// and their acknowledgements on <leader>.snapack, and client requests a
// follower hands to the leader on P.fwd.<leader>.<endpoint suffix>, asked
// with this member's own reply subject so that the leader's answer is
// relayed to the client as it came, and a leader that is gone (no
// responders) sends the request back to wait for the next one.
//
// Thread safety: the member calls the PeerTransport methods on its thread;
// nats.c threads deliver what arrives; the forwarded requests are guarded
// by forward_mu_.
#pragma once

#include <nats/nats.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "natcd/clock.h"
#include "natcd/status.h"
#include "server/member.h"
#include "server/peer_transport.h"

namespace natcd::nats {

class NatsPeerTransport final : public server::PeerTransport {
 public:
  NatsPeerTransport(natsConnection* nc, std::string prefix, std::string cluster_name,
                    server::NodeId member_id, Clock* clock, int64_t request_timeout_ms,
                    uint64_t nonce);
  ~NatsPeerTransport() override;
  NatsPeerTransport(const NatsPeerTransport&) = delete;
  NatsPeerTransport& operator=(const NatsPeerTransport&) = delete;

  // Subscribes this member's Raft, snapshot and forward-reply subjects,
  // delivering to `member`.
  Status Subscribe(server::Member* member);
  // Stops receiving: drains the subscriptions (when connected) within the
  // deadline, else unsubscribes.
  void Unsubscribe(bool connected, int64_t deadline_ms);
  // Answers forwarded requests past their deadline with ErrTimeout, or all
  // of them with ErrStopped when stopping (member thread).
  void ExpireForwards(bool stopping);

  bool SendRaft(const raft::Message& message) override;
  void SendSnapshotChunk(server::NodeId to, const std::string& bytes) override;
  void SendSnapshotAck(server::NodeId leader, const std::string& bytes) override;
  void Forward(server::NodeId leader, std::unique_ptr<server::Request> request) override;

 private:
  enum class Kind { kRaft, kSnapshotChunk, kSnapshotAck, kForwardReply };
  struct Subscription {
    NatsPeerTransport* transport;
    Kind kind;
    natsSubscription* sub = nullptr;
  };
  struct Forwarded {
    std::unique_ptr<server::Request> request;
    server::NodeId leader = 0;
    int64_t deadline_ms = 0;
  };
  static void OnMessage(natsConnection* nc, natsSubscription* sub, natsMsg* msg, void* closure);
  Status SubscribeTo(const std::string& subject, Kind kind);
  void ReceiveForwardReply(natsMsg* msg);

  natsConnection* const nc_;
  const std::string prefix_;
  const std::string cluster_name_;
  const server::NodeId member_id_;
  Clock* const clock_;
  const int64_t request_timeout_ms_;
  const std::string forward_inbox_;  // answers come back on <inbox><seq>
  server::Member* member_ = nullptr;
  std::vector<std::unique_ptr<Subscription>> subscriptions_;
  std::mutex forward_mu_;
  uint64_t forward_seq_ = 0;                 // guarded by forward_mu_
  std::map<uint64_t, Forwarded> forwarded_;  // guarded by forward_mu_
};

}  // namespace natcd::nats
