// SimNetwork: the simulator's network between members (and between
// clients and members). Every packet is delivered after a delay; while the
// network is faulty it may also be dropped, duplicated or much delayed, and
// partitions cut chosen directions between members. Delivery order is
// (due time, send order): deterministic from the seed.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <utility>

#include "natcd/status.h"
#include "raft/types.h"
#include "server/request.h"

namespace natcd::raft::sim {

using server::NodeId;

struct Packet {
  enum class Kind : uint8_t {
    kRaft,
    kSnapshotChunk,
    kSnapshotAck,
    kForward,       // a request handed to the leader
    kForwardReply,  // the leader's answer (or "no responders") back to the forwarder
    kClient,        // a client's request to a member
  };
  Kind kind = Kind::kRaft;
  NodeId from = 0;
  NodeId to = 0;
  // kForward: the forwarder's incarnation; kForwardReply: the incarnation
  // it is for (a restarted member forgot what it had forwarded).
  uint64_t from_incarnation = 0;
  uint64_t to_incarnation = 0;
  raft::Message raft;
  std::string bytes;
  // kForward / kForwardReply: the forwarder's number for the request.
  uint64_t forward_seq = 0;
  // kForward: the request as it travels (its responder stays behind).
  server::RequestPayload payload;
  std::string request_id;
  int hops = 0;
  // kForwardReply: the answer; nullopt: nobody serves the leader's subject
  // (NATS's "no responders").
  std::optional<Result<server::Response>> answer;
  // kClient: which client call this is (the simulation builds the request
  // at delivery).
  uint64_t call = 0;
};

class SimNetwork {
 public:
  struct Faults {
    double drop = 0;       // a packet is lost
    double duplicate = 0;  // a packet arrives twice
    double slow = 0;       // a packet takes 20-200 ms instead of 1-15
  };

  explicit SimNetwork(std::mt19937_64* rng) : rng_(rng) {}

  void set_faults(const Faults& faults) { faults_ = faults; }
  // Off: every packet arrives, in 1-15 ms, and no partition stands.
  void set_faulty(bool faulty) {
    faulty_ = faulty;
    if (!faulty) blocked_.clear();
  }
  bool faulty() const { return faulty_; }

  // Queues a packet sent at `now` (sim ms). Client packets are never
  // duplicated (a client library sends once).
  void Send(Packet packet, int64_t now);
  // The next packet due by `now`, if any.
  std::optional<Packet> NextDue(int64_t now);

  // Partitions: from cannot reach to.
  void Block(NodeId from, NodeId to) { blocked_.insert({from, to}); }
  void HealPartitions() { blocked_.clear(); }
  bool Blocked(NodeId from, NodeId to) const { return blocked_.count({from, to}) > 0; }

  uint64_t sent() const { return sent_; }
  uint64_t dropped() const { return dropped_; }

 private:
  bool Chance(double p) { return std::uniform_real_distribution<double>(0, 1)(*rng_) < p; }
  int64_t Rand(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(*rng_);
  }

  std::mt19937_64* rng_;
  Faults faults_;
  bool faulty_ = true;
  uint64_t seq_ = 0;
  uint64_t sent_ = 0;
  uint64_t dropped_ = 0;
  std::map<std::pair<int64_t, uint64_t>, Packet> in_flight_;  // by (due, seq)
  std::set<std::pair<NodeId, NodeId>> blocked_;
};

}  // namespace natcd::raft::sim
