// SimPeerTransport: server::PeerTransport over the simulated network, for
// one incarnation of one member (a restarted member gets a new one: what
// the old one had forwarded is forgotten, as a crashed process forgets).
//
// Forward behaves as the NATS transport does (adapters/nats/
// nats_peer_transport.cc): the request travels to the leader, which serves
// it as a new request one hop further; the leader's answer comes back here
// and answers the original responder. When the leader is not there to take
// it ("no responders"), the request goes back to this member through
// Member::Resubmit; when nothing comes back within the request timeout (a
// partition, a lost packet, a leader that crashed holding it), it is
// answered ErrTimeout.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "natcd/clock.h"
#include "raft/sim/sim_network.h"
#include "server/member.h"
#include "server/peer_transport.h"

namespace natcd::raft::sim {

class SimPeerTransport final : public server::PeerTransport {
 public:
  // now: the simulation's time (the network's clock); clock: the member's
  // own, on which forwards time out.
  SimPeerTransport(NodeId self, uint64_t incarnation, SimNetwork* network, const int64_t* now,
                   Clock* clock, int64_t request_timeout_ms)
      : self_(self),
        incarnation_(incarnation),
        network_(network),
        now_(now),
        clock_(clock),
        request_timeout_ms_(request_timeout_ms) {}

  void set_member(server::Member* member) { member_ = member; }

  bool SendRaft(const raft::Message& message) override;
  void SendSnapshotChunk(NodeId to, const std::string& bytes) override;
  void SendSnapshotAck(NodeId leader, const std::string& bytes) override;
  void Forward(NodeId leader, std::unique_ptr<server::Request> request) override;
  // As Forward, but "no responders" is answered ErrUnavailable, never
  // resubmitted (as the NATS transport's Ask).
  void Ask(NodeId to, std::unique_ptr<server::Request> request) override;

  // A kForwardReply packet for this incarnation arrived.
  void ReceiveForwardReply(Packet packet);
  // Answers ErrTimeout to what was forwarded longer than the request
  // timeout ago, as the NATS transport's timer does.
  void ExpireForwards();

  uint64_t incarnation() const { return incarnation_; }
  uint64_t forwards() const { return forwards_; }
  uint64_t resubmits() const { return resubmits_; }
  uint64_t forward_timeouts() const { return forward_timeouts_; }
  uint64_t snapshot_messages() const { return snapshot_messages_; }

 private:
  struct Forwarded {
    std::unique_ptr<server::Request> request;
    NodeId leader = 0;
    int64_t deadline_ms = 0;
    bool ask = false;
  };

  NodeId self_;
  uint64_t incarnation_;
  SimNetwork* network_;
  const int64_t* now_;
  Clock* clock_;
  int64_t request_timeout_ms_;
  server::Member* member_ = nullptr;
  uint64_t forward_seq_ = 0;
  std::map<uint64_t, Forwarded> forwarded_;
  uint64_t forwards_ = 0;
  uint64_t resubmits_ = 0;
  uint64_t forward_timeouts_ = 0;
  uint64_t snapshot_messages_ = 0;
};

}  // namespace natcd::raft::sim
