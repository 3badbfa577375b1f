#include "server/member.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <thread>
#include <vector>

#include "raft/raft.h"
#include "raft/sqlite_raft_storage.h"
#include "server/log_command.h"
#include "server/member_identity.h"
#include "server/proposed_commands.h"
#include "server/request_outcome.h"
#include "server/snapshot_transfer.h"
#include "storage/durable_file.h"
#include "storage/sqlite_backend.h"
#include "storage/sqlite_snapshot.h"

namespace natcd::server {

bool IsWrite(const RequestPayload& p) {
  return std::holds_alternative<PutRequest>(p) || std::holds_alternative<DeleteRangeRequest>(p) ||
         std::holds_alternative<TxnRequest>(p) || std::holds_alternative<CompactionRequest>(p) ||
         std::holds_alternative<LeaseGrantRequest>(p) ||
         std::holds_alternative<LeaseRevokeRequest>(p);
}

bool IsMembershipChange(const RequestPayload& p) {
  return std::holds_alternative<MemberAddRequest>(p) ||
         std::holds_alternative<MemberRemoveRequest>(p) ||
         std::holds_alternative<MemberPromoteRequest>(p);
}

bool LeaderOnly(const RequestPayload& p) {
  return IsWrite(p) || IsMembershipChange(p) || std::holds_alternative<MemberListRequest>(p) ||
         std::holds_alternative<LeaseKeepAliveRequest>(p) ||
         std::holds_alternative<LeaseTimeToLiveRequest>(p) ||
         std::holds_alternative<LeaseLeasesRequest>(p) ||
         std::holds_alternative<MoveLeaderRequest>(p);
}

namespace {

// Unsynced watchers caught up per turn, and the longest the loop sleeps
// when idle (it also wakes for everything queued).
constexpr size_t kWatchersSyncedPerTurn = 64;
constexpr int64_t kIdleWaitMs = 10;
// A turn with at least this many answers tells the front ends so (they may
// buffer them: ResponseContext::busy_turn).
constexpr size_t kBusyTurnAnswersMin = 8;
// A forwarded request whose leader had no responders is retried with that
// leader after this pause (its subscriptions may have been late).
constexpr int64_t kUnreachableRetryMs = 200;

Status NoLeader() { return Status::Unavailable("ErrNoLeader", "etcdserver: no leader"); }
Status Stopped() { return Status::Unavailable("ErrStopped", "etcdserver: server stopped"); }
Status RequestTimedOut() {
  return Status(Status::Code::kTimeout, "ErrTimeout", "etcdserver: request timed out");
}

WriteRequest ToWriteRequest(RequestPayload payload) {
  return std::visit(
      [](auto&& r) -> WriteRequest {
        using T = std::decay_t<decltype(r)>;
        if constexpr (std::is_constructible_v<WriteRequest, T>) {
          return WriteRequest(std::move(r));
        } else {
          return WriteRequest(CompactionRequest{});  // not a write: never called
        }
      },
      std::move(payload));
}

WriteKind WriteKindOf(const RequestPayload& p) {
  if (std::holds_alternative<PutRequest>(p)) return WriteKind::kPut;
  if (std::holds_alternative<DeleteRangeRequest>(p)) return WriteKind::kDeleteRange;
  if (std::holds_alternative<TxnRequest>(p)) return WriteKind::kTxn;
  if (std::holds_alternative<CompactionRequest>(p)) return WriteKind::kCompaction;
  if (std::holds_alternative<LeaseGrantRequest>(p)) return WriteKind::kLeaseGrant;
  return WriteKind::kLeaseRevoke;
}

Result<Response> ToResponse(Result<WriteResponse> written) {
  if (!written.ok()) return written.status();
  return std::visit(
      [](auto&& r) -> Result<Response> {
        using T = std::decay_t<decltype(r)>;
        if constexpr (std::is_constructible_v<Response, T>) {
          return Response(std::move(r));
        } else {
          return Status::Internal("an internal entry has no client response");
        }
      },
      std::move(written).value());
}

std::string DataDir(const std::string& db_path) {
  const std::string dir = std::filesystem::path(db_path).parent_path().string();
  return dir.empty() ? "." : dir;
}

std::string Hex(NodeId id) {
  char buf[17];
  snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(id));
  return buf;
}

}  // namespace

struct Member::Impl {
  // What the member thread takes from the queue.
  struct Item {
    enum class Kind {
      kRequest,
      kTask,
      kRaft,
      kSnapshotChunk,
      kSnapshotAck,
      kDisconnected,
      kReconnected
    } kind = Kind::kRequest;
    std::unique_ptr<Request> request;
    std::function<void(Engine&)> task;
    raft::Message raft_message;
    std::string bytes;
  };
  // An answer held until the turn that produced it is durable.
  struct Answer {
    std::unique_ptr<Request> request;
    Result<Response> response;
    bool is_write = false;
  };
  // A request proposed here, answered when its entry is applied.
  struct Proposal {
    std::unique_ptr<Request> request;
    int64_t deadline_ms = 0;
  };
  // Linearizable reads waiting for their read index to be applied.
  struct ReadBatch {
    uint64_t index = 0;
    std::vector<std::unique_ptr<Request>> requests;
  };
  // Read index requests in flight. One whose leader changed (or that got no
  // answer within an election timeout: the request or its answer was lost)
  // is asked again.
  struct Confirming {
    std::vector<std::unique_ptr<Request>> requests;
    NodeId lead = 0;
    int64_t asked_ms = 0;
  };
  // Leadership handed to target: answered once it leads, or on timeout.
  struct MovingLeader {
    std::unique_ptr<Request> request;
    NodeId target = 0;
  };
  // Snapshots being sent, by follower: the database is copied on a thread
  // of its own (the member keeps going), then shipped in chunks; the MsgSnap
  // itself goes last, once the follower holds the whole file.
  struct OutgoingSnapshot {
    raft::Message message;  // the MsgSnap Raft asked for
    std::string path;
    std::thread copier;
    std::atomic<bool> copied{false};
    Result<uint64_t> copy = Status::Internal("not copied");  // the copy's applied index
    std::unique_ptr<SnapshotSender> sender;
    raft::SnapshotMeta meta;
  };

  // ---- constant after Open ----
  MemberOptions options;
  Clock* clock = nullptr;
  PeerTransport* transport = nullptr;
  EventSink* events = nullptr;
  std::vector<FrontEnd*> front_ends;

  // ---- guarded by mu ----
  std::mutex mu;
  std::condition_variable wake;
  std::vector<Item> queue;
  bool stopping = false;

  std::thread thread;
  bool started = false;
  bool stopped = false;
  std::atomic<bool> leader_now{false};
  std::atomic<NodeId> lead_now{0};
  std::atomic<uint64_t> term_now{0};

  // ---- member thread only ----
  std::mt19937_64 rng;
  std::unique_ptr<Engine> engine;
  std::unique_ptr<AutoCompactor> compactor;
  bool leases_paused = false;
  int64_t paused_at_ms = 0;
  // The last time this member heard from a leader (or was one): a new
  // leader gives every lease the time since, during which no holder could
  // renew.
  int64_t leader_contact_ms = 0;
  int64_t next_lease_check_ms = 0;
  int64_t next_checkpoint_ms = 0;
  int64_t next_front_end_tick_ms = 0;
  int64_t next_progress_ms = 0;

  std::unique_ptr<raft::SqliteRaftStorage> raft_storage;
  std::unique_ptr<raft::Raft> raft;
  std::map<NodeId, std::string> member_names;
  bool leader = false;
  uint64_t raft_term = 0;
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
  std::vector<std::unique_ptr<Request>> waiting_for_leader;
  uint64_t read_seq = 0;
  std::vector<std::unique_ptr<Request>> reads_to_confirm;  // this turn's
  std::map<std::string, Confirming> reads_confirming;
  std::vector<ReadBatch> reads_confirmed;
  std::vector<MovingLeader> moving_leader;

  // Event continuity across leaders. replicated_published: the last
  // revision a leader recorded in the log as published (-1: none seen). As
  // leader: publish_cursor is the last revision handed to the sink (-1: not
  // decided until the entries of earlier terms are applied, up to
  // publish_decide_index, and the old leader's last announcement had time
  // to arrive, publish_decide_ms), recorded_published the last value it
  // proposed.
  int64_t replicated_published = -1;
  bool announcing = false;
  int64_t publish_cursor = -1;
  uint64_t publish_decide_index = 0;
  int64_t publish_decide_ms = 0;
  int64_t promoted_revision = 0;  // when neither is known: start after it
  int64_t recorded_published = -1;
  int64_t next_published_record_ms = 0;

  std::map<NodeId, std::unique_ptr<OutgoingSnapshot>> outgoing_snapshots;
  std::unique_ptr<SnapshotReceiver> snapshot_receiver;
  // The membership as of recent indexes (index -> the conf state from it
  // on): a snapshot at index i carries the one in force at i.
  std::map<uint64_t, raft::ConfState> conf_history;

  Status Init(const MemberOptions& opts);
  Status OpenEngine();
  Status OpenRaftStorage();
  Status InitRaft();
  Status CreateRaft();
  const raft::ConfState& conf_now() const { return conf_history.rbegin()->second; }
  bool is_cluster() const { return conf_now().voters.size() + conf_now().learners.size() > 1; }
  void Enqueue(Item item);
  void Loop();
  void Turn(std::vector<Item> batch);
  void Shutdown();
  void Take(Item item, std::vector<Answer>* answers);
  void Handle(std::unique_ptr<Request> request, std::vector<Answer>* answers);
  void HandleLocal(std::unique_ptr<Request> request, std::vector<Answer>* answers);
  void HandleWrite(std::unique_ptr<Request> request, std::vector<Answer>* answers);
  void HandleMembership(std::unique_ptr<Request> request, std::vector<Answer>* answers);
  void HandleMoveLeader(std::unique_ptr<Request> request, std::vector<Answer>* answers);
  void AnswerMovedLeader(std::vector<Answer>* answers);
  void Forward(std::unique_ptr<Request> request, std::vector<Answer>* answers);
  void Propose(const WriteRequest& request);
  void FlushProposals(std::vector<Answer>* answers);
  void Timers();
  void Tick();
  void ConfirmReads(std::vector<Answer>* answers);
  void ServeConfirmedReads(std::vector<Answer>* answers);
  void RetryWaiting(std::vector<Answer>* answers);
  void ProcessReady(std::vector<Answer>* answers);
  void Send(const raft::Message& m);
  void ApplyEntry(const raft::Entry& entry, std::vector<Answer>* answers);
  void ApplyConfChange(const raft::Entry& entry, std::vector<Answer>* answers);
  void BecameLeader(bool now_leader);
  void MaybeCompactLog();
  void StartSnapshot(raft::Message m);
  void PumpSnapshots();
  void AbandonSnapshots();
  void ReceiveSnapshotChunk(const std::string& bytes);
  void ReceiveSnapshotAck(const std::string& bytes);
  Status InstallSnapshot(const raft::SnapshotMeta& meta);
  void PublishEvents();
  void RecordPublished(int64_t revision);
  std::vector<MemberInfo> Members() const;
  ResponseHeader Now() const;
  void Answer_(std::vector<Answer>* answers, std::unique_ptr<Request> request,
               Result<Response> response, bool is_write = false);
  std::optional<Result<Response>> Remembered(const Request& request);
  void Deliver(std::vector<Answer>* answers, const Status& committed);
};

// ---------------------------------------------------------------------------
// Opening

Status Member::Impl::Init(const MemberOptions& opts) {
  options = opts;
  options.engine.retain_committed_events = true;
  clock = options.engine.clock;
  if (clock == nullptr) return Status::InvalidArgument("ErrConfig", "member needs a clock");
  if (options.member_id == 0) return Status::InvalidArgument("ErrConfig", "member needs an ID");
  rng.seed(options.engine.seed ^ 0x6e617463ull);
  if (options.initial_cluster.empty() && options.new_cluster) {
    options.initial_cluster = {options.name};
  }
  NATCD_RETURN_IF_ERROR(OpenEngine());
  NATCD_RETURN_IF_ERROR(InitRaft());
  compactor = std::make_unique<AutoCompactor>(
      options.auto_compaction_mode, options.auto_compaction_mode == AutoCompactor::Mode::kPeriodic
                                        ? options.auto_compaction_retention * 1000
                                        : options.auto_compaction_retention);
  return Status::OK();
}

Status Member::Impl::OpenEngine() {
  Result<std::unique_ptr<Engine>> opened = Engine::Open(options.engine);
  if (!opened.ok()) return opened.status();
  engine = std::move(opened).value();
  // Leases expire only on the leader: none until this member leads.
  engine->DemoteLeases();
  return Status::OK();
}

// The Raft log lives in the engine's database (open the engine first).
Status Member::Impl::OpenRaftStorage() {
  Result<std::unique_ptr<raft::SqliteRaftStorage>> storage =
      engine->OpenRaftLog();
  if (!storage.ok()) return storage.status();
  raft_storage = std::move(storage).value();
  // Names recorded by this database (founders, members added since; a
  // snapshot from the leader brings the leader's).
  for (const auto& [id, name] : raft_storage->member_names()) member_names[id] = name;
  return Status::OK();
}

Status Member::Impl::InitRaft() {
  for (const std::string& name : options.initial_cluster) {
    member_names[MemberIdOf(name)] = name;
  }
  NATCD_RETURN_IF_ERROR(OpenRaftStorage());
  const bool founding = options.new_cluster && member_names.count(options.member_id) > 0;
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
  if (cs.voters.size() == 1 && cs.voters[0] == options.member_id) (void)raft->Campaign();
  return Status::OK();
}

// Raft over this member's storage as it is now (at start, and after a
// snapshot from the leader replaced the database).
Status Member::Impl::CreateRaft() {
  raft::Config cfg;
  cfg.id = options.member_id;
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
  raft_term = raft->term();
  term_now.store(raft_term);
  leader_contact_ms = clock->MonotonicMs();
  return Status::OK();
}

// ---------------------------------------------------------------------------
// Requests

ResponseHeader Member::Impl::Now() const {
  ResponseHeader now;
  now.revision = engine->revision();
  return now;
}

void Member::Impl::Answer_(std::vector<Answer>* answers, std::unique_ptr<Request> request,
                           Result<Response> response, bool is_write) {
  answers->push_back(Answer{std::move(request), std::move(response), is_write});
}

// The answer remembered for a request id (a retry), or nullopt.
std::optional<Result<Response>> Member::Impl::Remembered(const Request& request) {
  if (request.request_id.empty()) return std::nullopt;
  const std::string* outcome = engine->FindRequest(request.request_id);
  if (outcome == nullptr) return std::nullopt;
  return ToResponse(DecodeOutcome(*outcome, WriteKindOf(request.payload)));
}

void Member::Impl::Handle(std::unique_ptr<Request> request, std::vector<Answer>* answers) {
  const RequestPayload& payload = request->payload;
  if (request->unreachable_leader != 0 && !leader) {
    waiting_for_leader.push_back(std::move(request));
    return;
  }
  if (LeaderOnly(payload) && !leader) {
    Forward(std::move(request), answers);
    return;
  }
  if (IsWrite(payload)) {
    HandleWrite(std::move(request), answers);
    return;
  }
  if (IsMembershipChange(payload)) {
    HandleMembership(std::move(request), answers);
    return;
  }
  if (std::holds_alternative<MoveLeaderRequest>(payload)) {
    HandleMoveLeader(std::move(request), answers);
    return;
  }
  if (auto* range = std::get_if<RangeRequest>(&payload); range && !range->serializable) {
    // Linearizable: served once this member has applied everything the
    // leader had committed when the read arrived (ReadIndex).
    reads_to_confirm.push_back(std::move(request));
    return;
  }
  HandleLocal(std::move(request), answers);
}

void Member::Impl::HandleLocal(std::unique_ptr<Request> request, std::vector<Answer>* answers) {
  Result<Response> response = std::visit(
      [&](auto& r) -> Result<Response> {
        using T = std::decay_t<decltype(r)>;
        if constexpr (std::is_same_v<T, RangeRequest>) {
          Result<RangeResponse> range = engine->Range(r);
          if (!range.ok()) return range.status();
          return Response(std::move(range).value());
        } else if constexpr (std::is_same_v<T, LeaseKeepAliveRequest>) {
          return Response(engine->LeaseKeepAlive(r));
        } else if constexpr (std::is_same_v<T, LeaseTimeToLiveRequest>) {
          return Response(engine->LeaseTimeToLive(r));
        } else if constexpr (std::is_same_v<T, LeaseLeasesRequest>) {
          return Response(engine->LeaseLeases());
        } else if constexpr (std::is_same_v<T, StatusRequest>) {
          StatusResponse s;
          s.header = Now();
          Result<int64_t> size = engine->DatabaseSizeBytes();
          s.db_size = size.ok() ? *size : 0;
          s.db_size_in_use = s.db_size;
          s.leader = raft->lead();
          s.raft_index = raft->last_index();
          s.raft_applied_index = applied_index;
          s.raft_term = raft->term();
          const raft::ConfState cs = raft->conf_state();
          s.is_learner = std::count(cs.learners.begin(), cs.learners.end(), options.member_id) > 0;
          return Response(std::move(s));
        } else if constexpr (std::is_same_v<T, MemberListRequest>) {
          return Response(MemberListResponse{Now(), Members()});
        } else {
          return Status::Internal("request not served locally");
        }
      },
      request->payload);
  Answer_(answers, std::move(request), std::move(response));
}

// On the leader: the write becomes a log entry; the answer waits for it to
// be applied (ApplyEntry).
void Member::Impl::HandleWrite(std::unique_ptr<Request> request, std::vector<Answer>* answers) {
  // A retry of a write already applied: answer what the first attempt got.
  if (std::optional<Result<Response>> remembered = Remembered(*request)) {
    Answer_(answers, std::move(request), std::move(*remembered), true);
    return;
  }
  LogCommand command;
  command.request = ToWriteRequest(request->payload);
  engine->Prepare(&command.request);
  command.origin_member = options.member_id;
  command.origin_seq = ++proposal_seq;
  command.request_id = request->request_id;
  command.request_expires_ms = clock->RealtimeMs() + options.request_id_window_ms;
  const uint64_t seq = command.origin_seq;
  turn_entries.push_back(EncodeLogCommand(command));
  turn_commands.push_back(std::move(command));
  turn_seqs.push_back(seq);
  proposals.emplace(
      seq, Proposal{std::move(request), clock->MonotonicMs() + options.request_timeout_ms});
}

// A write the leader proposes itself (lease expiry, checkpoints,
// compaction): nobody waits for its answer.
void Member::Impl::Propose(const WriteRequest& request) {
  LogCommand command;
  command.request = request;
  turn_entries.push_back(EncodeLogCommand(command));
  turn_commands.push_back(std::move(command));
}

// Everything proposed this turn goes to Raft as one batch: one append
// message per follower, not one per write.
void Member::Impl::FlushProposals(std::vector<Answer>* answers) {
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
      Answer_(answers, std::move(p->second.request),
              s.name() == "ErrProposalDropped" ? NoLeader() : s, true);
      proposals.erase(p);
    }
  }
  turn_seqs.clear();
}

void Member::Impl::Forward(std::unique_ptr<Request> request, std::vector<Answer>* answers) {
  const NodeId lead = raft->lead();
  if (lead == raft::kNoNode || transport == nullptr) {
    // Held until a leader is known or the request times out.
    waiting_for_leader.push_back(std::move(request));
    return;
  }
  if (request->hops + 1 >= kForwardHopsMax) {
    Answer_(answers, std::move(request), NoLeader());
    return;
  }
  transport->Forward(lead, std::move(request));
}

std::vector<MemberInfo> Member::Impl::Members() const {
  std::vector<MemberInfo> out;
  const raft::ConfState cs = raft->conf_state();
  auto add = [&](NodeId id, bool learner) {
    auto it = member_names.find(id);
    out.push_back(MemberInfo{id, it != member_names.end() ? it->second : Hex(id), learner});
  };
  for (NodeId id : cs.voters) add(id, false);
  for (NodeId id : cs.learners) add(id, true);
  return out;
}

void Member::Impl::HandleMembership(std::unique_ptr<Request> request,
                                    std::vector<Answer>* answers) {
  raft::ConfChange cc;
  std::string name;
  const raft::ConfState cs = raft->conf_state();
  auto is_in = [](const std::vector<NodeId>& ids, NodeId id) {
    return std::count(ids.begin(), ids.end(), id) > 0;
  };
  auto refuse = [&](Status s) { Answer_(answers, std::move(request), std::move(s)); };
  if (auto* add = std::get_if<MemberAddRequest>(&request->payload)) {
    name = add->name;
    if (name.empty()) {
      return refuse(Status::InvalidArgument("ErrInvalidArgument", "member name required"));
    }
    cc.node_id = MemberIdOf(name);
    if (is_in(cs.voters, cc.node_id) || is_in(cs.learners, cc.node_id)) {
      return refuse(
          Status::InvalidArgument("ErrMemberExist", "etcdserver: member ID already exist"));
    }
    cc.type =
        add->is_learner ? raft::ConfChangeType::kAddLearnerNode : raft::ConfChangeType::kAddNode;
  } else if (auto* remove = std::get_if<MemberRemoveRequest>(&request->payload)) {
    cc.node_id = remove->id;
    if (!is_in(cs.voters, cc.node_id) && !is_in(cs.learners, cc.node_id)) {
      return refuse(Status::NotFound("ErrMemberNotFound", "etcdserver: member not found"));
    }
    cc.type = raft::ConfChangeType::kRemoveNode;
  } else {
    cc.node_id = std::get<MemberPromoteRequest>(request->payload).id;
    if (!is_in(cs.learners, cc.node_id)) {
      return refuse(Status::InvalidArgument("ErrMemberNotLearner",
                                            "etcdserver: can only promote a learner member"));
    }
    // etcd's rule: only a learner that has caught up may vote. (A learner
    // that never answered has match 0: not in sync, even while the log is
    // shorter than 100 entries.)
    const raft::Progress* pr = raft->progress(cc.node_id);
    if (pr == nullptr || pr->match == 0 || pr->match + 100 < raft->committed()) {
      return refuse(Status::InvalidArgument(
          "ErrLearnerNotReady",
          "etcdserver: can only promote a learner member which is in sync with leader"));
    }
    cc.type = raft::ConfChangeType::kAddNode;
  }
  const uint64_t seq = ++proposal_seq;
  cc.context = EncodeConfChangeContext(ConfChangeContext{options.member_id, seq, name});
  if (!raft->ProposeConfChange(cc).ok()) {
    return refuse(Status::Unavailable("ErrProposalDropped",
                                      "etcdserver: another membership change is in progress"));
  }
  proposals.emplace(
      seq, Proposal{std::move(request), clock->MonotonicMs() + options.request_timeout_ms});
}

void Member::Impl::HandleMoveLeader(std::unique_ptr<Request> request,
                                    std::vector<Answer>* answers) {
  const NodeId target = std::get<MoveLeaderRequest>(request->payload).target;
  const raft::ConfState cs = raft->conf_state();
  if (std::count(cs.voters.begin(), cs.voters.end(), target) == 0) {
    // etcd's answer for an unknown member and for a learner alike.
    Answer_(answers, std::move(request),
            Status::InvalidArgument("ErrBadLeaderTransferee", "etcdserver: bad leader transferee"));
    return;
  }
  if (target != options.member_id) raft->TransferLeader(target);
  moving_leader.push_back(MovingLeader{std::move(request), target});
  AnswerMovedLeader(answers);
}

void Member::Impl::AnswerMovedLeader(std::vector<Answer>* answers) {
  const int64_t now = clock->MonotonicMs();
  for (auto it = moving_leader.begin(); it != moving_leader.end();) {
    if (raft->lead() == it->target) {
      Answer_(answers, std::move(it->request), Response(MoveLeaderResponse{Now()}));
    } else if (now - it->request->received_ms > options.request_timeout_ms) {
      Answer_(answers, std::move(it->request),
              Status(Status::Code::kTimeout, "ErrTimeoutLeaderTransfer",
                     "etcdserver: request timed out, leader transfer took too long"));
    } else {
      ++it;
      continue;
    }
    it = moving_leader.erase(it);
  }
}

// ---------------------------------------------------------------------------
// Timers, reads, waiting requests

void Member::Impl::Timers() {
  const int64_t now = clock->MonotonicMs();
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
  if (leader && publish_cursor >= 0 && events != nullptr && now >= next_published_record_ms) {
    next_published_record_ms = now + options.heartbeat_interval_ms;
    RecordPublished(events->published_revision());
  }
  if (leader) {
    if (std::optional<int64_t> due =
            compactor->Due(now, engine->revision(), engine->CompactRevision())) {
      Propose(CompactionRequest{*due, false});
    }
  }
  if (now >= next_front_end_tick_ms) {
    next_front_end_tick_ms = now + 100;
    for (FrontEnd* f : front_ends) f->Tick();
  }
  if (now >= next_progress_ms) {
    if (next_progress_ms != 0) engine->watches().NotifyProgressAll();
    next_progress_ms = now + options.watch_progress_interval_ms;
  }
}

void Member::Impl::Tick() {
  const int64_t now = clock->MonotonicMs();
  if (next_tick_ms == 0) next_tick_ms = now + options.heartbeat_interval_ms;
  // A turn that took longer than a tick catches up (bounded: a long stall
  // must not become a burst of elections).
  for (int i = 0; i < 3 && now >= next_tick_ms; i++) {
    raft->Tick();
    next_tick_ms += options.heartbeat_interval_ms;
  }
  if (now >= next_tick_ms) next_tick_ms = now + options.heartbeat_interval_ms;
}

void Member::Impl::ConfirmReads(std::vector<Answer>* answers) {
  if (reads_to_confirm.empty()) return;
  std::string ctx = std::to_string(options.member_id) + "/" + std::to_string(++read_seq);
  Status s = raft->ReadIndex(ctx);
  if (!s.ok()) {
    for (auto& request : reads_to_confirm) {
      if (raft->lead() == raft::kNoNode) {
        waiting_for_leader.push_back(std::move(request));
      } else {
        Answer_(answers, std::move(request), s);
      }
    }
    reads_to_confirm.clear();
    return;
  }
  reads_confirming[ctx] =
      Confirming{std::move(reads_to_confirm), raft->lead(), clock->MonotonicMs()};
  reads_to_confirm.clear();
}

void Member::Impl::ServeConfirmedReads(std::vector<Answer>* answers) {
  for (auto it = reads_confirmed.begin(); it != reads_confirmed.end();) {
    if (it->index > applied_index) {
      ++it;
      continue;
    }
    for (auto& request : it->requests) HandleLocal(std::move(request), answers);
    it = reads_confirmed.erase(it);
  }
}

void Member::Impl::RetryWaiting(std::vector<Answer>* answers) {
  const int64_t now = clock->MonotonicMs();
  if (!waiting_for_leader.empty() && raft->lead() != raft::kNoNode) {
    std::vector<std::unique_ptr<Request>> waiting = std::move(waiting_for_leader);
    waiting_for_leader.clear();
    for (auto& request : waiting) {
      // Not back to a leader that had no responders, unless it is still
      // the leader after a pause (its subscriptions may have been late).
      if (request->unreachable_leader == raft->lead() && now < request->retry_at_ms) {
        waiting_for_leader.push_back(std::move(request));
        continue;
      }
      request->unreachable_leader = 0;
      Handle(std::move(request), answers);
    }
  }
  auto expired = [&](const Request& r) { return now - r.received_ms > options.request_timeout_ms; };
  for (auto it = waiting_for_leader.begin(); it != waiting_for_leader.end();) {
    if (expired(**it)) {
      Answer_(answers, std::move(*it), NoLeader());
      it = waiting_for_leader.erase(it);
    } else {
      ++it;
    }
  }
  for (auto it = reads_confirming.begin(); it != reads_confirming.end();) {
    Confirming& c = it->second;
    if (c.lead == raft->lead() && now - c.asked_ms < options.election_timeout_ms) {
      ++it;
      continue;
    }
    for (auto& request : c.requests) {
      if (expired(*request)) {
        Answer_(answers, std::move(request), RequestTimedOut());
      } else {
        reads_to_confirm.push_back(std::move(request));
      }
    }
    it = reads_confirming.erase(it);
  }
  for (auto p = proposals.begin(); p != proposals.end();) {
    if (now >= p->second.deadline_ms) {
      Answer_(answers, std::move(p->second.request), RequestTimedOut(), true);
      p = proposals.erase(p);
    } else {
      ++p;
    }
  }
}

// ---------------------------------------------------------------------------
// Apply

void Member::Impl::ApplyConfChange(const raft::Entry& entry, std::vector<Answer>* answers) {
  raft::ConfChange cc;
  if (!raft::DecodeConfChange(entry.data, &cc)) return;
  conf_history[entry.index] = raft->ApplyConfChange(cc);
  while (conf_history.size() > 16) conf_history.erase(conf_history.begin());
  const ConfChangeContext context = DecodeConfChangeContext(cc.context);
  if (!context.member_name.empty()) {
    member_names[cc.node_id] = context.member_name;
    // Recorded with the applied entry (one transaction), so the name
    // outlives the log entry that brought it.
    Status recorded = raft_storage->SetMemberName(cc.node_id, context.member_name);
    if (!recorded.ok()) {
      fprintf(stderr, "natcd %s: recording member %s: %s\n", options.name.c_str(),
              context.member_name.c_str(), recorded.ToString().c_str());
    }
  }
  if (context.origin_member != options.member_id) return;
  auto p = proposals.find(context.origin_seq);
  if (p == proposals.end()) return;
  std::unique_ptr<Request> request = std::move(p->second.request);
  proposals.erase(p);
  std::vector<MemberInfo> members = Members();
  if (std::holds_alternative<MemberAddRequest>(request->payload)) {
    MemberAddResponse r{Now(), MemberInfo{cc.node_id, context.member_name, false}, members};
    for (const MemberInfo& m : members) {
      if (m.id == cc.node_id) r.member = m;
    }
    Answer_(answers, std::move(request), Response(std::move(r)));
  } else {
    Answer_(answers, std::move(request), Response(MembershipResponse{Now(), std::move(members)}));
  }
}

void Member::Impl::ApplyEntry(const raft::Entry& entry, std::vector<Answer>* answers) {
  if (entry.type == raft::EntryType::kConfChange) {
    ApplyConfChange(entry, answers);
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
  std::unique_ptr<Request> request;
  if (command.origin_member == options.member_id) {
    auto p = proposals.find(command.origin_seq);
    if (p != proposals.end()) {
      request = std::move(p->second.request);
      proposals.erase(p);
    }
  }
  // The same request id proposed twice (a retry raced the first attempt):
  // applied once, on every member alike.
  if (!command.request_id.empty() && engine->FindRequest(command.request_id) != nullptr) {
    if (request != nullptr) {
      std::optional<Result<Response>> remembered = Remembered(*request);
      Answer_(answers, std::move(request), std::move(*remembered), true);
    }
    return;
  }
  Result<WriteResponse> response = engine->Apply(command.request, entry.index);
  // Remember the outcome of what was applied (a deterministic error
  // included), never that of a request the engine could not process.
  Status remembered;
  if (!command.request_id.empty() && engine->health().ok()) {
    remembered = engine->RememberRequest(command.request_id, command.request_expires_ms,
                                         EncodeOutcome(response));
  }
  // The leader's own entries (expiry, checkpoints, compaction) have no
  // client: nothing to answer.
  if (request == nullptr) return;
  Answer_(answers, std::move(request),
          remembered.ok() ? ToResponse(std::move(response)) : remembered, true);
}

void Member::Impl::BecameLeader(bool now_leader) {
  if (now_leader == leader) return;
  leader = now_leader;
  leader_now.store(leader);
  const int64_t now = clock->MonotonicMs();
  if (leader) {
    // Every lease gets its replicated deadline, plus the time no leader was
    // reachable, plus an election timeout: its holder may have been
    // renewing with the old leader until just now (what that leader did
    // not checkpoint yet is at most half a TTL: lease_manager.h).
    const raft::ConfState cs = raft->conf_state();
    const int64_t grace = cs.voters.size() > 1 ? options.election_timeout_ms : 0;
    engine->PromoteLeases(grace + std::max<int64_t>(0, now - leader_contact_ms));
    // Events: continue from the last revision recorded as published, known
    // once every entry of the earlier terms is applied.
    publish_cursor = -1;
    publish_decide_index = raft->last_index();
    promoted_revision = engine->CurrentRevision();
    publish_decide_ms = cs.voters.size() > 1 ? now + options.heartbeat_interval_ms : 0;
    recorded_published = -1;
    const int64_t announced = events ? events->announced_revision() : -1;
    // Nothing known yet (a new cluster): record where this leader starts at
    // once, so that a successor knows it even if this leader is gone before
    // it has decided and published anything.
    if (std::max(replicated_published, announced) < 0) {
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
  for (FrontEnd* f : front_ends) f->LeadershipChanged(leader);
  leader_contact_ms = now;
}

void Member::Impl::MaybeCompactLog() {
  if (applied_index < snapshot_index + options.snapshot_entries) return;
  // The state machine's snapshot is the database itself: only record how
  // far it is, and keep some entries for members a little behind.
  raft::SnapshotMeta meta;
  meta.index = applied_index;
  meta.conf_state = raft->conf_state();
  const uint64_t compact_to = applied_index > options.snapshot_catchup_entries
                                  ? applied_index - options.snapshot_catchup_entries
                                  : 0;
  if (raft_storage->CreateSnapshot(meta, compact_to).ok()) snapshot_index = applied_index;
}

void Member::Impl::Send(const raft::Message& m) {
  if (transport == nullptr || !transport->SendRaft(m)) raft->ReportUnreachable(m.to);
}

// The one Ready loop: persist, send (a leader's appends before its own
// fsync), apply, commit, Advance.
void Member::Impl::ProcessReady(std::vector<Answer>* answers) {
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
          Send(m);
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
      (void)engine->SkipSyncOfNextCommit();
    }
    Status s;
    if (!rd.snapshot.empty() && rd.snapshot.meta.index > 1) {
      // The leader's database arrived whole (see Take): it becomes this
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
    // stored hard state alone: a WAL page less in the commit of every write.
    if (s.ok() && ((rd.hard_state && (rd.hard_state->term != synced_hard_state.term ||
                                      rd.hard_state->vote != synced_hard_state.vote)) ||
                   applies_conf_change)) {
      s = raft_storage->SetHardState(raft->hard_state());
    }
    if (s.ok()) {
      for (const raft::Entry& e : rd.committed_entries) {
        ApplyEntry(e, answers);
        applied_index = e.index;
      }
    }
    // One fsync: the log entries, the hard state and the state they
    // produced are durable before any message or answer depends on them.
    if (s.ok()) s = engine->Commit();
    if (s.ok()) s = engine->EndSkipSync();
    if (s.ok() && rd.hard_state) synced_hard_state = *rd.hard_state;
    if (!s.ok()) {
      // The engine refuses everything from now on (health() says why);
      // members elect another leader.
      for (Answer& a : *answers) {
        if (a.is_write && a.response.ok()) a.response = s;
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
      Send(m);
    }
    for (raft::ReadState& rs : rd.read_states) {
      auto it = reads_confirming.find(rs.request_ctx);
      if (it == reads_confirming.end()) continue;
      reads_confirmed.push_back(ReadBatch{rs.index, std::move(it->second.requests)});
      reads_confirming.erase(it);
    }
    if (rd.soft_state) {
      fprintf(stderr, "natcd %s: %s, term %llu, leader %s\n", options.name.c_str(),
              raft::RoleName(rd.soft_state->role), static_cast<unsigned long long>(raft->term()),
              rd.soft_state->lead ? Hex(rd.soft_state->lead).c_str() : "none");
      lead_now.store(rd.soft_state->lead);
      BecameLeader(rd.soft_state->role == raft::Role::kLeader);
    }
    raft->Advance(rd);
  }
  raft_term = raft->term();
  term_now.store(raft_term);
  ServeConfirmedReads(answers);
  AnswerMovedLeader(answers);
  MaybeCompactLog();
}

// ---------------------------------------------------------------------------
// Snapshot shipping (a member behind the leader's kept log)

void Member::Impl::StartSnapshot(raft::Message m) {
  const NodeId to = m.to;
  if (outgoing_snapshots.count(to) != 0) return;  // one at a time
  auto out = std::make_unique<OutgoingSnapshot>();
  out->message = std::move(m);
  out->path = DataDir(options.engine.db_path) + "/snapshot-for-" + Hex(to) + ".db";
  OutgoingSnapshot* raw = out.get();
  const std::string db_path = options.engine.db_path;
  auto copy = [raw, db_path] {
    raw->copy = WriteDatabaseSnapshot(db_path, raw->path);
    raw->copied.store(true);
  };
  if (options.copy_snapshots_on_member_thread) {
    copy();
  } else {
    out->copier = std::thread(copy);
  }
  fprintf(stderr, "natcd %s: sending a snapshot to %s\n", options.name.c_str(), Hex(to).c_str());
  outgoing_snapshots.emplace(to, std::move(out));
}

void Member::Impl::AbandonSnapshots() {
  for (auto& [to, out] : outgoing_snapshots) {
    if (out->copier.joinable()) out->copier.join();
    if (raft && leader) raft->ReportSnapshot(to, /*failed=*/true);
    (void)RemoveFileIfExists(out->path);
  }
  outgoing_snapshots.clear();
}

void Member::Impl::PumpSnapshots() {
  const int64_t now = clock->MonotonicMs();
  for (auto it = outgoing_snapshots.begin(); it != outgoing_snapshots.end();) {
    const NodeId to = it->first;
    OutgoingSnapshot& out = *it->second;
    if (!out.copied.load()) {
      ++it;
      continue;
    }
    Status failed;
    if (out.sender == nullptr) {
      if (out.copier.joinable()) out.copier.join();
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
              out.path, SnapshotId{raft->term(), out.meta.index, options.member_id}, {}, now);
          if (sender.ok()) {
            out.sender = std::move(sender).value();
          } else {
            failed = sender.status();
          }
        }
      }
    }
    while (failed.ok() && out.sender && !out.sender->done() && !out.sender->failed()) {
      Result<std::optional<std::string>> chunk = out.sender->Next(now);
      if (!chunk.ok() || !chunk->has_value()) break;
      if (transport != nullptr) transport->SendSnapshotChunk(to, **chunk);
    }
    if (failed.ok() && out.sender && out.sender->failed()) failed = out.sender->failure();
    if (failed.ok() && !(out.sender && out.sender->done())) {
      ++it;
      continue;
    }
    if (failed.ok()) {
      // The follower holds the database: now the MsgSnap that installs it.
      out.message.snapshot.meta = out.meta;
      Send(out.message);
      raft->ReportSnapshot(to, /*failed=*/false);
      fprintf(stderr, "natcd %s: snapshot at index %llu (%llu bytes) sent to %s\n",
              options.name.c_str(), static_cast<unsigned long long>(out.meta.index),
              static_cast<unsigned long long>(out.sender->total_bytes()), Hex(to).c_str());
    } else {
      raft->ReportSnapshot(to, /*failed=*/true);
      fprintf(stderr, "natcd %s: snapshot to %s failed: %s\n", options.name.c_str(),
              Hex(to).c_str(), failed.ToString().c_str());
    }
    (void)RemoveFileIfExists(out.path);
    it = outgoing_snapshots.erase(it);
  }
}

void Member::Impl::ReceiveSnapshotChunk(const std::string& bytes) {
  Result<SnapshotChunk> chunk = DecodeSnapshotChunk(bytes);
  if (!chunk.ok()) return;  // damaged: the leader sends it again
  if (snapshot_receiver == nullptr) {
    SnapshotReceiverOptions receiver_options;
    receiver_options.path = DataDir(options.engine.db_path) + "/snapshot-received.db";
    snapshot_receiver = std::make_unique<SnapshotReceiver>(receiver_options);
  }
  SnapshotAck ack;
  (void)snapshot_receiver->OnChunk(*chunk, &ack);
  if (transport != nullptr) transport->SendSnapshotAck(chunk->id.leader, EncodeSnapshotAck(ack));
}

void Member::Impl::ReceiveSnapshotAck(const std::string& bytes) {
  Result<SnapshotAck> ack = DecodeSnapshotAck(bytes);
  if (!ack.ok()) return;
  for (auto& [to, out] : outgoing_snapshots) {
    if (out->sender && out->sender->id() == ack->id) {
      (void)out->sender->OnAck(*ack, clock->MonotonicMs());
    }
  }
  PumpSnapshots();
}

Status Member::Impl::InstallSnapshot(const raft::SnapshotMeta& meta) {
  const raft::HardState hard_state = raft->hard_state();
  // Everything built on the old database goes: watches end with a reason
  // (clients re-create them from their last revision + 1).
  engine->watches().CancelAll("member restored from the leader's snapshot");
  for (FrontEnd* f : front_ends) f->Detach();
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
  for (FrontEnd* f : front_ends) f->Attach(engine.get());
  leader = false;
  leader_now.store(false);
  replicated_published = -1;
  fprintf(stderr, "natcd %s: installed the leader's snapshot at index %llu (revision %lld)\n",
          options.name.c_str(), static_cast<unsigned long long>(meta.index),
          static_cast<long long>(engine->revision()));
  return s;
}

// ---------------------------------------------------------------------------
// Events

// Only the leader publishes events, each revision once, in order: what this
// turn committed, or, when the cursor is behind it (a new leader whose
// predecessor had not published everything it committed), the missing
// revisions read back from the store first.
void Member::Impl::PublishEvents() {
  std::vector<std::shared_ptr<const std::vector<Event>>> committed = engine->TakeCommittedEvents();
  if (events == nullptr) return;
  const bool cluster = is_cluster();
  if (cluster != announcing) {
    announcing = cluster;
    events->SetAnnouncing(cluster);
  }
  if (!leader) return;
  if (publish_cursor < 0) {
    const int64_t now = clock->MonotonicMs();
    if (now < publish_decide_ms) return;
    // (Never held for more than an election timeout: deciding with what is
    // known then costs at most repeats, and publishing must go on.)
    if (applied_index < publish_decide_index &&
        now < publish_decide_ms + options.election_timeout_ms) {
      return;
    }
    const int64_t known = std::max(replicated_published, events->announced_revision());
    publish_cursor = known >= 0 ? known : promoted_revision;
    // Recorded at once: a leader after this one then knows where to start
    // even if this one publishes nothing.
    RecordPublished(publish_cursor);
  }
  for (auto& batch : committed) {
    if (batch->empty() || batch->back().kv.mod_revision <= publish_cursor) continue;
    if (batch->front().kv.mod_revision != publish_cursor + 1) break;  // a gap: read back
    publish_cursor = batch->back().kv.mod_revision;
    events->Publish(std::move(batch));
  }
  // Behind: read the missing revisions back, a bounded amount per turn.
  const int64_t target = engine->CurrentRevision();
  if (publish_cursor >= target) return;
  auto missing = std::make_shared<std::vector<Event>>();
  Status s = engine->ReadEvents(std::string(1, '\0'), std::string(1, '\0'), publish_cursor + 1,
                                target, 10'000, false, missing.get());
  if (s.code() == Status::Code::kCompacted) {
    fprintf(stderr, "natcd %s: events %lld..%lld were compacted before being published\n",
            options.name.c_str(), static_cast<long long>(publish_cursor + 1),
            static_cast<long long>(engine->CompactRevision() - 1));
    publish_cursor = engine->CompactRevision() - 1;
    return;
  }
  if (!s.ok()) return;  // the engine failed: health() says why
  publish_cursor = missing->empty() ? target : missing->back().kv.mod_revision;
  events->Publish(std::move(missing));
}

// In a cluster the leader records in the log how far events reached the
// network (an entry at most every heartbeat interval, only when it moved:
// under load it shares the group commit of the writes).
void Member::Impl::RecordPublished(int64_t revision) {
  if (!is_cluster() || revision <= recorded_published) return;
  LogCommand command;
  command.events_published = revision;
  turn_entries.push_back(EncodeLogCommand(command));
  turn_commands.push_back(std::move(command));
  recorded_published = revision;  // unless the batch is dropped (FlushProposals)
}

// ---------------------------------------------------------------------------
// The loop

void Member::Impl::Enqueue(Item item) {
  {
    std::lock_guard<std::mutex> lock(mu);
    queue.push_back(std::move(item));
  }
  wake.notify_one();
}

void Member::Impl::Take(Item item, std::vector<Answer>* answers) {
  switch (item.kind) {
    case Item::Kind::kRequest:
      Handle(std::move(item.request), answers);
      return;
    case Item::Kind::kTask:
      item.task(*engine);
      return;
    case Item::Kind::kSnapshotChunk:
      ReceiveSnapshotChunk(item.bytes);
      return;
    case Item::Kind::kSnapshotAck:
      ReceiveSnapshotAck(item.bytes);
      return;
    case Item::Kind::kRaft: {
      if (item.raft_message.type == raft::MessageType::kSnap) {
        const raft::SnapshotMeta& meta = item.raft_message.snapshot.meta;
        // The first snapshot (the empty state) only for a member that holds
        // nothing yet; any other only once its database arrived whole.
        const bool bootstrap = meta.index == 1 && engine->revision() == 0;
        const bool shipped = meta.index > 1 && snapshot_receiver != nullptr &&
                             snapshot_receiver->done() &&
                             snapshot_receiver->current_id().index == meta.index &&
                             snapshot_receiver->current_id().leader == item.raft_message.from;
        if (!bootstrap && !shipped) return;
      }
      const NodeId from = item.raft_message.from;
      (void)raft->Step(std::move(item.raft_message));
      if (from == raft->lead()) leader_contact_ms = clock->MonotonicMs();
      return;
    }
    case Item::Kind::kDisconnected:
      if (!leases_paused) paused_at_ms = clock->MonotonicMs();
      engine->DemoteLeases();
      leases_paused = true;
      return;
    case Item::Kind::kReconnected:
      // Every lease gets the time this member was cut off back: its holder
      // could not renew it meanwhile.
      if (leader && leases_paused) engine->PromoteLeases(clock->MonotonicMs() - paused_at_ms);
      leases_paused = false;
      return;
  }
}

void Member::Impl::Deliver(std::vector<Answer>* answers, const Status& committed) {
  ResponseContext context;
  context.raft_term = raft_term;
  context.busy_turn = answers->size() >= kBusyTurnAnswersMin;
  for (Answer& a : *answers) {
    if (!committed.ok() && a.is_write && a.response.ok()) a.response = committed;
    a.request->responder->Respond(std::move(a.response), context);
  }
  answers->clear();
}

void Member::Impl::Turn(std::vector<Item> batch) {
  std::vector<Answer> answers;
  for (Item& item : batch) Take(std::move(item), &answers);
  Tick();
  Timers();
  RetryWaiting(&answers);
  ConfirmReads(&answers);
  FlushProposals(&answers);
  ProcessReady(&answers);
  PumpSnapshots();
  // Idle turns still remove compacted rows and expired request ids.
  Status committed = engine->Commit();
  Deliver(&answers, committed);
  PublishEvents();
  engine->watches().SyncUnsynced(kWatchersSyncedPerTurn);
  for (FrontEnd* f : front_ends) f->AfterTurn();
}

void Member::Impl::Loop() {
  for (;;) {
    std::vector<Item> batch;
    const bool more_sync = engine->watches().unsynced_size() > 0;
    {
      std::unique_lock<std::mutex> lock(mu);
      if (queue.empty() && !stopping) {
        wake.wait_for(lock, std::chrono::milliseconds(more_sync ? 0 : kIdleWaitMs));
      }
      batch.swap(queue);
      if (stopping && batch.empty()) break;
    }
    Turn(std::move(batch));
  }
  Shutdown();
}

// Every watch ends with a reason the client can act on, and every request
// still held gets an answer.
void Member::Impl::Shutdown() {
  AbandonSnapshots();
  snapshot_receiver.reset();
  std::vector<Answer> last;
  for (auto& [seq, proposal] : proposals) Answer_(&last, std::move(proposal.request), Stopped());
  proposals.clear();
  auto stop_all = [&](std::vector<std::unique_ptr<Request>>& requests) {
    for (auto& request : requests) Answer_(&last, std::move(request), Stopped());
    requests.clear();
  };
  stop_all(waiting_for_leader);
  for (auto& moving : moving_leader) Answer_(&last, std::move(moving.request), Stopped());
  moving_leader.clear();
  stop_all(reads_to_confirm);
  for (auto& [ctx, confirming] : reads_confirming) stop_all(confirming.requests);
  for (auto& batch : reads_confirmed) stop_all(batch.requests);
  {
    // What arrived after the loop's last turn.
    std::vector<Item> late;
    {
      std::lock_guard<std::mutex> lock(mu);
      late.swap(queue);
    }
    for (Item& item : late) {
      if (item.kind == Item::Kind::kRequest) Answer_(&last, std::move(item.request), Stopped());
      // Front-end operations answer for themselves.
      if (item.kind == Item::Kind::kTask && engine) item.task(*engine);
    }
  }
  Deliver(&last, Status::OK());
  engine->watches().CancelAll("server shutting down");
  for (FrontEnd* f : front_ends) f->Detach();
  (void)engine->Commit();
  PublishEvents();
  if (events != nullptr) events->Flush();
}

// ---------------------------------------------------------------------------
// Member

Result<std::unique_ptr<Member>> Member::Open(const MemberOptions& options) {
  auto impl = std::make_unique<Impl>();
  NATCD_RETURN_IF_ERROR(impl->Init(options));
  return std::unique_ptr<Member>(new Member(std::move(impl)));
}

Member::Member(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Member::~Member() { Stop(); }

void Member::SetPeerTransport(PeerTransport* transport) { impl_->transport = transport; }
void Member::SetEventSink(EventSink* sink) { impl_->events = sink; }
void Member::AddFrontEnd(FrontEnd* front_end) {
  impl_->front_ends.push_back(front_end);
  front_end->Attach(impl_->engine.get());
}

void Member::Start() {
  if (impl_->started) return;
  impl_->started = true;
  impl_->thread = std::thread([this] { impl_->Loop(); });
}

void Member::Stop() {
  Impl& impl = *impl_;
  if (impl.stopped) return;
  impl.stopped = true;
  {
    std::lock_guard<std::mutex> lock(impl.mu);
    impl.stopping = true;
  }
  impl.wake.notify_one();
  if (impl.thread.joinable()) {
    impl.thread.join();
  } else if (impl.engine) {
    impl.Shutdown();  // never started: answer what was queued
  }
  // The Raft log's statements live on the engine's connection: finalized
  // before the engine closes it.
  impl.raft.reset();
  impl.raft_storage.reset();
  impl.engine.reset();
}

void Member::RunOneTurn() {
  std::vector<Impl::Item> batch;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    batch.swap(impl_->queue);
  }
  impl_->Turn(std::move(batch));
}

void Member::TEST_Crash() {
  Impl& impl = *impl_;
  impl.stopped = true;
  for (auto& [to, out] : impl.outgoing_snapshots) {
    if (out->copier.joinable()) out->copier.join();
  }
  impl.outgoing_snapshots.clear();
  impl.snapshot_receiver.reset();
  // Held requests go unanswered, as in a crash: their clients time out.
  impl.proposals.clear();
  impl.waiting_for_leader.clear();
  impl.reads_to_confirm.clear();
  impl.reads_confirming.clear();
  impl.reads_confirmed.clear();
  impl.moving_leader.clear();
  {
    std::lock_guard<std::mutex> lock(impl.mu);
    impl.queue.clear();
  }
  impl.raft.reset();
  impl.raft_storage.reset();
  impl.engine.reset();
}

void Member::Submit(std::unique_ptr<Request> request) {
  Impl::Item item;
  item.kind = Impl::Item::Kind::kRequest;
  item.request = std::move(request);
  impl_->Enqueue(std::move(item));
}

void Member::Resubmit(std::unique_ptr<Request> request, NodeId unreachable_leader) {
  request->unreachable_leader = unreachable_leader;
  request->retry_at_ms = impl_->clock->MonotonicMs() + kUnreachableRetryMs;
  Submit(std::move(request));
}

void Member::RunOnMemberThread(std::function<void(Engine&)> task) {
  Impl::Item item;
  item.kind = Impl::Item::Kind::kTask;
  item.task = std::move(task);
  impl_->Enqueue(std::move(item));
}

void Member::ReceiveRaft(raft::Message message) {
  Impl::Item item;
  item.kind = Impl::Item::Kind::kRaft;
  item.raft_message = std::move(message);
  impl_->Enqueue(std::move(item));
}

void Member::ReceiveSnapshotChunk(std::string bytes) {
  Impl::Item item;
  item.kind = Impl::Item::Kind::kSnapshotChunk;
  item.bytes = std::move(bytes);
  impl_->Enqueue(std::move(item));
}

void Member::ReceiveSnapshotAck(std::string bytes) {
  Impl::Item item;
  item.kind = Impl::Item::Kind::kSnapshotAck;
  item.bytes = std::move(bytes);
  impl_->Enqueue(std::move(item));
}

void Member::OnDisconnected() {
  Impl::Item item;
  item.kind = Impl::Item::Kind::kDisconnected;
  impl_->Enqueue(std::move(item));
}

void Member::OnReconnected() {
  Impl::Item item;
  item.kind = Impl::Item::Kind::kReconnected;
  impl_->Enqueue(std::move(item));
}

const MemberOptions& Member::options() const { return impl_->options; }
NodeId Member::id() const { return impl_->options.member_id; }
bool Member::is_leader() const { return impl_->leader_now.load(); }
NodeId Member::leader() const { return impl_->lead_now.load(); }
uint64_t Member::raft_term() const { return impl_->term_now.load(); }

}  // namespace natcd::server
