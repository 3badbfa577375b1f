// Raft: the consensus state machine of a natcd cluster, pure and
// deterministic in the style of etcd's raft library. No threads, clocks or
// I/O: the caller feeds it messages (Step), time (Tick) and requests
// (Propose, ReadIndex, ProposeConfChange, TransferLeader), and drains a
// Ready: state and entries to persist, messages to send, committed entries
// to apply. Randomness (election timeouts) comes from a seed in Config.
//
// Features: pre-vote, check-quorum, pipelined replication with a bounded
// in-flight window, snapshots, one-at-a-time membership changes with
// learners, leadership transfer, ReadIndex (linearizable reads).
//
// The caller's loop, in this order:
//   Ready rd = raft.GetReady();
//   persist rd.snapshot, rd.entries and rd.hard_state (fsync when
//     rd.must_sync), then send rd.messages;
//   apply rd.snapshot, then rd.committed_entries (calling ApplyConfChange
//     for each kConfChange entry);
//   raft.Advance(rd);
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "natcd/status.h"
#include "raft/progress.h"
#include "raft/raft_log.h"
#include "raft/read_only.h"
#include "raft/storage.h"
#include "raft/types.h"

namespace natcd::raft {

struct Config {
  NodeId id = kNoNode;
  // Ticks without hearing from a leader before a follower campaigns; the
  // actual timeout is random in [election_tick, 2 * election_tick).
  int election_tick = 10;
  // Ticks between a leader's heartbeats.
  int heartbeat_tick = 1;
  const Storage* storage = nullptr;
  // The last index the application applied before a restart (0: the
  // storage's snapshot index).
  uint64_t applied = 0;
  // Bytes of entries in one append message.
  uint64_t max_size_per_msg = 1 << 20;
  // Bytes of committed entries in one Ready.
  uint64_t max_committed_size_per_ready = 64 << 20;
  // Appends in flight to one follower in the replicate state.
  size_t max_inflight_msgs = 256;
  // Uncommitted entry bytes a leader accepts before it drops proposals
  // (bounds the log's growth while quorum is lost). 0 = no limit.
  uint64_t max_uncommitted_entries_size = 0;
  bool check_quorum = true;
  bool pre_vote = true;
  // Seeds the election-timeout randomness.
  uint64_t seed = 0;
};

struct Ready {
  std::optional<SoftState> soft_state;  // set when it changed
  std::optional<HardState> hard_state;  // set when it changed
  std::vector<ReadState> read_states;
  std::vector<Entry> entries;  // to persist before sending messages
  Snapshot snapshot;           // to persist and apply (empty: none)
  std::vector<Entry> committed_entries;
  std::vector<Message> messages;
  // Whether persisting needs an fsync (a new term, vote or entries).
  bool must_sync = false;
};

// Errors from Propose and friends.
Status ErrProposalDropped();
Status ErrStepLocalMessage();
Status ErrStepPeerNotFound();

class Raft {
 public:
  // cfg.storage must outlive the Raft.
  static Result<std::unique_ptr<Raft>> Create(const Config& cfg);

  // Time passes by one tick.
  void Tick();
  // A message from a peer. Local message types are refused, and responses
  // from members not in the configuration are dropped.
  Status Step(Message m);
  // Proposes data as a normal entry; a follower forwards it to the leader.
  Status Propose(std::string data);
  // Proposes several normal entries at once: appended together and sent to
  // each follower in one append message (proposals one by one would send
  // one message per entry). All or none are accepted.
  Status ProposeBatch(std::vector<std::string> data);
  Status ProposeConfChange(const ConfChange& cc);
  // Starts a linearizable read; its ReadState (with request_ctx) comes in a
  // later Ready. request_ctx must be unique among reads in flight.
  Status ReadIndex(std::string request_ctx);
  // Asks the leader to hand leadership to transferee.
  void TransferLeader(NodeId transferee);
  // Campaigns now (as if the election timeout had passed).
  Status Campaign();
  // The transport could not deliver to id / finished sending a snapshot.
  void ReportUnreachable(NodeId id);
  void ReportSnapshot(NodeId id, bool failed);
  // Applies a committed membership change; returns the new membership.
  ConfState ApplyConfChange(const ConfChange& cc);

  bool HasReady() const;
  Ready GetReady();
  void Advance(const Ready& rd);

  NodeId id() const { return id_; }
  uint64_t term() const { return term_; }
  NodeId lead() const { return lead_; }
  Role role() const { return role_; }
  uint64_t committed() const { return log_.committed(); }
  uint64_t applied() const { return log_.applied(); }
  uint64_t last_index() const { return log_.LastIndex(); }
  HardState hard_state() const { return HardState{term_, vote_, log_.committed()}; }
  SoftState soft_state() const { return SoftState{lead_, role_}; }
  ConfState conf_state() const;
  // The log as this member sees it (stable and unstable parts).
  const RaftLog& log() const { return log_; }
  NodeId lead_transferee() const { return lead_transferee_; }
  // The leader's view of a follower (nullptr if unknown or not leader).
  const Progress* progress(NodeId id) const;
  // The voters' quorum size.
  size_t Quorum() const;

 private:
  explicit Raft(const Config& cfg);

  enum class CampaignType { kPreElection, kElection, kTransfer };
  enum class VoteResult { kPending, kWon, kLost };

  void BecomeFollower(uint64_t term, NodeId lead);
  void BecomeCandidate();
  void BecomePreCandidate();
  void BecomeLeader();
  void Reset(uint64_t term);
  void ResetRandomizedElectionTimeout();
  bool PastElectionTimeout() const { return election_elapsed_ >= randomized_election_timeout_; }
  bool Promotable() const;

  void TickElection();
  void TickHeartbeat();
  void Hup(CampaignType type);
  void StartCampaign(CampaignType type);
  VoteResult Poll(NodeId id, bool granted);

  Status StepInternal(Message m);
  Status StepLeader(Message& m);
  Status StepCandidate(Message& m);
  Status StepFollower(Message& m);
  void HandleAppendEntries(const Message& m);
  void HandleHeartbeat(const Message& m);
  void HandleSnapshot(Message& m);
  bool Restore(Snapshot snapshot);

  void Send(Message m);
  void SendAppend(NodeId to) { MaybeSendAppend(to, true); }
  bool MaybeSendAppend(NodeId to, bool send_if_empty);
  void SendHeartbeat(NodeId to, const std::string& ctx);
  void SendTimeoutNow(NodeId to);
  void BroadcastAppend();
  // Appends (empty if need be) to every follower not yet told the current
  // commit index.
  void BroadcastCommit();
  void BroadcastHeartbeat();
  void BroadcastHeartbeatWithCtx(const std::string& ctx);
  bool AppendEntries(std::vector<Entry> entries);
  bool MaybeCommit();
  bool QuorumActive();
  bool CommittedEntryInCurrentTerm() const;
  void ReleasePendingReadIndexMessages();
  void AnswerReadIndex(const Message& req, uint64_t index);
  void AbortLeaderTransfer() { lead_transferee_ = kNoNode; }
  bool HasUnappliedConfChanges() const;
  void ApplyConfState(const ConfState& cs);
  void AddProgress(NodeId id, bool learner);
  std::vector<NodeId> Voters() const;

  NodeId id_;
  uint64_t term_ = 0;
  NodeId vote_ = kNoNode;
  RaftLog log_;
  uint64_t max_msg_size_;
  uint64_t max_uncommitted_size_;
  uint64_t uncommitted_size_ = 0;
  size_t max_inflight_;
  std::map<NodeId, Progress> progress_;  // ordered: deterministic sends
  Role role_ = Role::kFollower;
  std::map<NodeId, bool> votes_;
  std::vector<Message> msgs_;
  std::vector<ReadState> read_states_;
  NodeId lead_ = kNoNode;
  NodeId lead_transferee_ = kNoNode;
  // A commit index moved and not every follower has been told (GetReady).
  bool commit_to_broadcast_ = false;
  // The index of the latest conf change the leader appended; another may
  // only be proposed once it is applied.
  uint64_t pending_conf_index_ = 0;
  ReadOnly read_only_;
  // Read requests that arrived before the leader committed an entry of its
  // own term: answered once it has.
  std::vector<Message> pending_read_index_messages_;
  int election_elapsed_ = 0;
  int heartbeat_elapsed_ = 0;
  bool check_quorum_;
  bool pre_vote_;
  int heartbeat_timeout_;
  int election_timeout_;
  int randomized_election_timeout_ = 0;
  std::mt19937_64 rng_;

  // What the last Ready reported, to tell what changed.
  SoftState prev_soft_state_;
  HardState prev_hard_state_;
};

}  // namespace natcd::raft
