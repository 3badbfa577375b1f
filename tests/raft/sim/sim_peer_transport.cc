#include "raft/sim/sim_peer_transport.h"

#include <utility>
#include <vector>

namespace natcd::raft::sim {

bool SimPeerTransport::SendRaft(const raft::Message& message) {
  if (message.type == raft::MessageType::kSnap) snapshot_messages_++;
  Packet p;
  p.kind = Packet::Kind::kRaft;
  p.from = self_;
  p.to = message.to;
  p.raft = message;
  network_->Send(std::move(p), *now_);
  return true;  // like a NATS publish: handed to the network
}

void SimPeerTransport::SendSnapshotChunk(NodeId to, const std::string& bytes) {
  Packet p;
  p.kind = Packet::Kind::kSnapshotChunk;
  p.from = self_;
  p.to = to;
  p.bytes = bytes;
  network_->Send(std::move(p), *now_);
}

void SimPeerTransport::SendSnapshotAck(NodeId leader, const std::string& bytes) {
  Packet p;
  p.kind = Packet::Kind::kSnapshotAck;
  p.from = self_;
  p.to = leader;
  p.bytes = bytes;
  network_->Send(std::move(p), *now_);
}

void SimPeerTransport::Ask(NodeId to, std::unique_ptr<server::Request> request) {
  const uint64_t seq = forward_seq_ + 1;
  Forward(to, std::move(request));
  forwarded_[seq].ask = true;
}

void SimPeerTransport::Forward(NodeId leader, std::unique_ptr<server::Request> request) {
  forwards_++;
  const uint64_t seq = ++forward_seq_;
  Packet p;
  p.kind = Packet::Kind::kForward;
  p.from = self_;
  p.to = leader;
  p.from_incarnation = incarnation_;
  p.forward_seq = seq;
  p.payload = request->payload;
  p.request_id = request->request_id;
  p.hops = request->hops + 1;
  forwarded_[seq] =
      Forwarded{std::move(request), leader, clock_->MonotonicMs() + request_timeout_ms_};
  network_->Send(std::move(p), *now_);
}

void SimPeerTransport::ReceiveForwardReply(Packet packet) {
  auto it = forwarded_.find(packet.forward_seq);
  if (it == forwarded_.end()) return;  // answered (a duplicate) or timed out already
  Forwarded forward = std::move(it->second);
  forwarded_.erase(it);
  if (!packet.answer.has_value() && forward.ask) {
    server::ResponseContext context;
    forward.request->responder->Respond(
        Status::Unavailable("ErrUnavailable", "etcdserver: member did not answer"), context);
    return;
  }
  if (!packet.answer.has_value()) {
    // The leader this member knew is not there: the member holds the
    // request until another is known.
    resubmits_++;
    member_->Resubmit(std::move(forward.request), forward.leader);
    return;
  }
  server::ResponseContext context;
  forward.request->responder->Respond(std::move(*packet.answer), context);
}

void SimPeerTransport::ExpireForwards() {
  const int64_t now = clock_->MonotonicMs();
  std::vector<std::unique_ptr<server::Request>> expired;
  for (auto it = forwarded_.begin(); it != forwarded_.end();) {
    if (now >= it->second.deadline_ms) {
      expired.push_back(std::move(it->second.request));
      it = forwarded_.erase(it);
    } else {
      ++it;
    }
  }
  server::ResponseContext context;
  for (auto& request : expired) {
    forward_timeouts_++;
    request->responder->Respond(
        Status(Status::Code::kTimeout, "ErrTimeout", "etcdserver: request timed out"), context);
  }
}

}  // namespace natcd::raft::sim
