#include "raft/raft.h"

#include <algorithm>
#include <cassert>

namespace natcd::raft {

namespace {
// A kVote's context when it comes from a leadership transfer: the voter
// grants it even while it believes a leader is alive.
constexpr const char* kCampaignTransfer = "CampaignTransfer";

MessageType VoteResponseType(MessageType t) {
  return t == MessageType::kVote ? MessageType::kVoteResp : MessageType::kPreVoteResp;
}

uint64_t PayloadSize(const std::vector<Entry>& entries) {
  uint64_t size = 0;
  for (const Entry& e : entries) size += e.data.size();
  return size;
}
}  // namespace

Status ErrProposalDropped() {
  return Status(Status::Code::kUnavailable, "ErrProposalDropped", "raft proposal dropped");
}
Status ErrStepLocalMessage() {
  return Status::InvalidArgument("ErrStepLocalMsg", "raft: cannot step raft local message");
}
Status ErrStepPeerNotFound() {
  return Status(Status::Code::kNotFound, "ErrStepPeerNotFound",
                "raft: cannot step as peer not found");
}

Result<std::unique_ptr<Raft>> Raft::Create(const Config& cfg) {
  if (cfg.id == kNoNode) return Status::InvalidArgument("ErrRaftConfig", "raft: id must not be 0");
  if (cfg.storage == nullptr) return Status::InvalidArgument("ErrRaftConfig", "raft: no storage");
  if (cfg.heartbeat_tick <= 0 || cfg.election_tick <= cfg.heartbeat_tick) {
    return Status::InvalidArgument("ErrRaftConfig",
                                   "raft: election tick must be greater than heartbeat tick > 0");
  }
  if (cfg.max_inflight_msgs == 0) {
    return Status::InvalidArgument("ErrRaftConfig", "raft: max inflight messages must be > 0");
  }
  uint64_t first = cfg.storage->FirstIndex();
  HardState hs = cfg.storage->InitialHardState();
  if (cfg.applied != 0 && (cfg.applied < first - 1 || cfg.applied > cfg.storage->LastIndex())) {
    return Status::InvalidArgument("ErrRaftConfig", "raft: applied index outside the stored log");
  }
  if (hs.commit != 0 && hs.commit > cfg.storage->LastIndex()) {
    return Status::Corruption("raft: commit index beyond the last stored entry");
  }
  return std::unique_ptr<Raft>(new Raft(cfg));
}

Raft::Raft(const Config& cfg)
    : id_(cfg.id),
      log_(cfg.storage, cfg.max_committed_size_per_ready),
      max_msg_size_(cfg.max_size_per_msg),
      max_uncommitted_size_(cfg.max_uncommitted_entries_size),
      max_inflight_(cfg.max_inflight_msgs),
      check_quorum_(cfg.check_quorum),
      pre_vote_(cfg.pre_vote),
      heartbeat_timeout_(cfg.heartbeat_tick),
      election_timeout_(cfg.election_tick),
      rng_(cfg.seed ^ (cfg.id * 0x9E3779B97F4A7C15ull)) {
  ApplyConfState(cfg.storage->InitialConfState());
  HardState hs = cfg.storage->InitialHardState();
  if (!hs.empty()) {
    log_.CommitTo(hs.commit);
    term_ = hs.term;
    vote_ = hs.vote;
  }
  if (cfg.applied > 0) {
    // What was applied was committed, even if the commit index written
    // without an fsync was lost in a crash.
    log_.CommitTo(cfg.applied);
    log_.AppliedTo(cfg.applied);
  }
  BecomeFollower(term_, kNoNode);
  prev_soft_state_ = soft_state();
  prev_hard_state_ = hard_state();
}

// ---- membership ----

void Raft::AddProgress(NodeId id, bool learner) {
  auto it = progress_.find(id);
  if (it == progress_.end()) {
    it = progress_.emplace(id, Progress(max_inflight_)).first;
    // A new member starts probing from the end of the leader's log.
    it->second.next = log_.LastIndex() + 1;
    it->second.match = 0;
    // Treat it as active for this check-quorum round: it was just added.
    it->second.recent_active = true;
  }
  it->second.is_learner = learner;
  if (id == id_) it->second.match = log_.LastIndex();
}

void Raft::ApplyConfState(const ConfState& cs) {
  progress_.clear();
  for (NodeId id : cs.voters) AddProgress(id, false);
  for (NodeId id : cs.learners) AddProgress(id, true);
}

ConfState Raft::conf_state() const {
  ConfState cs;
  for (const auto& [id, pr] : progress_) (pr.is_learner ? cs.learners : cs.voters).push_back(id);
  return cs;
}

std::vector<NodeId> Raft::Voters() const {
  std::vector<NodeId> out;
  for (const auto& [id, pr] : progress_) {
    if (!pr.is_learner) out.push_back(id);
  }
  return out;
}

size_t Raft::Quorum() const { return Voters().size() / 2 + 1; }

bool Raft::Promotable() const {
  auto it = progress_.find(id_);
  return it != progress_.end() && !it->second.is_learner && !log_.UnstableSnapshot();
}

const Progress* Raft::progress(NodeId id) const {
  if (role_ != Role::kLeader) return nullptr;
  auto it = progress_.find(id);
  return it == progress_.end() ? nullptr : &it->second;
}

ConfState Raft::ApplyConfChange(const ConfChange& cc) {
  if (cc.node_id != kNoNode) {
    auto it = progress_.find(cc.node_id);
    switch (cc.type) {
      case ConfChangeType::kAddNode:
        AddProgress(cc.node_id, false);  // adds, or promotes a learner
        break;
      case ConfChangeType::kAddLearnerNode:
        // Demoting a voter takes joint consensus, which natcd does not do.
        if (it == progress_.end()) AddProgress(cc.node_id, true);
        break;
      case ConfChangeType::kRemoveNode:
        if (it != progress_.end()) progress_.erase(it);
        if (cc.node_id == lead_transferee_) AbortLeaderTransfer();
        break;
    }
  }
  if (role_ == Role::kLeader) {
    if (progress_.count(id_) == 0 || progress_.at(id_).is_learner) {
      // Removed (or demoted): step down so the others elect a leader.
      BecomeFollower(term_, kNoNode);
    } else if (MaybeCommit()) {
      // A smaller quorum may commit more.
      BroadcastAppend();
    }
  }
  return conf_state();
}

bool Raft::HasUnappliedConfChanges() const {
  if (log_.committed() <= log_.applied()) return false;
  auto entries =
      log_.Slice(std::max(log_.applied() + 1, log_.FirstIndex()), log_.committed() + 1, UINT64_MAX);
  if (!entries.ok()) return true;  // cannot tell: be safe
  for (const Entry& e : entries.value()) {
    if (e.type == EntryType::kConfChange) return true;
  }
  return false;
}

// ---- roles ----

void Raft::Reset(uint64_t term) {
  if (term_ != term) {
    term_ = term;
    vote_ = kNoNode;
  }
  lead_ = kNoNode;
  election_elapsed_ = 0;
  heartbeat_elapsed_ = 0;
  ResetRandomizedElectionTimeout();
  AbortLeaderTransfer();
  votes_.clear();
  for (auto& [id, pr] : progress_) {
    bool learner = pr.is_learner;
    pr = Progress(max_inflight_);
    pr.is_learner = learner;
    pr.next = log_.LastIndex() + 1;
    if (id == id_) pr.match = log_.LastIndex();
  }
  pending_conf_index_ = 0;
  uncommitted_size_ = 0;
  read_only_.Reset();
  // Reads waiting for this leader's first commit are abandoned with it;
  // their callers time out and retry.
  pending_read_index_messages_.clear();
}

void Raft::ResetRandomizedElectionTimeout() {
  std::uniform_int_distribution<int> dist(0, election_timeout_ - 1);
  randomized_election_timeout_ = election_timeout_ + dist(rng_);
}

void Raft::BecomeFollower(uint64_t term, NodeId lead) {
  Reset(term);
  lead_ = lead;
  role_ = Role::kFollower;
}

void Raft::BecomeCandidate() {
  assert(role_ != Role::kLeader);
  Reset(term_ + 1);
  vote_ = id_;
  role_ = Role::kCandidate;
}

void Raft::BecomePreCandidate() {
  assert(role_ != Role::kLeader);
  // Neither the term nor the vote changes: a pre-election that fails
  // leaves no trace, so a partitioned member cannot disrupt the cluster
  // when it returns (Raft thesis §9.6).
  votes_.clear();
  lead_ = kNoNode;
  role_ = Role::kPreCandidate;
}

void Raft::BecomeLeader() {
  assert(role_ != Role::kFollower);
  Reset(term_);
  lead_ = id_;
  role_ = Role::kLeader;
  Progress& self = progress_.at(id_);
  self.BecomeReplicate();
  self.recent_active = true;
  // Conservatively, any conf change in the uncommitted tail is pending.
  pending_conf_index_ = log_.LastIndex();
  // An empty entry of the new term: committing it commits everything
  // before it (Raft §5.4.2) and enables ReadIndex.
  AppendEntries({Entry{}});
}

// ---- time ----

void Raft::Tick() {
  if (role_ == Role::kLeader) {
    TickHeartbeat();
  } else {
    TickElection();
  }
}

void Raft::TickElection() {
  election_elapsed_++;
  if (Promotable() && PastElectionTimeout()) {
    election_elapsed_ = 0;
    Message m;
    m.type = MessageType::kHup;
    m.from = id_;
    (void)StepInternal(std::move(m));
  }
}

void Raft::TickHeartbeat() {
  heartbeat_elapsed_++;
  election_elapsed_++;
  if (election_elapsed_ >= election_timeout_) {
    election_elapsed_ = 0;
    if (check_quorum_) {
      Message m;
      m.type = MessageType::kCheckQuorum;
      m.from = id_;
      (void)StepInternal(std::move(m));
    }
    // A transfer that did not finish within an election timeout is over.
    if (role_ == Role::kLeader) AbortLeaderTransfer();
  }
  if (role_ != Role::kLeader) return;
  if (heartbeat_elapsed_ >= heartbeat_timeout_) {
    heartbeat_elapsed_ = 0;
    Message m;
    m.type = MessageType::kBeat;
    m.from = id_;
    (void)StepInternal(std::move(m));
  }
}

// ---- elections ----

void Raft::Hup(CampaignType type) {
  if (role_ == Role::kLeader) return;
  if (!Promotable()) return;
  // A member that has not yet applied a committed membership change does
  // not know the configuration it would lead.
  if (HasUnappliedConfChanges()) return;
  StartCampaign(type);
}

Status Raft::Campaign() {
  Message m;
  m.type = MessageType::kHup;
  return StepInternal(std::move(m));
}

void Raft::StartCampaign(CampaignType type) {
  MessageType vote_type;
  uint64_t term;
  if (type == CampaignType::kPreElection) {
    BecomePreCandidate();
    vote_type = MessageType::kPreVote;
    term = term_ + 1;  // the term it would campaign in
  } else {
    BecomeCandidate();
    vote_type = MessageType::kVote;
    term = term_;
  }
  if (Poll(id_, true) == VoteResult::kWon) {
    // A single voter wins at once.
    if (type == CampaignType::kPreElection) {
      StartCampaign(CampaignType::kElection);
    } else {
      BecomeLeader();
    }
    return;
  }
  for (NodeId id : Voters()) {
    if (id == id_) continue;
    Message m;
    m.type = vote_type;
    m.to = id;
    m.term = term;
    m.index = log_.LastIndex();
    m.log_term = log_.LastTerm();
    if (type == CampaignType::kTransfer) m.context = kCampaignTransfer;
    Send(std::move(m));
  }
}

Raft::VoteResult Raft::Poll(NodeId id, bool granted) {
  votes_.emplace(id, granted);  // the first answer counts
  size_t yes = 0, no = 0;
  std::vector<NodeId> voters = Voters();
  for (NodeId v : voters) {
    auto it = votes_.find(v);
    if (it == votes_.end()) continue;
    (it->second ? yes : no)++;
  }
  size_t quorum = voters.size() / 2 + 1;
  if (yes >= quorum) return VoteResult::kWon;
  if (no > voters.size() - quorum) return VoteResult::kLost;
  return VoteResult::kPending;
}

// ---- messages ----

Status Raft::Step(Message m) {
  if (IsLocalMessage(m.type)) return ErrStepLocalMessage();
  if (IsResponseMessage(m.type) && progress_.count(m.from) == 0) return ErrStepPeerNotFound();
  return StepInternal(std::move(m));
}

Status Raft::StepInternal(Message m) {
  if (m.term == 0) {
    // Local message, or a proposal/read forwarded by a follower.
  } else if (m.term > term_) {
    if (m.type == MessageType::kVote || m.type == MessageType::kPreVote) {
      bool force = m.context == kCampaignTransfer;
      bool in_lease = check_quorum_ && lead_ != kNoNode && election_elapsed_ < election_timeout_;
      // A member that heard from a leader within the election timeout
      // ignores votes: a returning partitioned member cannot depose a
      // healthy leader (Raft thesis §4.2.3).
      if (!force && in_lease) return Status::OK();
    }
    if (m.type == MessageType::kPreVote) {
      // Answering a pre-vote never changes the term.
    } else if (m.type == MessageType::kPreVoteResp && !m.reject) {
      // The term moves when the real election starts.
    } else if (m.type == MessageType::kApp || m.type == MessageType::kHeartbeat ||
               m.type == MessageType::kSnap) {
      BecomeFollower(m.term, m.from);
    } else {
      BecomeFollower(m.term, kNoNode);
    }
  } else if (m.term < term_) {
    if ((check_quorum_ || pre_vote_) &&
        (m.type == MessageType::kHeartbeat || m.type == MessageType::kApp)) {
      // A stale leader, perhaps cut off and back: tell it the new term so
      // it steps down, rather than letting it disrupt us with elections.
      Message resp;
      resp.type = MessageType::kAppResp;
      resp.to = m.from;
      Send(std::move(resp));
    } else if (m.type == MessageType::kPreVote) {
      Message resp;
      resp.type = MessageType::kPreVoteResp;
      resp.to = m.from;
      resp.term = term_;
      resp.reject = true;
      Send(std::move(resp));
    }
    return Status::OK();
  }

  switch (m.type) {
    case MessageType::kHup:
      Hup(pre_vote_ ? CampaignType::kPreElection : CampaignType::kElection);
      return Status::OK();
    case MessageType::kVote:
    case MessageType::kPreVote: {
      bool can_vote = vote_ == m.from || (vote_ == kNoNode && lead_ == kNoNode) ||
                      (m.type == MessageType::kPreVote && m.term > term_);
      Message resp;
      resp.type = VoteResponseType(m.type);
      resp.to = m.from;
      if (can_vote && log_.IsUpToDate(m.index, m.log_term)) {
        // The response carries the candidate's term so it counts there
        // (for a pre-vote, the term it will campaign in).
        resp.term = m.term;
        Send(std::move(resp));
        if (m.type == MessageType::kVote) {
          election_elapsed_ = 0;
          vote_ = m.from;
        }
      } else {
        resp.term = term_;
        resp.reject = true;
        Send(std::move(resp));
      }
      return Status::OK();
    }
    default:
      break;
  }
  switch (role_) {
    case Role::kLeader:
      return StepLeader(m);
    case Role::kCandidate:
    case Role::kPreCandidate:
      return StepCandidate(m);
    case Role::kFollower:
      return StepFollower(m);
  }
  return Status::OK();
}

Status Raft::StepLeader(Message& m) {
  switch (m.type) {
    case MessageType::kBeat:
      BroadcastHeartbeat();
      return Status::OK();
    case MessageType::kCheckQuorum:
      if (!QuorumActive()) BecomeFollower(term_, kNoNode);
      for (auto& [id, pr] : progress_) {
        if (id != id_) pr.recent_active = false;
      }
      return Status::OK();
    case MessageType::kProp: {
      if (m.entries.empty()) return ErrProposalDropped();
      // Removed from the cluster, or handing leadership over.
      if (progress_.count(id_) == 0 || lead_transferee_ != kNoNode) return ErrProposalDropped();
      for (Entry& e : m.entries) {
        if (e.type != EntryType::kConfChange) continue;
        // One membership change at a time: the previous one must be
        // applied first.
        if (pending_conf_index_ > log_.applied()) return ErrProposalDropped();
        pending_conf_index_ = log_.LastIndex() + 1;
      }
      if (!AppendEntries(std::move(m.entries))) return ErrProposalDropped();
      BroadcastAppend();
      return Status::OK();
    }
    case MessageType::kReadIndex:
      if (Voters().size() == 1) {
        // A single voter is its own quorum.
        AnswerReadIndex(m, log_.committed());
        return Status::OK();
      }
      if (!CommittedEntryInCurrentTerm()) {
        pending_read_index_messages_.push_back(std::move(m));
        return Status::OK();
      }
      read_only_.AddRequest(log_.committed(), m);
      read_only_.RecvAck(id_, m.context);
      BroadcastHeartbeatWithCtx(m.context);
      return Status::OK();
    default:
      break;
  }

  auto it = progress_.find(m.from);
  if (it == progress_.end()) return Status::OK();
  Progress& pr = it->second;
  switch (m.type) {
    case MessageType::kAppResp: {
      pr.recent_active = true;
      if (m.reject) {
        uint64_t next_probe = m.reject_hint;
        if (m.log_term > 0) {
          // Skip every entry of a term the follower does not have.
          next_probe = log_.FindConflictByTerm(m.reject_hint, m.log_term).first;
        }
        if (pr.MaybeDecrTo(m.index, next_probe)) {
          if (pr.state == ProgressState::kReplicate) pr.BecomeProbe();
          SendAppend(m.from);
        }
        return Status::OK();
      }
      bool was_paused = pr.IsPaused();
      if (!pr.MaybeUpdate(m.index)) return Status::OK();
      switch (pr.state) {
        case ProgressState::kProbe:
          pr.BecomeReplicate();
          break;
        case ProgressState::kSnapshot:
          if (pr.match + 1 >= log_.FirstIndex()) {
            // Caught up past the snapshot (or the log): replicate again.
            pr.BecomeProbe();
            pr.BecomeReplicate();
          }
          break;
        case ProgressState::kReplicate:
          pr.inflights.FreeTo(m.index);
          break;
      }
      if (MaybeCommit()) {
        ReleasePendingReadIndexMessages();
        // Told with the next Ready, not now: the acknowledgements of one
        // batch arrive together, and the appends proposed meanwhile carry
        // the new commit index anyway (one message per follower, not one
        // per acknowledgement and another for the next entries).
        commit_to_broadcast_ = true;
      } else if (was_paused) {
        SendAppend(m.from);
      }
      // Keep the pipe full.
      while (MaybeSendAppend(m.from, false)) {
      }
      if (m.from == lead_transferee_ && pr.match == log_.LastIndex()) SendTimeoutNow(m.from);
      return Status::OK();
    }
    case MessageType::kHeartbeatResp: {
      pr.recent_active = true;
      pr.probe_sent = false;
      // The follower is alive but the window is full: appends were
      // probably lost. Free one slot so an append goes out; if entries
      // were lost, its rejection sends the leader back to probing.
      if (pr.state == ProgressState::kReplicate && pr.inflights.Full()) {
        pr.inflights.FreeFirstOne();
      }
      if (pr.match < log_.LastIndex()) SendAppend(m.from);
      if (m.context.empty()) return Status::OK();
      const std::set<NodeId>* acks = read_only_.RecvAck(m.from, m.context);
      if (acks == nullptr) return Status::OK();
      size_t voter_acks = 0;
      for (NodeId id : *acks) {
        auto p = progress_.find(id);
        if (p != progress_.end() && !p->second.is_learner) voter_acks++;
      }
      if (voter_acks < Quorum()) return Status::OK();
      for (ReadOnly::Status& rs : read_only_.Advance(m.context)) AnswerReadIndex(rs.req, rs.index);
      return Status::OK();
    }
    case MessageType::kSnapStatus:
      if (pr.state != ProgressState::kSnapshot) return Status::OK();
      if (m.reject) pr.pending_snapshot = 0;
      pr.BecomeProbe();
      // Wait for the follower's answer (or a heartbeat's) before probing.
      pr.probe_sent = true;
      return Status::OK();
    case MessageType::kUnreachable:
      // Appends were probably lost: stop pipelining, probe.
      if (pr.state == ProgressState::kReplicate) pr.BecomeProbe();
      return Status::OK();
    case MessageType::kTransferLeader: {
      if (pr.is_learner) return Status::OK();
      NodeId transferee = m.from;
      if (lead_transferee_ != kNoNode) {
        if (lead_transferee_ == transferee) return Status::OK();
        AbortLeaderTransfer();
      }
      if (transferee == id_) return Status::OK();
      // The transfer must finish within an election timeout.
      election_elapsed_ = 0;
      lead_transferee_ = transferee;
      if (pr.match == log_.LastIndex()) {
        SendTimeoutNow(transferee);
      } else {
        SendAppend(transferee);
      }
      return Status::OK();
    }
    default:
      return Status::OK();
  }
}

Status Raft::StepCandidate(Message& m) {
  MessageType my_resp =
      role_ == Role::kPreCandidate ? MessageType::kPreVoteResp : MessageType::kVoteResp;
  switch (m.type) {
    case MessageType::kProp:
      return ErrProposalDropped();
    case MessageType::kApp:
      BecomeFollower(m.term, m.from);
      HandleAppendEntries(m);
      return Status::OK();
    case MessageType::kHeartbeat:
      BecomeFollower(m.term, m.from);
      HandleHeartbeat(m);
      return Status::OK();
    case MessageType::kSnap:
      BecomeFollower(m.term, m.from);
      HandleSnapshot(m);
      return Status::OK();
    default:
      break;
  }
  if (m.type == my_resp) {
    switch (Poll(m.from, !m.reject)) {
      case VoteResult::kWon:
        if (role_ == Role::kPreCandidate) {
          StartCampaign(CampaignType::kElection);
        } else {
          BecomeLeader();
          BroadcastAppend();
        }
        break;
      case VoteResult::kLost:
        // A pre-vote rejection carries our own term (or a higher one,
        // already handled in Step).
        BecomeFollower(term_, kNoNode);
        break;
      case VoteResult::kPending:
        break;
    }
  }
  return Status::OK();
}

Status Raft::StepFollower(Message& m) {
  switch (m.type) {
    case MessageType::kProp:
    case MessageType::kReadIndex:
    case MessageType::kTransferLeader:
      if (lead_ == kNoNode) return ErrProposalDropped();
      m.to = lead_;
      Send(std::move(m));
      return Status::OK();
    case MessageType::kApp:
      election_elapsed_ = 0;
      lead_ = m.from;
      HandleAppendEntries(m);
      return Status::OK();
    case MessageType::kHeartbeat:
      election_elapsed_ = 0;
      lead_ = m.from;
      HandleHeartbeat(m);
      return Status::OK();
    case MessageType::kSnap:
      election_elapsed_ = 0;
      lead_ = m.from;
      HandleSnapshot(m);
      return Status::OK();
    case MessageType::kTimeoutNow:
      // The leader hands over: campaign at once, skipping the pre-vote
      // (the leader vouches for this member's log).
      Hup(CampaignType::kTransfer);
      return Status::OK();
    case MessageType::kReadIndexResp:
      read_states_.push_back(ReadState{m.index, m.context});
      return Status::OK();
    default:
      return Status::OK();
  }
}

void Raft::HandleAppendEntries(const Message& m) {
  Message resp;
  resp.type = MessageType::kAppResp;
  resp.to = m.from;
  if (m.index < log_.committed()) {
    resp.index = log_.committed();
    Send(std::move(resp));
    return;
  }
  if (auto last = log_.MaybeAppend(m.index, m.log_term, m.commit, m.entries)) {
    resp.index = *last;
    Send(std::move(resp));
    return;
  }
  // Reject, with a hint that lets the leader skip a whole conflicting term.
  uint64_t hint = std::min(m.index, log_.LastIndex());
  auto [hint_index, hint_term] = log_.FindConflictByTerm(hint, m.log_term);
  resp.index = m.index;
  resp.reject = true;
  resp.reject_hint = hint_index;
  resp.log_term = hint_term;
  Send(std::move(resp));
}

void Raft::HandleHeartbeat(const Message& m) {
  // The leader sends min(match, commit), so this never passes our log.
  log_.CommitTo(std::min(m.commit, log_.LastIndex()));
  Message resp;
  resp.type = MessageType::kHeartbeatResp;
  resp.to = m.from;
  resp.context = m.context;
  Send(std::move(resp));
}

void Raft::HandleSnapshot(Message& m) {
  Message resp;
  resp.type = MessageType::kAppResp;
  resp.to = m.from;
  if (Restore(std::move(m.snapshot))) {
    resp.index = log_.LastIndex();
  } else {
    resp.index = log_.committed();
  }
  Send(std::move(resp));
}

bool Raft::Restore(Snapshot snapshot) {
  if (snapshot.meta.index <= log_.committed()) return false;
  if (role_ != Role::kFollower) {
    // Only a follower installs a snapshot; anything else would be a bug
    // elsewhere. Step down and let the leader retry.
    BecomeFollower(term_ + 1, kNoNode);
    return false;
  }
  const ConfState& cs = snapshot.meta.conf_state;
  bool member = std::count(cs.voters.begin(), cs.voters.end(), id_) > 0 ||
                std::count(cs.learners.begin(), cs.learners.end(), id_) > 0;
  // A snapshot that does not name this member belongs to some other
  // configuration, except for a member that has not yet seen its own
  // addition (no configuration, or only one from an earlier snapshot
  // without it): the leader's latest snapshot may predate the change that
  // added it, which then follows in the log.
  if (!member && progress_.count(id_) > 0) return false;
  if (log_.MatchTerm(snapshot.meta.index, snapshot.meta.term)) {
    // The log already has it: just move the commit index.
    log_.CommitTo(snapshot.meta.index);
    return false;
  }
  ConfState conf = cs;
  log_.Restore(std::move(snapshot));
  ApplyConfState(conf);
  return true;
}

void Raft::Send(Message m) {
  // A forwarded proposal, read or transfer keeps its originator.
  if (m.from == kNoNode) m.from = id_;
  if (m.type == MessageType::kVote || m.type == MessageType::kVoteResp ||
      m.type == MessageType::kPreVote || m.type == MessageType::kPreVoteResp) {
    assert(m.term != 0);
  } else if (m.type == MessageType::kProp || m.type == MessageType::kReadIndex ||
             m.type == MessageType::kTransferLeader) {
    // Forwarded like local messages: no term.
    m.term = 0;
  } else {
    m.term = term_;
  }
  msgs_.push_back(std::move(m));
}

bool Raft::MaybeSendAppend(NodeId to, bool send_if_empty) {
  Progress& pr = progress_.at(to);
  if (pr.IsPaused()) return false;
  Message m;
  m.to = to;
  auto term = log_.Term(pr.next - 1);
  auto entries = log_.EntriesFrom(pr.next, max_msg_size_);
  if (term.ok() && entries.ok() && entries.value().empty() && !send_if_empty) return false;
  if (!term.ok() || !entries.ok()) {
    // The entries it needs are compacted away: send the snapshot, but
    // only to a member that answers.
    if (!pr.recent_active) return false;
    auto snapshot = log_.GetSnapshot();
    if (!snapshot.ok() || snapshot.value().empty()) return false;
    m.type = MessageType::kSnap;
    m.snapshot = std::move(snapshot.value());
    pr.BecomeSnapshot(m.snapshot.meta.index);
  } else {
    m.type = MessageType::kApp;
    m.index = pr.next - 1;
    m.log_term = term.value();
    m.entries = std::move(entries.value());
    m.commit = log_.committed();
    pr.sent_commit = std::max(pr.sent_commit, m.commit);
    if (!m.entries.empty()) {
      uint64_t last = m.entries.back().index;
      switch (pr.state) {
        case ProgressState::kReplicate:
          pr.OptimisticUpdate(last);
          pr.inflights.Add(last);
          break;
        case ProgressState::kProbe:
          pr.probe_sent = true;
          break;
        case ProgressState::kSnapshot:
          assert(false && "sending an append while a snapshot is pending");
          break;
      }
    }
  }
  Send(std::move(m));
  return true;
}

void Raft::SendHeartbeat(NodeId to, const std::string& ctx) {
  // Never more than the follower is known to have: its log may be behind.
  Message m;
  m.type = MessageType::kHeartbeat;
  m.to = to;
  m.commit = std::min(progress_.at(to).match, log_.committed());
  progress_.at(to).sent_commit = std::max(progress_.at(to).sent_commit, m.commit);
  m.context = ctx;
  Send(std::move(m));
}

void Raft::SendTimeoutNow(NodeId to) {
  Message m;
  m.type = MessageType::kTimeoutNow;
  m.to = to;
  Send(std::move(m));
}

void Raft::BroadcastAppend() {
  for (auto& [id, pr] : progress_) {
    if (id != id_) SendAppend(id);
  }
}

void Raft::BroadcastCommit() {
  commit_to_broadcast_ = false;
  if (role_ != Role::kLeader) return;
  for (auto& [id, pr] : progress_) {
    if (id != id_ && pr.sent_commit < log_.committed()) SendAppend(id);
  }
}

void Raft::BroadcastHeartbeat() { BroadcastHeartbeatWithCtx(read_only_.LastPendingRequestCtx()); }

void Raft::BroadcastHeartbeatWithCtx(const std::string& ctx) {
  for (auto& [id, pr] : progress_) {
    if (id != id_) SendHeartbeat(id, ctx);
  }
}

bool Raft::AppendEntries(std::vector<Entry> entries) {
  uint64_t size = PayloadSize(entries);
  if (max_uncommitted_size_ > 0 && uncommitted_size_ > 0 &&
      uncommitted_size_ + size > max_uncommitted_size_) {
    return false;
  }
  uncommitted_size_ += size;
  uint64_t last = log_.LastIndex();
  for (size_t i = 0; i < entries.size(); i++) {
    entries[i].term = term_;
    entries[i].index = last + 1 + i;
  }
  last = log_.Append(entries);
  progress_.at(id_).MaybeUpdate(last);
  // A single voter commits at once.
  MaybeCommit();
  return true;
}

bool Raft::MaybeCommit() {
  std::vector<uint64_t> matches;
  for (const auto& [id, pr] : progress_) {
    if (!pr.is_learner) matches.push_back(pr.match);
  }
  if (matches.empty()) return false;
  std::sort(matches.begin(), matches.end(), std::greater<>());
  uint64_t quorum_index = matches[matches.size() / 2];
  bool moved = log_.MaybeCommit(quorum_index, term_);
  if (moved && uncommitted_size_ > 0) {
    // Committed entries no longer count against the uncommitted budget;
    // recount exactly what is left.
    auto left = log_.Slice(log_.committed() + 1, log_.LastIndex() + 1, UINT64_MAX);
    uncommitted_size_ = left.ok() ? PayloadSize(left.value()) : 0;
  }
  return moved;
}

bool Raft::QuorumActive() {
  size_t active = 0;
  for (const auto& [id, pr] : progress_) {
    if (pr.is_learner) continue;
    if (id == id_ || pr.recent_active) active++;
  }
  return active >= Quorum();
}

bool Raft::CommittedEntryInCurrentTerm() const { return log_.TermOr0(log_.committed()) == term_; }

void Raft::ReleasePendingReadIndexMessages() {
  if (pending_read_index_messages_.empty() || !CommittedEntryInCurrentTerm()) return;
  std::vector<Message> pending = std::move(pending_read_index_messages_);
  pending_read_index_messages_.clear();
  for (Message& m : pending) {
    read_only_.AddRequest(log_.committed(), m);
    read_only_.RecvAck(id_, m.context);
    BroadcastHeartbeatWithCtx(m.context);
  }
}

void Raft::AnswerReadIndex(const Message& req, uint64_t index) {
  if (req.from == kNoNode || req.from == id_) {
    read_states_.push_back(ReadState{index, req.context});
    return;
  }
  Message resp;
  resp.type = MessageType::kReadIndexResp;
  resp.to = req.from;
  resp.index = index;
  resp.context = req.context;
  Send(std::move(resp));
}

// ---- the application's calls ----

Status Raft::Propose(std::string data) {
  Message m;
  m.type = MessageType::kProp;
  m.from = id_;
  m.entries.push_back(Entry{0, 0, EntryType::kNormal, std::move(data)});
  return StepInternal(std::move(m));
}

Status Raft::ProposeBatch(std::vector<std::string> data) {
  Message m;
  m.type = MessageType::kProp;
  m.from = id_;
  m.entries.reserve(data.size());
  for (std::string& d : data) m.entries.push_back(Entry{0, 0, EntryType::kNormal, std::move(d)});
  return StepInternal(std::move(m));
}

Status Raft::ProposeConfChange(const ConfChange& cc) {
  if (cc.node_id == kNoNode) {
    return Status::InvalidArgument("ErrBadConfChange", "raft: conf change without a node id");
  }
  Message m;
  m.type = MessageType::kProp;
  m.from = id_;
  m.entries.push_back(Entry{0, 0, EntryType::kConfChange, EncodeConfChange(cc)});
  return StepInternal(std::move(m));
}

Status Raft::ReadIndex(std::string request_ctx) {
  Message m;
  m.type = MessageType::kReadIndex;
  m.from = id_;
  m.context = std::move(request_ctx);
  return StepInternal(std::move(m));
}

void Raft::TransferLeader(NodeId transferee) {
  Message m;
  m.type = MessageType::kTransferLeader;
  m.from = transferee;
  (void)StepInternal(std::move(m));
}

void Raft::ReportUnreachable(NodeId id) {
  Message m;
  m.type = MessageType::kUnreachable;
  m.from = id;
  (void)StepInternal(std::move(m));
}

void Raft::ReportSnapshot(NodeId id, bool failed) {
  Message m;
  m.type = MessageType::kSnapStatus;
  m.from = id;
  m.reject = failed;
  (void)StepInternal(std::move(m));
}

// ---- Ready ----

bool Raft::HasReady() const {
  if (soft_state() != prev_soft_state_) return true;
  HardState hs = hard_state();
  if (!hs.empty() && hs != prev_hard_state_) return true;
  if (log_.UnstableSnapshot()) return true;
  return !msgs_.empty() || !log_.UnstableEntries().empty() || log_.HasNextCommittedEntries() ||
         !read_states_.empty() || commit_to_broadcast_;
}

Ready Raft::GetReady() {
  if (commit_to_broadcast_) BroadcastCommit();
  Ready rd;
  SoftState ss = soft_state();
  if (ss != prev_soft_state_) {
    rd.soft_state = ss;
    prev_soft_state_ = ss;
  }
  HardState hs = hard_state();
  if (hs != prev_hard_state_) rd.hard_state = hs;
  rd.read_states = std::move(read_states_);
  read_states_.clear();
  rd.entries = log_.UnstableEntries();
  if (log_.UnstableSnapshot()) rd.snapshot = *log_.UnstableSnapshot();
  rd.committed_entries = log_.NextCommittedEntries();
  rd.messages = std::move(msgs_);
  msgs_.clear();
  rd.must_sync = !rd.entries.empty() || !rd.snapshot.empty() ||
                 (rd.hard_state && (rd.hard_state->term != prev_hard_state_.term ||
                                    rd.hard_state->vote != prev_hard_state_.vote));
  return rd;
}

void Raft::Advance(const Ready& rd) {
  if (rd.hard_state) prev_hard_state_ = *rd.hard_state;
  if (!rd.snapshot.empty()) {
    log_.StableSnapTo(rd.snapshot.meta.index);
    log_.AppliedTo(rd.snapshot.meta.index);
  }
  if (!rd.entries.empty()) log_.StableTo(rd.entries.back().index, rd.entries.back().term);
  if (!rd.committed_entries.empty()) log_.AppliedTo(rd.committed_entries.back().index);
  // Reads that waited for an entry of this term may go now.
  if (role_ == Role::kLeader) ReleasePendingReadIndexMessages();
}

}  // namespace natcd::raft
