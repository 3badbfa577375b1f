// PeerTransport: what the member needs from outside to talk to the other
// members: Raft messages, snapshot chunks and their acknowledgements, and
// handing a client request to the leader. The NATS front end implements it
// over P.raft.* and P.fwd.*; the simulator over an in-memory network.
//
// Incoming traffic goes the other way, through Member::ReceiveRaft,
// ReceiveSnapshotChunk and ReceiveSnapshotAck, and forwarded requests that
// found no leader come back through Member::Resubmit.
//
// Thread safety: the member calls every method on its own thread.
#pragma once

#include <memory>
#include <string>

#include "raft/types.h"
#include "server/request.h"

namespace natcd::server {

class PeerTransport {
 public:
  virtual ~PeerTransport() = default;

  // Best effort, like Raft expects of its network. False when the message
  // could not even be handed to the network (Raft is told the peer is
  // unreachable and probes it more slowly).
  virtual bool SendRaft(const raft::Message& message) = 0;
  // A chunk of a snapshot file for member `to`, and an acknowledgement of
  // chunks to the sending leader (bytes: server/snapshot_chunk.h).
  virtual void SendSnapshotChunk(NodeId to, const std::string& bytes) = 0;
  virtual void SendSnapshotAck(NodeId leader, const std::string& bytes) = 0;
  // Hands a request this member does not serve (it is not the leader) to
  // `leader`. The transport owns the request from now on and answers it:
  // with the leader's answer, with ErrTimeout when none came within the
  // request timeout, or, when the leader is unreachable, by giving it back
  // through Member::Resubmit so that it waits for the next leader.
  virtual void Forward(NodeId leader, std::unique_ptr<Request> request) = 0;
  // Asks member `to` itself a request about its own state (the leader's
  // corruption check asks each member's HashKV). As Forward, but never
  // given back through Member::Resubmit and never served by another
  // member: when `to` does not answer (no such member listening, no answer
  // within the request timeout) it is answered with ErrUnavailable or
  // ErrTimeout, so that a silent member's hash stays unknown.
  virtual void Ask(NodeId to, std::unique_ptr<Request> request) = 0;
};

}  // namespace natcd::server
