// The member's PeerTransport over NATS (docs/PROTOCOL.md "Clusters"): Raft
// messages on P.raft.<cluster>.<member>, snapshot chunks on <member>.snap
// and their acknowledgements on <leader>.snapack, and client requests a
// follower hands to the leader on P.fwd.<leader>.<endpoint suffix>, asked
// with this member's own reply subject, and a leader that is gone (no
// responders) sends the request back to wait for the next one. A request
// that came over NATS is handed on as it came and the leader's answer
// relayed to the client as it is; any other (a second front end's, e.g.
// etcd's gRPC API) is encoded as a wire request (payload_codec.h) and the
// leader's answer, a response or an error reply, decoded for its responder.
//
// Thread safety: the member calls the PeerTransport methods on its thread;
// nats.c threads deliver what arrives, and call the responder of a
// forwarded request with the leader's answer (a front end's responder must
// take it there); the forwarded requests are guarded by forward_mu_.
#pragma once

#include <nats/nats.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "natcd/clock.h"
#include "natcd/mutex.h"
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
  void Ask(server::NodeId to, std::unique_ptr<server::Request> request) override;

 private:
  // Forward and Ask: ask answers "no responders" itself instead of
  // resubmitting the request.
  void Send(server::NodeId to, std::unique_ptr<server::Request> request, bool ask);
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
    // Sent as the NATS request it came as: the answer is relayed as it is.
    // Otherwise encoded here (payload_codec.h), and the answer decoded.
    bool relay = false;
    // Asked of this member alone (Ask): never resubmitted.
    bool ask = false;
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
  Mutex forward_mu_;
  uint64_t forward_seq_ GUARDED_BY(forward_mu_) = 0;
  std::map<uint64_t, Forwarded> forwarded_ GUARDED_BY(forward_mu_);
};

}  // namespace natcd::nats
