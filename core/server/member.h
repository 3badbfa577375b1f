// Member: one natcd cluster member, transport-neutral (as etcd's EtcdServer
// with its raftNode and apply). It owns the engine and Raft and runs them on
// one thread; front ends (NATS, gRPC) hand it requests made of engine values
// and get each answered exactly once; a PeerTransport carries what members
// exchange; an EventSink gets every committed event once, in order.
//
// Threads. Submit, Resubmit, RunOnMemberThread, the Receive* calls and the
// connection notices are thread-safe: they only queue. The member thread
// takes everything queued at once, each turn: it steps Raft, proposes the
// turn's writes as one batch, persists, sends, applies committed entries,
// commits the engine's batch with one fsync (group commit), and only then
// answers, publishes the turn's events and lets the front ends deliver
// watches. Nothing on a front end's thread waits for the disk.
//
// Time: every deadline is on options.engine.clock (monotonic), so a manual
// clock drives the member deterministically.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "metrics/member_metrics.h"
#include "natcd/auto_compactor.h"
#include "natcd/clock.h"
#include "natcd/engine.h"
#include "natcd/status.h"
#include "raft/types.h"
#include "server/event_sink.h"
#include "server/front_end.h"
#include "server/online_backups.h"
#include "server/peer_transport.h"
#include "server/request.h"

namespace natcd::raftlog {
class LogFs;
}

namespace natcd::server {

// A request that passed through this many members is answered "no leader"
// instead of being handed on again.
inline constexpr int kForwardHopsMax = 3;

struct MemberOptions {
  std::string name = "natcd-1";  // this member's name
  NodeId member_id = 0;          // required (server/member_identity.h derives it from the name)
  uint64_t cluster_id = 0;       // for response headers
  EngineOptions engine;          // db_path, clock, limits; clock required

  int64_t request_id_window_ms = 120'000;  // how long a request id is remembered

  // Auto-compaction (etcd's --auto-compaction-mode/-retention).
  AutoCompactor::Mode auto_compaction_mode = AutoCompactor::Mode::kOff;
  int64_t auto_compaction_retention = 0;

  int64_t lease_check_interval_ms = 100;
  int64_t lease_checkpoint_interval_ms = 5'000;
  int64_t watch_progress_interval_ms = 600'000;  // progress_notify watches (etcd: 10 min)

  // The founding members by name (this one included); empty: this member
  // alone. A member not among them starts empty and waits to be added.
  std::vector<std::string> initial_cluster;
  // etcd's --initial-cluster-state: false ("existing") for a member joining
  // a running cluster, which must never start a cluster of its own.
  bool new_cluster = true;
  // etcd's --heartbeat-interval and --election-timeout.
  int64_t heartbeat_interval_ms = 100;
  int64_t election_timeout_ms = 1'000;
  // A request not answered within this long gets ErrTimeout (a write may
  // still be applied: retry with the same request id).
  int64_t request_timeout_ms = 5'000;
  // The Raft log is compacted every snapshot_entries applied entries,
  // keeping snapshot_catchup_entries for members a little behind (etcd's
  // --snapshot-count and its catch-up entries).
  uint64_t snapshot_entries = 10'000;
  uint64_t snapshot_catchup_entries = 5'000;
  // A snapshot for a member far behind copies the database on a thread of
  // its own, so the member keeps serving; a caller that needs every step
  // deterministic (the simulator) copies on the member thread instead.
  bool copy_snapshots_on_member_thread = false;
  // The file system of the Raft log file (in <engine.db_path>.raftlog);
  // null: the real one. Tests pass one that loses unsynced writes as a
  // power cut would. Not owned; it outlives the member.
  raftlog::LogFs* raft_log_fs = nullptr;
  // The Raft log's segment size (raft_log_file.h; etcd's 64 MiB). Each
  // segment is zero-filled when it is made: tests use a small one.
  uint64_t raft_log_segment_bytes = 64ull << 20;
  // etcd's --auth-token-ttl: how long a simple token lives unused.
  int64_t auth_token_ttl_ms = 300'000;
  // Where the member records etcd's metrics (core/metrics/member_metrics.h);
  // null: nowhere. Not owned; it outlives the member.
  metrics::MemberMetrics* metrics = nullptr;
  // Online backups (etcd's Maintenance.Snapshot) at once, and how long one
  // may go unread before it is dropped (server/online_backups.h).
  size_t backups_max = 2;
  int64_t backup_idle_timeout_ms = 60'000;
  // The backend quota in bytes (etcd's --quota-backend-bytes, resolved by
  // QuotaBytesFromFlag: core/alarm/backend_quota.h); 0: none. A request
  // that would take this member's database past it raises NOSPACE for this
  // member (through the log) and is refused with ErrNoSpace.
  int64_t quota_backend_bytes = int64_t{2} << 30;
  // etcd's --experimental-corrupt-check-time: how often the leader compares
  // every member's HashKV at one revision and raises CORRUPT for a member
  // whose hash differs at the same compact revision; 0: never.
  int64_t corrupt_check_interval_ms = 0;
};

class Member {
 public:
  // Opens the engine and Raft (founding the cluster's first snapshot when
  // this member founds it); nothing runs until Start.
  static Result<std::unique_ptr<Member>> Open(const MemberOptions& options);
  // Stop() if still running.
  ~Member();
  Member(const Member&) = delete;
  Member& operator=(const Member&) = delete;

  // Wiring, before Start. The member does not own them; they outlive it.
  void SetPeerTransport(PeerTransport* transport);
  void SetEventSink(EventSink* sink);
  void AddFrontEnd(FrontEnd* front_end);
  // This member's client URLs (etcd's advertised client URLs): published
  // through the log, so that every member's MemberList reports them.
  void SetClientUrls(std::vector<std::string> urls);

  // Starts the member thread.
  void Start();
  // Clean shutdown: answers everything queued or waiting (ErrStopped),
  // cancels every watch with a reason, flushes events, closes the database.
  // Front ends stop submitting first. Idempotent.
  void Stop();

  // For a caller that drives the member itself instead of Start() (the
  // simulator): one turn on the calling thread, over what is queued,
  // without waiting. Never together with Start().
  void RunOneTurn();
  // Test hook: the process dies here. Nothing more is answered, written or
  // sent; the database is closed as a crash leaves it (what the last turn
  // committed is what a restart finds). The member is unusable after it.
  void TEST_Crash();

  // Thread-safe: queue for the member thread.
  void Submit(std::unique_ptr<Request> request);
  // A forwarded request whose leader was unreachable: it waits for another
  // leader (or this one, after a pause).
  void Resubmit(std::unique_ptr<Request> request, NodeId unreachable_leader);
  // Runs `task` on the member thread between two turns' steps, with the
  // engine open (front-end operations on watches). It must not block.
  void RunOnMemberThread(std::function<void(Engine&)> task);
  // RunOnMemberThread, but while auth is enabled and `token`'s index (after
  // its dot) is past what this member has applied, held until it has (or
  // the request timeout passed): a watch created with a token from an
  // Authenticate this member has not applied yet waits for it, as etcd's
  // simple tokens wait for their index. Tasks held for the same token run
  // in the order they came.
  void RunOnMemberThreadWithToken(std::string token, std::function<void(Engine&)> task);
  void ReceiveRaft(raft::Message message);
  void ReceiveSnapshotChunk(std::string bytes);
  void ReceiveSnapshotAck(std::string bytes);
  // The connection to the clients was lost / is back. While cut off no
  // lease expires (its holder could not renew it); on reconnect every lease
  // gets the time it was cut off back.
  void OnDisconnected();
  void OnReconnected();

  // Backups of this member's database for clients (thread-safe; the
  // front ends serve them; closed by Stop).
  OnlineBackups& backups();
  // backups().Begin of everything applied so far: on the member thread, the
  // engine's open batch is committed first (the copy is taken on another
  // connection; etcd's backend commits its batch before a snapshot too).
  // `ready` as Begin's, also called with Begin's refusals.
  void BeginBackup(size_t chunk_bytes, OnlineBackups::Ready ready);

  // Thread-safe: the password hash of `user` as last applied (nullopt: no
  // such user), so that a front end checks an Authenticate's password on
  // its own thread (auth/password.h: bcrypt is slow) before submitting it.
  std::optional<std::string> PasswordHash(const std::string& user) const;
  // Member thread only (inside a RunOnMemberThread task): whether the
  // holder of token may watch [key, range_end) (etcd checks a watch's READ
  // permission when it is created). auth_checked and tokenless: as
  // Request's.
  Status AuthorizeWatch(const std::string& token, bool auth_checked, bool tokenless,
                        const std::string& key, const std::string& range_end);

  // Before Start, on the caller's thread (etcd's
  // --experimental-initial-corrupt-check): this member's HashKV at its
  // current revision and the other voting and learner members' IDs, for a
  // front end to compare with theirs before this member serves.
  Result<HashKVResponse> HashKVBeforeStart();
  std::vector<NodeId> PeersBeforeStart();

  const MemberOptions& options() const;
  NodeId id() const;
  // What Raft says, for front ends and observers (thread-safe, possibly a
  // turn old).
  bool is_leader() const;
  NodeId leader() const;
  uint64_t raft_term() const;

 private:
  struct Impl;
  explicit Member(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace natcd::server
