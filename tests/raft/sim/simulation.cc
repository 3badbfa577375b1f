#include "raft/sim/simulation.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <vector>

#include "core/storage/fault_vfs.h"
#include "natcd/clock.h"
#include "raft/sim/linearizability.h"
#include "raft/sim/sim_event_sink.h"
#include "raft/sim/sim_network.h"
#include "raft/sim/sim_peer_transport.h"
#include "server/member.h"
#include "server/member_identity.h"

namespace natcd::raft::sim {
namespace {

using server::Response;

// Simulated time moves in steps of kStepMs; every member takes one turn
// per step. Raft ticks every heartbeat; an election timeout is ten.
constexpr int64_t kStepMs = 5;
constexpr int64_t kHeartbeatMs = 50;
constexpr int64_t kElectionMs = 500;
constexpr int64_t kRequestTimeoutMs = 1'500;
// A client that heard nothing for this long gives up on the attempt.
constexpr int64_t kClientTimeoutMs = 2'000;
constexpr int kClients = 4;
constexpr int kLeaseClients = 2;
constexpr int kKeys = 3;
// A write with an unknown outcome is sent again with its request id, up to
// this many attempts in all.
constexpr int kWriteAttempts = 3;
constexpr const char* kLivenessKey = "__live";
constexpr const char* kLeaseKeyPrefix = "L/";

std::string Str(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string Str(const char* fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return buf;
}

// Calls a function with the member's answer.
class CallbackResponder final : public server::Responder {
 public:
  explicit CallbackResponder(std::function<void(Result<Response>)> on_answer)
      : on_answer_(std::move(on_answer)) {}
  void Respond(Result<Response> response, const server::ResponseContext&) override {
    on_answer_(std::move(response));
  }

 private:
  std::function<void(Result<Response>)> on_answer_;
};

struct SimMember {
  std::string name;
  NodeId id = 0;
  std::string dir;
  server::MemberOptions options;
  std::unique_ptr<ManualClock> clock;
  uint64_t incarnation = 0;
  bool removed = false;  // out of the cluster for good
  int64_t restart_at = 0;
  // The highest header revision a serializable read got from this
  // incarnation: they must not go back.
  int64_t serializable_revision = 0;
  std::unique_ptr<SimEventSink> sink;
  std::unique_ptr<SimPeerTransport> transport;
  std::unique_ptr<server::Member> member;  // null while down; declared last: goes first
  bool up() const { return member != nullptr; }
};

enum class CallKind : uint8_t { kPut, kDelete, kCas, kGet, kSerializableGet };

struct Client {
  bool busy = false;
  CallKind kind = CallKind::kGet;
  uint64_t serial = 0;  // the operation's number: answers to any of its attempts count
  size_t op = 0;        // index into the history (not for serializable reads)
  std::string key;
  server::RequestPayload payload;
  std::string request_id;
  int attempts = 0;
  int64_t deadline = 0;
  int64_t next_at = 0;
};

struct LeaseRecord {
  std::string key;
  int64_t ttl_ms = 0;
  // The lease lives at least until kept_from + ttl_ms: the invocation of
  // its grant, then of its last keepalive answered with a TTL. -1: never
  // granted as far as its client knows.
  int64_t kept_from = -1;
  bool keeping = false;  // its holder keeps it alive (keepalives every TTL/4)
  bool abandoned = false;
  bool gone = false;  // its key's deletion was published, or a keepalive found it gone
};

struct LeaseClient {
  enum class Stage : uint8_t { kIdle, kGranting, kAttaching, kKeeping } stage = Stage::kIdle;
  int64_t lease = 0;
  uint64_t serial = 0;
  server::RequestPayload payload;
  std::string request_id;
  int attempts = 0;
  int64_t first_sent = 0;
  int64_t deadline = 0;
  int64_t next_at = 0;
  int64_t keep_until = 0;
  int64_t next_keepalive = 0;
  bool keepalive_busy = false;
  uint64_t keepalive_serial = 0;
  int64_t keepalive_sent = 0;
  int64_t keepalive_deadline = 0;
};

struct Admin {
  bool busy = false;
  uint64_t serial = 0;
  int64_t deadline = 0;
};

struct AckedWrite {
  std::string key;
  std::string value;
  int64_t revision = 0;
};

// What a member's engine holds, read on its thread at the end.
struct EngineState {
  uint64_t generation = 0;
  uint64_t applied_index = 0;
  int64_t revision = 0;
  std::vector<KeyValue> kvs;
  std::vector<int64_t> leases;
};

uint64_t AppliedIndexOf(const Engine& engine) {
  uint64_t lo = 0, hi = 1;
  while (engine.AlreadyApplied(hi)) {
    lo = hi;
    hi *= 2;
  }
  // AlreadyApplied(lo) (or lo == 0), !AlreadyApplied(hi)
  while (hi - lo > 1) {
    const uint64_t mid = lo + (hi - lo) / 2;
    if (engine.AlreadyApplied(mid)) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return lo;
}

std::string ScratchRoot() {
  if (const char* t = getenv("NATCD_SIM_DIR"); t != nullptr && *t != '\0') return t;
  std::error_code ec;
  if (std::filesystem::is_directory("/dev/shm", ec)) return "/dev/shm";
  return std::filesystem::temp_directory_path().string();
}

class Simulation {
 public:
  explicit Simulation(const SimOptions& options)
      : options_(options), rng_(options.seed), network_(&rng_) {}
  ~Simulation();

  SimResult Run();

 private:
  // ---- members ----
  SimMember& NewMember(const std::string& name, bool founder, std::vector<std::string> cluster);
  void Start(SimMember& m);
  void Crash(SimMember& m, bool power_loss = false);
  std::vector<SimMember*> Alive();
  SimMember* Leader();
  SimMember* RandomMember();  // any not removed, up or not

  // ---- one step ----
  void Step();
  void InjectFaults();
  void Partition();
  void DeliverDue();
  void Deliver(Packet p);

  // ---- calls from clients ----
  void Call(NodeId to, server::RequestPayload payload, std::string request_id,
            std::function<void(Result<Response>)> on_answer);
  void RunClients();
  void StartOp(size_t c);
  void SendAttempt(size_t c);
  void OnAnswer(size_t c, uint64_t serial, Result<Response> answer);
  void RetryOrGiveUp(size_t c);
  void Observe(const KeyValue& kv, const char* where);

  // ---- leases ----
  void RunLeaseClients();
  void SendLeaseStep(size_t l);
  void OnLeaseAnswer(size_t l, uint64_t serial, Result<Response> answer);
  void OnKeepAlive(size_t l, uint64_t serial, Result<Response> answer);
  void AbandonLease(size_t l);
  void OnPublish(NodeId from, const std::vector<Event>& events);
  void LeaseGone(int64_t lease, const char* how);

  // ---- membership and leadership ----
  void RunAdmin();
  void OnAdminAnswer(uint64_t serial, const std::string& what, NodeId target,
                     Result<Response> answer);
  void Believe(const std::vector<server::MemberInfo>& members);

  // ---- checks ----
  void CheckLeaders();
  bool Heal();
  bool TryConverge();
  void CheckAckedWrites(SimMember& m);
  void CheckHistory();
  void Fail(const std::string& what);
  // The answer as a T, or null after failing the run: a member answered a
  // request with the response to another kind of request.
  template <typename T>
  const T* As(const Result<Response>& answer, const char* request);

  // ---- helpers ----
  bool Chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  int64_t Rand(int64_t lo, int64_t hi) {  // inclusive
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }
  double Uniform(double hi) { return std::uniform_real_distribution<double>(0, hi)(rng_); }
  int64_t Stamp() { return ++stamp_; }
  void Trace(const char* fmt, ...) __attribute__((format(printf, 2, 3)));

  SimOptions options_;
  std::mt19937_64 rng_;
  SimNetwork network_;
  int64_t now_ = 0;
  int64_t stamp_ = 0;
  bool faulty_ = true;
  bool finished_ = false;
  std::string root_;
  int max_voters_ = 0;
  int next_name_ = 1;
  uint64_t snapshot_entries_ = 0;
  uint64_t snapshot_catchup_entries_ = 0;
  // Fault rates (per step), chosen per seed.
  double crash_p_ = 0, partition_p_ = 0, conf_p_ = 0, transfer_p_ = 0, power_loss_p_ = 0;
  int64_t heal_partition_at_ = 0;

  std::map<NodeId, std::unique_ptr<SimMember>> members_;
  std::vector<NodeId> removals_;  // members whose removal was acknowledged this step
  // The membership as the last membership answer gave it (id -> learner).
  std::map<NodeId, bool> believed_;
  EventLog event_log_;

  uint64_t next_call_ = 0;
  struct PendingCall {
    server::RequestPayload payload;
    std::string request_id;
    std::function<void(Result<Response>)> on_answer;
  };
  std::map<uint64_t, PendingCall> calls_;  // client packets in flight

  uint64_t next_serial_ = 0;
  std::vector<Client> clients_;
  std::vector<KvOp> history_;
  std::vector<bool> discarded_;                    // reads that got no answer: no effect
  std::map<std::string, std::string> written_;     // value -> its key (values are unique)
  std::map<std::string, std::string> last_value_;  // per key, for plausible CAS
  std::vector<AckedWrite> acked_;
  std::map<std::pair<std::string, int64_t>, std::string> seen_;  // (key, mod revision) -> value

  std::vector<LeaseClient> lease_clients_;
  std::map<int64_t, LeaseRecord> leases_;
  int64_t next_lease_ = 0;

  Admin admin_;

  std::map<uint64_t, NodeId> leader_of_term_;
  std::set<int64_t> published_;  // revisions published by some leader

  uint64_t probe_generation_ = 0;
  std::map<NodeId, EngineState> probes_;
  bool live_acked_ = false;
  int64_t converge_from_ = 0;
  std::vector<server::MemberInfo> final_members_;
  uint64_t final_members_generation_ = 0;

  SimResult result_;
};

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

template <typename T>
const T* Simulation::As(const Result<Response>& answer, const char* request) {
  const T* typed = std::get_if<T>(&answer.value());
  if (typed == nullptr) {
    Fail(Str("a %s was answered with response type #%zu (another request's answer)", request,
             answer.value().index()));
  }
  return typed;
}

// ---------------------------------------------------------------------------
// Members

SimMember& Simulation::NewMember(const std::string& name, bool founder,
                                 std::vector<std::string> cluster) {
  auto m = std::make_unique<SimMember>();
  m->name = name;
  m->id = server::MemberIdOf(name);
  m->dir = root_ + "/" + name;
  std::filesystem::create_directories(m->dir);
  // Each member's clock has its own epoch (and so its own wall clock, a
  // little off the others').
  m->clock = std::make_unique<ManualClock>(1'000'000 + Rand(0, 400));
  server::MemberOptions& o = m->options;
  o.name = name;
  o.member_id = m->id;
  o.cluster_id = 1;
  o.engine.db_path = m->dir + "/natcd.db";
  o.engine.sync = options_.vfs != nullptr;
  o.engine.clock = m->clock.get();
  o.engine.seed = rng_();
  o.engine.lease_ttl_s_min = 1;
  o.engine.lease_expire_retry_ms = 500;
  o.lease_check_interval_ms = 50;
  o.lease_checkpoint_interval_ms = 500;
  o.initial_cluster = std::move(cluster);
  o.new_cluster = founder;
  o.heartbeat_interval_ms = kHeartbeatMs;
  o.election_timeout_ms = kElectionMs;
  o.request_timeout_ms = kRequestTimeoutMs;
  o.snapshot_entries = snapshot_entries_;
  o.snapshot_catchup_entries = snapshot_catchup_entries_;
  o.copy_snapshots_on_member_thread = true;
  SimMember& ref = *m;
  members_[ref.id] = std::move(m);
  return ref;
}

void Simulation::Start(SimMember& m) {
  m.incarnation++;
  Result<std::unique_ptr<server::Member>> opened = server::Member::Open(m.options);
  if (!opened.ok()) {
    Fail(m.name + " does not open: " + opened.status().ToString());
    return;
  }
  m.sink = std::make_unique<SimEventSink>(&event_log_, m.id);
  m.transport = std::make_unique<SimPeerTransport>(m.id, m.incarnation, &network_, &now_,
                                                   m.clock.get(), kRequestTimeoutMs);
  m.member = std::move(opened).value();
  m.transport->set_member(m.member.get());
  m.member->SetPeerTransport(m.transport.get());
  m.member->SetEventSink(m.sink.get());
  m.serializable_revision = 0;
  Trace("%s starts (incarnation %llu)", m.name.c_str(),
        static_cast<unsigned long long>(m.incarnation));
}

void Simulation::Crash(SimMember& m, bool power_loss) {
  if (!m.up()) return;
  Trace("%s crashes%s", m.name.c_str(), power_loss ? ", power lost" : "");
  // A power loss keeps of each file what its last fsync made durable,
  // taken now (closing the database below writes and syncs more).
  std::map<std::string, std::string> durable;
  if (power_loss) {
    for (const auto& entry : std::filesystem::directory_iterator(m.dir)) {
      const std::string path = entry.path().string();
      // The WAL index is rebuilt from the WAL by the first connection.
      if (!entry.is_regular_file() || path.size() < 4 || path.ends_with("-shm")) continue;
      Result<std::string> contents = options_.vfs->DurableContents(path);
      if (!contents.ok()) {
        Fail("power loss: " + contents.status().ToString());
        return;
      }
      std::ifstream now_in(path, std::ios::binary);
      const std::string now_contents((std::istreambuf_iterator<char>(now_in)),
                                     std::istreambuf_iterator<char>());
      if (now_contents != *contents) {
        Trace(
            "%s loses %lld unsynced bytes of %s", m.name.c_str(),
            static_cast<long long>(now_contents.size()) - static_cast<long long>(contents->size()),
            entry.path().filename().c_str());
        result_.stats.power_losses_losing_data++;
      }
      durable[path] = std::move(contents).value();
    }
  }
  result_.stats.forwards += m.transport->forwards();
  result_.stats.resubmits += m.transport->resubmits();
  result_.stats.snapshots_sent += m.transport->snapshot_messages();
  m.member->TEST_Crash();
  m.member.reset();
  m.transport.reset();
  m.sink.reset();
  m.restart_at = now_ + Rand(200, 2'500);
  if (!power_loss) return;
  result_.stats.power_losses++;
  for (const auto& entry : std::filesystem::directory_iterator(m.dir)) {
    std::error_code ec;
    if (entry.is_regular_file()) std::filesystem::remove(entry.path(), ec);
  }
  for (const auto& [path, contents] : durable) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    if (!out) Fail("power loss: cannot write back " + path);
  }
  options_.vfs->ForgetUnsyncedDataUnder(m.dir + "/");
}

std::vector<SimMember*> Simulation::Alive() {
  std::vector<SimMember*> out;
  for (auto& [id, m] : members_) {
    if (m->up()) out.push_back(m.get());
  }
  return out;
}

SimMember* Simulation::Leader() {
  SimMember* best = nullptr;
  for (auto& [id, m] : members_) {
    if (m->up() && m->member->is_leader() &&
        (best == nullptr || m->member->raft_term() > best->member->raft_term())) {
      best = m.get();
    }
  }
  return best;
}

SimMember* Simulation::RandomMember() {
  std::vector<SimMember*> out;
  for (auto& [id, m] : members_) {
    if (!m->removed) out.push_back(m.get());
  }
  return out.empty() ? nullptr : out[Rand(0, out.size() - 1)];
}

// ---------------------------------------------------------------------------
// One step

void Simulation::Step() {
  now_ += kStepMs;
  for (auto& [id, m] : members_) m->clock->AdvanceMs(kStepMs);
  if (faulty_) InjectFaults();
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

void Simulation::InjectFaults() {
  if (heal_partition_at_ != 0 && now_ >= heal_partition_at_) {
    Trace("partition heals");
    network_.HealPartitions();
    heal_partition_at_ = 0;
  }
  if (Chance(crash_p_)) {
    std::vector<SimMember*> alive = Alive();
    if (!alive.empty()) {
      result_.stats.crashes++;
      SimMember* victim = alive[Rand(0, alive.size() - 1)];
      Crash(*victim, options_.vfs != nullptr && Chance(power_loss_p_));
    }
  }
  if (heal_partition_at_ == 0 && Chance(partition_p_)) Partition();
}

void Simulation::Partition() {
  std::vector<NodeId> ids;
  for (auto& [id, m] : members_) {
    if (!m->removed) ids.push_back(id);
  }
  std::shuffle(ids.begin(), ids.end(), rng_);
  const int shape = static_cast<int>(Rand(0, 3));
  const size_t cut =
      shape == 0 ? 1 : static_cast<size_t>(Rand(1, std::max<int64_t>(1, ids.size() - 1)));
  std::set<NodeId> side(ids.begin(), ids.begin() + std::min(cut, ids.size()));
  for (NodeId a : ids) {
    for (NodeId b : ids) {
      if (a == b) continue;
      if (shape == 3) {
        // A random half of the links, each direction on its own.
        if (Chance(0.5)) network_.Block(a, b);
        continue;
      }
      if (side.count(a) == side.count(b)) continue;
      // shape 2: one way only (the side can send, not receive)
      if (shape == 2 && side.count(a)) continue;
      network_.Block(a, b);
    }
  }
  heal_partition_at_ = now_ + Rand(100, 2'500);
  result_.stats.partitions++;
  Trace("partition shape %d, %zu on one side", shape, side.size());
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

// ---------------------------------------------------------------------------
// Clients

void Simulation::Call(NodeId to, server::RequestPayload payload, std::string request_id,
                      std::function<void(Result<Response>)> on_answer) {
  const uint64_t call = ++next_call_;
  calls_[call] = PendingCall{std::move(payload), std::move(request_id), std::move(on_answer)};
  Packet p;
  p.kind = Packet::Kind::kClient;
  p.to = to;
  p.call = call;
  network_.Send(std::move(p), now_);
}

void Simulation::RunClients() {
  for (size_t c = 0; c < clients_.size(); c++) {
    Client& client = clients_[c];
    if (client.busy && now_ >= client.deadline) {
      Trace("client %zu: op %llu attempt %d timed out", c,
            static_cast<unsigned long long>(client.serial), client.attempts);
      RetryOrGiveUp(c);
    }
    if (!client.busy && faulty_ && now_ >= client.next_at) StartOp(c);
  }
}

void Simulation::StartOp(size_t c) {
  Client& client = clients_[c];
  client.busy = true;
  client.serial = ++next_serial_;
  client.attempts = 0;
  client.request_id.clear();
  client.key = "k" + std::to_string(Rand(0, kKeys - 1));
  const int dice = static_cast<int>(Rand(0, 99));
  client.kind = dice < 30   ? CallKind::kPut
                : dice < 38 ? CallKind::kDelete
                : dice < 58 ? CallKind::kCas
                : dice < 85 ? CallKind::kGet
                            : CallKind::kSerializableGet;
  const std::string value = "v" + std::to_string(client.serial);
  KvOp op;
  op.key = client.key;
  switch (client.kind) {
    case CallKind::kPut: {
      op.kind = OpKind::kPut;
      op.value = value;
      PutRequest put;
      put.key = client.key;
      put.value = value;
      client.payload = put;
      client.request_id = "c" + std::to_string(client.serial);
      written_[value] = client.key;
      break;
    }
    case CallKind::kDelete: {
      // For the checker a delete is a put of "absent".
      op.kind = OpKind::kPut;
      DeleteRangeRequest del;
      del.key = client.key;
      client.payload = del;
      client.request_id = "c" + std::to_string(client.serial);
      break;
    }
    case CallKind::kCas: {
      op.kind = OpKind::kCas;
      op.value = value;
      op.expected = Chance(0.8) ? last_value_[client.key] : "";
      TxnRequest txn;
      Compare cmp;
      cmp.key = client.key;
      cmp.result = Compare::Result::kEqual;
      if (op.expected.empty()) {
        cmp.target = Compare::Target::kVersion;
        cmp.version = 0;
      } else {
        cmp.target = Compare::Target::kValue;
        cmp.value = op.expected;
      }
      txn.compare.push_back(cmp);
      PutRequest put;
      put.key = client.key;
      put.value = value;
      txn.success.push_back(RequestOp{put});
      client.payload = txn;
      client.request_id = "c" + std::to_string(client.serial);
      written_[value] = client.key;
      break;
    }
    case CallKind::kGet:
    case CallKind::kSerializableGet: {
      op.kind = OpKind::kGet;
      RangeRequest range;
      range.key = client.key;
      range.serializable = client.kind == CallKind::kSerializableGet;
      client.payload = range;
      break;
    }
  }
  if (client.kind != CallKind::kSerializableGet) {
    op.call = Stamp();
    client.op = history_.size();
    history_.push_back(op);
    discarded_.push_back(false);
  }
  SendAttempt(c);
}

void Simulation::SendAttempt(size_t c) {
  Client& client = clients_[c];
  SimMember* to = RandomMember();
  client.attempts++;
  client.deadline = now_ + kClientTimeoutMs;
  const uint64_t serial = client.serial;
  const NodeId target = to->id;
  Trace("client %zu: op %llu (%d on %s) attempt %d to %s", c,
        static_cast<unsigned long long>(serial), static_cast<int>(client.kind), client.key.c_str(),
        client.attempts, to->name.c_str());
  Call(
      to->id, client.payload, client.request_id,
      [this, c, serial, target](Result<Response> answer) {
        if (finished_) return;
        if (clients_[c].kind == CallKind::kSerializableGet && answer.ok() && clients_[c].busy &&
            clients_[c].serial == serial) {
          // Monotonic per member incarnation.
          SimMember& m = *members_.at(target);
          const RangeResponse* range = As<RangeResponse>(answer, "serializable range");
          if (range == nullptr) return;
          const int64_t rev = range->header.revision;
          if (rev < m.serializable_revision) {
            Fail(Str("serializable read on %s went back from revision %lld to %lld", m.name.c_str(),
                     static_cast<long long>(m.serializable_revision), static_cast<long long>(rev)));
          }
          m.serializable_revision = std::max(m.serializable_revision, rev);
        }
        OnAnswer(c, serial, std::move(answer));
      });
}

void Simulation::RetryOrGiveUp(size_t c) {
  Client& client = clients_[c];
  const bool write = client.kind == CallKind::kPut || client.kind == CallKind::kDelete ||
                     client.kind == CallKind::kCas;
  if (write && client.attempts < kWriteAttempts) {
    result_.stats.retries++;
    SendAttempt(c);
    return;
  }
  if (write) {
    // Unknown: it may take effect at any time from its call on, or never.
    result_.stats.ops_unknown++;
    Trace("client %zu: op %llu outcome unknown", c, static_cast<unsigned long long>(client.serial));
  } else if (client.kind == CallKind::kGet) {
    discarded_[client.op] = true;  // a read that returned nothing has no effect
  }
  client.busy = false;
  client.next_at = now_ + Rand(0, 50);
}

void Simulation::Observe(const KeyValue& kv, const char* where) {
  auto [it, first] = seen_.emplace(std::make_pair(kv.key, kv.mod_revision), kv.value);
  if (!first && it->second != kv.value) {
    Fail(Str("%s: key %s at revision %lld holds '%s', elsewhere '%s'", where, kv.key.c_str(),
             static_cast<long long>(kv.mod_revision), kv.value.c_str(), it->second.c_str()));
  }
}

void Simulation::OnAnswer(size_t c, uint64_t serial, Result<Response> answer) {
  Client& client = clients_[c];
  if (!client.busy || client.serial != serial) return;  // an answer to an op given up on
  if (!answer.ok()) {
    Trace("client %zu: op %llu failed: %s", c, static_cast<unsigned long long>(serial),
          answer.status().ToString().c_str());
    // Whatever the error, a write may have happened (ErrTimeout says so;
    // others too, after an earlier attempt): send it again.
    RetryOrGiveUp(c);
    return;
  }
  KvOp* op = client.kind == CallKind::kSerializableGet ? nullptr : &history_[client.op];
  std::string output;
  switch (client.kind) {
    case CallKind::kPut: {
      const PutResponse* typed = As<PutResponse>(answer, "put");
      if (typed == nullptr) return;
      const PutResponse& put = *typed;
      op->ok = true;
      acked_.push_back(AckedWrite{client.key, op->value, put.header.revision});
      Observe(KeyValue{client.key, 0, put.header.revision, 0, op->value, 0}, "put");
      last_value_[client.key] = op->value;
      break;
    }
    case CallKind::kDelete: {
      const DeleteRangeResponse* typed = As<DeleteRangeResponse>(answer, "delete");
      if (typed == nullptr) return;
      op->ok = true;
      // A delete that found the key took a revision: the key is absent at it.
      if (typed->deleted > 0) acked_.push_back(AckedWrite{client.key, "", typed->header.revision});
      last_value_[client.key] = "";
      break;
    }
    case CallKind::kCas: {
      const TxnResponse* typed = As<TxnResponse>(answer, "txn");
      if (typed == nullptr) return;
      const TxnResponse& txn = *typed;
      op->ok = txn.succeeded;
      if (txn.succeeded) {
        acked_.push_back(AckedWrite{client.key, op->value, txn.header.revision});
        Observe(KeyValue{client.key, 0, txn.header.revision, 0, op->value, 0}, "txn");
        last_value_[client.key] = op->value;
      }
      output = txn.succeeded ? "ok" : "failed";
      break;
    }
    case CallKind::kGet:
    case CallKind::kSerializableGet: {
      const RangeResponse* typed = As<RangeResponse>(answer, "range");
      if (typed == nullptr) return;
      const RangeResponse& range = *typed;
      for (const KeyValue& kv : range.kvs) Observe(kv, "range");
      output = range.kvs.empty() ? "" : range.kvs[0].value;
      if (!output.empty() && written_.count(output) == 0) {
        Fail("a read of " + client.key + " returned '" + output + "', never written");
      }
      if (!output.empty() && written_.count(output) != 0 && written_[output] != client.key) {
        Fail("a read of " + client.key + " returned '" + output + "', written to another key");
      }
      if (op != nullptr) {
        op->output = output;
        last_value_[client.key] = output;
      } else {
        result_.stats.serializable_reads++;
      }
      break;
    }
  }
  if (op != nullptr) op->ret = Stamp();
  result_.stats.ops_acknowledged++;
  Trace("client %zu: op %llu done '%s'", c, static_cast<unsigned long long>(serial),
        output.c_str());
  client.busy = false;
  client.next_at = now_ + Rand(0, 50);
}

// ---------------------------------------------------------------------------
// Leases

void Simulation::RunLeaseClients() {
  for (size_t l = 0; l < lease_clients_.size(); l++) {
    LeaseClient& lc = lease_clients_[l];
    switch (lc.stage) {
      case LeaseClient::Stage::kIdle:
        if (!faulty_ || now_ < lc.next_at) break;
        lc.lease = ++next_lease_;
        leases_[lc.lease] =
            LeaseRecord{kLeaseKeyPrefix + std::to_string(lc.lease), 0, -1, false, false};
        lc.stage = LeaseClient::Stage::kGranting;
        lc.payload = LeaseGrantRequest{Rand(1, 2), lc.lease};
        lc.request_id = "g" + std::to_string(lc.lease);
        lc.attempts = 0;
        lc.first_sent = now_;
        SendLeaseStep(l);
        break;
      case LeaseClient::Stage::kGranting:
      case LeaseClient::Stage::kAttaching:
        if (now_ >= lc.deadline) {
          if (lc.attempts < kWriteAttempts) {
            SendLeaseStep(l);
          } else {
            AbandonLease(l);
          }
        }
        break;
      case LeaseClient::Stage::kKeeping: {
        if (!faulty_ || now_ >= lc.keep_until) {
          AbandonLease(l);
          break;
        }
        if (lc.keepalive_busy && now_ >= lc.keepalive_deadline) lc.keepalive_busy = false;
        if (lc.keepalive_busy || now_ < lc.next_keepalive) break;
        LeaseRecord& rec = leases_[lc.lease];
        lc.keepalive_busy = true;
        lc.keepalive_serial = ++next_serial_;
        lc.keepalive_sent = now_;
        lc.keepalive_deadline = now_ + kClientTimeoutMs;
        lc.next_keepalive = now_ + rec.ttl_ms / 4;
        SimMember* to = RandomMember();
        const uint64_t serial = lc.keepalive_serial;
        Trace("lease %lld: keepalive to %s", static_cast<long long>(lc.lease), to->name.c_str());
        Call(to->id, LeaseKeepAliveRequest{lc.lease}, "",
             [this, l, serial](Result<Response> answer) {
               if (!finished_) OnKeepAlive(l, serial, std::move(answer));
             });
        break;
      }
    }
  }
}

void Simulation::SendLeaseStep(size_t l) {
  LeaseClient& lc = lease_clients_[l];
  lc.attempts++;
  lc.serial = ++next_serial_;
  lc.deadline = now_ + kClientTimeoutMs;
  SimMember* to = RandomMember();
  const uint64_t serial = lc.serial;
  Trace("lease %lld: %s attempt %d to %s", static_cast<long long>(lc.lease),
        lc.stage == LeaseClient::Stage::kGranting ? "grant" : "attach", lc.attempts,
        to->name.c_str());
  Call(to->id, lc.payload, lc.request_id, [this, l, serial](Result<Response> answer) {
    if (!finished_) OnLeaseAnswer(l, serial, std::move(answer));
  });
}

void Simulation::OnLeaseAnswer(size_t l, uint64_t serial, Result<Response> answer) {
  LeaseClient& lc = lease_clients_[l];
  if (lc.serial != serial) return;
  if (!answer.ok()) {
    Trace("lease %lld: failed: %s", static_cast<long long>(lc.lease),
          answer.status().ToString().c_str());
    lc.deadline = now_;  // again at once, or give up
    return;
  }
  LeaseRecord& rec = leases_[lc.lease];
  if (lc.stage == LeaseClient::Stage::kGranting) {
    const LeaseGrantResponse* typed = As<LeaseGrantResponse>(answer, "lease grant");
    if (typed == nullptr) return;
    const LeaseGrantResponse& grant = *typed;
    rec.ttl_ms = grant.ttl * 1000;
    // Granted no earlier than the first attempt was sent.
    rec.kept_from = lc.first_sent;
    Trace("lease %lld granted, ttl %lld s", static_cast<long long>(lc.lease),
          static_cast<long long>(grant.ttl));
    lc.stage = LeaseClient::Stage::kAttaching;
    PutRequest put;
    put.key = rec.key;
    put.value = "held";
    put.lease = lc.lease;
    lc.payload = put;
    lc.request_id = "a" + std::to_string(lc.lease);
    lc.attempts = 0;
    SendLeaseStep(l);
    return;
  }
  if (lc.stage == LeaseClient::Stage::kAttaching) {
    if (As<PutResponse>(answer, "put with a lease") == nullptr) return;
    Trace("lease %lld: key attached", static_cast<long long>(lc.lease));
    lc.stage = LeaseClient::Stage::kKeeping;
    rec.keeping = true;
    lc.keep_until = now_ + Rand(500, 6'000);
    lc.next_keepalive = now_;
    lc.keepalive_busy = false;
    lc.keepalive_serial = 0;  // a late answer to the last lease's keepalive is not this one's
  }
}

void Simulation::OnKeepAlive(size_t l, uint64_t serial, Result<Response> answer) {
  LeaseClient& lc = lease_clients_[l];
  if (lc.stage != LeaseClient::Stage::kKeeping || lc.keepalive_serial != serial) return;
  lc.keepalive_busy = false;
  if (!answer.ok()) return;
  LeaseRecord& rec = leases_[lc.lease];
  const LeaseKeepAliveResponse* typed = As<LeaseKeepAliveResponse>(answer, "lease keepalive");
  if (typed == nullptr) return;
  const LeaseKeepAliveResponse& kept = *typed;
  if (kept.ttl > 0) {
    if (rec.kept_from < lc.keepalive_sent) result_.stats.leases_kept++;
    rec.kept_from = std::max(rec.kept_from, lc.keepalive_sent);
    return;
  }
  // Gone: it must have had its TTL since the last keepalive that kept it.
  Trace("lease %lld: keepalive finds it gone", static_cast<long long>(lc.lease));
  LeaseGone(lc.lease, "gone");
  rec.keeping = false;
  lc.stage = LeaseClient::Stage::kIdle;
  lc.next_at = now_ + Rand(0, 500);
}

void Simulation::AbandonLease(size_t l) {
  LeaseClient& lc = lease_clients_[l];
  Trace("lease %lld abandoned", static_cast<long long>(lc.lease));
  leases_[lc.lease].abandoned = true;
  leases_[lc.lease].keeping = false;
  lc.stage = LeaseClient::Stage::kIdle;
  lc.serial = 0;
  lc.next_at = now_ + Rand(0, 500);
}

void Simulation::OnPublish(NodeId from, const std::vector<Event>& events) {
  int64_t previous = 0;
  for (const Event& e : events) {
    if (e.kv.mod_revision < previous) {
      Fail(Str("%s published revision %lld after %lld", members_.at(from)->name.c_str(),
               static_cast<long long>(e.kv.mod_revision), static_cast<long long>(previous)));
    }
    previous = e.kv.mod_revision;
    published_.insert(e.kv.mod_revision);
    if (e.type == Event::Type::kPut) {
      Observe(e.kv, "event");
      continue;
    }
    if (e.kv.key.rfind(kLeaseKeyPrefix, 0) != 0) continue;  // a client's delete
    const int64_t lease = std::strtoll(e.kv.key.c_str() + 2, nullptr, 10);
    Trace("lease %lld expired (key deleted at revision %lld)", static_cast<long long>(lease),
          static_cast<long long>(e.kv.mod_revision));
    LeaseGone(lease, "expired");
  }
}

// A lease's end, seen now (no earlier than the leader decided it), against
// the last keepalive that kept it (or its grant), kept_from. etcd's promise
// is the whole TTL from there; natcd's (lease_manager.h) is weaker across a
// change of leader: the replicated deadline a new leader starts from may lag
// what the holder earned by half a TTL, and the new leader adds a grace of
// an election timeout (plus the time without a leader, not counted here).
// Short of natcd's promise fails the run; short of etcd's only counts.
void Simulation::LeaseGone(int64_t lease, const char* how) {
  LeaseRecord& rec = leases_[lease];
  if (rec.gone) return;
  rec.gone = true;
  result_.stats.leases_expired++;
  if (rec.kept_from < 0 || now_ >= rec.kept_from + rec.ttl_ms) return;
  const std::string what =
      Str("lease %lld (ttl %lld ms) %s by t=%lld though kept alive at t=%lld%s",
          static_cast<long long>(lease), static_cast<long long>(rec.ttl_ms), how,
          static_cast<long long>(now_), static_cast<long long>(rec.kept_from),
          rec.keeping ? " and still being kept alive" : ", abandoned since");
  if (now_ < rec.kept_from + rec.ttl_ms / 2 + kElectionMs) {
    Fail(what);
    return;
  }
  result_.stats.leases_cut_short++;
  Trace("%s: short of its TTL", what.c_str());
}

// ---------------------------------------------------------------------------
// Membership and leadership

void Simulation::Believe(const std::vector<server::MemberInfo>& members) {
  believed_.clear();
  for (const server::MemberInfo& m : members) believed_[m.id] = m.is_learner;
}

void Simulation::RunAdmin() {
  if (admin_.busy && now_ >= admin_.deadline) admin_.busy = false;
  if (admin_.busy) return;
  server::RequestPayload payload;
  std::string what;
  NodeId target = 0;
  if (Chance(transfer_p_)) {
    std::vector<NodeId> voters;
    for (const auto& [id, learner] : believed_) {
      if (!learner) voters.push_back(id);
    }
    if (voters.empty()) return;
    target = voters[Rand(0, voters.size() - 1)];
    payload = server::MoveLeaderRequest{target};
    what = "move leader";
  } else if (Chance(conf_p_)) {
    int voters = 0;
    NodeId learner = 0;
    for (const auto& [id, is_learner] : believed_) {
      if (is_learner) {
        learner = id;
      } else {
        voters++;
      }
    }
    if (learner != 0) {
      target = learner;
      payload = server::MemberPromoteRequest{learner};
      what = "promote";
    } else if (voters < max_voters_ && Chance(0.6)) {
      std::vector<std::string> cluster;
      for (const auto& [id, m] : members_) {
        if (believed_.count(id)) cluster.push_back(m->name);
      }
      const std::string name = "natcd-" + std::to_string(next_name_++);
      cluster.push_back(name);
      // It starts empty, waiting to be added; the leader catches it up.
      SimMember& joiner = NewMember(name, /*founder=*/false, cluster);
      Start(joiner);
      target = joiner.id;
      payload = server::MemberAddRequest{name, true};
      what = "add learner";
    } else if (voters >= 4 || (learner == 0 && Chance(0.1) && voters >= 3)) {
      std::vector<NodeId> ids;
      for (const auto& [id, is_learner] : believed_) ids.push_back(id);
      target = ids[Rand(0, ids.size() - 1)];
      if (voters < 4 && !believed_[target]) return;  // keep three voters at least
      payload = server::MemberRemoveRequest{target};
      what = "remove";
    } else {
      return;
    }
  } else {
    return;
  }
  SimMember* to = RandomMember();
  admin_.busy = true;
  admin_.serial = ++next_serial_;
  admin_.deadline = now_ + kClientTimeoutMs;
  const uint64_t serial = admin_.serial;
  auto it = members_.find(target);
  Trace("admin: %s %s via %s", what.c_str(), it != members_.end() ? it->second->name.c_str() : "?",
        to->name.c_str());
  Call(to->id, std::move(payload), "", [this, serial, what, target](Result<Response> answer) {
    if (!finished_) OnAdminAnswer(serial, what, target, std::move(answer));
  });
}

void Simulation::OnAdminAnswer(uint64_t serial, const std::string& what, NodeId target,
                               Result<Response> answer) {
  if (serial == admin_.serial) admin_.busy = false;
  if (!answer.ok()) {
    Trace("admin: %s failed: %s", what.c_str(), answer.status().ToString().c_str());
    return;
  }
  Trace("admin: %s done", what.c_str());
  if (auto* added = std::get_if<server::MemberAddResponse>(&answer.value())) {
    Believe(added->members);
    result_.stats.conf_changes++;
  } else if (auto* changed = std::get_if<server::MembershipResponse>(&answer.value())) {
    Believe(changed->members);
    result_.stats.conf_changes++;
    if (what == "remove") removals_.push_back(target);
  } else if (std::holds_alternative<server::MoveLeaderResponse>(answer.value())) {
    result_.stats.transfers++;
  }
}

// ---------------------------------------------------------------------------
// Checks

void Simulation::CheckLeaders() {
  for (auto& [id, m] : members_) {
    if (!m->up() || !m->member->is_leader()) continue;
    const uint64_t term = m->member->raft_term();
    auto [it, first] = leader_of_term_.emplace(term, id);
    if (first) Trace("%s leads term %llu", m->name.c_str(), static_cast<unsigned long long>(term));
    if (!first && it->second != id) {
      Fail(Str("two leaders in term %llu: %s and %s", static_cast<unsigned long long>(term),
               members_.at(it->second)->name.c_str(), m->name.c_str()));
    }
  }
}

// Asks every member for its state (read on its thread in its next turn)
// and the leader for the membership; true once every member of it has
// applied the same entries and holds the same state, with every revision
// published and every abandoned lease expired.
bool Simulation::TryConverge() {
  SimMember* leader = Leader();
  if (leader == nullptr) return false;
  const uint64_t generation = ++probe_generation_;
  leader->member->Submit([&] {
    auto request = std::make_unique<server::Request>();
    request->payload = server::MemberListRequest{};
    request->received_ms = leader->clock->MonotonicMs();
    request->responder =
        std::make_unique<CallbackResponder>([this, generation](Result<Response> answer) {
          if (finished_ || !answer.ok()) return;
          if (auto* list = std::get_if<server::MemberListResponse>(&answer.value())) {
            final_members_ = list->members;
            final_members_generation_ = generation;
          }
        });
    return request;
  }());
  for (SimMember* m : Alive()) {
    const NodeId id = m->id;
    m->member->RunOnMemberThread([this, id, generation](Engine& engine) {
      EngineState& s = probes_[id];
      s.generation = generation;
      s.applied_index = AppliedIndexOf(engine);
      s.revision = engine.revision();
      RangeRequest all;
      all.key = std::string(1, '\0');
      all.range_end = std::string(1, '\0');
      all.serializable = true;
      Result<RangeResponse> range = engine.Range(all);
      s.kvs = range.ok() ? range->kvs : std::vector<KeyValue>{};
      s.leases = engine.LeaseLeases().ids;
      std::sort(s.leases.begin(), s.leases.end());
    });
  }
  // One step: every member takes a turn and answers.
  Step();
  if (!result_.ok || final_members_generation_ != generation) return false;
  // Members outside the configuration (an add whose outcome was lost, a
  // removal not acknowledged) leave.
  std::set<NodeId> config;
  for (const server::MemberInfo& info : final_members_) config.insert(info.id);
  for (auto& [id, m] : members_) {
    if (!m->removed && config.count(id) == 0) {
      Trace("%s is not in the configuration: stopped", m->name.c_str());
      Crash(*m);
      m->removed = true;
    }
  }
  const EngineState* first = nullptr;
  for (NodeId id : config) {
    auto it = members_.find(id);
    if (it == members_.end()) {
      Fail(Str("member %016llx in the configuration was never started",
               static_cast<unsigned long long>(id)));
      return false;
    }
    if (it->second->removed) {
      // Stopped as not in the configuration, but added since (the add was
      // still on its way): back it comes.
      it->second->removed = false;
      return false;
    }
    auto probe = probes_.find(id);
    if (!it->second->up() || probe == probes_.end() || probe->second.generation != generation) {
      return false;
    }
    const EngineState& s = probe->second;
    if (first == nullptr) {
      first = &s;
      continue;
    }
    if (s.revision == first->revision && s.kvs != first->kvs) {
      Fail(Str("%s holds other keys than another member at the same revision %lld",
               it->second->name.c_str(), static_cast<long long>(s.revision)));
      return false;
    }
    if (s.applied_index != first->applied_index) return false;
    if (s.revision != first->revision || s.leases != first->leases) {
      Fail(Str("%s applied the same entries (to %llu) as another member but holds another state",
               it->second->name.c_str(), static_cast<unsigned long long>(s.applied_index)));
      return false;
    }
  }
  if (first == nullptr) return false;
  // Every revision was published by some leader (continuity of events).
  for (int64_t r = 1; r <= first->revision; r++) {
    if (published_.count(r) == 0) return false;
  }
  // Every abandoned lease expired.
  if (!first->leases.empty()) return false;
  for (const KeyValue& kv : first->kvs) {
    if (kv.key.rfind(kLeaseKeyPrefix, 0) == 0) return false;
  }
  result_.stats.final_revision = first->revision;
  Trace("converged: %zu members at index %llu, revision %lld", config.size(),
        static_cast<unsigned long long>(first->applied_index),
        static_cast<long long>(first->revision));
  return true;
}

// Every acknowledged write is in the state, at the revision it was
// acknowledged with.
void Simulation::CheckAckedWrites(SimMember& m) {
  std::vector<AckedWrite> acked = acked_;
  std::string failure;
  m.member->RunOnMemberThread([&acked, &failure](Engine& engine) {
    for (const AckedWrite& w : acked) {
      RangeRequest at;
      at.key = w.key;
      at.revision = w.revision;
      at.serializable = true;
      Result<RangeResponse> range = engine.Range(at);
      const bool deleted = w.value.empty();
      if (!range.ok() || (deleted && !range->kvs.empty()) ||
          (!deleted && (range->kvs.empty() || range->kvs[0].mod_revision != w.revision ||
                        range->kvs[0].value != w.value))) {
        failure = Str("acknowledged write of '%s' to %s at revision %lld is not in the state",
                      w.value.c_str(), w.key.c_str(), static_cast<long long>(w.revision));
        return;
      }
    }
  });
  m.member->RunOneTurn();
  if (!failure.empty()) Fail(failure);
}

void Simulation::CheckHistory() {
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

bool Simulation::Heal() {
  faulty_ = false;
  network_.set_faulty(false);
  heal_partition_at_ = 0;
  const int64_t healed_at = now_;
  const int64_t give_up = now_ + options_.heal_budget_ms;
  int64_t next_try = now_;
  while (now_ < give_up && result_.ok) {
    Step();
    if (!live_acked_ && now_ >= next_try) {
      next_try = now_ + 1'000;
      PutRequest put;
      put.key = kLivenessKey;
      put.value = "live";
      SimMember* to = RandomMember();
      Trace("liveness write to %s", to->name.c_str());
      Call(to->id, put, "live", [this](Result<Response> answer) {
        if (finished_ || !answer.ok() || live_acked_) return;
        live_acked_ = true;
        // Leases abandoned at the latest now: TTL (2 s at most) plus an
        // election timeout of grace for each of a few leader changes.
        converge_from_ = now_ + 2'000 + 4 * kElectionMs;
        Trace("liveness write acknowledged");
      });
    }
    if (live_acked_ && now_ >= converge_from_ && now_ % 100 == 0 && TryConverge()) {
      result_.stats.heal_ms = now_ - healed_at;
      return true;
    }
  }
  if (!result_.ok) return false;
  if (!live_acked_) {
    Fail(Str("no write acknowledged within %lld ms after the faults healed",
             static_cast<long long>(options_.heal_budget_ms)));
    return false;
  }
  std::string leases;
  for (const auto& [id, rec] : leases_) {
    if (!rec.gone) leases += " " + std::to_string(id);
  }
  Fail(
      Str("members did not converge within %lld ms after the faults healed (leases not seen "
          "expiring:%s)",
          static_cast<long long>(options_.heal_budget_ms), leases.c_str()));
  return false;
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

}  // namespace

SimResult RunSimulation(const SimOptions& options) { return Simulation(options).Run(); }

}  // namespace natcd::raft::sim
