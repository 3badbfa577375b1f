#include "adapters/nats/node.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <thread>
#include <vector>

#include "adapters/nats/convert.h"
#include "adapters/nats/discovery.h"
#include "adapters/nats/endpoint.h"
#include "adapters/nats/event_publisher.h"
#include "adapters/nats/proposed_commands.h"
#include "adapters/nats/raft_codec.h"
#include "adapters/nats/raft_transport.h"
#include "adapters/nats/reply.h"
#include "adapters/nats/service_error.h"
#include "adapters/nats/snapshot_transfer.h"
#include "adapters/nats/subject.h"
#include "adapters/nats/watch_streams.h"
#include "adapters/nats/wire.h"
#include "raft/raft.h"
#include "raft/sqlite_raft_storage.h"
#include "storage/durable_file.h"
#include "storage/sqlite_backend.h"
#include "storage/sqlite_snapshot.h"

namespace natcd::nats {
namespace {

constexpr const char* kRequestIdHeader = "Natcd-Request-Id";
constexpr const char* kQueueGroup = "q";  // ADR-32's default queue group
// Unsynced watchers caught up per engine-loop turn, and the longest the
// loop sleeps when idle (it also wakes for every queued request).
constexpr size_t kWatchersSyncedPerTurn = 64;
constexpr int64_t kIdleWaitMs = 10;
// Pending messages a subscription may buffer before nats.c drops (and
// counts) them as a slow consumer.
constexpr int kSubscriptionPendingMsgs = 1'000'000;
constexpr int kSubscriptionPendingBytes = 1 << 30;
constexpr int64_t kDrainTimeoutMs = 2'000;
// A turn with at least this many replies sends them through the buffered
// connection (see Loop).
constexpr size_t kBufferedRepliesMin = 8;

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

uint64_t Fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h == 0 ? 1 : h;
}

// A queued request, decoded on the NATS thread that received it.
struct Work {
  Endpoint* endpoint = nullptr;  // null for internal notices
  natsMsg* msg = nullptr;        // owned; destroyed after the reply
  bool json = false;
  std::string request_id;
  int64_t received_ns = 0;
  UniqueMessage body;
  int64_t lease_id = 0;  // P.lease.keepalive.<hex id>
  int hops = 0;          // members it passed through (Natcd-Forwarded)
  // Forwarded to a leader that turned out to be gone (no responders): wait
  // for another one, or retry it after a pause.
  uint64_t unreachable_leader = 0;
  int64_t retry_at_ns = 0;
  enum class Notice {
    kNone,
    kDisconnected,
    kReconnected,
    kRaft,
    kSnapshotChunk,
    kSnapshotAck
  } notice = Notice::kNone;
  raft::Message raft_message;  // Notice::kRaft
  std::string snapshot_bytes;  // Notice::kSnapshotChunk / kSnapshotAck, encoded

  ~Work() { natsMsg_Destroy(msg); }
  const char* reply() const { return msg ? natsMsg_GetReply(msg) : nullptr; }
};

// A reply held until the batch that produced it is durable.
struct PendingReply {
  std::unique_ptr<Work> work;
  bool is_write = false;
  bool is_error = false;
  std::string body;
  ServiceError error;
};

// Outcome of a write remembered under its request id: 'R' + the binary
// response, or 'E' + the three-digit code + the error text.
std::string OutcomeOfResponse(const std::string& binary) { return "R" + binary; }
std::string OutcomeOfError(const ServiceError& e) {
  std::string code = std::to_string(e.code % 1000);
  code.insert(0, 3 - code.size(), '0');
  return "E" + code + e.text;
}

const ProtobufCMessageDescriptor* ResponseDescriptor(EndpointKind kind) {
  switch (kind) {
    case EndpointKind::kPut:
      return &natcd__v1__put_response__descriptor;
    case EndpointKind::kDeleteRange:
      return &natcd__v1__delete_range_response__descriptor;
    case EndpointKind::kTxn:
      return &natcd__v1__txn_response__descriptor;
    case EndpointKind::kCompact:
      return &natcd__v1__compaction_response__descriptor;
    case EndpointKind::kLeaseGrant:
      return &natcd__v1__lease_grant_response__descriptor;
    case EndpointKind::kLeaseRevoke:
      return &natcd__v1__lease_revoke_response__descriptor;
    default:
      return nullptr;
  }
}

bool IsWrite(EndpointKind kind) { return ResponseDescriptor(kind) != nullptr; }

bool IsMembershipChange(EndpointKind kind) {
  return kind == EndpointKind::kMemberAdd || kind == EndpointKind::kMemberRemove ||
         kind == EndpointKind::kMemberPromote;
}

// Requests only the leader answers: writes go through its log, lease
// deadlines live on the leader, and it knows the latest membership.
bool LeaderOnly(EndpointKind kind) {
  return IsWrite(kind) || IsMembershipChange(kind) || kind == EndpointKind::kMemberList ||
         kind == EndpointKind::kLeaseKeepAlive || kind == EndpointKind::kLeaseKeepAliveHex ||
         kind == EndpointKind::kLeaseTimeToLive || kind == EndpointKind::kLeaseLeases ||
         kind == EndpointKind::kMoveLeader;
}

Status NoLeader() { return Status::Unavailable("ErrNoLeader", "etcdserver: no leader"); }
Status RequestTimedOut() {
  return Status(Status::Code::kTimeout, "ErrTimeout", "etcdserver: request timed out");
}

// A membership change's context in the log: who proposed it (to answer)
// and the member's name.
std::string ConfChangeContext(uint64_t origin, uint64_t seq, const std::string& name) {
  return std::to_string(origin) + ":" + std::to_string(seq) + ":" + name;
}
void ParseConfChangeContext(const std::string& context, uint64_t* origin, uint64_t* seq,
                            std::string* name) {
  size_t a = context.find(':');
  size_t b = a == std::string::npos ? a : context.find(':', a + 1);
  if (b == std::string::npos) {
    *origin = *seq = 0;
    *name = context;
    return;
  }
  *origin = std::strtoull(context.substr(0, a).c_str(), nullptr, 10);
  *seq = std::strtoull(context.substr(a + 1, b - a - 1).c_str(), nullptr, 10);
  *name = context.substr(b + 1);
}

// A subject a client may publish to: non-empty tokens, no wildcards, no
// whitespace.
bool ValidPublishSubject(const std::string& s) {
  if (s.empty() || s.front() == '.' || s.back() == '.') return false;
  char prev = 0;
  for (char c : s) {
    if (c == '*' || c == '>' || c == ' ' || c == '\t' || c == '\r' || c == '\n') return false;
    if (c == '.' && prev == '.') return false;
    prev = c;
  }
  return true;
}

}  // namespace

struct Node::Impl {
  struct Subscription {
    Impl* impl;
    Endpoint* endpoint;  // null: discovery, Raft or forwarded replies
    bool raft = false;
    bool forward_replies = false;
    bool published_marker = false;
    Work::Notice snapshot = Work::Notice::kNone;  // chunk or ack subject
    natsSubscription* sub = nullptr;
  };
  // A request handed to the leader, until its answer is relayed.
  struct Forwarded {
    std::unique_ptr<Work> work;
    raft::NodeId leader = 0;
    int64_t deadline_ns = 0;
  };
  // A write proposed here, answered when its entry is applied.
  struct Proposal {
    std::unique_ptr<Work> work;
    int64_t deadline_ms = 0;
  };
  // Linearizable reads waiting for their read index to be applied.
  struct ReadBatch {
    uint64_t index = 0;
    std::vector<std::unique_ptr<Work>> works;
  };

  natsConnection* nc = nullptr;
  NodeOptions options;
  std::unique_ptr<Engine> engine;
  HeaderInfo header;
  ServiceIdentity identity;
  std::vector<std::unique_ptr<Endpoint>> endpoints;
  std::vector<std::unique_ptr<Subscription>> subscriptions;
  std::unique_ptr<WatchStreams> streams;
  std::unique_ptr<EventPublisher> publisher;
  std::mt19937_64 rng;

  std::mutex mu;
  std::condition_variable wake;
  std::vector<std::unique_ptr<Work>> queue;  // guarded by mu
  bool stopping = false;                     // guarded by mu
  std::atomic<bool> accepting{true};
  std::thread thread;
  bool stopped = false;

  // Engine thread only.
  std::unique_ptr<AutoCompactor> compactor;
  bool leases_paused = false;
  int64_t paused_at_ms = 0;
  // The last time this member heard from a leader (or was one): a new
  // leader gives every lease the time since, during which no holder could
  // renew.
  int64_t leader_contact_ms = 0;
  int64_t next_lease_check_ms = 0;
  int64_t next_checkpoint_ms = 0;
  int64_t next_watch_tick_ms = 0;
  int64_t next_progress_ms = 0;

  // Raft (engine thread only).
  std::unique_ptr<raft::SqliteRaftStorage> raft_storage;
  std::unique_ptr<raft::Raft> raft;
  std::string raft_subject;
  std::map<raft::NodeId, std::string> member_names;
  bool leader = false;
  int64_t next_tick_ms = 0;
  uint64_t applied_index = 0;         // the last log entry applied (no-ops included)
  raft::HardState synced_hard_state;  // term and vote as last fsynced
  uint64_t snapshot_index = 0;
  uint64_t proposal_seq = 0;
  std::map<uint64_t, Proposal> proposals;
  // This turn's entries, proposed together (FlushProposals), and the
  // proposal numbers among them that a client waits for.
  std::vector<std::string> turn_entries;
  std::vector<LogCommand> turn_commands;  // turn_entries, not encoded
  std::vector<uint64_t> turn_seqs;
  // What this leader proposed, until applied (ApplyEntry).
  ProposedCommands proposed_commands;
  // Requests for the leader while there is none, until their deadline.
  std::vector<std::unique_ptr<Work>> waiting_for_leader;
  uint64_t read_seq = 0;
  std::vector<std::unique_ptr<Work>> reads_to_confirm;  // this turn's
  // Read index requests in flight, by context. One whose leader changed
  // (or that got no answer within an election timeout: the request or its
  // answer was lost) is asked again.
  struct Confirming {
    std::vector<std::unique_ptr<Work>> works;
    raft::NodeId lead = 0;
    int64_t asked_ms = 0;
  };
  std::map<std::string, Confirming> reads_confirming;
  std::vector<ReadBatch> reads_confirmed;
  // Leadership handed to target: answered once it leads, or on timeout.
  struct MovingLeader {
    std::unique_ptr<Work> work;
    raft::NodeId target = 0;
  };
  std::vector<MovingLeader> moving_leader;

  // P.ev.* continuity across leaders. replicated_published: the last
  // revision a leader recorded in the log as published (-1: none seen);
  // published_marker: the highest a leader's marker said (NATS thread
  // writes; -1: none). As leader: publish_cursor is the last revision handed
  // to the publisher (-1: not decided until the entries of earlier terms
  // are applied, up to publish_decide_index, and the old leader's last
  // marker had time to arrive, publish_decide_ms), recorded_published the
  // last value it proposed.
  int64_t replicated_published = -1;
  std::atomic<int64_t> published_marker{-1};
  bool publishing_markers = false;
  int64_t publish_cursor = -1;
  uint64_t publish_decide_index = 0;
  int64_t publish_decide_ms = 0;
  int64_t promoted_revision = 0;  // when neither is known: start after it
  int64_t recorded_published = -1;
  int64_t next_published_record_ms = 0;

  // Snapshots being sent, by follower: the database is copied on a thread
  // of its own (the engine keeps going), then shipped in chunks on
  // P.raft.<cluster>.<follower>.snap, acknowledged on <leader>.snapack;
  // the MsgSnap itself goes last, once the follower holds the whole file.
  struct OutgoingSnapshot {
    raft::Message message;  // the MsgSnap Raft asked for
    std::string path;
    std::thread copier;
    std::atomic<bool> copied{false};
    Result<uint64_t> copy = Status::Internal("not copied");  // the copy's applied index
    std::unique_ptr<SnapshotSender> sender;
    raft::SnapshotMeta meta;
  };
  std::map<raft::NodeId, std::unique_ptr<OutgoingSnapshot>> outgoing_snapshots;
  std::unique_ptr<SnapshotReceiver> snapshot_receiver;
  // The membership as of recent indexes (index -> the conf state from it
  // on): a snapshot at index i carries the one in force at i.
  std::map<uint64_t, raft::ConfState> conf_history;

  // Forwarding: answers come back on forward_inbox<seq> (NATS threads).
  std::string forward_inbox;
  // Replies of busy turns go out on this connection (nats.c buffers them
  // and its flusher writes them together); the events connection.
  natsConnection* buffered_nc = nullptr;
  // The leader's extra queue subscriptions on write subjects (see
  // WeighLeadership), and those given up, until their drain completes.
  // Stop takes them over: guarded by weight_mu.
  std::mutex weight_mu;
  bool weight_stopped = false;
  std::vector<std::unique_ptr<Subscription>> leader_weight;
  std::vector<std::unique_ptr<Subscription>> weight_draining;
  std::mutex forward_mu;
  uint64_t forward_seq = 0;                 // guarded by forward_mu
  std::map<uint64_t, Forwarded> forwarded;  // guarded by forward_mu

  Status Init(natsConnection* connection, const NodeOptions& opts, natsConnection* events_nc);
  Status InitRaft();
  Status Subscribe();
  void AddEndpoint(const std::string& name, const std::string& suffix, bool queue,
                   EndpointKind kind, const ProtobufCMessageDescriptor* request);
  static void OnMessage(natsConnection* nc, natsSubscription* sub, natsMsg* msg, void* closure);
  void Receive(Endpoint* endpoint, natsMsg* msg);
  void ReceiveRaft(natsMsg* msg);
  void ReceivePublishedMarker(natsMsg* msg);
  void ReceiveSnapshotMessage(Work::Notice kind, natsMsg* msg);
  // Snapshot shipping (a member behind the leader's kept log).
  void StartSnapshot(raft::Message m);
  void PumpSnapshots();
  void AbandonSnapshots();
  void ReceiveSnapshotChunk(const std::string& bytes);
  Status InstallSnapshot(const raft::SnapshotMeta& meta);
  Status CreateRaft();
  Status OpenEngine();
  Status OpenRaftStorage();
  void CreateStreams();
  // The membership in force now (the last of conf_history).
  const raft::ConfState& conf_now() const { return conf_history.rbegin()->second; }
  bool is_cluster() const { return conf_now().voters.size() + conf_now().learners.size() > 1; }
  void PublishEvents();
  void RecordPublished(int64_t revision);
  void ReceiveForwardReply(natsMsg* msg);
  void Enqueue(std::unique_ptr<Work> work);
  void Loop();
  void Handle(std::unique_ptr<Work> work, std::vector<PendingReply>* replies);
  void HandleLocal(std::unique_ptr<Work> work, std::vector<PendingReply>* replies);
  void HandleWrite(std::unique_ptr<Work> work, std::vector<PendingReply>* replies);
  void HandleMembership(std::unique_ptr<Work> work, std::vector<PendingReply>* replies);
  void HandleMoveLeader(std::unique_ptr<Work> work, std::vector<PendingReply>* replies);
  void AnswerMovedLeader(std::vector<PendingReply>* replies);
  void Forward(std::unique_ptr<Work> work, std::vector<PendingReply>* replies);
  Result<WriteRequest> DecodeWrite(const Work& work);
  void Propose(const WriteRequest& request);
  void FlushProposals(std::vector<PendingReply>* replies);
  void Timers();
  void Tick();
  void ConfirmReads(std::vector<PendingReply>* replies);
  void ServeConfirmedReads(std::vector<PendingReply>* replies);
  void RetryWaiting(std::vector<PendingReply>* replies);
  void ProcessReady(std::vector<PendingReply>* replies);
  void SendRaftMessage(const raft::Message& m);
  void ApplyEntry(const raft::Entry& entry, std::vector<PendingReply>* replies);
  void ApplyConfChange(const raft::Entry& entry, std::vector<PendingReply>* replies);
  void BecameLeader(bool now_leader);
  void MaybeCompactLog();
  struct MemberInfo {
    raft::NodeId id;
    std::string name;
    bool learner;
  };
  std::vector<MemberInfo> Members() const;
  Natcd__V1__Member** MembersProto(size_t* n, ProtoArena* arena) const;
  PendingReply ErrorReply(std::unique_ptr<Work> work, const Status& status, bool is_write);
  PendingReply WriteReply(std::unique_ptr<Work> work, const Result<WriteResponse>& response,
                          const std::string& request_id, int64_t request_expires_ms);
  void Finish(PendingReply& reply, natsConnection* via);
  Result<std::unique_ptr<Subscription>> SubscribeTo(const std::string& subject,
                                                    const std::string& queue, Endpoint* endpoint);
  void WeighLeadership(bool leading);
};

Status Node::Impl::Init(natsConnection* connection, const NodeOptions& opts,
                        natsConnection* events_nc) {
  nc = connection;
  options = opts;
  options.engine.retain_committed_events = true;
  if (options.engine.clock == nullptr) {
    return Status::InvalidArgument("ErrConfig", "node needs a clock");
  }
  rng.seed(options.engine.seed ^ 0x6e617463ull);
  header.member_id = options.member_id ? options.member_id : Fnv1a(options.name);
  header.cluster_id =
      options.cluster_id ? options.cluster_id : Fnv1a(options.prefix + "/" + options.cluster_name);
  if (options.initial_cluster.empty() && options.new_cluster) {
    options.initial_cluster = {options.name};
  }
  identity.id = options.instance_id;
  if (identity.id.empty()) {
    static constexpr char kAlphabet[] =
        "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    for (int i = 0; i < 22; ++i) identity.id += kAlphabet[rng() % 62];
  }
  identity.version = options.version;
  identity.started = Iso8601Now();
  identity.metadata = {{"member", options.name}, {"prefix", options.prefix}};

  NATCD_RETURN_IF_ERROR(OpenEngine());
  NATCD_RETURN_IF_ERROR(InitRaft());

  CreateStreams();
  buffered_nc = events_nc ? events_nc : nc;
  publisher = std::make_unique<EventPublisher>(buffered_nc, options.prefix);
  compactor = std::make_unique<AutoCompactor>(
      options.auto_compaction_mode, options.auto_compaction_mode == AutoCompactor::Mode::kPeriodic
                                        ? options.auto_compaction_retention * 1000
                                        : options.auto_compaction_retention);

  using K = EndpointKind;
  AddEndpoint("kv_range", "kv.range", true, K::kRange, &natcd__v1__range_request__descriptor);
  AddEndpoint("kv_put", "kv.put", true, K::kPut, &natcd__v1__put_request__descriptor);
  AddEndpoint("kv_delete", "kv.delete", true, K::kDeleteRange,
              &natcd__v1__delete_range_request__descriptor);
  AddEndpoint("kv_txn", "kv.txn", true, K::kTxn, &natcd__v1__txn_request__descriptor);
  AddEndpoint("kv_compact", "kv.compact", true, K::kCompact,
              &natcd__v1__compaction_request__descriptor);
  AddEndpoint("lease_grant", "lease.grant", true, K::kLeaseGrant,
              &natcd__v1__lease_grant_request__descriptor);
  AddEndpoint("lease_revoke", "lease.revoke", true, K::kLeaseRevoke,
              &natcd__v1__lease_revoke_request__descriptor);
  AddEndpoint("lease_keepalive", "lease.keepalive", true, K::kLeaseKeepAlive,
              &natcd__v1__lease_keep_alive_request__descriptor);
  AddEndpoint("lease_keepalive_id", "lease.keepalive.*", true, K::kLeaseKeepAliveHex, nullptr);
  AddEndpoint("lease_timetolive", "lease.timetolive", true, K::kLeaseTimeToLive,
              &natcd__v1__lease_time_to_live_request__descriptor);
  AddEndpoint("lease_leases", "lease.leases", true, K::kLeaseLeases,
              &natcd__v1__lease_leases_request__descriptor);
  AddEndpoint("watch_create", "watch.create", true, K::kWatchCreate,
              &natcd__v1__watch_create_request__descriptor);
  // Watch control reaches every member; only the one holding the watch acts.
  AddEndpoint("watch_cancel", "watch.cancel", false, K::kWatchCancel,
              &natcd__v1__watch_cancel_request__descriptor);
  AddEndpoint("watch_progress", "watch.progress", false, K::kWatchProgress,
              &natcd__v1__watch_progress_request__descriptor);
  AddEndpoint("watch_ack", "watch.ack", false, K::kWatchAck,
              &natcd__v1__watch_ack_request__descriptor);
  AddEndpoint("maint_status", "maint.status", true, K::kStatus,
              &natcd__v1__status_request__descriptor);
  AddEndpoint("maint_moveleader", "maint.moveleader", true, K::kMoveLeader,
              &natcd__v1__move_leader_request__descriptor);
  AddEndpoint("member_list", "cluster.member.list", true, K::kMemberList,
              &natcd__v1__member_list_request__descriptor);
  AddEndpoint("member_add", "cluster.member.add", true, K::kMemberAdd,
              &natcd__v1__member_add_request__descriptor);
  AddEndpoint("member_remove", "cluster.member.remove", true, K::kMemberRemove,
              &natcd__v1__member_remove_request__descriptor);
  AddEndpoint("member_promote", "cluster.member.promote", true, K::kMemberPromote,
              &natcd__v1__member_promote_request__descriptor);

  thread = std::thread([this] { Loop(); });
  return Subscribe();
}

Status Node::Impl::OpenEngine() {
  Result<std::unique_ptr<Engine>> opened = Engine::Open(options.engine);
  if (!opened.ok()) return opened.status();
  engine = std::move(opened).value();
  // Leases expire only on the leader: none until this member leads.
  engine->DemoteLeases();
  return Status::OK();
}

// The Raft log lives in the engine's database (open the engine first).
Status Node::Impl::OpenRaftStorage() {
  Result<std::unique_ptr<raft::SqliteRaftStorage>> storage =
      raft::SqliteRaftStorage::Open(&engine->backend());
  if (!storage.ok()) return storage.status();
  raft_storage = std::move(storage).value();
  // Names recorded by this database (founders, members added since; a
  // snapshot from the leader brings the leader's).
  for (const auto& [id, name] : raft_storage->member_names()) member_names[id] = name;
  return Status::OK();
}

void Node::Impl::CreateStreams() {
  WatchStreamOptions stream_options;
  stream_options.window_messages = options.watch_window_messages;
  stream_options.message_events_max = options.watch_message_events_max;
  stream_options.heartbeat_ms = options.watch_heartbeat_ms;
  stream_options.ack_timeout_ms = options.watch_ack_timeout_ms;
  stream_options.coalesce_ms = options.watch_coalesce_ms;
  stream_options.coalesce_ready_min = options.watch_coalesce_ready_min;
  streams = std::make_unique<WatchStreams>(nc, &engine->watches(), engine.get(),
                                           options.engine.clock, stream_options, header);
}

Status Node::Impl::InitRaft() {
  for (const std::string& name : options.initial_cluster) member_names[Fnv1a(name)] = name;
  NATCD_RETURN_IF_ERROR(OpenRaftStorage());
  bool founding = options.new_cluster && member_names.count(header.member_id) > 0;
  if (!raft_storage->Initialized() && founding) {
    // Every founding member starts from the same snapshot at index 1 that
    // names the voters, so they agree on the configuration before any
    // entry. A member added later starts empty and gets everything from
    // the leader.
    raft::SnapshotMeta boot;
    boot.index = 1;
    boot.term = 1;
    for (const auto& [id, name] : member_names) {
      boot.conf_state.voters.push_back(id);
      NATCD_RETURN_IF_ERROR(raft_storage->SetMemberName(id, name));
    }
    NATCD_RETURN_IF_ERROR(raft_storage->ApplySnapshot(boot));
    NATCD_RETURN_IF_ERROR(raft_storage->SetHardState(raft::HardState{1, raft::kNoNode, 1}));
    if (engine->revision() > 0) NATCD_RETURN_IF_ERROR(raft_storage->MarkBootedOverExistingData());
    NATCD_RETURN_IF_ERROR(engine->Commit());
  }
  NATCD_RETURN_IF_ERROR(CreateRaft());
  // The only voter need not wait for an election timeout.
  raft::ConfState cs = raft->conf_state();
  if (cs.voters.size() == 1 && cs.voters[0] == header.member_id) (void)raft->Campaign();
  return Status::OK();
}

// Raft over this member's storage as it is now (at start, and after a
// snapshot from the leader replaced the database).
Status Node::Impl::CreateRaft() {
  raft::Config cfg;
  cfg.id = header.member_id;
  cfg.heartbeat_tick = 1;
  cfg.election_tick = static_cast<int>(
      std::max<int64_t>(2, options.election_timeout_ms / options.heartbeat_interval_ms));
  cfg.storage = raft_storage.get();
  // Raft hands back every entry after its snapshot; the engine skips those
  // it already holds (AlreadyApplied), but membership changes among them
  // are re-applied to Raft.
  cfg.applied = raft_storage->GetSnapshot().value().meta.index;
  cfg.max_size_per_msg = 512 * 1024;
  cfg.max_inflight_msgs = 256;
  cfg.seed = rng();
  Result<std::unique_ptr<raft::Raft>> created = raft::Raft::Create(cfg);
  if (!created.ok()) return created.status();
  raft = std::move(created).value();
  conf_history = {{cfg.applied, raft->conf_state()}};
  synced_hard_state = raft->hard_state();
  applied_index = cfg.applied;
  snapshot_index = cfg.applied;
  raft_subject = RaftSubject(options.prefix, options.cluster_name, header.member_id);
  header.raft_term = raft->term();
  leader_contact_ms = options.engine.clock->MonotonicMs();
  return Status::OK();
}

void Node::Impl::AddEndpoint(const std::string& name, const std::string& suffix, bool queue,
                             EndpointKind kind, const ProtobufCMessageDescriptor* request) {
  endpoints.push_back(std::make_unique<Endpoint>(name, options.prefix + "." + suffix,
                                                 queue ? kQueueGroup : "", kind, request));
}

Result<std::unique_ptr<Node::Impl::Subscription>> Node::Impl::SubscribeTo(
    const std::string& subject, const std::string& queue, Endpoint* endpoint) {
  auto subscription = std::make_unique<Subscription>(Subscription{this, endpoint});
  natsStatus s = queue.empty() ? natsConnection_Subscribe(&subscription->sub, nc, subject.c_str(),
                                                          &Impl::OnMessage, subscription.get())
                               : natsConnection_QueueSubscribe(
                                     &subscription->sub, nc, subject.c_str(), queue.c_str(),
                                     &Impl::OnMessage, subscription.get());
  if (s == NATS_OK) {
    s = natsSubscription_SetPendingLimits(subscription->sub, kSubscriptionPendingMsgs,
                                          kSubscriptionPendingBytes);
  }
  if (s != NATS_OK) {
    natsSubscription_Destroy(subscription->sub);
    return Status::Unavailable("ErrNats", "subscribe " + subject + ": " + natsStatus_GetText(s));
  }
  return subscription;
}

Status Node::Impl::Subscribe() {
  auto subscribe = [this](const std::string& subject, const std::string& queue,
                          Endpoint* endpoint) -> Status {
    Result<std::unique_ptr<Subscription>> subscription = SubscribeTo(subject, queue, endpoint);
    if (!subscription.ok()) return subscription.status();
    subscriptions.push_back(std::move(subscription).value());
    return Status::OK();
  };
  for (auto& endpoint : endpoints) {
    NATCD_RETURN_IF_ERROR(subscribe(endpoint->subject(), endpoint->queue_group(), endpoint.get()));
    // Requests other members hand to this one as their leader, and the
    // status a client asks of this member by its ID (`endpoint status --cluster`).
    if (LeaderOnly(endpoint->kind()) || endpoint->kind() == EndpointKind::kStatus) {
      std::string suffix(RequestSuffix(endpoint->subject(), options.prefix));
      NATCD_RETURN_IF_ERROR(
          subscribe(ForwardPrefix(options.prefix, header.member_id) + suffix, "", endpoint.get()));
    }
  }
  {
    auto subscription = std::make_unique<Subscription>(Subscription{this, nullptr, true});
    natsStatus s = natsConnection_Subscribe(&subscription->sub, nc, raft_subject.c_str(),
                                            &Impl::OnMessage, subscription.get());
    if (s == NATS_OK) {
      s = natsSubscription_SetPendingLimits(subscription->sub, kSubscriptionPendingMsgs,
                                            kSubscriptionPendingBytes);
    }
    if (s != NATS_OK) {
      return Status::Unavailable("ErrNats",
                                 "subscribe " + raft_subject + ": " + natsStatus_GetText(s));
    }
    subscriptions.push_back(std::move(subscription));
  }
  for (Work::Notice kind : {Work::Notice::kSnapshotChunk, Work::Notice::kSnapshotAck}) {
    auto subscription = std::make_unique<Subscription>(Subscription{this, nullptr});
    subscription->snapshot = kind;
    const std::string subject =
        raft_subject + (kind == Work::Notice::kSnapshotChunk ? ".snap" : ".snapack");
    natsStatus s = natsConnection_Subscribe(&subscription->sub, nc, subject.c_str(),
                                            &Impl::OnMessage, subscription.get());
    if (s != NATS_OK) {
      return Status::Unavailable("ErrNats", "subscribe " + subject + ": " + natsStatus_GetText(s));
    }
    subscriptions.push_back(std::move(subscription));
  }
  {
    auto subscription = std::make_unique<Subscription>(Subscription{this, nullptr});
    subscription->published_marker = true;
    const std::string subject = PublishedSubject(options.prefix, options.cluster_name);
    natsStatus s = natsConnection_Subscribe(&subscription->sub, nc, subject.c_str(),
                                            &Impl::OnMessage, subscription.get());
    if (s != NATS_OK) {
      return Status::Unavailable("ErrNats", "subscribe " + subject + ": " + natsStatus_GetText(s));
    }
    subscriptions.push_back(std::move(subscription));
  }
  {
    char nonce[17];
    snprintf(nonce, sizeof nonce, "%016llx", static_cast<unsigned long long>(rng()));
    forward_inbox = "_INBOX.natcd." + MemberHex(header.member_id) + "." + nonce + ".";
    auto subscription = std::make_unique<Subscription>(Subscription{this, nullptr, false, true});
    natsStatus s = natsConnection_Subscribe(&subscription->sub, nc, (forward_inbox + "*").c_str(),
                                            &Impl::OnMessage, subscription.get());
    if (s != NATS_OK) {
      return Status::Unavailable("ErrNats",
                                 std::string("subscribe forward inbox: ") + natsStatus_GetText(s));
    }
    subscriptions.push_back(std::move(subscription));
  }
  for (const std::string& subject : DiscoverySubjects(identity)) {
    NATCD_RETURN_IF_ERROR(subscribe(subject, "", nullptr));
  }
  // Subscriptions are in place once the server has seen them.
  natsStatus s = natsConnection_FlushTimeout(nc, 5'000);
  if (s != NATS_OK) {
    return Status::Unavailable("ErrNats", std::string("flush: ") + natsStatus_GetText(s));
  }
  return Status::OK();
}

void Node::Impl::OnMessage(natsConnection*, natsSubscription*, natsMsg* msg, void* closure) {
  auto* subscription = static_cast<Subscription*>(closure);
  if (subscription->raft) {
    subscription->impl->ReceiveRaft(msg);
  } else if (subscription->forward_replies) {
    subscription->impl->ReceiveForwardReply(msg);
  } else if (subscription->published_marker) {
    subscription->impl->ReceivePublishedMarker(msg);
  } else if (subscription->snapshot != Work::Notice::kNone) {
    subscription->impl->ReceiveSnapshotMessage(subscription->snapshot, msg);
  } else {
    subscription->impl->Receive(subscription->endpoint, msg);
  }
}

void Node::Impl::ReceiveForwardReply(natsMsg* msg) {
  const char* subject = natsMsg_GetSubject(msg);
  uint64_t seq = std::strtoull(subject + forward_inbox.size(), nullptr, 10);
  Forwarded forward;
  {
    std::lock_guard<std::mutex> lock(forward_mu);
    auto it = forwarded.find(seq);
    if (it != forwarded.end()) {
      forward = std::move(it->second);
      forwarded.erase(it);
    }
  }
  if (forward.work == nullptr) {  // answered or timed out already
    natsMsg_Destroy(msg);
    return;
  }
  const char* status = nullptr;
  bool no_responders = natsMsg_GetDataLength(msg) == 0 &&
                       natsMsgHeader_Get(msg, "Status", &status) == NATS_OK && status != nullptr &&
                       strcmp(status, "503") == 0;
  if (no_responders) {
    // The leader this member knew is gone: hold the request until another
    // is known (the engine thread decides).
    forward.work->unreachable_leader = forward.leader;
    forward.work->retry_at_ns = NowNs() + 200'000'000;
    natsMsg_Destroy(msg);
    Enqueue(std::move(forward.work));
    return;
  }
  // Counted where the client's request arrived (the leader does not count
  // what was handed to it), before the reply as in Finish: $SRV.STATS
  // summed over the members is what the clients sent.
  const char* error = nullptr;
  std::string error_text;
  if (natsMsgHeader_Get(msg, kServiceErrorHeader, &error) == NATS_OK && error != nullptr) {
    error_text = error;
  }
  forward.work->endpoint->Record(NowNs() - forward.work->received_ns,
                                 error != nullptr ? &error_text : nullptr);
  (void)RelayReply(nc, msg, forward.work->reply());
  natsMsg_Destroy(msg);
}

void Node::Impl::ReceivePublishedMarker(natsMsg* msg) {
  const std::string body(natsMsg_GetData(msg), static_cast<size_t>(natsMsg_GetDataLength(msg)));
  natsMsg_Destroy(msg);
  char* end = nullptr;
  const long long revision = strtoll(body.c_str(), &end, 10);
  if (end == body.c_str() || *end != '\0' || revision <= 0) return;
  int64_t seen = published_marker.load();
  while (revision > seen && !published_marker.compare_exchange_weak(seen, revision)) {
  }
}

void Node::Impl::ReceiveSnapshotMessage(Work::Notice kind, natsMsg* msg) {
  auto work = std::make_unique<Work>();
  work->notice = kind;
  work->snapshot_bytes.assign(natsMsg_GetData(msg),
                              static_cast<size_t>(natsMsg_GetDataLength(msg)));
  natsMsg_Destroy(msg);
  if (!accepting.load()) return;
  Enqueue(std::move(work));
}

void Node::Impl::ReceiveRaft(natsMsg* msg) {
  auto work = std::make_unique<Work>();
  work->notice = Work::Notice::kRaft;
  Status s = DecodeRaftMessage(
      std::string_view(natsMsg_GetData(msg), static_cast<size_t>(natsMsg_GetDataLength(msg))),
      &work->raft_message);
  natsMsg_Destroy(msg);
  // Garbage on the Raft subject is dropped: Raft recovers from lost messages.
  if (!s.ok() || !accepting.load()) return;
  Enqueue(std::move(work));
}

void Node::Impl::Receive(Endpoint* endpoint, natsMsg* msg) {
  const char* reply = natsMsg_GetReply(msg);
  if (endpoint == nullptr) {  // discovery
    std::string json;
    std::vector<const Endpoint*> list;
    for (auto& e : endpoints) list.push_back(e.get());
    if (DiscoveryResponse(natsMsg_GetSubject(msg), identity, list, &json)) {
      (void)Respond(nc, reply, json, false);
    }
    natsMsg_Destroy(msg);
    return;
  }
  auto work = std::make_unique<Work>();
  work->endpoint = endpoint;
  work->msg = msg;
  work->received_ns = NowNs();
  work->hops = ForwardHops(msg);
  const char* value = nullptr;
  if (natsMsgHeader_Get(msg, kContentTypeHeader, &value) == NATS_OK && value != nullptr) {
    // "application/json", optionally with parameters ("; charset=utf-8").
    const size_t n = strlen(kJsonContentType);
    work->json = strncmp(value, kJsonContentType, n) == 0 &&
                 (value[n] == '\0' || value[n] == ';' || value[n] == ' ');
  }
  if (natsMsgHeader_Get(msg, kRequestIdHeader, &value) == NATS_OK && value != nullptr) {
    work->request_id = value;
  }

  auto fail = [&](const Status& status) {
    ServiceError error = ToServiceError(status);
    // Counted before the reply: a client that reads $SRV.STATS after its
    // reply sees its request (a forwarded one where it arrived).
    if (work->hops == 0) endpoint->Record(NowNs() - work->received_ns, &error.text);
    (void)RespondError(nc, reply, error);
  };
  if (!accepting.load()) {
    fail(Status::Unavailable("ErrStopped", "etcdserver: server stopped"));
    return;
  }
  const int length = natsMsg_GetDataLength(msg);
  if (static_cast<size_t>(length) > options.request_bytes_max) {
    fail(Status::TooLarge("ErrRequestTooLarge",
                          "etcdserver: request is too large (" + std::to_string(length) +
                              " bytes > " + std::to_string(options.request_bytes_max) + ")"));
    return;
  }
  if (endpoint->kind() == EndpointKind::kLeaseKeepAliveHex) {
    const char* subject = natsMsg_GetSubject(msg);
    const char* dot = strrchr(subject, '.');
    if (dot == nullptr || !ParseLeaseIdHex(dot + 1, &work->lease_id)) {
      fail(Status::InvalidArgument("ErrInvalidArgument",
                                   std::string("not a lease ID in hex: ") + (dot ? dot + 1 : "")));
      return;
    }
  } else if (endpoint->request() != nullptr) {
    Status s = DecodeMessage(endpoint->request(),
                             std::string_view(natsMsg_GetData(msg), static_cast<size_t>(length)),
                             work->json, &work->body);
    if (!s.ok()) {
      fail(s);
      return;
    }
  }
  Enqueue(std::move(work));
}

void Node::Impl::Enqueue(std::unique_ptr<Work> work) {
  {
    std::lock_guard<std::mutex> lock(mu);
    queue.push_back(std::move(work));
  }
  wake.notify_one();
}

Result<WriteRequest> Node::Impl::DecodeWrite(const Work& work) {
  const ProtobufCMessage* body = work.body.get();
  switch (work.endpoint->kind()) {
    case EndpointKind::kPut: {
      PutRequest r;
      NATCD_RETURN_IF_ERROR(FromProto(*reinterpret_cast<const Natcd__V1__PutRequest*>(body), &r));
      return WriteRequest(std::move(r));
    }
    case EndpointKind::kDeleteRange: {
      DeleteRangeRequest r;
      NATCD_RETURN_IF_ERROR(
          FromProto(*reinterpret_cast<const Natcd__V1__DeleteRangeRequest*>(body), &r));
      return WriteRequest(std::move(r));
    }
    case EndpointKind::kTxn: {
      TxnRequest r;
      NATCD_RETURN_IF_ERROR(FromProto(*reinterpret_cast<const Natcd__V1__TxnRequest*>(body), &r));
      return WriteRequest(std::move(r));
    }
    case EndpointKind::kCompact: {
      CompactionRequest r;
      NATCD_RETURN_IF_ERROR(
          FromProto(*reinterpret_cast<const Natcd__V1__CompactionRequest*>(body), &r));
      return WriteRequest(r);
    }
    case EndpointKind::kLeaseGrant: {
      auto* in = reinterpret_cast<const Natcd__V1__LeaseGrantRequest*>(body);
      if (in->id < 0) {
        return Status::InvalidArgument("ErrInvalidArgument", "lease ID must not be negative");
      }
      return WriteRequest(LeaseGrantRequest{in->ttl, in->id});
    }
    case EndpointKind::kLeaseRevoke: {
      auto* in = reinterpret_cast<const Natcd__V1__LeaseRevokeRequest*>(body);
      return WriteRequest(LeaseRevokeRequest{in->id});
    }
    default:
      return Status::Internal("not a write endpoint");
  }
}

PendingReply Node::Impl::ErrorReply(std::unique_ptr<Work> work, const Status& status,
                                    bool is_write) {
  PendingReply reply;
  reply.is_write = is_write;
  reply.is_error = true;
  reply.error = ToServiceError(status);
  reply.work = std::move(work);
  return reply;
}

// The reply to a write whose entry was applied here, and the outcome every
// member remembers under its request id.
PendingReply Node::Impl::WriteReply(std::unique_ptr<Work> work,
                                    const Result<WriteResponse>& response,
                                    const std::string& request_id, int64_t request_expires_ms) {
  PendingReply reply;
  reply.is_write = true;
  std::string binary;
  if (response.ok()) {
    ProtoArena arena;
    const ProtobufCMessage* message = ToProto(response.value(), header, &arena);
    binary = EncodeMessage(message, false);
    if (work != nullptr) reply.body = work->json ? EncodeMessage(message, true) : binary;
  } else {
    reply.is_error = true;
    reply.error = ToServiceError(response.status());
  }
  // Remember the outcome of what was applied (a deterministic error
  // included), never that of a request the engine could not process.
  if (!request_id.empty() && engine->health().ok()) {
    Status s = engine->RememberRequest(
        request_id, request_expires_ms,
        reply.is_error ? OutcomeOfError(reply.error) : OutcomeOfResponse(binary));
    if (!s.ok()) {
      reply.is_error = true;
      reply.error = ToServiceError(s);
    }
  }
  reply.work = std::move(work);
  return reply;
}

// The answer remembered for a request id (a retry), or nullopt.
static std::optional<PendingReply> RememberedReply(Engine& engine, const std::string& request_id,
                                                   std::unique_ptr<Work>& work) {
  if (request_id.empty()) return std::nullopt;
  const std::string* outcome = engine.FindRequest(request_id);
  if (outcome == nullptr) return std::nullopt;
  PendingReply reply;
  reply.is_write = true;
  if ((*outcome)[0] == 'E') {
    reply.is_error = true;
    reply.error.code = std::stoi(outcome->substr(1, 3));
    reply.error.text = outcome->substr(4);
  } else if (work != nullptr && work->json) {
    UniqueMessage message;
    Status s = DecodeMessage(ResponseDescriptor(work->endpoint->kind()),
                             std::string_view(*outcome).substr(1), false, &message);
    if (s.ok()) {
      reply.body = MessageToJson(message.get());
    } else {
      reply.is_error = true;
      reply.error = ToServiceError(Status::Internal("remembered response does not decode"));
    }
  } else {
    reply.body = outcome->substr(1);
  }
  reply.work = std::move(work);
  return reply;
}

// On the leader: the write becomes a log entry; the reply waits for it to
// be applied (ApplyEntry).
void Node::Impl::HandleWrite(std::unique_ptr<Work> work, std::vector<PendingReply>* replies) {
  // A retry of a write already applied: answer what the first attempt got.
  if (auto remembered = RememberedReply(*engine, work->request_id, work)) {
    replies->push_back(std::move(*remembered));
    return;
  }
  Result<WriteRequest> request = DecodeWrite(*work);
  if (!request.ok()) {
    replies->push_back(ErrorReply(std::move(work), request.status(), true));
    return;
  }
  engine->Prepare(&request.value());
  LogCommand command;
  command.request = std::move(request).value();
  command.origin_member = header.member_id;
  command.origin_seq = ++proposal_seq;
  command.request_id = work->request_id;
  command.request_expires_ms = options.engine.clock->RealtimeMs() + options.request_id_window_ms;
  // Puts, deletes and txns travel as the client's own request (in binary);
  // the others are small and rebuilt from their values.
  std::string proto;
  const EndpointKind kind = work->endpoint->kind();
  bool as_proto = kind == EndpointKind::kPut || kind == EndpointKind::kDeleteRange ||
                  kind == EndpointKind::kTxn;
  if (as_proto) proto = EncodeMessage(work->body.get(), false);
  Result<std::string> bytes = EncodeLogCommand(command, as_proto ? &proto : nullptr);
  if (!bytes.ok()) {
    replies->push_back(ErrorReply(std::move(work), bytes.status(), true));
    return;
  }
  const uint64_t seq = command.origin_seq;
  turn_entries.push_back(std::move(bytes).value());
  turn_commands.push_back(std::move(command));
  turn_seqs.push_back(seq);
  int64_t deadline = options.engine.clock->MonotonicMs() + options.request_timeout_ms;
  proposals.emplace(seq, Proposal{std::move(work), deadline});
}

// A write the leader proposes itself (lease expiry, checkpoints,
// compaction): nobody waits for its answer.
void Node::Impl::Propose(const WriteRequest& request) {
  LogCommand command;
  command.request = request;
  Result<std::string> bytes = EncodeLogCommand(command);
  if (!bytes.ok()) return;
  turn_entries.push_back(std::move(bytes).value());
  turn_commands.push_back(std::move(command));
}

// Everything proposed this turn goes to Raft as one batch: one append
// message per follower, not one per write.
void Node::Impl::FlushProposals(std::vector<PendingReply>* replies) {
  if (turn_entries.empty()) return;
  const uint64_t first_index = raft->last_index() + 1;
  const uint64_t term = raft->term();
  const size_t count = turn_entries.size();
  Status s = raft->ProposeBatch(std::move(turn_entries));
  turn_entries.clear();
  if (s.ok() && raft->last_index() + 1 == first_index + count) {
    proposed_commands.Add(first_index, term, std::move(turn_commands));
  }
  turn_commands.clear();
  if (!s.ok()) {
    recorded_published = -1;
    for (uint64_t seq : turn_seqs) {
      auto p = proposals.find(seq);
      if (p == proposals.end()) continue;
      replies->push_back(ErrorReply(std::move(p->second.work),
                                    s.name() == "ErrProposalDropped" ? NoLeader() : s, true));
      proposals.erase(p);
    }
  }
  turn_seqs.clear();
}

void Node::Impl::Forward(std::unique_ptr<Work> work, std::vector<PendingReply>* replies) {
  raft::NodeId lead = raft->lead();
  if (lead == raft::kNoNode) {
    // Held until a leader is known or the request times out.
    waiting_for_leader.push_back(std::move(work));
    return;
  }
  if (work->hops + 1 >= kMaxForwardHops) {
    replies->push_back(ErrorReply(std::move(work), NoLeader(), false));
    return;
  }
  std::string suffix(RequestSuffix(natsMsg_GetSubject(work->msg), options.prefix));
  std::string subject = ForwardPrefix(options.prefix, lead) + suffix;
  natsMsg* request = work->msg;
  int hops = work->hops + 1;
  uint64_t seq;
  {
    std::lock_guard<std::mutex> lock(forward_mu);
    seq = ++forward_seq;
    forwarded[seq] =
        Forwarded{std::move(work), lead, NowNs() + options.request_timeout_ms * 1'000'000};
  }
  // The request stays owned by `forwarded`: its answer may come back (on
  // a NATS thread) before this call returns.
  natsStatus s = ForwardRequest(nc, request, subject, forward_inbox + std::to_string(seq), hops);
  if (s != NATS_OK) {
    std::unique_ptr<Work> back;
    {
      std::lock_guard<std::mutex> lock(forward_mu);
      auto it = forwarded.find(seq);
      if (it != forwarded.end()) {
        back = std::move(it->second.work);
        forwarded.erase(it);
      }
    }
    if (back != nullptr) {
      replies->push_back(ErrorReply(
          std::move(back),
          Status::Unavailable("ErrNats", std::string("forward: ") + natsStatus_GetText(s)), false));
    }
  }
}

void Node::Impl::Handle(std::unique_ptr<Work> work, std::vector<PendingReply>* replies) {
  switch (work->notice) {
    case Work::Notice::kSnapshotChunk:
      ReceiveSnapshotChunk(work->snapshot_bytes);
      return;
    case Work::Notice::kSnapshotAck: {
      Result<SnapshotAck> ack = DecodeSnapshotAck(work->snapshot_bytes);
      if (!ack.ok()) return;
      for (auto& [to, out] : outgoing_snapshots) {
        if (out->sender && out->sender->id() == ack->id) {
          (void)out->sender->OnAck(*ack, options.engine.clock->MonotonicMs());
        }
      }
      PumpSnapshots();
      return;
    }
    case Work::Notice::kRaft:
      if (work->raft_message.type == raft::MessageType::kSnap) {
        const raft::SnapshotMeta& meta = work->raft_message.snapshot.meta;
        // The first snapshot (the empty state) only for a member that holds
        // nothing yet; any other only once its database arrived whole.
        const bool bootstrap = meta.index == 1 && engine->revision() == 0;
        const bool shipped = meta.index > 1 && snapshot_receiver != nullptr &&
                             snapshot_receiver->done() &&
                             snapshot_receiver->current_id().index == meta.index &&
                             snapshot_receiver->current_id().leader == work->raft_message.from;
        if (!bootstrap && !shipped) return;
      }
      {
        const raft::NodeId from = work->raft_message.from;
        (void)raft->Step(std::move(work->raft_message));
        if (from == raft->lead()) leader_contact_ms = options.engine.clock->MonotonicMs();
        return;
      }
    case Work::Notice::kDisconnected:
      if (!leases_paused) paused_at_ms = options.engine.clock->MonotonicMs();
      engine->DemoteLeases();
      leases_paused = true;
      return;
    case Work::Notice::kReconnected:
      // Every lease gets the time this member was cut off back: its holder
      // could not renew it meanwhile.
      if (leader && leases_paused) {
        engine->PromoteLeases(options.engine.clock->MonotonicMs() - paused_at_ms);
      }
      leases_paused = false;
      return;
    case Work::Notice::kNone:
      break;
  }
  const EndpointKind kind = work->endpoint->kind();
  if (work->unreachable_leader != 0 && !leader) {
    waiting_for_leader.push_back(std::move(work));
    return;
  }
  if (LeaderOnly(kind) && !leader) {
    Forward(std::move(work), replies);
    return;
  }
  if (IsWrite(kind)) {
    HandleWrite(std::move(work), replies);
    return;
  }
  if (IsMembershipChange(kind)) {
    HandleMembership(std::move(work), replies);
    return;
  }
  if (kind == EndpointKind::kMoveLeader) {
    HandleMoveLeader(std::move(work), replies);
    return;
  }
  if (kind == EndpointKind::kRange &&
      !reinterpret_cast<const Natcd__V1__RangeRequest*>(work->body.get())->serializable) {
    // Linearizable: served once this member has applied everything the
    // leader had committed when the read arrived (ReadIndex).
    reads_to_confirm.push_back(std::move(work));
    return;
  }
  HandleLocal(std::move(work), replies);
}

void Node::Impl::HandleLocal(std::unique_ptr<Work> work, std::vector<PendingReply>* replies) {
  const EndpointKind kind = work->endpoint->kind();
  PendingReply reply;
  const bool json = work->json;
  ProtoArena arena;
  auto ok = [&](const ProtobufCMessage* message) { reply.body = EncodeMessage(message, json); };
  auto fail = [&](const Status& status) {
    reply.is_error = true;
    reply.error = ToServiceError(status);
  };
  const ProtobufCMessage* body = work->body.get();
  ResponseHeader now;
  now.revision = engine->revision();

  switch (kind) {
    case EndpointKind::kRange: {
      RangeRequest request;
      Status s = FromProto(*reinterpret_cast<const Natcd__V1__RangeRequest*>(body), &request);
      if (!s.ok()) {
        fail(s);
        break;
      }
      Result<RangeResponse> response = engine->Range(request);
      if (response.ok()) {
        ok(&ToProto(response.value(), header, &arena)->base);
      } else {
        fail(response.status());
      }
      break;
    }
    case EndpointKind::kLeaseKeepAlive:
    case EndpointKind::kLeaseKeepAliveHex: {
      int64_t id = kind == EndpointKind::kLeaseKeepAlive
                       ? reinterpret_cast<const Natcd__V1__LeaseKeepAliveRequest*>(body)->id
                       : work->lease_id;
      LeaseKeepAliveResponse response = engine->LeaseKeepAlive({id});
      // The hex subject takes any body; its reply is always protobuf unless
      // the request said JSON.
      ok(&ToProto(response, header, &arena)->base);
      break;
    }
    case EndpointKind::kLeaseTimeToLive: {
      auto* in = reinterpret_cast<const Natcd__V1__LeaseTimeToLiveRequest*>(body);
      ok(&ToProto(engine->LeaseTimeToLive({in->id, static_cast<bool>(in->keys)}), header, &arena)
              ->base);
      break;
    }
    case EndpointKind::kLeaseLeases:
      ok(&ToProto(engine->LeaseLeases(), header, &arena)->base);
      break;
    case EndpointKind::kWatchCreate: {
      auto* in = reinterpret_cast<const Natcd__V1__WatchCreateRequest*>(body);
      std::string deliver = in->deliver_subject ? in->deliver_subject : "";
      WatchOptions watch;
      Status s = FromProto(*in, &watch);
      if (s.ok() && !ValidPublishSubject(deliver)) {
        s = Status::InvalidArgument("ErrInvalidArgument",
                                    "deliver_subject must be a subject without wildcards");
      }
      if (!s.ok()) {
        fail(s);
        break;
      }
      Natcd__V1__WatchResponse response;
      natcd__v1__watch_response__init(&response);
      ResponseHeader committed;
      committed.revision = engine->CurrentRevision();
      response.header = ToProto(committed, header, &arena);
      if (watch.start_revision > 0 && watch.start_revision < engine->CompactRevision()) {
        // etcd answers the create itself with the cancellation.
        response.watch_id = in->watch_id;
        response.canceled = true;
        response.compact_revision = engine->CompactRevision();
        response.cancel_reason =
            const_cast<char*>("etcdserver: mvcc: required revision has been compacted");
        ok(&response.base);
        break;
      }
      WatchId id = in->watch_id;
      while (id == 0) id = static_cast<int64_t>(rng() >> 1);
      Result<WatchId> created = engine->watches().Create(watch, id);
      if (!created.ok()) {
        fail(created.status());
        break;
      }
      streams->Add(*created, deliver, json,
                   watch.start_revision > 0 ? watch.start_revision - 1 : committed.revision);
      response.watch_id = *created;
      response.created = true;
      response.heartbeat_ms = options.watch_heartbeat_ms;
      ok(&response.base);
      break;
    }
    case EndpointKind::kWatchCancel: {
      int64_t id = reinterpret_cast<const Natcd__V1__WatchCancelRequest*>(body)->watch_id;
      if (!streams->Has(id)) {
        fail(Status::NotFound("ErrWatchNotFound", "no watch " + std::to_string(id)));
        break;
      }
      (void)engine->watches().Cancel(id);
      streams->Remove(id);
      Natcd__V1__WatchResponse response;
      natcd__v1__watch_response__init(&response);
      response.header = ToProto(now, header, &arena);
      response.watch_id = id;
      response.canceled = true;
      response.cancel_reason = const_cast<char*>("canceled by the client");
      ok(&response.base);
      break;
    }
    case EndpointKind::kWatchProgress: {
      auto* in = reinterpret_cast<const Natcd__V1__WatchProgressRequest*>(body);
      if (!streams->Has(in->watch_id)) {
        fail(Status::NotFound("ErrWatchNotFound", "no watch " + std::to_string(in->watch_id)));
        break;
      }
      Status s = engine->watches().RequestProgress(in->watch_id);
      if (!s.ok()) {
        fail(s);
        break;
      }
      Natcd__V1__WatchResponse response;
      natcd__v1__watch_response__init(&response);
      response.header = ToProto(now, header, &arena);
      response.watch_id = in->watch_id;
      ok(&response.base);
      break;
    }
    case EndpointKind::kWatchAck: {
      auto* in = reinterpret_cast<const Natcd__V1__WatchAckRequest*>(body);
      streams->Ack(in->watch_id, in->seq);
      return;  // acks are published, not requested: no reply
    }
    case EndpointKind::kStatus: {
      Natcd__V1__StatusResponse response;
      natcd__v1__status_response__init(&response);
      response.header = ToProto(now, header, &arena);
      response.version = const_cast<char*>(options.version.c_str());
      Result<int64_t> size = engine->DatabaseSizeBytes();
      response.dbsize = size.ok() ? *size : 0;
      response.dbsizeinuse = response.dbsize;
      response.leader = raft->lead();
      response.raftindex = raft->last_index();
      response.raftappliedindex = applied_index;
      response.raftterm = raft->term();
      raft::ConfState cs = raft->conf_state();
      response.islearner = std::count(cs.learners.begin(), cs.learners.end(), header.member_id) > 0;
      ok(&response.base);
      break;
    }
    case EndpointKind::kMemberList: {
      Natcd__V1__MemberListResponse response;
      natcd__v1__member_list_response__init(&response);
      response.header = ToProto(now, header, &arena);
      response.members = MembersProto(&response.n_members, &arena);
      ok(&response.base);
      break;
    }
    default:
      fail(Status::Internal("unhandled endpoint " + work->endpoint->name()));
  }
  reply.work = std::move(work);
  replies->push_back(std::move(reply));
}

void Node::Impl::Finish(PendingReply& reply, natsConnection* via) {
  Work& work = *reply.work;
  // Counted before the reply: a client that reads $SRV.STATS after its
  // reply sees its request.
  // (A forwarded request is counted by the member it arrived at.)
  if (work.hops == 0) {
    work.endpoint->Record(NowNs() - work.received_ns, reply.is_error ? &reply.error.text : nullptr);
  }
  if (reply.is_error) {
    (void)RespondError(via, work.reply(), reply.error);
  } else {
    (void)Respond(via, work.reply(), reply.body, work.json);
  }
}

std::vector<Node::Impl::MemberInfo> Node::Impl::Members() const {
  std::vector<MemberInfo> out;
  raft::ConfState cs = raft->conf_state();
  auto add = [&](raft::NodeId id, bool learner) {
    auto it = member_names.find(id);
    out.push_back(MemberInfo{id, it != member_names.end() ? it->second : MemberHex(id), learner});
  };
  for (raft::NodeId id : cs.voters) add(id, false);
  for (raft::NodeId id : cs.learners) add(id, true);
  return out;
}

Natcd__V1__Member** Node::Impl::MembersProto(size_t* n, ProtoArena* arena) const {
  std::vector<MemberInfo> members = Members();
  *n = members.size();
  Natcd__V1__Member** out = arena->Array<Natcd__V1__Member>(members.size());
  for (size_t i = 0; i < members.size(); i++) {
    Natcd__V1__Member* m = arena->New(natcd__v1__member__init);
    m->id = members[i].id;
    auto* name = arena->New<std::string>([](std::string*) {});
    *name = members[i].name;
    m->name = const_cast<char*>(name->c_str());
    auto* peer = arena->New<std::string>([](std::string*) {});
    *peer = RaftSubject(options.prefix, options.cluster_name, members[i].id);
    char** urls = arena->Array<char>(1);
    urls[0] = const_cast<char*>(peer->c_str());
    m->n_peerurls = 1;
    m->peerurls = urls;
    m->islearner = members[i].learner;
    out[i] = m;
  }
  return out;
}

void Node::Impl::HandleMembership(std::unique_ptr<Work> work, std::vector<PendingReply>* replies) {
  const ProtobufCMessage* body = work->body.get();
  raft::ConfChange cc;
  std::string name;
  raft::ConfState cs = raft->conf_state();
  auto is_in = [](const std::vector<raft::NodeId>& ids, raft::NodeId id) {
    return std::count(ids.begin(), ids.end(), id) > 0;
  };
  switch (work->endpoint->kind()) {
    case EndpointKind::kMemberAdd: {
      auto* in = reinterpret_cast<const Natcd__V1__MemberAddRequest*>(body);
      name = in->name ? in->name : "";
      if (name.empty()) {
        replies->push_back(ErrorReply(
            std::move(work), Status::InvalidArgument("ErrInvalidArgument", "member name required"),
            false));
        return;
      }
      cc.node_id = Fnv1a(name);
      if (is_in(cs.voters, cc.node_id) || is_in(cs.learners, cc.node_id)) {
        replies->push_back(ErrorReply(
            std::move(work),
            Status::InvalidArgument("ErrMemberExist", "etcdserver: member ID already exist"),
            false));
        return;
      }
      cc.type =
          in->islearner ? raft::ConfChangeType::kAddLearnerNode : raft::ConfChangeType::kAddNode;
      break;
    }
    case EndpointKind::kMemberRemove: {
      cc.node_id = reinterpret_cast<const Natcd__V1__MemberRemoveRequest*>(body)->id;
      if (!is_in(cs.voters, cc.node_id) && !is_in(cs.learners, cc.node_id)) {
        replies->push_back(ErrorReply(
            std::move(work), Status::NotFound("ErrMemberNotFound", "etcdserver: member not found"),
            false));
        return;
      }
      cc.type = raft::ConfChangeType::kRemoveNode;
      break;
    }
    default: {
      cc.node_id = reinterpret_cast<const Natcd__V1__MemberPromoteRequest*>(body)->id;
      if (!is_in(cs.learners, cc.node_id)) {
        replies->push_back(
            ErrorReply(std::move(work),
                       Status::InvalidArgument("ErrMemberNotLearner",
                                               "etcdserver: can only promote a learner member"),
                       false));
        return;
      }
      // etcd's rule: only a learner that has caught up may vote.
      const raft::Progress* pr = raft->progress(cc.node_id);
      // (A learner that never answered has match 0: not in sync, even
      // while the log is shorter than 100 entries.)
      if (pr == nullptr || pr->match == 0 || pr->match + 100 < raft->committed()) {
        replies->push_back(ErrorReply(
            std::move(work),
            Status::InvalidArgument("ErrLearnerNotReady",
                                    "etcdserver: can only promote a learner member which is in "
                                    "sync with leader"),
            false));
        return;
      }
      cc.type = raft::ConfChangeType::kAddNode;
      break;
    }
  }
  uint64_t seq = ++proposal_seq;
  cc.context = ConfChangeContext(header.member_id, seq, name);
  Status s = raft->ProposeConfChange(cc);
  if (!s.ok()) {
    replies->push_back(
        ErrorReply(std::move(work),
                   Status::Unavailable("ErrProposalDropped",
                                       "etcdserver: another membership change is in progress"),
                   false));
    return;
  }
  int64_t deadline = options.engine.clock->MonotonicMs() + options.request_timeout_ms;
  proposals.emplace(seq, Proposal{std::move(work), deadline});
}

void Node::Impl::HandleMoveLeader(std::unique_ptr<Work> work, std::vector<PendingReply>* replies) {
  const raft::NodeId target =
      reinterpret_cast<const Natcd__V1__MoveLeaderRequest*>(work->body.get())->targetid;
  raft::ConfState cs = raft->conf_state();
  if (std::count(cs.voters.begin(), cs.voters.end(), target) == 0) {
    // etcd's answer for an unknown member and for a learner alike.
    replies->push_back(ErrorReply(
        std::move(work),
        Status::InvalidArgument("ErrBadLeaderTransferee", "etcdserver: bad leader transferee"),
        false));
    return;
  }
  if (target != header.member_id) raft->TransferLeader(target);
  moving_leader.push_back(MovingLeader{std::move(work), target});
  AnswerMovedLeader(replies);
}

void Node::Impl::AnswerMovedLeader(std::vector<PendingReply>* replies) {
  const int64_t now_ns = NowNs();
  for (auto it = moving_leader.begin(); it != moving_leader.end();) {
    Work& work = *it->work;
    if (raft->lead() == it->target) {
      PendingReply reply;
      Natcd__V1__MoveLeaderResponse r;
      natcd__v1__move_leader_response__init(&r);
      ProtoArena arena;
      ResponseHeader now;
      now.revision = engine->revision();
      r.header = ToProto(now, header, &arena);
      reply.body = EncodeMessage(&r.base, work.json);
      reply.work = std::move(it->work);
      replies->push_back(std::move(reply));
    } else if (now_ns - work.received_ns > options.request_timeout_ms * 1'000'000) {
      replies->push_back(
          ErrorReply(std::move(it->work),
                     Status(Status::Code::kTimeout, "ErrTimeoutLeaderTransfer",
                            "etcdserver: request timed out, leader transfer took too long"),
                     false));
    } else {
      ++it;
      continue;
    }
    it = moving_leader.erase(it);
  }
}

void Node::Impl::Timers() {
  const int64_t now = options.engine.clock->MonotonicMs();
  // Lease expiry, checkpoints and compaction are decided by the leader and
  // replicated as entries, so every member deletes the same keys at the
  // same revision.
  if (leader && !leases_paused && now >= next_lease_check_ms) {
    next_lease_check_ms = now + options.lease_check_interval_ms;
    if (std::optional<LeaseExpireRequest> due = engine->ExpiredLeases()) Propose(*due);
    const bool scan_all = now >= next_checkpoint_ms;
    if (scan_all) next_checkpoint_ms = now + options.lease_checkpoint_interval_ms;
    if (std::optional<LeaseCheckpointRequest> due = engine->LeaseCheckpoints(scan_all)) {
      Propose(*due);
    }
  }
  if (leader && publish_cursor >= 0 && now >= next_published_record_ms) {
    next_published_record_ms = now + options.heartbeat_interval_ms;
    RecordPublished(publisher->published_revision());
  }
  if (leader) {
    if (std::optional<int64_t> due =
            compactor->Due(now, engine->revision(), engine->CompactRevision())) {
      Propose(CompactionRequest{*due, false});
    }
  }
  if (now >= next_watch_tick_ms) {
    // Often enough for both the heartbeat and the ack timeout (either may be
    // the shorter).
    next_watch_tick_ms =
        now + std::max<int64_t>(
                  1, std::min(options.watch_heartbeat_ms, options.watch_ack_timeout_ms) / 5);
    streams->Tick();
  }
  if (now >= next_progress_ms) {
    if (next_progress_ms != 0) engine->watches().NotifyProgressAll();
    next_progress_ms = now + options.watch_progress_interval_ms;
  }
}

void Node::Impl::Tick() {
  const int64_t now = options.engine.clock->MonotonicMs();
  if (next_tick_ms == 0) next_tick_ms = now + options.heartbeat_interval_ms;
  // A loop turn that took longer than a tick catches up (bounded: a long
  // stall must not become a burst of elections).
  for (int i = 0; i < 3 && now >= next_tick_ms; i++) {
    raft->Tick();
    next_tick_ms += options.heartbeat_interval_ms;
  }
  if (now >= next_tick_ms) next_tick_ms = now + options.heartbeat_interval_ms;
}

void Node::Impl::ConfirmReads(std::vector<PendingReply>* replies) {
  if (reads_to_confirm.empty()) return;
  std::string ctx = std::to_string(header.member_id) + "/" + std::to_string(++read_seq);
  Status s = raft->ReadIndex(ctx);
  if (!s.ok()) {
    for (auto& work : reads_to_confirm) {
      if (raft->lead() == raft::kNoNode) {
        waiting_for_leader.push_back(std::move(work));
      } else {
        replies->push_back(ErrorReply(std::move(work), s, false));
      }
    }
    reads_to_confirm.clear();
    return;
  }
  reads_confirming[ctx] =
      Confirming{std::move(reads_to_confirm), raft->lead(), options.engine.clock->MonotonicMs()};
  reads_to_confirm.clear();
}

void Node::Impl::ServeConfirmedReads(std::vector<PendingReply>* replies) {
  auto it = reads_confirmed.begin();
  while (it != reads_confirmed.end()) {
    if (it->index > applied_index) {
      ++it;
      continue;
    }
    for (auto& work : it->works) HandleLocal(std::move(work), replies);
    it = reads_confirmed.erase(it);
  }
}

void Node::Impl::RetryWaiting(std::vector<PendingReply>* replies) {
  const int64_t now_ms = options.engine.clock->MonotonicMs();
  const int64_t now_ns = NowNs();
  if (!waiting_for_leader.empty() && raft->lead() != raft::kNoNode) {
    std::vector<std::unique_ptr<Work>> waiting = std::move(waiting_for_leader);
    waiting_for_leader.clear();
    for (auto& work : waiting) {
      // Not back to a leader that had no responders, unless it is still
      // the leader after a pause (its subscriptions may have been late).
      if (work->unreachable_leader == raft->lead() && now_ns < work->retry_at_ns) {
        waiting_for_leader.push_back(std::move(work));
        continue;
      }
      work->unreachable_leader = 0;
      Handle(std::move(work), replies);
    }
  }
  {
    std::vector<std::unique_ptr<Work>> timed_out;
    {
      std::lock_guard<std::mutex> lock(forward_mu);
      for (auto it = forwarded.begin(); it != forwarded.end();) {
        if (now_ns >= it->second.deadline_ns) {
          timed_out.push_back(std::move(it->second.work));
          it = forwarded.erase(it);
        } else {
          ++it;
        }
      }
    }
    for (auto& work : timed_out) {
      replies->push_back(ErrorReply(std::move(work), RequestTimedOut(), false));
    }
  }
  auto expired = [&](const Work& w) {
    return now_ns - w.received_ns > options.request_timeout_ms * 1'000'000;
  };
  auto it = waiting_for_leader.begin();
  while (it != waiting_for_leader.end()) {
    if (expired(**it)) {
      replies->push_back(ErrorReply(std::move(*it), NoLeader(), false));
      it = waiting_for_leader.erase(it);
    } else {
      ++it;
    }
  }
  for (auto it = reads_confirming.begin(); it != reads_confirming.end();) {
    Confirming& c = it->second;
    if (c.lead == raft->lead() && now_ms - c.asked_ms < options.election_timeout_ms) {
      ++it;
      continue;
    }
    for (auto& work : c.works) {
      if (now_ns - work->received_ns > options.request_timeout_ms * 1'000'000) {
        replies->push_back(ErrorReply(std::move(work), RequestTimedOut(), false));
      } else {
        reads_to_confirm.push_back(std::move(work));
      }
    }
    it = reads_confirming.erase(it);
  }
  for (auto p = proposals.begin(); p != proposals.end();) {
    if (now_ms >= p->second.deadline_ms) {
      replies->push_back(ErrorReply(std::move(p->second.work), RequestTimedOut(), true));
      p = proposals.erase(p);
    } else {
      ++p;
    }
  }
}

void Node::Impl::ApplyConfChange(const raft::Entry& entry, std::vector<PendingReply>* replies) {
  raft::ConfChange cc;
  if (!raft::DecodeConfChange(entry.data, &cc)) return;
  conf_history[entry.index] = raft->ApplyConfChange(cc);
  while (conf_history.size() > 16) conf_history.erase(conf_history.begin());
  uint64_t origin = 0, seq = 0;
  std::string name;
  ParseConfChangeContext(cc.context, &origin, &seq, &name);
  if (!name.empty()) {
    member_names[cc.node_id] = name;
    // Recorded with the applied entry (one transaction), so the name
    // outlives the log entry that brought it.
    Status recorded = raft_storage->SetMemberName(cc.node_id, name);
    if (!recorded.ok()) {
      fprintf(stderr, "natcd %s: recording member %s: %s\n", options.name.c_str(), name.c_str(),
              recorded.ToString().c_str());
    }
  }
  if (origin != header.member_id) return;
  auto p = proposals.find(seq);
  if (p == proposals.end()) return;
  std::unique_ptr<Work> work = std::move(p->second.work);
  proposals.erase(p);
  PendingReply reply;
  ProtoArena arena;
  ResponseHeader now;
  now.revision = engine->revision();
  Natcd__V1__ResponseHeader* h = ToProto(now, header, &arena);
  switch (work->endpoint->kind()) {
    case EndpointKind::kMemberAdd: {
      Natcd__V1__MemberAddResponse r;
      natcd__v1__member_add_response__init(&r);
      r.header = h;
      r.members = MembersProto(&r.n_members, &arena);
      for (size_t i = 0; i < r.n_members; i++) {
        if (r.members[i]->id == cc.node_id) r.member = r.members[i];
      }
      reply.body = EncodeMessage(&r.base, work->json);
      break;
    }
    case EndpointKind::kMemberRemove: {
      Natcd__V1__MemberRemoveResponse r;
      natcd__v1__member_remove_response__init(&r);
      r.header = h;
      r.members = MembersProto(&r.n_members, &arena);
      reply.body = EncodeMessage(&r.base, work->json);
      break;
    }
    default: {
      Natcd__V1__MemberPromoteResponse r;
      natcd__v1__member_promote_response__init(&r);
      r.header = h;
      r.members = MembersProto(&r.n_members, &arena);
      reply.body = EncodeMessage(&r.base, work->json);
      break;
    }
  }
  reply.work = std::move(work);
  replies->push_back(std::move(reply));
}

void Node::Impl::ApplyEntry(const raft::Entry& entry, std::vector<PendingReply>* replies) {
  if (entry.type == raft::EntryType::kConfChange) {
    ApplyConfChange(entry, replies);
    return;
  }
  if (entry.data.empty()) return;
  LogCommand command;
  if (std::optional<LogCommand> proposed = proposed_commands.Take(entry.index, entry.term)) {
    command = std::move(*proposed);
  } else if (Status s = DecodeLogCommand(entry.data, &command); !s.ok()) {
    // Only natcd writes entries: this is a bug or a corrupt log. Skipping
    // keeps every member identical (they all skip it).
    fprintf(stderr, "natcd: log entry %llu does not decode: %s\n",
            static_cast<unsigned long long>(entry.index), s.ToString().c_str());
    return;
  }
  // Not the engine's (so read again from the kept log after a restart).
  if (command.events_published) {
    replicated_published = std::max(replicated_published, *command.events_published);
    return;
  }
  if (engine->AlreadyApplied(entry.index)) return;
  std::unique_ptr<Work> work;
  if (command.origin_member == header.member_id) {
    auto p = proposals.find(command.origin_seq);
    if (p != proposals.end()) {
      work = std::move(p->second.work);
      proposals.erase(p);
    }
  }
  // The same request id proposed twice (a retry raced the first attempt):
  // applied once, on every member alike.
  if (!command.request_id.empty() && engine->FindRequest(command.request_id) != nullptr) {
    if (work != nullptr) {
      if (auto remembered = RememberedReply(*engine, command.request_id, work)) {
        replies->push_back(std::move(*remembered));
      }
    }
    return;
  }
  Result<WriteResponse> response = engine->Apply(command.request, entry.index);
  // The leader's own entries (expiry, checkpoints, compaction) have no
  // client and no request id: nothing to answer or remember.
  if (work == nullptr && command.request_id.empty()) return;
  PendingReply reply =
      WriteReply(std::move(work), response, command.request_id, command.request_expires_ms);
  if (reply.work != nullptr) replies->push_back(std::move(reply));
}

void Node::Impl::BecameLeader(bool now_leader) {
  if (now_leader == leader) return;
  leader = now_leader;
  const int64_t now = options.engine.clock->MonotonicMs();
  if (leader) {
    // Every lease gets its replicated deadline, plus the time no leader was
    // reachable, plus an election timeout: its holder may have been
    // renewing with the old leader until just now (what that leader did
    // not checkpoint yet is at most half a TTL: lease_manager.h).
    raft::ConfState cs = raft->conf_state();
    const int64_t grace = cs.voters.size() > 1 ? options.election_timeout_ms : 0;
    engine->PromoteLeases(grace + std::max<int64_t>(0, now - leader_contact_ms));
    // Events: continue from the last revision recorded as published, known
    // once every entry of the earlier terms is applied.
    publish_cursor = -1;
    publish_decide_index = raft->last_index();
    promoted_revision = engine->CurrentRevision();
    publish_decide_ms = cs.voters.size() > 1 ? now + options.heartbeat_interval_ms : 0;
    recorded_published = -1;
    // Nothing known yet (a new cluster): record where this leader starts at
    // once, so that a successor knows it even if this leader is gone before
    // it has decided and published anything.
    if (std::max(replicated_published, published_marker.load()) < 0) {
      RecordPublished(promoted_revision);
      // Nothing was ever written here either: nothing to wait for, publish
      // from the first write on. (Waiting a heartbeat let a quick first
      // leader hand over before it had published anything, and its
      // successor, killed in turn, left all of it to a third.)
      if (promoted_revision == 0) publish_cursor = 0;
    }
  } else {
    engine->DemoteLeases();
    AbandonSnapshots();
    proposed_commands.Clear();
  }
  WeighLeadership(leader);
  leader_contact_ms = now;
}

// NATS hands a queue group's request to one of its subscriptions at random.
// The leader holds leader_request_weight subscriptions on each write and
// keepalive subject where a follower holds one, so most writes reach it
// directly: a forwarded write costs two more messages through the NATS
// server and a relay. Followers keep theirs, so every member still takes
// any request, also while no leader is known. Given up subscriptions are
// drained: what they already received is forwarded.
void Node::Impl::WeighLeadership(bool leading) {
  std::lock_guard<std::mutex> lock(weight_mu);
  if (weight_stopped) return;
  std::erase_if(weight_draining, [](const std::unique_ptr<Subscription>& subscription) {
    if (natsSubscription_DrainCompletionStatus(subscription->sub) == NATS_ILLEGAL_STATE) {
      return false;  // still draining
    }
    natsSubscription_Destroy(subscription->sub);
    return true;
  });
  if (!leading) {
    for (auto& subscription : leader_weight) {
      (void)natsSubscription_Drain(subscription->sub);
      weight_draining.push_back(std::move(subscription));
    }
    leader_weight.clear();
    return;
  }
  for (auto& endpoint : endpoints) {
    const EndpointKind kind = endpoint->kind();
    if (endpoint->queue_group().empty() ||
        !(IsWrite(kind) || kind == EndpointKind::kLeaseKeepAlive ||
          kind == EndpointKind::kLeaseKeepAliveHex)) {
      continue;
    }
    for (int i = 1; i < options.leader_request_weight; i++) {
      Result<std::unique_ptr<Subscription>> subscription =
          SubscribeTo(endpoint->subject(), endpoint->queue_group(), endpoint.get());
      if (!subscription.ok()) {
        // Only the share of requests this member gets directly suffers.
        fprintf(stderr, "natcd %s: %s\n", options.name.c_str(),
                subscription.status().ToString().c_str());
        return;
      }
      leader_weight.push_back(std::move(subscription).value());
    }
  }
}

void Node::Impl::MaybeCompactLog() {
  if (applied_index < snapshot_index + options.snapshot_entries) return;
  // The state machine's snapshot is the database itself: only record how
  // far it is, and keep some entries for members a little behind.
  raft::SnapshotMeta meta;
  meta.index = applied_index;
  meta.conf_state = raft->conf_state();
  uint64_t compact_to = applied_index > options.snapshot_catchup_entries
                            ? applied_index - options.snapshot_catchup_entries
                            : 0;
  Status s = raft_storage->CreateSnapshot(meta, compact_to);
  if (s.ok()) snapshot_index = applied_index;
}

void Node::Impl::SendRaftMessage(const raft::Message& m) {
  std::string bytes = EncodeRaftMessage(m);
  std::string subject = RaftSubject(options.prefix, options.cluster_name, m.to);
  if (natsConnection_Publish(nc, subject.c_str(), bytes.data(), static_cast<int>(bytes.size())) !=
      NATS_OK) {
    raft->ReportUnreachable(m.to);
  }
}

void Node::Impl::ProcessReady(std::vector<PendingReply>* replies) {
  for (int round = 0; round < 16 && raft->HasReady(); round++) {
    raft::Ready rd = raft->GetReady();
    // A leader sends its appends and heartbeats before its own fsync, so
    // the followers write in parallel with it (Raft thesis 10.2.1). Safe
    // because an acknowledgement is only counted in a later turn of this
    // loop, after this fsync; and the commit index they carry only counts
    // entries already durable here. Everything else (votes,
    // acknowledgements) waits for the fsync.
    if (raft->role() == raft::Role::kLeader) {
      for (raft::Message& m : rd.messages) {
        if (m.type == raft::MessageType::kApp || m.type == raft::MessageType::kHeartbeat) {
          SendRaftMessage(m);
          m.to = raft::kNoNode;  // sent
        }
      }
    }
    const bool applies_conf_change =
        std::any_of(rd.committed_entries.begin(), rd.committed_entries.end(),
                    [](const raft::Entry& e) { return e.type == raft::EntryType::kConfChange; });
    // A Ready that only applies committed entries (and moves the commit
    // index) needs no fsync: those entries are durable in the log already,
    // and a crash would apply them again. Except a membership change: the
    // hard state written with it (below) must survive a power loss too.
    if (rd.entries.empty() && rd.snapshot.empty() && !applies_conf_change &&
        (!rd.hard_state || (rd.hard_state->term == synced_hard_state.term &&
                            rd.hard_state->vote == synced_hard_state.vote))) {
      (void)engine->backend().SkipSyncOfNextCommit();
    }
    Status s;
    if (!rd.snapshot.empty() && rd.snapshot.meta.index > 1) {
      // The leader's database arrived whole (see Handle): it becomes this
      // member's, and Raft starts again from it (this Ready is void).
      s = InstallSnapshot(rd.snapshot.meta);
      if (!s.ok()) {
        fprintf(stderr, "natcd %s: installing the snapshot failed: %s\n", options.name.c_str(),
                s.ToString().c_str());
      }
      return;
    }
    if (!rd.snapshot.empty()) {
      // The cluster's first snapshot: the empty state this new member
      // already has.
      s = raft_storage->ApplySnapshot(rd.snapshot.meta);
      applied_index = snapshot_index = rd.snapshot.meta.index;
    }
    if (s.ok()) s = raft_storage->Append(rd.entries);
    // Raft needs term and vote durable. The commit index only has to cover
    // the membership changes applied: a restarted member re-applies the
    // log from its snapshot up to it, and its configuration must not fall
    // back to one without them (the simulation finds clusters that can
    // never elect a leader again otherwise). Past that it is a hint, learned
    // again from the leader (or as a sole voter from its own next entry),
    // and the engine skips the entries it already applied when Raft hands
    // them back. So a Ready that only moves the commit index leaves the
    // stored hard state alone: a WAL page less in the commit of every write
    // (a lone put's commit: 4 pages, now 3).
    if (s.ok() && ((rd.hard_state && (rd.hard_state->term != synced_hard_state.term ||
                                      rd.hard_state->vote != synced_hard_state.vote)) ||
                   applies_conf_change)) {
      s = raft_storage->SetHardState(raft->hard_state());
    }
    if (s.ok()) {
      for (const raft::Entry& e : rd.committed_entries) {
        ApplyEntry(e, replies);
        applied_index = e.index;
      }
    }
    // One fsync: the log entries, the hard state and the state they
    // produced are durable before any message or reply depends on them.
    if (s.ok()) s = engine->Commit();
    if (s.ok()) s = engine->backend().EndSkipSync();
    if (s.ok() && rd.hard_state) synced_hard_state = *rd.hard_state;
    if (!s.ok()) {
      // The engine refuses everything from now on (health() says why);
      // members elect another leader.
      for (PendingReply& reply : *replies) {
        if (reply.is_write && !reply.is_error) {
          reply.is_error = true;
          reply.error = ToServiceError(s);
        }
      }
      return;
    }
    for (raft::Message& m : rd.messages) {
      if (m.to == raft::kNoNode) continue;  // sent before the fsync
      if (m.type == raft::MessageType::kSnap) {
        // The cluster's first snapshot is the empty state: a new member
        // installs it and gets everything else from the log. Any later one
        // means shipping this member's database first.
        if (m.snapshot.meta.index != 1 || raft_storage->booted_over_existing_data()) {
          StartSnapshot(std::move(m));
          continue;
        }
        raft->ReportSnapshot(m.to, /*failed=*/false);
      }
      SendRaftMessage(m);
    }
    for (raft::ReadState& rs : rd.read_states) {
      auto it = reads_confirming.find(rs.request_ctx);
      if (it == reads_confirming.end()) continue;
      reads_confirmed.push_back(ReadBatch{rs.index, std::move(it->second.works)});
      reads_confirming.erase(it);
    }
    if (rd.soft_state) {
      fprintf(stderr, "natcd %s: %s, term %llu, leader %s\n", options.name.c_str(),
              raft::RoleName(rd.soft_state->role), static_cast<unsigned long long>(raft->term()),
              rd.soft_state->lead ? MemberHex(rd.soft_state->lead).c_str() : "none");
      BecameLeader(rd.soft_state->role == raft::Role::kLeader);
    }
    raft->Advance(rd);
  }
  header.raft_term = raft->term();
  ServeConfirmedReads(replies);
  AnswerMovedLeader(replies);
  MaybeCompactLog();
}

static std::string DataDir(const std::string& db_path) {
  const std::string dir = std::filesystem::path(db_path).parent_path().string();
  return dir.empty() ? "." : dir;
}

void Node::Impl::StartSnapshot(raft::Message m) {
  const raft::NodeId to = m.to;
  if (outgoing_snapshots.count(to) != 0) return;  // one at a time
  auto out = std::make_unique<OutgoingSnapshot>();
  out->message = std::move(m);
  out->path = DataDir(options.engine.db_path) + "/snapshot-for-" + MemberHex(to) + ".db";
  OutgoingSnapshot* raw = out.get();
  const std::string db_path = options.engine.db_path;
  out->copier = std::thread([raw, db_path] {
    raw->copy = WriteDatabaseSnapshot(db_path, raw->path);
    raw->copied.store(true);
  });
  fprintf(stderr, "natcd %s: sending a snapshot to %s\n", options.name.c_str(),
          MemberHex(to).c_str());
  outgoing_snapshots.emplace(to, std::move(out));
}

void Node::Impl::AbandonSnapshots() {
  for (auto& [to, out] : outgoing_snapshots) {
    out->copier.join();
    if (raft && leader) raft->ReportSnapshot(to, /*failed=*/true);
    (void)RemoveFileIfExists(out->path);
  }
  outgoing_snapshots.clear();
}

void Node::Impl::PumpSnapshots() {
  const int64_t now = options.engine.clock->MonotonicMs();
  for (auto it = outgoing_snapshots.begin(); it != outgoing_snapshots.end();) {
    const raft::NodeId to = it->first;
    OutgoingSnapshot& out = *it->second;
    if (!out.copied.load()) {
      ++it;
      continue;
    }
    Status failed;
    if (out.sender == nullptr) {
      out.copier.join();
      if (!out.copy.ok()) {
        failed = out.copy.status();
      } else if (auto conf = conf_history.upper_bound(*out.copy); conf == conf_history.begin()) {
        // More membership changes since the copy than are remembered.
        failed = Status::Unavailable("ErrSnapshot", "membership changed since the copy");
      } else {
        out.meta.index = *out.copy;
        out.meta.conf_state = std::prev(conf)->second;
        Result<uint64_t> term = raft_storage->Term(out.meta.index);
        if (!term.ok()) {
          failed = term.status();
        } else {
          out.meta.term = *term;
          Result<std::unique_ptr<SnapshotSender>> sender = SnapshotSender::Open(
              out.path, SnapshotId{raft->term(), out.meta.index, header.member_id}, {}, now);
          if (sender.ok()) {
            out.sender = std::move(sender).value();
          } else {
            failed = sender.status();
          }
        }
      }
    }
    const std::string subject = RaftSubject(options.prefix, options.cluster_name, to) + ".snap";
    while (failed.ok() && out.sender && !out.sender->done() && !out.sender->failed()) {
      Result<std::optional<std::string>> chunk = out.sender->Next(now);
      if (!chunk.ok() || !chunk->has_value()) break;
      const std::string& bytes = **chunk;
      (void)natsConnection_Publish(nc, subject.c_str(), bytes.data(),
                                   static_cast<int>(bytes.size()));
    }
    if (failed.ok() && out.sender && out.sender->failed()) failed = out.sender->failure();
    if (failed.ok() && !(out.sender && out.sender->done())) {
      ++it;
      continue;
    }
    if (failed.ok()) {
      // The follower holds the database: now the MsgSnap that installs it.
      out.message.snapshot.meta = out.meta;
      SendRaftMessage(out.message);
      raft->ReportSnapshot(to, /*failed=*/false);
      fprintf(stderr, "natcd %s: snapshot at index %llu (%llu bytes) sent to %s\n",
              options.name.c_str(), static_cast<unsigned long long>(out.meta.index),
              static_cast<unsigned long long>(out.sender->total_bytes()), MemberHex(to).c_str());
    } else {
      raft->ReportSnapshot(to, /*failed=*/true);
      fprintf(stderr, "natcd %s: snapshot to %s failed: %s\n", options.name.c_str(),
              MemberHex(to).c_str(), failed.ToString().c_str());
    }
    (void)RemoveFileIfExists(out.path);
    it = outgoing_snapshots.erase(it);
  }
}

void Node::Impl::ReceiveSnapshotChunk(const std::string& bytes) {
  Result<SnapshotChunk> chunk = DecodeSnapshotChunk(bytes);
  if (!chunk.ok()) return;  // damaged: the leader sends it again
  if (snapshot_receiver == nullptr) {
    SnapshotReceiverOptions receiver_options;
    receiver_options.path = DataDir(options.engine.db_path) + "/snapshot-received.db";
    snapshot_receiver = std::make_unique<SnapshotReceiver>(receiver_options);
  }
  SnapshotAck ack;
  (void)snapshot_receiver->OnChunk(*chunk, &ack);
  const std::string reply = EncodeSnapshotAck(ack);
  const std::string subject =
      RaftSubject(options.prefix, options.cluster_name, chunk->id.leader) + ".snapack";
  (void)natsConnection_Publish(nc, subject.c_str(), reply.data(), static_cast<int>(reply.size()));
}

Status Node::Impl::InstallSnapshot(const raft::SnapshotMeta& meta) {
  const raft::HardState hard_state = raft->hard_state();
  // Everything built on the old database goes: watches end with a reason
  // (clients re-create them from their last revision + 1).
  engine->watches().CancelAll("member restored from the leader's snapshot");
  streams->Deliver(/*ignore_window=*/true);
  streams.reset();
  raft.reset();
  raft_storage.reset();
  engine.reset();
  const std::string received = snapshot_receiver->path();
  Status s = raft::SqliteRaftStorage::PrepareReceivedSnapshot(received, meta, hard_state);
  if (s.ok()) {
    const std::string& db = options.engine.db_path;
    s = RemoveFileIfExists(db + "-wal");
    if (s.ok()) s = RemoveFileIfExists(db + "-shm");
    if (s.ok()) s = RenameDurably(received, db);
  }
  snapshot_receiver.reset();
  // Whether it worked or not, open what is there (a failed install left the
  // old database in place) and go on.
  NATCD_RETURN_IF_ERROR(OpenEngine());
  NATCD_RETURN_IF_ERROR(OpenRaftStorage());
  NATCD_RETURN_IF_ERROR(CreateRaft());
  CreateStreams();
  leader = false;
  replicated_published = -1;

  fprintf(stderr, "natcd %s: installed the leader's snapshot at index %llu (revision %lld)\n",
          options.name.c_str(), static_cast<unsigned long long>(meta.index),
          static_cast<long long>(engine->revision()));
  return s;
}

// Only the leader publishes P.ev.*, each revision once, in order: what this
// turn committed, or, when the cursor is behind it (a new leader whose
// predecessor had not published everything it committed), the missing
// revisions read back from the store first.
void Node::Impl::PublishEvents() {
  std::vector<std::shared_ptr<const std::vector<Event>>> committed = engine->TakeCommittedEvents();
  const bool cluster = is_cluster();
  if (cluster != publishing_markers) {
    publishing_markers = cluster;
    publisher->SetMarkerSubject(cluster ? PublishedSubject(options.prefix, options.cluster_name)
                                        : std::string());
  }
  if (!leader) return;
  if (publish_cursor < 0) {
    // Read back once decided.
    const int64_t now = options.engine.clock->MonotonicMs();
    if (now < publish_decide_ms) return;
    // (Never held for more than an election timeout: deciding with what is
    // known then costs at most repeats, and publishing must go on.)
    if (applied_index < publish_decide_index &&
        now < publish_decide_ms + options.election_timeout_ms) {
      return;
    }
    const int64_t known = std::max(replicated_published, published_marker.load());
    publish_cursor = known >= 0 ? known : promoted_revision;
    // Recorded at once: a leader after this one then knows where to start
    // even if this one publishes nothing.
    RecordPublished(publish_cursor);
  }
  for (auto& events : committed) {
    if (events->empty() || events->back().kv.mod_revision <= publish_cursor) continue;
    if (events->front().kv.mod_revision != publish_cursor + 1) break;  // a gap: read back
    publish_cursor = events->back().kv.mod_revision;
    publisher->Enqueue(std::move(events));
  }
  // Behind: read the missing revisions back, a bounded amount per turn.
  const int64_t target = engine->CurrentRevision();
  if (publish_cursor >= target) return;
  auto missing = std::make_shared<std::vector<Event>>();
  Status s = engine->ReadEvents(std::string(1, '\0'), std::string(1, '\0'), publish_cursor + 1,
                                target, 10'000, false, missing.get());
  if (s.code() == Status::Code::kCompacted) {
    fprintf(stderr, "natcd %s: P.ev.* events %lld..%lld were compacted before being published\n",
            options.name.c_str(), static_cast<long long>(publish_cursor + 1),
            static_cast<long long>(engine->CompactRevision() - 1));
    publish_cursor = engine->CompactRevision() - 1;
    return;
  }
  if (!s.ok()) return;  // the engine failed: health() says why
  publish_cursor = missing->empty() ? target : missing->back().kv.mod_revision;
  publisher->Enqueue(std::move(missing));
}

// In a cluster the leader records in the log how far P.ev.* reached the
// NATS server (an entry at most every heartbeat interval, only when it
// moved: under load it shares the group commit of the writes).
void Node::Impl::RecordPublished(int64_t revision) {
  if (!is_cluster() || revision <= recorded_published) return;
  LogCommand command;
  command.events_published = revision;
  Result<std::string> bytes = EncodeLogCommand(command);
  if (!bytes.ok()) return;
  turn_entries.push_back(std::move(bytes).value());
  turn_commands.push_back(std::move(command));
  recorded_published = revision;  // unless the batch is dropped (FlushProposals)
}

void Node::Impl::Loop() {
  std::vector<PendingReply> replies;
  for (;;) {
    std::vector<std::unique_ptr<Work>> batch;
    bool more_sync = engine->watches().unsynced_size() > 0;
    {
      std::unique_lock<std::mutex> lock(mu);
      if (queue.empty() && !stopping) {
        int64_t wait_ms = more_sync ? 0 : kIdleWaitMs;
        wake.wait_for(lock, std::chrono::milliseconds(wait_ms));
      }
      batch.swap(queue);
      if (stopping && batch.empty()) break;
    }
    for (auto& work : batch) Handle(std::move(work), &replies);
    Tick();
    Timers();
    RetryWaiting(&replies);
    ConfirmReads(&replies);
    FlushProposals(&replies);
    ProcessReady(&replies);
    PumpSnapshots();
    // Idle turns still remove compacted rows and expired request ids.
    Status committed = engine->Commit();
    // One write to the NATS server per reply keeps a lone request's
    // latency low; a busy turn's replies go to the buffered connection
    // instead, which nats.c writes out together within about a
    // millisecond (a system call per reply was a tenth of the CPU).
    natsConnection* via = replies.size() >= kBufferedRepliesMin ? buffered_nc : nc;
    for (PendingReply& reply : replies) {
      if (!committed.ok() && reply.is_write && !reply.is_error) {
        reply.is_error = true;
        reply.error = ToServiceError(committed);
      }
      Finish(reply, via);
    }
    replies.clear();
    PublishEvents();
    engine->watches().SyncUnsynced(kWatchersSyncedPerTurn);
    streams->Deliver();
  }
  AbandonSnapshots();
  snapshot_receiver.reset();
  // Shutdown: every watch ends with a reason the client can act on, and
  // every request still waiting gets an answer.
  std::vector<PendingReply> last;
  for (auto& [seq, proposal] : proposals) {
    last.push_back(ErrorReply(std::move(proposal.work),
                              Status::Unavailable("ErrStopped", "etcdserver: server stopped"),
                              true));
  }
  proposals.clear();
  for (auto& work : waiting_for_leader) {
    last.push_back(ErrorReply(
        std::move(work), Status::Unavailable("ErrStopped", "etcdserver: server stopped"), false));
  }
  waiting_for_leader.clear();
  for (auto& moving : moving_leader) {
    last.push_back(ErrorReply(std::move(moving.work),
                              Status::Unavailable("ErrStopped", "etcdserver: server stopped"),
                              false));
  }
  moving_leader.clear();
  {
    std::lock_guard<std::mutex> lock(forward_mu);
    for (auto& [seq, forward] : forwarded) {
      last.push_back(ErrorReply(std::move(forward.work),
                                Status::Unavailable("ErrStopped", "etcdserver: server stopped"),
                                false));
    }
    forwarded.clear();
  }
  auto stop_reads = [&](std::vector<std::unique_ptr<Work>>& works) {
    for (auto& work : works) {
      last.push_back(ErrorReply(
          std::move(work), Status::Unavailable("ErrStopped", "etcdserver: server stopped"), false));
    }
  };
  stop_reads(reads_to_confirm);
  for (auto& [ctx, confirming] : reads_confirming) stop_reads(confirming.works);
  for (auto& batch : reads_confirmed) stop_reads(batch.works);
  for (PendingReply& reply : last) Finish(reply, nc);
  engine->watches().CancelAll("server shutting down");
  streams->Deliver(/*ignore_window=*/true);  // the last message, even to a full window
  (void)engine->Commit();
  PublishEvents();
  publisher->Flush();
  natsConnection_FlushTimeout(nc, 1'000);
}

Result<std::unique_ptr<Node>> Node::Start(natsConnection* nc, const NodeOptions& options,
                                          natsConnection* events_nc) {
  auto impl = std::make_unique<Impl>();
  Status s = impl->Init(nc, options, events_nc);
  std::unique_ptr<Node> node(new Node(std::move(impl)));
  if (!s.ok()) {
    node->Stop();
    return s;
  }
  return node;
}

Node::Node(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Node::~Node() { Stop(); }

void Node::Stop() {
  Impl& impl = *impl_;
  if (impl.stopped) return;
  impl.stopped = true;
  // Stop taking requests: no new messages arrive, and those already
  // received are handed to the engine loop, which answers them.
  // (Without a connection nothing can drain: just unsubscribe.) One
  // deadline for all: a stuck drain must not hold shutdown for long.
  const bool connected = natsConnection_Status(impl.nc) == NATS_CONN_STATUS_CONNECTED;
  {
    std::lock_guard<std::mutex> lock(impl.weight_mu);
    impl.weight_stopped = true;
    for (auto* weight : {&impl.leader_weight, &impl.weight_draining}) {
      for (auto& subscription : *weight) impl.subscriptions.push_back(std::move(subscription));
      weight->clear();
    }
  }
  for (auto& subscription : impl.subscriptions) {
    if (connected) {
      (void)natsSubscription_Drain(subscription->sub);
    } else {
      (void)natsSubscription_Unsubscribe(subscription->sub);
    }
  }
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(kDrainTimeoutMs);
  for (auto& subscription : impl.subscriptions) {
    if (!connected) break;
    int64_t left_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    if (left_ms <= 0) break;
    (void)natsSubscription_WaitForDrainCompletion(subscription->sub, left_ms);
  }
  impl.accepting = false;
  for (auto& subscription : impl.subscriptions) natsSubscription_Destroy(subscription->sub);
  {
    std::lock_guard<std::mutex> lock(impl.mu);
    impl.stopping = true;
  }
  impl.wake.notify_one();
  if (impl.thread.joinable()) impl.thread.join();
  impl.subscriptions.clear();
  impl.streams.reset();
  // The Raft log's statements live on the engine's connection: finalized
  // before the engine closes it.
  impl.raft.reset();
  impl.raft_storage.reset();
  impl.engine.reset();
}

void Node::OnDisconnected() {
  auto work = std::make_unique<Work>();
  work->notice = Work::Notice::kDisconnected;
  impl_->Enqueue(std::move(work));
}

void Node::OnReconnected() {
  auto work = std::make_unique<Work>();
  work->notice = Work::Notice::kReconnected;
  impl_->Enqueue(std::move(work));
}

const NodeOptions& Node::options() const { return impl_->options; }

}  // namespace natcd::nats
