// SnapshotShipper: a member too far behind the leader's kept log gets the
// leader's database. As leader: the database is copied (on a thread of its
// own, so the member keeps going, or inline when every step must be
// deterministic), shipped in chunks (snapshot_transfer.h) through the peer
// transport, and only once the follower holds the whole file does Raft's
// MsgSnap go out, so that installing it is a rename. As follower: chunks
// are received into a file, and a MsgSnap is accepted only for the
// database that arrived whole (HasWhole).
//
// Thread safety: the member thread owns it (a copier thread writes only its
// own OutgoingSnapshot's copy result, published through `copied`).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "natcd/clock.h"
#include "raft/durable_raft_storage.h"
#include "raft/raft.h"
#include "server/peer_transport.h"
#include "server/snapshot_transfer.h"

namespace natcd::server {

class SnapshotShipper {
 public:
  SnapshotShipper(NodeId member_id, std::string db_path, std::string log_name, Clock* clock,
                  bool copy_on_caller_thread);
  ~SnapshotShipper();
  SnapshotShipper(const SnapshotShipper&) = delete;
  SnapshotShipper& operator=(const SnapshotShipper&) = delete;

  void SetTransport(PeerTransport* transport) { transport_ = transport; }

  // What the leader's side needs of Raft, each time.
  struct Leader {
    raft::Raft* raft;
    raft::DurableRaftStorage* storage;
    // The membership as of recent indexes (index -> the conf state from it
    // on): a snapshot at index i carries the one in force at i.
    const std::map<uint64_t, raft::ConfState>* conf_history;
    std::function<void(const raft::Message&)> send;
  };

  // Raft asked to send `m` (a MsgSnap) to a follower: copy and ship (one
  // transfer at a time per follower).
  void Start(raft::Message m);
  // Sends what the transfers' windows allow; a finished transfer sends its
  // MsgSnap, a failed one tells Raft.
  void Pump(const Leader& leader);
  // An acknowledgement of chunks arrived.
  void OnAck(const std::string& bytes, const Leader& leader);
  // Ends every transfer (no longer leader, or shutting down); Raft, when
  // given, hears they failed.
  void Abandon(raft::Raft* report_to);

  // A chunk for this member arrived: written, and acknowledged.
  void OnChunk(const std::string& bytes);
  // Whether the database of the snapshot `meta` from `leader` arrived whole.
  bool HasWhole(const raft::SnapshotMeta& meta, NodeId leader) const;
  // The received database (valid after HasWhole); Forget drops the receiver.
  std::string received_path() const;
  void ForgetReceived() { receiver_.reset(); }

 private:
  struct Outgoing {
    raft::Message message;  // the MsgSnap Raft asked for
    std::string path;
    std::thread copier;
    std::atomic<bool> copied{false};
    Result<uint64_t> copy = Status::Internal("not copied");  // the copy's applied index
    std::unique_ptr<SnapshotSender> sender;
    raft::SnapshotMeta meta;
  };

  const NodeId member_id_;
  const std::string db_path_;
  const std::string data_dir_;
  const std::string log_name_;
  Clock* const clock_;
  const bool copy_on_caller_thread_;
  PeerTransport* transport_ = nullptr;
  std::map<NodeId, std::unique_ptr<Outgoing>> outgoing_;
  std::unique_ptr<SnapshotReceiver> receiver_;
};

}  // namespace natcd::server
