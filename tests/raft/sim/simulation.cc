#include "raft/sim/simulation.h"

#include <algorithm>
#include <array>
#include <cstdarg>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <queue>
#include <random>
#include <set>
#include <vector>

#include "raft/raft.h"
#include "raft/sim/kv_state_machine.h"
#include "raft/sim/linearizability.h"
#include "raft/storage.h"

namespace natcd::raft::sim {
namespace {

// Time is in abstract units; a member ticks every kTickInterval units, so
// an election timeout is 100-200 units and a message takes 1-10 (rarely up
// to 100).
constexpr int kTickInterval = 10;
constexpr int kElectionTick = 10;
constexpr int kHeartbeatTick = 1;
constexpr int kClients = 4;
constexpr int kKeys = 3;
constexpr int64_t kClientTimeout = 400;
// A member snapshots its state machine every kSnapshotEvery applied
// entries and keeps kKeepAfterSnapshot entries of log behind it, so slow
// and new members are caught up both from the log and from snapshots.
constexpr uint64_t kSnapshotEvery = 40;
constexpr uint64_t kKeepAfterSnapshot = 10;
constexpr uint64_t kLivenessOpId = uint64_t{1} << 62;
constexpr const char* kLivenessKey = "__live";

struct Member {
  NodeId id = kNoNode;
  MemoryStorage storage;  // what survives a crash
  // The hard state as natcd's node writes it: only when term or vote
  // change, or a membership change is applied (see ProcessReady).
  HardState written_hs;
  // written_hs as of the last fsync: a crash loses what was written
  // without one.
  HardState durable_hs;
  std::unique_ptr<Raft> raft;  // null while down
  KvStateMachine sm;
  uint64_t applied = 0;
  bool up = false;
  bool removed = false;  // out of the cluster for good
  int64_t restart_at = 0;
  int phase = 0;
  uint64_t incarnation = 0;
  std::map<uint64_t, size_t> waiting_writes;  // op id -> client
  // read ctx -> (client, op id)
  std::map<std::string, std::pair<size_t, uint64_t>> waiting_reads;
  std::vector<ReadState> ready_reads;  // confirmed, waiting to be applied
};

struct Client {
  bool busy = false;
  size_t op = 0;  // index into history
  uint64_t op_id = 0;
  int64_t deadline = 0;
  int64_t next_at = 0;
};

struct InFlight {
  int64_t at = 0;
  uint64_t seq = 0;
  Message msg;
  // A transport report (snapshot status / unreachable) for msg.to about
  // msg.from, rather than a message on the wire.
  bool report = false;
  uint64_t to_incarnation = 0;
  bool operator>(const InFlight& o) const { return at != o.at ? at > o.at : seq > o.seq; }
};

struct CommittedRecord {
  uint64_t term = 0;
  size_t hash = 0;
};

class Simulation {
 public:
  explicit Simulation(const SimOptions& options) : options_(options), rng_(options.seed) {}

  SimResult Run();

 private:
  // ---- setup and lifecycle ----
  Member& NewMember(NodeId id);
  void Start(Member& m);
  void Crash(Member& m, const char* where);
  void Remove(Member& m);

  // ---- one time unit ----
  void InjectFaults();
  void ChangeMembership(Member& leader);
  void DeliverDue();
  void TickMembers();
  void RunClients();
  void ProcessReadies();
  void ProcessReady(Member& m);
  void ApplyEntry(Member& m, const Entry& e);
  void ServeReads(Member& m);
  void MaybeSnapshot(Member& m);
  void Send(const Member& from, Message msg);
  void Report(const Member& to, Message msg);

  // ---- clients ----
  void StartOp(size_t c);
  void CompleteOp(size_t c, uint64_t op_id, bool ok, const std::string& output);
  void ExpireOps();

  // ---- checks ----
  void CheckLeaders();
  void CheckLeaderCompleteness(const Member& m);
  void CheckLogMatching();
  void Fail(const std::string& what);
  bool Heal();  // the liveness phase: true once the cluster made progress

  // ---- helpers ----
  bool Chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  int64_t Rand(int64_t lo, int64_t hi) {  // inclusive
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }
  int64_t Stamp() { return ++stamp_; }
  Member* Leader();
  std::vector<Member*> LiveMembers();
  void Trace(const char* fmt, ...) __attribute__((format(printf, 2, 3)));

  SimOptions options_;
  std::mt19937_64 rng_;
  int64_t now_ = 0;
  int64_t stamp_ = 0;
  uint64_t msg_seq_ = 0;
  bool faulty_ = true;
  NodeId next_id_ = 1;
  int max_members_ = 0;
  std::map<NodeId, std::unique_ptr<Member>> members_;
  std::priority_queue<InFlight, std::vector<InFlight>, std::greater<>> net_;
  std::set<std::pair<NodeId, NodeId>> blocked_;  // (from, to)
  int64_t heal_partition_at_ = 0;
  // Fault rates, chosen per seed.
  // Flow control, chosen per seed: one entry per append (so a new
  // leader's entries travel separately, as Raft's Figure 8 needs) up to
  // many.
  uint64_t max_msg_bytes_ = 4096;
  size_t max_inflight_ = 8;
  double drop_p_ = 0, dup_p_ = 0, slow_p_ = 0, crash_p_ = 0, partition_p_ = 0, conf_p_ = 0,
         transfer_p_ = 0;

  std::vector<Client> clients_;
  std::vector<KvOp> history_;
  std::vector<bool> discarded_;  // ops that certainly never took effect
  uint64_t next_op_id_ = 1;
  std::map<std::string, std::string> last_value_;  // per key, for plausible CAS

  std::map<uint64_t, NodeId> leader_of_term_;
  std::map<uint64_t, CommittedRecord> committed_;  // index -> what was applied there
  uint64_t max_applied_ = 0;
  std::map<uint64_t, uint64_t> acked_index_;  // acknowledged write op -> its index
  std::map<uint64_t, uint64_t> op_index_;     // op id -> index it was applied at

  SimResult result_;
};

void Simulation::Trace(const char* fmt, ...) {
  if (!options_.trace) return;
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "[t=%lld] ", static_cast<long long>(now_));
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
}

void Simulation::Fail(const std::string& what) {
  if (!result_.ok) return;
  result_.ok = false;
  result_.failure =
      "seed " + std::to_string(options_.seed) + " at t=" + std::to_string(now_) + ": " + what;
}

Member& Simulation::NewMember(NodeId id) {
  auto m = std::make_unique<Member>();
  m->id = id;
  m->phase = static_cast<int>(Rand(0, kTickInterval - 1));
  Member& ref = *m;
  members_[id] = std::move(m);
  return ref;
}

void Simulation::Start(Member& m) {
  Config cfg;
  cfg.id = m.id;
  cfg.election_tick = kElectionTick;
  cfg.heartbeat_tick = kHeartbeatTick;
  cfg.storage = &m.storage;
  cfg.max_size_per_msg = max_msg_bytes_;
  cfg.max_inflight_msgs = max_inflight_;
  cfg.check_quorum = true;
  cfg.pre_vote = true;
  cfg.seed = rng_();
  // The state machine restarts from the snapshot; Raft hands back every
  // committed entry after it.
  auto snap = m.storage.GetSnapshot();
  cfg.applied = snap.value().meta.index;
  auto raft = Raft::Create(cfg);
  if (!raft.ok()) {
    Fail("member " + std::to_string(m.id) + " cannot start: " + raft.status().ToString());
    return;
  }
  m.raft = std::move(raft.value());
  if (!m.sm.Restore(snap.value().data)) Fail("member " + std::to_string(m.id) + ": bad snapshot");
  m.applied = snap.value().meta.index;
  m.up = true;
  m.incarnation++;
  Trace("member %llu starts (snapshot %llu, last %llu)", (unsigned long long)m.id,
        (unsigned long long)m.applied, (unsigned long long)m.storage.LastIndex());
}

void Simulation::Crash(Member& m, const char* where) {
  Trace("member %llu crashes %s", (unsigned long long)m.id, where);
  m.raft.reset();
  m.up = false;
  m.waiting_writes.clear();
  m.waiting_reads.clear();
  m.ready_reads.clear();
  // What was written without an fsync is gone.
  m.storage.SetHardState(m.durable_hs);
  m.written_hs = m.durable_hs;
  m.restart_at = now_ + Rand(50, 800);
  result_.stats.crashes++;
}

void Simulation::Remove(Member& m) {
  if (m.removed) return;
  Trace("member %llu removed from the cluster", (unsigned long long)m.id);
  m.raft.reset();
  m.up = false;
  m.removed = true;
}

Member* Simulation::Leader() {
  Member* best = nullptr;
  for (auto& [id, m] : members_) {
    if (m->up && m->raft->role() == Role::kLeader &&
        (best == nullptr || m->raft->term() > best->raft->term())) {
      best = m.get();
    }
  }
  return best;
}

std::vector<Member*> Simulation::LiveMembers() {
  std::vector<Member*> out;
  for (auto& [id, m] : members_) {
    if (m->up) out.push_back(m.get());
  }
  return out;
}

// ---- network ----

void Simulation::Send(const Member& from, Message msg) {
  if (msg.type == MessageType::kSnap) result_.stats.snapshots_sent++;
  if (faulty_ && Chance(drop_p_)) {
    Trace("drop %s %llu->%llu", MessageTypeName(msg.type), (unsigned long long)msg.from,
          (unsigned long long)msg.to);
    if (msg.type == MessageType::kSnap) {
      Message r;
      r.type = MessageType::kSnapStatus;
      r.from = msg.to;
      r.reject = true;
      Report(from, std::move(r));
    }
    return;
  }
  int copies = faulty_ && Chance(dup_p_) ? 2 : 1;
  for (int i = 0; i < copies; i++) {
    InFlight f;
    f.at = now_ + (faulty_ && Chance(slow_p_) ? Rand(10, 100) : Rand(1, 10));
    f.seq = ++msg_seq_;
    f.msg = msg;
    net_.push(std::move(f));
  }
}

void Simulation::Report(const Member& to, Message msg) {
  InFlight f;
  f.at = now_ + 1;
  f.seq = ++msg_seq_;
  f.report = true;
  f.to_incarnation = to.incarnation;
  msg.to = to.id;
  f.msg = std::move(msg);
  net_.push(std::move(f));
}

void Simulation::DeliverDue() {
  while (!net_.empty() && net_.top().at <= now_) {
    InFlight f = net_.top();
    net_.pop();
    auto it = members_.find(f.msg.to);
    if (it == members_.end()) continue;
    Member& to = *it->second;
    if (f.report) {
      if (!to.up || to.incarnation != f.to_incarnation) continue;
      if (f.msg.type == MessageType::kSnapStatus) {
        to.raft->ReportSnapshot(f.msg.from, f.msg.reject);
      } else {
        to.raft->ReportUnreachable(f.msg.from);
      }
      continue;
    }
    auto from_it = members_.find(f.msg.from);
    bool cut = blocked_.count({f.msg.from, f.msg.to}) > 0;
    if (!to.up || cut) {
      if (from_it != members_.end() && from_it->second->up) {
        Member& from = *from_it->second;
        if (f.msg.type == MessageType::kSnap) {
          Message r;
          r.type = MessageType::kSnapStatus;
          r.from = f.msg.to;
          r.reject = true;
          Report(from, std::move(r));
        } else if (cut && Chance(0.3)) {
          Message r;
          r.type = MessageType::kUnreachable;
          r.from = f.msg.to;
          Report(from, std::move(r));
        }
      }
      continue;
    }
    if (f.msg.type == MessageType::kSnap && from_it != members_.end() && from_it->second->up) {
      Message r;
      r.type = MessageType::kSnapStatus;
      r.from = f.msg.to;
      Report(*from_it->second, std::move(r));
    }
    (void)to.raft->Step(std::move(f.msg));
  }
}

// ---- faults ----

void Simulation::InjectFaults() {
  // Restarts happen in both phases; in healing, at once.
  for (auto& [id, m] : members_) {
    if (!m->up && !m->removed && (!faulty_ || now_ >= m->restart_at)) Start(*m);
  }
  if (!faulty_) return;
  if (heal_partition_at_ != 0 && now_ >= heal_partition_at_) {
    Trace("partition heals");
    blocked_.clear();
    heal_partition_at_ = 0;
  }
  if (Chance(crash_p_)) {
    auto live = LiveMembers();
    if (!live.empty()) Crash(*live[Rand(0, live.size() - 1)], "between steps");
  }
  if (heal_partition_at_ == 0 && Chance(partition_p_)) {
    std::vector<NodeId> ids;
    for (auto& [id, m] : members_) {
      if (!m->removed) ids.push_back(id);
    }
    std::shuffle(ids.begin(), ids.end(), rng_);
    int shape = static_cast<int>(Rand(0, 2));
    size_t cut =
        shape == 0 ? 1 : static_cast<size_t>(Rand(1, std::max<int64_t>(1, ids.size() - 1)));
    std::set<NodeId> side(ids.begin(), ids.begin() + std::min(cut, ids.size()));
    for (NodeId a : ids) {
      for (NodeId b : ids) {
        if (side.count(a) == side.count(b)) continue;
        // shape 2: one way only (a in side can send, cannot receive)
        if (shape == 2 && side.count(a)) continue;
        blocked_.insert({a, b});
      }
    }
    heal_partition_at_ = now_ + Rand(100, 1200);
    result_.stats.partitions++;
    Trace("partition shape %d, %zu on one side", shape, side.size());
  }
  Member* leader = Leader();
  if (leader != nullptr && Chance(conf_p_)) ChangeMembership(*leader);
  leader = Leader();
  if (leader != nullptr && Chance(transfer_p_)) {
    auto voters = leader->raft->conf_state().voters;
    NodeId to = voters[Rand(0, voters.size() - 1)];
    Trace("transfer leadership %llu -> %llu", (unsigned long long)leader->id,
          (unsigned long long)to);
    leader->raft->TransferLeader(to);
    result_.stats.transfers++;
  }
}

void Simulation::ChangeMembership(Member& leader) {
  ConfState cs = leader.raft->conf_state();
  ConfChange cc;
  if (!cs.learners.empty()) {
    NodeId learner = cs.learners.front();
    const Progress* pr = leader.raft->progress(learner);
    if (pr == nullptr || pr->match + 5 < leader.raft->committed()) return;  // not caught up
    cc.type = ConfChangeType::kAddNode;
    cc.node_id = learner;
  } else if (static_cast<int>(cs.voters.size()) < max_members_ && Chance(0.6)) {
    cc.type = ConfChangeType::kAddLearnerNode;
    cc.node_id = next_id_;
  } else if (cs.voters.size() >= 4) {
    cc.type = ConfChangeType::kRemoveNode;
    cc.node_id = cs.voters[Rand(0, cs.voters.size() - 1)];
  } else {
    return;
  }
  if (!leader.raft->ProposeConfChange(cc).ok()) return;  // one is already pending
  if (cc.type == ConfChangeType::kAddLearnerNode) {
    // The new member starts empty and is caught up by the leader.
    Start(NewMember(next_id_++));
  }
  Trace("propose conf change %d node %llu", static_cast<int>(cc.type),
        (unsigned long long)cc.node_id);
}

// ---- members ----

void Simulation::TickMembers() {
  for (auto& [id, m] : members_) {
    if (m->up && (now_ + m->phase) % kTickInterval == 0) m->raft->Tick();
  }
}

void Simulation::ProcessReadies() {
  for (auto& [id, m] : members_) {
    for (int i = 0; i < 8 && m->up && m->raft->HasReady(); i++) {
      ProcessReady(*m);
      if (!result_.ok) return;
    }
  }
}

void Simulation::ProcessReady(Member& m) {
  Ready rd = m.raft->GetReady();
  // A crash may strike before the Ready is persisted, after it is
  // persisted but before its messages leave, or after that.
  int crash_at = faulty_ && Chance(crash_p_ / 4) ? static_cast<int>(Rand(0, 2)) : -1;
  if (crash_at == 0) return Crash(m, "before persisting a Ready");

  if (!rd.snapshot.empty()) {
    Status st = m.storage.ApplySnapshot(rd.snapshot);
    if (!st.ok()) return Fail("member " + std::to_string(m.id) + " snapshot: " + st.ToString());
  }
  if (Status st = m.storage.Append(rd.entries); !st.ok()) {
    return Fail("member " + std::to_string(m.id) + " append: " + st.ToString());
  }
  if (rd.hard_state) m.storage.SetHardState(*rd.hard_state);
  // As natcd's node: the hard state is written, and synced, when term or
  // vote change or a membership change is applied, so the commit index a
  // member restarts with may lag far behind what it had applied, but never
  // behind a membership change it had applied.
  const bool applies_conf_change =
      std::any_of(rd.committed_entries.begin(), rd.committed_entries.end(),
                  [](const Entry& e) { return e.type == EntryType::kConfChange; });
  if ((rd.hard_state &&
       (rd.hard_state->term != m.written_hs.term || rd.hard_state->vote != m.written_hs.vote)) ||
      applies_conf_change) {
    m.written_hs = m.raft->hard_state();
  }
  if (rd.must_sync || applies_conf_change) m.durable_hs = m.written_hs;
  if (crash_at == 1) return Crash(m, "after persisting, before sending");

  if (rd.soft_state && rd.soft_state->role == Role::kLeader) {
    Trace("member %llu becomes leader of term %llu", (unsigned long long)m.id,
          (unsigned long long)m.raft->term());
    CheckLeaderCompleteness(m);
  }
  for (Message& msg : rd.messages) Send(m, std::move(msg));
  if (crash_at == 2) return Crash(m, "after sending, before applying");

  if (!rd.snapshot.empty()) {
    if (!m.sm.Restore(rd.snapshot.data))
      return Fail("member " + std::to_string(m.id) + ": bad snapshot");
    m.applied = rd.snapshot.meta.index;
    Trace("member %llu installs snapshot %llu", (unsigned long long)m.id,
          (unsigned long long)m.applied);
  }
  for (const ReadState& rs : rd.read_states) m.ready_reads.push_back(rs);
  for (const Entry& e : rd.committed_entries) {
    ApplyEntry(m, e);
    if (!result_.ok || !m.up) return;
  }
  m.raft->Advance(rd);
  ServeReads(m);
  MaybeSnapshot(m);
}

void Simulation::ApplyEntry(Member& m, const Entry& e) {
  if (e.index != m.applied + 1) {
    return Fail("member " + std::to_string(m.id) + " applies index " + std::to_string(e.index) +
                " after " + std::to_string(m.applied));
  }
  // State machine safety: every member applies the same entry at an index.
  size_t hash = std::hash<std::string>()(e.data) ^ static_cast<size_t>(e.type);
  auto [it, first] = committed_.emplace(e.index, CommittedRecord{e.term, hash});
  if (!first && (it->second.term != e.term || it->second.hash != hash)) {
    return Fail("state machine safety: member " + std::to_string(m.id) + " applies term " +
                std::to_string(e.term) + " at index " + std::to_string(e.index) +
                ", another member applied term " + std::to_string(it->second.term));
  }
  max_applied_ = std::max(max_applied_, e.index);
  m.applied = e.index;
  if (e.type == EntryType::kConfChange) {
    ConfChange cc;
    if (!DecodeConfChange(e.data, &cc)) return Fail("undecodable conf change");
    m.raft->ApplyConfChange(cc);
    if (first) result_.stats.conf_changes++;
    if (cc.type == ConfChangeType::kRemoveNode) {
      auto target = members_.find(cc.node_id);
      if (target != members_.end()) Remove(*target->second);
    }
    return;
  }
  if (e.data.empty()) return;  // a new leader's empty entry
  auto cmd = DecodeCommand(e.data);
  if (!cmd) return Fail("undecodable command at index " + std::to_string(e.index));
  CommandResult r = m.sm.Apply(*cmd);
  if (r.duplicate) return;
  if (first) op_index_[cmd->op_id] = e.index;
  auto w = m.waiting_writes.find(cmd->op_id);
  if (w != m.waiting_writes.end()) {
    size_t c = w->second;
    m.waiting_writes.erase(w);
    CompleteOp(c, cmd->op_id, r.ok, r.value);
  }
}

void Simulation::ServeReads(Member& m) {
  auto it = m.ready_reads.begin();
  while (it != m.ready_reads.end()) {
    if (it->index > m.applied) {
      ++it;
      continue;
    }
    auto w = m.waiting_reads.find(it->request_ctx);
    if (w != m.waiting_reads.end()) {
      auto [c, op_id] = w->second;
      m.waiting_reads.erase(w);
      // The client may have given up on this read and moved on.
      if (clients_[c].busy && clients_[c].op_id == op_id) {
        CompleteOp(c, op_id, true, m.sm.Get(history_[clients_[c].op].key));
      }
    }
    it = m.ready_reads.erase(it);
  }
}

void Simulation::MaybeSnapshot(Member& m) {
  auto snap = m.storage.GetSnapshot();
  uint64_t snap_index = snap.value().meta.index;
  if (m.applied < snap_index + kSnapshotEvery) return;
  Status st = m.storage.CreateSnapshot(m.applied, m.raft->conf_state(), m.sm.Snapshot());
  if (!st.ok()) return Fail("member " + std::to_string(m.id) + " snapshot: " + st.ToString());
  uint64_t compact_to = m.applied - kKeepAfterSnapshot;
  if (compact_to > m.storage.FirstIndex()) (void)m.storage.Compact(compact_to);
}

// ---- clients ----

void Simulation::RunClients() {
  ExpireOps();
  for (size_t c = 0; c < clients_.size(); c++) {
    if (!clients_[c].busy && now_ >= clients_[c].next_at) StartOp(c);
  }
}

void Simulation::StartOp(size_t c) {
  std::vector<Member*> targets;
  for (auto& [id, m] : members_) {
    if (!m->removed) targets.push_back(m.get());
  }
  Member& m = *targets[Rand(0, targets.size() - 1)];
  Client& client = clients_[c];
  KvOp op;
  int dice = static_cast<int>(Rand(0, 99));
  op.kind = dice < 40 ? OpKind::kPut : dice < 75 ? OpKind::kGet : OpKind::kCas;
  op.key = "k" + std::to_string(Rand(0, kKeys - 1));
  uint64_t op_id = next_op_id_++;
  if (op.kind != OpKind::kGet) op.value = "v" + std::to_string(op_id);
  if (op.kind == OpKind::kCas) op.expected = Chance(0.8) ? last_value_[op.key] : "";
  op.call = Stamp();
  client.busy = true;
  client.op = history_.size();
  client.op_id = op_id;
  client.deadline = now_ + kClientTimeout;
  history_.push_back(op);
  discarded_.push_back(false);
  if (!m.up) return;  // the request is lost; the client will give up

  Status st;
  // Most reads use ReadIndex; some go through the log.
  if (op.kind == OpKind::kGet && Chance(0.7)) {
    std::string ctx = "r" + std::to_string(op_id);
    st = m.raft->ReadIndex(ctx);
    if (st.ok()) m.waiting_reads[ctx] = {c, op_id};
  } else {
    Command cmd{op_id, op.kind, op.key, op.value, op.expected};
    st = m.raft->Propose(EncodeCommand(cmd));
    if (st.ok()) m.waiting_writes[op_id] = c;
  }
  if (!st.ok()) {
    // Refused before it reached any log: it certainly did not happen.
    discarded_[client.op] = true;
    client.busy = false;
    client.next_at = now_ + Rand(5, 30);
  }
}

void Simulation::CompleteOp(size_t c, uint64_t op_id, bool ok, const std::string& output) {
  Client& client = clients_[c];
  if (!client.busy || client.op_id != op_id) return;  // it gave up already
  KvOp& op = history_[client.op];
  op.ret = Stamp();
  op.ok = ok;
  op.output = output;
  if (op.kind == OpKind::kPut || (op.kind == OpKind::kCas && ok)) {
    last_value_[op.key] = op.value;
    acked_index_[op_id] = op_index_.count(op_id) ? op_index_[op_id] : 0;
  } else if (op.kind == OpKind::kGet) {
    last_value_[op.key] = output;
  }
  Trace("client %zu: op %llu done (ok %d, output '%s')", c, (unsigned long long)op_id, ok,
        output.c_str());
  result_.stats.ops_acknowledged++;
  client.busy = false;
  client.next_at = now_ + Rand(0, 20);
}

void Simulation::ExpireOps() {
  for (Client& client : clients_) {
    if (client.busy && now_ >= client.deadline) {
      // Unknown outcome: it may still take effect; its return is "never".
      client.busy = false;
      client.next_at = now_ + Rand(0, 20);
      result_.stats.ops_unknown++;
    }
  }
}

// ---- checks ----

void Simulation::CheckLeaders() {
  for (auto& [id, m] : members_) {
    if (!m->up || m->raft->role() != Role::kLeader) continue;
    auto [it, first] = leader_of_term_.emplace(m->raft->term(), id);
    if (!first && it->second != id) {
      return Fail("two leaders in term " + std::to_string(m->raft->term()) + ": " +
                  std::to_string(it->second) + " and " + std::to_string(id));
    }
  }
}

void Simulation::CheckLeaderCompleteness(const Member& m) {
  const RaftLog& log = m.raft->log();
  for (uint64_t i = std::max<uint64_t>(log.FirstIndex(), 1); i <= max_applied_; i++) {
    auto rec = committed_.find(i);
    if (rec == committed_.end()) continue;
    if (log.TermOr0(i) != rec->second.term) {
      return Fail("leader completeness: new leader " + std::to_string(m.id) + " of term " +
                  std::to_string(m.raft->term()) + " lacks committed index " + std::to_string(i));
    }
  }
}

void Simulation::CheckLogMatching() {
  std::vector<Member*> live = LiveMembers();
  for (size_t a = 0; a < live.size(); a++) {
    for (size_t b = a + 1; b < live.size(); b++) {
      const RaftLog& la = live[a]->raft->log();
      const RaftLog& lb = live[b]->raft->log();
      uint64_t lo = std::max(la.FirstIndex(), lb.FirstIndex());
      uint64_t hi = std::min(la.LastIndex(), lb.LastIndex());
      if (lo > hi) continue;
      // The highest index where the terms agree: everything up to it must
      // be identical (Log Matching).
      uint64_t i = hi;
      while (i >= lo && la.TermOr0(i) != lb.TermOr0(i)) i--;
      if (i < lo) continue;
      auto ea = la.Slice(lo, i + 1, UINT64_MAX);
      auto eb = lb.Slice(lo, i + 1, UINT64_MAX);
      if (!ea.ok() || !eb.ok() || ea.value() != eb.value()) {
        return Fail("log matching: members " + std::to_string(live[a]->id) + " and " +
                    std::to_string(live[b]->id) + " agree on the term at " + std::to_string(i) +
                    " but not on the entries before it");
      }
    }
  }
}

// ---- phases ----

bool Simulation::Heal() {
  faulty_ = false;
  blocked_.clear();
  heal_partition_at_ = 0;
  int64_t healed_at = now_;
  bool proposed = false;
  int64_t give_up = now_ + options_.heal_budget;
  std::string token = "live-" + std::to_string(options_.seed);
  while (now_ < give_up && result_.ok) {
    now_++;
    InjectFaults();  // restarts every member that is down
    DeliverDue();
    TickMembers();
    ProcessReadies();
    CheckLeaders();
    if (options_.trace && now_ % 500 == 0) {
      for (auto& [id, m] : members_) {
        if (!m->up) continue;
        Trace("member %llu: %s term %llu lead %llu commit %llu applied %llu last %llu first %llu",
              (unsigned long long)id, RoleName(m->raft->role()),
              (unsigned long long)m->raft->term(), (unsigned long long)m->raft->lead(),
              (unsigned long long)m->raft->committed(), (unsigned long long)m->applied,
              (unsigned long long)m->raft->last_index(),
              (unsigned long long)m->raft->log().FirstIndex());
      }
    }
    Member* leader = Leader();
    if (leader == nullptr) continue;
    if (!proposed || now_ % 200 == 0) {
      Command cmd{kLivenessOpId + static_cast<uint64_t>(now_), OpKind::kPut, kLivenessKey, token,
                  ""};
      proposed = leader->raft->Propose(EncodeCommand(cmd)).ok() || proposed;
    }
    // Done when every member of the leader's configuration has applied
    // the liveness write and everything the leader committed.
    ConfState cs = leader->raft->conf_state();
    std::vector<NodeId> ids = cs.voters;
    ids.insert(ids.end(), cs.learners.begin(), cs.learners.end());
    bool converged = leader->sm.Get(kLivenessKey) == token;
    for (NodeId id : ids) {
      auto it = members_.find(id);
      if (it == members_.end() || !it->second->up) {
        converged = false;
        break;
      }
      const Member& m = *it->second;
      if (m.sm.Get(kLivenessKey) != token || m.applied != leader->raft->committed() ||
          m.applied != leader->applied) {
        converged = false;
        break;
      }
    }
    if (!converged) continue;
    for (NodeId id : ids) {
      if (!(members_.at(id)->sm == leader->sm)) {
        Fail("members " + std::to_string(id) + " and " + std::to_string(leader->id) +
             " applied the same entries but hold different states");
        return false;
      }
    }
    result_.stats.heal_time = now_ - healed_at;
    return true;
  }
  if (result_.ok) {
    Fail("no progress within " + std::to_string(options_.heal_budget) +
         " time units after the faults healed");
  }
  return false;
}

SimResult Simulation::Run() {
  int n = options_.members != 0 ? options_.members : (options_.seed % 2 == 0 ? 3 : 5);
  result_.stats.members = n;
  max_members_ = n + 1;
  max_msg_bytes_ = std::array<uint64_t, 3>{1, 64, 4096}[Rand(0, 2)];
  max_inflight_ = static_cast<size_t>(Rand(1, 8));
  drop_p_ = std::uniform_real_distribution<double>(0, 0.1)(rng_);
  dup_p_ = std::uniform_real_distribution<double>(0, 0.05)(rng_);
  slow_p_ = std::uniform_real_distribution<double>(0, 0.1)(rng_);
  crash_p_ = std::uniform_real_distribution<double>(0, 1.0 / 300)(rng_);
  partition_p_ = std::uniform_real_distribution<double>(0, 1.0 / 300)(rng_);
  conf_p_ = Chance(0.5) ? std::uniform_real_distribution<double>(0, 1.0 / 200)(rng_) : 0;
  transfer_p_ = std::uniform_real_distribution<double>(0, 1.0 / 500)(rng_);

  // Bootstrap: every initial member starts from the same snapshot at
  // index 1 naming the voters, so members added later are caught up by a
  // snapshot like any lagging member.
  Snapshot boot;
  boot.meta.index = 1;
  boot.meta.term = 1;
  for (int i = 0; i < n; i++) boot.meta.conf_state.voters.push_back(next_id_ + i);
  for (int i = 0; i < n; i++) {
    Member& m = NewMember(next_id_++);
    (void)m.storage.ApplySnapshot(boot);
    m.storage.SetHardState(HardState{1, kNoNode, 1});
    m.written_hs = HardState{1, kNoNode, 1};
    m.durable_hs = m.storage.InitialHardState();
    Start(m);
  }
  clients_.resize(kClients);

  for (now_ = 1; now_ <= options_.fault_time && result_.ok; now_++) {
    InjectFaults();
    DeliverDue();
    TickMembers();
    RunClients();
    ProcessReadies();
    CheckLeaders();
    if (now_ % 50 == 0) CheckLogMatching();
  }
  if (result_.ok) Heal();
  if (result_.ok) CheckLogMatching();

  // Acknowledged writes are in the committed log, at the index they were
  // applied at (no member can have applied anything else there).
  for (const auto& [op_id, index] : acked_index_) {
    if (index == 0 || committed_.count(index) == 0) {
      Fail("acknowledged op " + std::to_string(op_id) + " (index " + std::to_string(index) +
           ") is not in the committed log");
      break;
    }
  }
  if (result_.ok) {
    std::vector<KvOp> history;
    for (size_t i = 0; i < history_.size(); i++) {
      if (!discarded_[i]) history.push_back(history_[i]);
    }
    CheckResult lin = CheckLinearizable(history, options_.check_steps);
    if (!lin.linearizable) {
      Fail(std::string(lin.gave_up ? "linearizability check gave up" : "not linearizable") +
           " on key " + lin.key);
    }
  }
  result_.stats.elections = leader_of_term_.size();
  result_.stats.committed_entries = max_applied_;
  return result_;
}

}  // namespace

SimResult RunSimulation(const SimOptions& options) { return Simulation(options).Run(); }

}  // namespace natcd::raft::sim
