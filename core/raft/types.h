// The vocabulary of natcd's Raft: log entries, persistent state, snapshots,
// membership and the messages members exchange. Plain values, no behaviour,
// so that the Raft state machine, its storage, the simulator and the NATS
// transport all speak the same types. The meanings follow etcd's raftpb.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace natcd::raft {

using NodeId = uint64_t;
constexpr NodeId kNoNode = 0;

enum class EntryType : uint8_t {
  kNormal = 0,      // data is the application's command (may be empty: a leader's no-op)
  kConfChange = 1,  // data is an encoded ConfChange
};

struct Entry {
  uint64_t term = 0;
  uint64_t index = 0;
  EntryType type = EntryType::kNormal;
  std::string data;

  bool operator==(const Entry&) const = default;
};

// What must be on stable storage before a member sends a message that
// depends on it (a vote, an append acknowledgement).
struct HardState {
  uint64_t term = 0;
  NodeId vote = kNoNode;
  uint64_t commit = 0;

  bool operator==(const HardState&) const = default;
  bool empty() const { return term == 0 && vote == kNoNode && commit == 0; }
};

// Who is in the cluster. Voters count toward quorum; learners receive the
// log but neither vote nor count.
struct ConfState {
  std::vector<NodeId> voters;
  std::vector<NodeId> learners;

  bool operator==(const ConfState&) const = default;
};

struct SnapshotMeta {
  uint64_t index = 0;
  uint64_t term = 0;
  ConfState conf_state;

  bool operator==(const SnapshotMeta&) const = default;
};

// The state machine at meta.index, as the application encoded it.
struct Snapshot {
  SnapshotMeta meta;
  std::string data;

  bool empty() const { return meta.index == 0; }
};

// One membership change at a time (Raft thesis §4.1): add a voter, add a
// learner, promote a learner (kAddNode on a learner) or remove a member.
enum class ConfChangeType : uint8_t {
  kAddNode = 0,
  kRemoveNode = 1,
  kAddLearnerNode = 2,
};

struct ConfChange {
  ConfChangeType type = ConfChangeType::kAddNode;
  NodeId node_id = kNoNode;
  std::string context;  // the application's, e.g. the member's name

  bool operator==(const ConfChange&) const = default;
};

std::string EncodeConfChange(const ConfChange& cc);
// False when data is not an encoded ConfChange.
bool DecodeConfChange(const std::string& data, ConfChange* cc);

enum class MessageType : uint8_t {
  kHup = 0,   // local: start an election
  kBeat = 1,  // local: leader sends heartbeats
  kProp = 2,  // a proposal (local, or forwarded by a follower)
  kApp = 3,   // append entries
  kAppResp = 4,
  kVote = 5,
  kVoteResp = 6,
  kSnap = 7,  // install a snapshot
  kHeartbeat = 8,
  kHeartbeatResp = 9,
  kUnreachable = 10,  // local: the transport could not reach a peer
  kSnapStatus = 11,   // local: the transport finished (or failed) sending a snapshot
  kCheckQuorum = 12,  // local
  kTransferLeader = 13,
  kTimeoutNow = 14,  // leader to transferee: campaign now
  kReadIndex = 15,
  kReadIndexResp = 16,
  kPreVote = 17,
  kPreVoteResp = 18,
};

const char* MessageTypeName(MessageType type);
bool IsLocalMessage(MessageType type);
bool IsResponseMessage(MessageType type);

struct Message {
  MessageType type = MessageType::kHup;
  NodeId to = kNoNode;
  NodeId from = kNoNode;
  uint64_t term = 0;
  // kApp: the term and index of the entry before `entries`.
  // kVote/kPreVote: the candidate's last log term and index.
  uint64_t log_term = 0;
  uint64_t index = 0;
  std::vector<Entry> entries;
  uint64_t commit = 0;
  Snapshot snapshot;  // kSnap
  bool reject = false;
  uint64_t reject_hint = 0;  // kAppResp reject: the follower's last index
  std::string context;       // kReadIndex: the request's id; kHeartbeat: the read it confirms
};

// A linearizable read may be served once the applied index reaches `index`.
struct ReadState {
  uint64_t index = 0;
  std::string request_ctx;

  bool operator==(const ReadState&) const = default;
};

enum class Role : uint8_t { kFollower, kCandidate, kPreCandidate, kLeader };
const char* RoleName(Role role);

struct SoftState {
  NodeId lead = kNoNode;
  Role role = Role::kFollower;

  bool operator==(const SoftState&) const = default;
};

}  // namespace natcd::raft
