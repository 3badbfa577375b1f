// Node: one natcd member serving the wire contract (docs/PROTOCOL.md) over a
// NATS connection the caller owns: the composition root that builds the
// transport-neutral member (core/server/member.h) and wires it to its NATS
// front end, its NATS peer transport and the P.ev.* event sink.
//
// Replies are written to the socket at once (the connection should be
// created with natsOptions_SetSendAsap): nats.c's default flusher batches on
// a ~1 ms cycle, which would add a millisecond to every lone request.
#pragma once

#include <nats/nats.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "metrics/member_metrics.h"
#include "natcd/auto_compactor.h"
#include "natcd/clock.h"
#include "natcd/engine.h"
#include "natcd/status.h"
#include "server/front_end.h"
#include "server/member.h"

namespace natcd::server {
class Member;
}  // namespace natcd::server

namespace natcd::nats {

// A front end besides the NATS one (etcd's gRPC API, adapters/grpc/): built
// on the member before it starts, its intake stopped before the member
// stops.
class AdditionalFrontEnd {
 public:
  virtual ~AdditionalFrontEnd() = default;
  // The member's hooks for it.
  virtual server::FrontEnd* front_end() = 0;
  // Stop taking requests; those received are answered by the member (until
  // the deadline, on the member's clock).
  virtual void StopReceiving(int64_t deadline_ms) = 0;
};

// Builds one on the member (not yet started), with the IDs every response
// header carries.
using FrontEndFactory = std::function<Result<std::unique_ptr<AdditionalFrontEnd>>(
    server::Member* member, uint64_t cluster_id, uint64_t member_id)>;

struct NodeOptions {
  std::string prefix = "natcd";  // P in P.kv.range...
  std::string name = "natcd-1";  // this member's name
  std::string instance_id;       // micro-services instance id; random when empty
  std::string version = "0.1.0";
  uint64_t cluster_id = 0;  // 0: derived from prefix and name
  uint64_t member_id = 0;   // 0: derived from name
  EngineOptions engine;     // db_path, clock, limits; clock required

  size_t request_bytes_max = 1'572'864;  // etcd's --max-request-bytes
  // Subscriptions the leader holds on each write and keepalive subject where
  // a follower holds one: NATS then hands it most writes directly.
  int leader_request_weight = 48;
  int64_t request_id_window_ms = 120'000;  // how long a Natcd-Request-Id is remembered

  // Watches over NATS (see docs/PROTOCOL.md "Watch delivery").
  size_t watch_window_messages = 64;             // unacknowledged messages per watch
  size_t watch_message_events_max = 1'000;       // events per message (whole revisions)
  int64_t watch_heartbeat_ms = 5'000;            // idle watches get a progress message this often
  int64_t watch_ack_timeout_ms = 15'000;         // no ack for this long: the client is gone
  int64_t watch_coalesce_ms = 25;                // busy watches: longest wait for an ack (0: off)
  size_t watch_coalesce_ready_min = 8;           // ... in rounds with at least this many to serve
  int64_t watch_progress_interval_ms = 600'000;  // progress_notify watches (etcd: 10 min)

  // Auto-compaction (etcd's --auto-compaction-mode/-retention): off,
  // revision (keep the last `retention` revisions) or periodic (keep
  // `retention` seconds of history).
  AutoCompactor::Mode auto_compaction_mode = AutoCompactor::Mode::kOff;
  int64_t auto_compaction_retention = 0;

  int64_t lease_check_interval_ms = 100;
  int64_t lease_checkpoint_interval_ms = 5'000;

  // The cluster (docs/PROTOCOL.md "Clusters"). Members exchange Raft
  // messages on P.raft.<cluster_name>.<member id>. initial_cluster names
  // every founding member (this one included); empty means a cluster of
  // this member alone. A member not in initial_cluster starts empty and
  // waits to be added (natcdctl member add) and caught up by the leader.
  std::string cluster_name = "default";
  std::vector<std::string> initial_cluster;
  // etcd's --initial-cluster-state: false ("existing") for a member joining
  // a running cluster, which must never start a cluster of its own.
  bool new_cluster = true;
  // etcd's --heartbeat-interval and --election-timeout.
  int64_t heartbeat_interval_ms = 100;
  int64_t election_timeout_ms = 1'000;
  // A write not applied within this long is answered ErrTimeout (it may
  // still be applied: retry with the same Natcd-Request-Id).
  int64_t request_timeout_ms = 5'000;
  // Auth (etcd's Auth service, over gRPC): --auth-token-ttl, and
  // --nats-trusted (NatsFrontEndOptions::auth_trusted).
  int64_t auth_token_ttl_ms = 300'000;
  bool nats_auth_trusted = false;
  // The Raft log is compacted every snapshot_entries applied entries,
  // keeping snapshot_catchup_entries for members a little behind (etcd's
  // --snapshot-count and its catch-up entries).
  uint64_t snapshot_entries = 10'000;
  // The Raft log's segment size (MemberOptions::raft_log_segment_bytes).
  uint64_t raft_log_segment_bytes = 64ull << 20;
  uint64_t snapshot_catchup_entries = 5'000;
  // The backend quota (etcd's --quota-backend-bytes, resolved by
  // QuotaBytesFromFlag: core/alarm/backend_quota.h); 0: none.
  int64_t quota_backend_bytes = int64_t{2} << 30;
  // etcd's --experimental-corrupt-check-time: how often the leader compares
  // every member's HashKV with its own (0: never).
  int64_t corrupt_check_interval_ms = 0;
  // etcd's --experimental-initial-corrupt-check: a member that already has
  // data compares its HashKV with the other members' before it serves, and
  // does not start when one differs (peer/initial_hash_asks.h).
  bool initial_corrupt_check = false;
  // etcd's metrics and natcd's own are recorded here; null: nowhere.
  metrics::MemberMetrics* metrics = nullptr;
  // Front ends besides the NATS one, in the order they are built.
  std::vector<FrontEndFactory> front_ends;
};

class Node {
 public:
  // Opens the engine, subscribes every subject and starts the engine thread.
  // events_nc, when given, carries the P.ev.* stream: a connection without
  // SendAsap, so nats.c batches those best-effort publishes into few socket
  // writes instead of one per event (replies stay on nc, written at once).
  static Result<std::unique_ptr<Node>> Start(natsConnection* nc, const NodeOptions& options,
                                             natsConnection* events_nc = nullptr);
  // Stop() if still running.
  ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  // Clean shutdown: stop taking requests, answer and commit what is queued,
  // cancel every watch with a reason, close the database. Idempotent.
  void Stop();

  // The NATS connection was lost / is back (wire these to nats.c's
  // disconnected and reconnected callbacks). While disconnected no lease
  // expires (its holder could not renew it); on reconnect every lease gets
  // its remaining TTL again, as after a leader change.
  void OnDisconnected();
  void OnReconnected();

  const NodeOptions& options() const;

  // The member, for a second front end (etcd's gRPC API) beside the NATS
  // one: it hands requests to Member::Submit with its own Responder, and a
  // leader-only request submitted at a follower reaches the leader over
  // NATS (nats_peer_transport.h). Valid while the Node lives.
  server::Member& member();

 private:
  struct Parts;
  explicit Node(std::unique_ptr<Parts> parts);
  std::unique_ptr<Parts> parts_;
};

}  // namespace natcd::nats
