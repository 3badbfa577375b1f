// The simulator's parts (simulation.h), shared by the files that implement
// its concepts:
//   simulation.cc    the cluster driver: one step (members' turns in a
//                    seeded order, packets delivered), the run, its trace
//   sim_members.cc   members started, crashed (power loss included), found
//   sim_faults.cc    fault injection: crashes, partitions, full disks
//   sim_clients.cc   the KV client workload and its history
//   sim_leases.cc    the lease clients and the lease contract's check
//   sim_admin.cc     membership changes and leadership moves
//   sim_checks.cc    the checks: leaders per term, convergence, acknowledged
//                    writes, linearizability, healing
// Test code: the Simulation of one seed runs on one thread.
#pragma once

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
#include "core/storage/raft_log/fault_log_fs.h"
#include "natcd/clock.h"
#include "raft/sim/linearizability.h"
#include "raft/sim/sim_event_sink.h"
#include "raft/sim/sim_network.h"
#include "raft/sim/sim_peer_transport.h"
#include "raft/sim/simulation.h"
#include "server/member.h"
#include "server/member_identity.h"

namespace natcd::raft::sim {

using server::Response;

// Simulated time moves in steps of kStepMs; every member takes one turn
// per step. Raft ticks every heartbeat; an election timeout is ten.
inline constexpr int64_t kStepMs = 5;
inline constexpr int64_t kHeartbeatMs = 50;
inline constexpr int64_t kElectionMs = 500;
inline constexpr int64_t kRequestTimeoutMs = 1'500;
// A client that heard nothing for this long gives up on the attempt.
inline constexpr int64_t kClientTimeoutMs = 2'000;
inline constexpr int kClients = 4;
inline constexpr int kLeaseClients = 2;
inline constexpr int kKeys = 3;
// A write with an unknown outcome is sent again with its request id, up to
// this many attempts in all.
inline constexpr int kWriteAttempts = 3;
inline constexpr const char* kLivenessKey = "__live";
inline constexpr const char* kLeaseKeyPrefix = "L/";

inline std::string Str(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
inline std::string Str(const char* fmt, ...) {
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
  // The Raft log file's file system, with a vfs: a power loss drops what
  // it did not sync, as the vfs does for the database.
  std::unique_ptr<raftlog::testing::FaultLogFs> log_fs;
  uint64_t incarnation = 0;
  bool removed = false;  // out of the cluster for good
  int64_t restart_at = 0;
  // While its disk is full: when it is freed. After: when it was, until the
  // member knows a leader again (0: neither).
  int64_t disk_free_at = 0;
  int64_t disk_freed_at = 0;
  bool disk_full() const { return log_fs != nullptr && log_fs->full(); }
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
  void FillDisk();
  void FreeDisk(SimMember& m);
  void FollowDisks();
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

template <typename T>
const T* Simulation::As(const Result<Response>& answer, const char* request) {
  const T* typed = std::get_if<T>(&answer.value());
  if (typed == nullptr) {
    Fail(Str("a %s was answered with response type #%zu (another request's answer)", request,
             answer.value().index()));
  }
  return typed;
}

}  // namespace natcd::raft::sim
