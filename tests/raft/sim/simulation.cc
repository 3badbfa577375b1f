// The cluster driver: one step, the run, its trace (simulation_impl.h).
#include "raft/sim/simulation_impl.h"

namespace natcd::raft::sim {
namespace {

std::string ScratchRoot() {
  if (const char* t = getenv("NATCD_SIM_DIR"); t != nullptr && *t != '\0') return t;
  std::error_code ec;
  if (std::filesystem::is_directory("/dev/shm", ec)) return "/dev/shm";
  return std::filesystem::temp_directory_path().string();
}

}  // namespace

Simulation::~Simulation() {
  finished_ = true;
  members_.clear();
  if (!root_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }
}

void Simulation::Trace(const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  // FNV-1a over every event, printed or not: the replay check.
  uint64_t h = result_.stats.trace_hash ^ static_cast<uint64_t>(now_);
  for (const char* p = buf; *p != '\0'; p++)
    h = (h ^ static_cast<unsigned char>(*p)) * 1099511628211ull;
  result_.stats.trace_hash = h;
  if (options_.trace) fprintf(stderr, "[t=%lld] %s\n", static_cast<long long>(now_), buf);
}

void Simulation::Fail(const std::string& what) {
  if (!result_.ok) return;
  result_.ok = false;
  result_.failure = Str("seed %llu at t=%lld ms: ", static_cast<unsigned long long>(options_.seed),
                        static_cast<long long>(now_)) +
                    what;
  Trace("FAIL %s", what.c_str());
}

// ---------------------------------------------------------------------------
// One step

void Simulation::Step() {
  now_ += kStepMs;
  for (auto& [id, m] : members_) m->clock->AdvanceMs(kStepMs);
  if (faulty_) InjectFaults();
  FollowDisks();
  for (auto& [id, m] : members_) {
    if (!m->up() && !m->removed && (!faulty_ || now_ >= m->restart_at)) Start(*m);
  }
  DeliverDue();
  RunClients();
  RunLeaseClients();
  if (faulty_) RunAdmin();
  std::vector<SimMember*> order = Alive();
  for (SimMember* m : order) m->transport->ExpireForwards();
  std::shuffle(order.begin(), order.end(), rng_);
  for (SimMember* m : order) {
    if (m->up()) m->member->RunOneTurn();
  }
  // Members whose removal was acknowledged leave (not from inside a turn:
  // the answer may have come from the removed member itself).
  for (NodeId id : removals_) {
    auto it = members_.find(id);
    if (it == members_.end() || it->second->removed) continue;
    Crash(*it->second);
    it->second->removed = true;
    Trace("%s is out of the cluster", it->second->name.c_str());
  }
  removals_.clear();
  CheckLeaders();
}

void Simulation::DeliverDue() {
  while (std::optional<Packet> p = network_.NextDue(now_)) Deliver(std::move(*p));
}

void Simulation::Deliver(Packet p) {
  auto it = members_.find(p.to);
  if (p.kind == Packet::Kind::kClient) {
    auto call = calls_.find(p.call);
    if (call == calls_.end()) return;
    PendingCall pending = std::move(call->second);
    calls_.erase(call);
    if (it == members_.end() || !it->second->up()) return;  // nobody there: the client times out
    SimMember& to = *it->second;
    auto request = std::make_unique<server::Request>();
    request->payload = std::move(pending.payload);
    request->request_id = std::move(pending.request_id);
    request->received_ms = to.clock->MonotonicMs();
    request->responder = std::make_unique<CallbackResponder>(std::move(pending.on_answer));
    to.member->Submit(std::move(request));
    return;
  }
  if (it == members_.end() || network_.Blocked(p.from, p.to)) return;
  SimMember& to = *it->second;
  switch (p.kind) {
    case Packet::Kind::kRaft:
      if (to.up()) to.member->ReceiveRaft(std::move(p.raft));
      return;
    case Packet::Kind::kSnapshotChunk:
      if (to.up()) to.member->ReceiveSnapshotChunk(std::move(p.bytes));
      return;
    case Packet::Kind::kSnapshotAck:
      if (to.up()) to.member->ReceiveSnapshotAck(std::move(p.bytes));
      return;
    case Packet::Kind::kForward: {
      Packet reply;
      reply.kind = Packet::Kind::kForwardReply;
      reply.from = p.to;
      reply.to = p.from;
      reply.to_incarnation = p.from_incarnation;
      reply.forward_seq = p.forward_seq;
      if (!to.up()) {
        // Nobody serves the leader's subject: "no responders", at once.
        network_.Send(std::move(reply), now_);
        return;
      }
      auto request = std::make_unique<server::Request>();
      request->payload = std::move(p.payload);
      request->request_id = std::move(p.request_id);
      request->hops = p.hops;
      request->received_ms = to.clock->MonotonicMs();
      request->responder = std::make_unique<CallbackResponder>(
          [this, reply = std::move(reply)](Result<Response> answer) mutable {
            if (finished_) return;
            reply.answer = std::move(answer);
            network_.Send(std::move(reply), now_);
          });
      to.member->Submit(std::move(request));
      return;
    }
    case Packet::Kind::kForwardReply:
      if (to.up() && to.incarnation == p.to_incarnation) {
        to.transport->ReceiveForwardReply(std::move(p));
      }
      return;
    case Packet::Kind::kClient:
      return;
  }
}

SimResult Simulation::Run() {
  char tmpl[512];
  snprintf(tmpl, sizeof tmpl, "%s/natcd-sim-%llu-XXXXXX", ScratchRoot().c_str(),
           static_cast<unsigned long long>(options_.seed));
  if (mkdtemp(tmpl) == nullptr) {
    result_.ok = false;
    result_.failure = "mkdtemp failed";
    return result_;
  }
  root_ = tmpl;
  event_log_.on_publish = [this](NodeId from, const std::vector<Event>& events) {
    if (!finished_) OnPublish(from, events);
  };

  const int n = options_.members != 0 ? options_.members : (options_.seed % 2 == 0 ? 3 : 5);
  result_.stats.members = n;
  max_voters_ = n + 1;
  snapshot_entries_ = static_cast<uint64_t>(Rand(15, 80));
  snapshot_catchup_entries_ = static_cast<uint64_t>(Rand(3, 15));
  SimNetwork::Faults faults;
  faults.drop = Uniform(0.08);
  faults.duplicate = Uniform(0.04);
  faults.slow = Uniform(0.08);
  network_.set_faults(faults);
  // Per step (5 ms): a crash every ~2-8 s, a partition every ~2-8 s, ...
  crash_p_ = Uniform(1.0 / 400);
  partition_p_ = Uniform(1.0 / 400);
  conf_p_ = Chance(0.6) ? Uniform(1.0 / 100) : 0;
  transfer_p_ = Uniform(1.0 / 600);
  power_loss_p_ = options_.power_loss >= 0 ? options_.power_loss : Chance(0.5) ? Uniform(1) : 0;
  Trace("%d members, snapshots every %llu entries keeping %llu, drop %.3f dup %.3f slow %.3f", n,
        static_cast<unsigned long long>(snapshot_entries_),
        static_cast<unsigned long long>(snapshot_catchup_entries_), faults.drop, faults.duplicate,
        faults.slow);

  std::vector<std::string> founders;
  for (int i = 0; i < n; i++) founders.push_back("natcd-" + std::to_string(next_name_++));
  for (const std::string& name : founders) {
    SimMember& m = NewMember(name, /*founder=*/true, founders);
    believed_[m.id] = false;
  }
  for (auto& [id, m] : members_) Start(*m);
  clients_.resize(kClients);
  lease_clients_.resize(kLeaseClients);

  while (now_ < options_.fault_ms && result_.ok) Step();
  if (result_.ok && Heal()) {
    if (SimMember* leader = Leader()) CheckAckedWrites(*leader);
    if (result_.ok) CheckHistory();
  }
  for (auto& [id, m] : members_) {
    if (m->up()) {
      result_.stats.forwards += m->transport->forwards();
      result_.stats.resubmits += m->transport->resubmits();
      result_.stats.snapshots_sent += m->transport->snapshot_messages();
    }
  }
  result_.stats.elections = leader_of_term_.size();
  return result_;
}

SimResult RunSimulation(const SimOptions& options) { return Simulation(options).Run(); }

}  // namespace natcd::raft::sim
