#include "server/member.h"

#include <algorithm>
#include <cstdio>

#include "server/member_identity.h"
#include "server/member_impl.h"

namespace natcd::server {
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

Status Stopped() { return Status::Unavailable("ErrStopped", "etcdserver: server stopped"); }

OnlineBackupOptions BackupOptionsOf(const MemberOptions& opts) {
  OnlineBackupOptions out;
  out.db_path = opts.engine.db_path;
  const size_t slash = out.db_path.rfind('/');
  out.dir = slash == std::string::npos ? "." : out.db_path.substr(0, slash);
  out.sessions_max = opts.backups_max;
  out.idle_timeout_ms = opts.backup_idle_timeout_ms;
  return out;
}

}  // namespace

Member::Impl::Impl(const MemberOptions& opts)
    : options(opts),
      clock(opts.engine.clock),
      reads(opts.member_id),
      shipper(opts.member_id, opts.engine.db_path, opts.name, opts.engine.clock,
              opts.copy_snapshots_on_member_thread),
      backups(BackupOptionsOf(opts), opts.engine.clock),
      continuity(opts.name,
                 [this](int64_t revision) {
                   member_thread.AssertHeld();  // called back from the member's turn
                   LogCommand command;
                   command.events_published = revision;
                   Propose(std::move(command));
                 }),
      tokens(opts.engine.clock, opts.auth_token_ttl_ms) {
  options.engine.retain_committed_events = true;
  rng.seed(options.engine.seed ^ 0x6e617463ull);
  if (options.initial_cluster.empty() && options.new_cluster) {
    options.initial_cluster = {options.name};
  }
}

// ---------------------------------------------------------------------------
// Opening

Status Member::Impl::Open() {
  if (clock == nullptr) return Status::InvalidArgument("ErrConfig", "member needs a clock");
  if (options.member_id == 0) return Status::InvalidArgument("ErrConfig", "member needs an ID");
  NATCD_RETURN_IF_ERROR(OpenEngine());
  NATCD_RETURN_IF_ERROR(Found());
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
  RefreshCredentials();
  return Status::OK();
}

// The Raft log lives in its own file beside the engine's database, the
// rest of the Raft state in the database (open the engine first). With the
// log durable on its own, the engine commits without an fsync: a crash
// loses at most commits the log replays (raft/durable_raft_storage.h).
Status Member::Impl::OpenRaftStorage() {
  raftlog::LogFs* fs = options.raft_log_fs != nullptr ? options.raft_log_fs : &log_fs;
  raftlog::RaftLogOptions log_options;
  log_options.segment_bytes = options.raft_log_segment_bytes;
  // Only the real file system is safe from a second thread; a test's
  // (the simulator's) keeps every step on the member thread.
  log_options.prepare_in_background = options.raft_log_fs == nullptr;
  Result<std::unique_ptr<raft::DurableRaftStorage>> storage = engine->OpenRaftLog(
      fs, raft::DurableRaftStorage::LogDirOf(options.engine.db_path), log_options);
  if (!storage.ok()) return storage.status();
  raft_storage = std::move(storage).value();
  if (raft_storage->migrated()) {
    fprintf(stderr, "natcd %s: moved the Raft log out of %s into %s\n", options.name.c_str(),
            options.engine.db_path.c_str(),
            raft::DurableRaftStorage::LogDirOf(options.engine.db_path).c_str());
  }
  NATCD_RETURN_IF_ERROR(engine->SetCommitsSynced(false));
  // Names recorded by this database (founders, members added since; a
  // snapshot from the leader brings the leader's).
  for (const auto& [id, name] : raft_storage->member_names()) membership.SetName(id, name);
  for (const auto& [id, urls] : raft_storage->member_client_urls()) {
    membership.SetClientUrls(id, urls);
  }
  for (const auto& [id, urls] : raft_storage->member_peer_urls()) membership.SetPeerUrls(id, urls);
  return Status::OK();
}

// Opens Raft, first founding the cluster if this member is among its
// founders and its storage is new.
Status Member::Impl::Found() {
  for (const std::string& name : options.initial_cluster)
    membership.SetName(MemberIdOf(name), name);
  NATCD_RETURN_IF_ERROR(OpenRaftStorage());
  const bool founding = options.new_cluster && membership.names().count(options.member_id) > 0;
  if (!raft_storage->Initialized() && founding) {
    // Every founding member starts from the same snapshot at index 1 that
    // names the voters, so they agree on the configuration before any
    // entry. A member added later starts empty and gets everything from
    // the leader.
    raft::SnapshotMeta boot;
    boot.index = 1;
    boot.term = 1;
    for (const auto& [id, name] : membership.names()) {
      boot.conf_state.voters.push_back(id);
      NATCD_RETURN_IF_ERROR(raft_storage->SetMemberName(id, name));
    }
    if (engine->revision() > 0) NATCD_RETURN_IF_ERROR(raft_storage->MarkBootedOverExistingData());
    // The names and the mark are committed with the snapshot row (synced),
    // before the log file says the member is initialized.
    NATCD_RETURN_IF_ERROR(raft_storage->ApplySnapshot(boot));
    NATCD_RETURN_IF_ERROR(raft_storage->SetHardState(raft::HardState{1, raft::kNoNode, 1}));
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
  membership.ResetHistory(cfg.applied, raft->conf_state());
  synced_hard_state = raft->hard_state();
  applied_index = cfg.applied;
  snapshot_index = cfg.applied;
  raft_term = raft->term();
  term_now.store(raft_term);
  leader_contact_ms = clock->MonotonicMs();
  return Status::OK();
}

// ---------------------------------------------------------------------------
// The turn

void Member::Impl::Enqueue(Item item) {
  {
    MutexLock lock(&mu);
    queue.push_back(std::move(item));
  }
  wake.NotifyOne();
}

void Member::Impl::Take(Item item, Answers* answers) {
  switch (item.kind) {
    case Item::Kind::kRequest:
      Handle(std::move(item.request), answers);
      return;
    case Item::Kind::kTask:
      item.task(*engine);
      return;
    case Item::Kind::kSnapshotChunk:
      shipper.OnChunk(item.bytes);
      return;
    case Item::Kind::kSnapshotAck:
      shipper.OnAck(item.bytes, ShipperLeader());
      return;
    case Item::Kind::kRaft: {
      if (item.raft_message.type == raft::MessageType::kSnap) {
        const raft::SnapshotMeta& meta = item.raft_message.snapshot.meta;
        // The first snapshot (the empty state) only for a member that holds
        // nothing yet; any other only once its database arrived whole.
        const bool bootstrap = meta.index == 1 && engine->revision() == kEmptyStoreRevision;
        const bool shipped = meta.index > 1 && shipper.HasWhole(meta, item.raft_message.from);
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
      if (leader && leases_taken_over && leases_paused) {
        engine->PromoteLeases(clock->MonotonicMs() - paused_at_ms);
      }
      leases_paused = false;
      return;
  }
}

void Member::Impl::Deliver(Answers* answers, const Status& committed) {
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
  if (!storage_failure.ok()) {
    TurnOutOfRaft(std::move(batch));
    return;
  }
  Answers answers;
  quota_db_size = -1;  // read again, once, if a write needs it this turn
  for (Item& item : batch) Take(std::move(item), &answers);
  Tick();
  Timers();
  RetryWaiting(&answers);
  ConfirmReads(&answers);
  FlushProposals(&answers);
  ProcessReady(&answers);
  if (leader) shipper.Pump(ShipperLeader());
  // Idle turns still remove compacted rows and expired request ids (and a
  // task may have stopped the engine).
  Status published = engine->Publish();
  if (!published.ok() && storage_failure.ok()) LeaveRaft(published, &answers);
  Deliver(&answers, published);
  if (storage_failure.ok()) CommitEngineIfDue();
  continuity.Publish(*engine, events, leader, membership.is_cluster(), applied_index,
                     clock->MonotonicMs(), options.election_timeout_ms);
  engine->watches().SyncUnsynced(kWatchersSyncedPerTurn);
  for (FrontEnd* f : front_ends) f->AfterTurn();
  RecordState();
}

void Member::Impl::RecordState() {
  metrics::MemberMetrics* m = options.metrics;
  if (m == nullptr) return;
  m->proposals_pending.Set(static_cast<int64_t>(proposals.size()));
  m->keys_total.Set(static_cast<int64_t>(engine->key_count()));
  m->current_revision.Set(engine->revision());
  m->compact_revision.Set(engine->CompactRevision());
  m->watcher_total.Set(static_cast<int64_t>(engine->watches().size()));
  m->slow_watcher_total.Set(static_cast<int64_t>(engine->watches().unsynced_size()));
  const int64_t now = clock->MonotonicMs();
  if (now >= next_db_size_ms) {  // a file stat: now and then is enough
    next_db_size_ms = now + 1'000;
    if (Result<int64_t> size = engine->DatabaseSizeBytes(); size.ok()) {
      m->db_total_size.Set(*size);
    }
    if (Result<int64_t> in_use = engine->DatabaseSizeInUseBytes(); in_use.ok()) {
      m->db_total_size_in_use.Set(*in_use);
    }
  }
}

void Member::Impl::Loop() {
  member_thread.AssertHeld();
  for (;;) {
    std::vector<Item> batch;
    // Watchers to catch up, or entries proposed after this turn's batch
    // went to Raft (a checkpoint a held renewal waits for): no idle wait.
    const bool more = (engine && engine->watches().unsynced_size() > 0) || !turn_entries.empty();
    {
      MutexLock lock(&mu);
      if (queue.empty() && !stopping) {
        wake.WaitFor(&mu, std::chrono::milliseconds(more ? 0 : kIdleWaitMs));
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
  shipper.Abandon(nullptr);
  shipper.ForgetReceived();
  Answers last;
  auto stop_all = [&](std::vector<std::unique_ptr<Request>> requests) {
    member_thread.AssertHeld();
    for (auto& request : requests) Answer_(&last, std::move(request), Stopped());
  };
  stop_all(proposals.TakeAll());
  stop_all(std::move(waiting_for_leader));
  waiting_for_leader.clear();
  stop_all(std::move(waiting_for_token));
  waiting_for_token.clear();
  // Front-end operations answer for themselves (as the queued tasks below).
  std::vector<TokenTask> held_tasks = std::move(tasks_waiting_for_token);
  tasks_waiting_for_token.clear();
  if (engine) {
    for (TokenTask& t : held_tasks) t.task(*engine);
  }
  for (auto& moving : moving_leader) Answer_(&last, std::move(moving.request), Stopped());
  moving_leader.clear();
  stop_all(reads.TakeAll());
  stop_all(held_renewals.TakeAll());
  // What arrived after the loop's last turn.
  std::vector<Item> late;
  {
    MutexLock lock(&mu);
    late.swap(queue);
  }
  for (Item& item : late) {
    if (item.kind == Item::Kind::kRequest) Answer_(&last, std::move(item.request), Stopped());
    // Front-end operations answer for themselves.
    if (item.kind == Item::Kind::kTask && engine) item.task(*engine);
  }
  Deliver(&last, Status::OK());
  // No engine: it could not be opened again after a storage error
  // (member_rejoin.cc).
  if (engine) engine->watches().CancelAll("server shutting down");
  for (FrontEnd* f : front_ends) f->Detach();
  if (engine) {
    (void)engine->Commit();
    continuity.Publish(*engine, events, leader, membership.is_cluster(), applied_index,
                       clock->MonotonicMs(), options.election_timeout_ms);
  }
  if (events != nullptr) events->Flush();
}

// ---------------------------------------------------------------------------
// Member

Result<std::unique_ptr<Member>> Member::Open(const MemberOptions& options) {
  auto impl = std::make_unique<Impl>(options);
  // Until Start, the caller is the member's thread.
  impl->member_thread.AssertHeld();
  NATCD_RETURN_IF_ERROR(impl->Open());
  {
    MutexLock lock(&impl->hash_answers->mu);
    impl->hash_answers->impl = impl.get();
  }
  return std::unique_ptr<Member>(new Member(std::move(impl)));
}

Member::Member(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Member::~Member() { Stop(); }

void Member::SetPeerTransport(PeerTransport* transport) {
  impl_->member_thread.AssertHeld();  // before Start
  impl_->transport = transport;
  impl_->shipper.SetTransport(transport);
}
void Member::SetEventSink(EventSink* sink) { impl_->events = sink; }

Result<HashKVResponse> Member::HashKVBeforeStart() {
  impl_->member_thread.AssertHeld();  // before Start
  return impl_->engine->HashKV(HashKVRequest{0});
}

std::vector<NodeId> Member::PeersBeforeStart() {
  impl_->member_thread.AssertHeld();  // before Start
  std::vector<NodeId> peers;
  const raft::ConfState cs = impl_->raft->conf_state();
  for (const auto* list : {&cs.voters, &cs.learners}) {
    for (NodeId m : *list) {
      if (m != impl_->options.member_id) peers.push_back(m);
    }
  }
  return peers;
}
void Member::AddFrontEnd(FrontEnd* front_end) {
  impl_->member_thread.AssertHeld();  // before Start
  impl_->front_ends.push_back(front_end);
  front_end->Attach(impl_->engine.get());
}

void Member::SetClientUrls(std::vector<std::string> urls) {
  impl_->member_thread.AssertHeld();  // before Start
  impl_->client_urls = std::move(urls);
}

OnlineBackups& Member::backups() { return impl_->backups; }

void Member::BeginBackup(size_t chunk_bytes, OnlineBackups::Ready ready) {
  Impl* impl = impl_.get();
  RunOnMemberThread([impl, chunk_bytes, ready = std::move(ready)](Engine&) {
    impl->member_thread.AssertHeld();
    // A failed commit stops the engine (the turn then leaves Raft); the
    // copy is then of what was committed before.
    (void)impl->CommitEngine();
    Status started = impl->backups.Begin(chunk_bytes, ready);
    if (!started.ok()) ready(started);
  });
}

void Member::Start() {
  if (impl_->started) return;
  impl_->started = true;
  impl_->thread = std::thread([this] { impl_->Loop(); });
}

void Member::RunOneTurn() {
  impl_->member_thread.AssertHeld();  // the caller drives the member
  std::vector<Impl::Item> batch;
  {
    MutexLock lock(&impl_->mu);
    batch.swap(impl_->queue);
  }
  impl_->Turn(std::move(batch));
}

void Member::Stop() {
  Impl& impl = *impl_;
  if (impl.stopped) return;
  impl.stopped = true;
  {
    // Hash answers arriving from now on are dropped (member_alarms.cc).
    MutexLock lock(&impl.hash_answers->mu);
    impl.hash_answers->impl = nullptr;
  }
  {
    MutexLock lock(&impl.mu);
    impl.stopping = true;
  }
  impl.wake.NotifyOne();
  // Copies under way finish (and answer) while the front ends still exist.
  impl.backups.Close();
  // Joined, or never started: the caller is the member's thread now.
  if (impl.thread.joinable()) impl.thread.join();
  impl.member_thread.AssertHeld();
  if (!impl.started && impl.engine) impl.Shutdown();  // driven by RunOneTurn, or never run
  // The Raft log's statements live on the engine's connection: finalized
  // before the engine closes it.
  impl.raft.reset();
  impl.raft_storage.reset();
  impl.engine.reset();
}

void Member::TEST_Crash() {
  Impl& impl = *impl_;
  impl.member_thread.AssertHeld();  // driven by RunOneTurn
  impl.stopped = true;
  {
    MutexLock lock(&impl.hash_answers->mu);
    impl.hash_answers->impl = nullptr;
  }
  impl.shipper.Abandon(nullptr);
  impl.shipper.ForgetReceived();
  // Held requests go unanswered, as in a crash: their clients time out.
  (void)impl.proposals.TakeAll();
  impl.waiting_for_leader.clear();
  impl.waiting_for_token.clear();
  impl.tasks_waiting_for_token.clear();
  (void)impl.reads.TakeAll();
  (void)impl.held_renewals.TakeAll();
  impl.moving_leader.clear();
  {
    MutexLock lock(&impl.mu);
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
