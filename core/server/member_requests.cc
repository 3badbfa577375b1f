// Member: requests from the front ends (see member_impl.h).
#include <algorithm>
#include <cstdlib>

#include "auth/auth_errors.h"
#include "server/member_identity.h"
#include "server/member_impl.h"

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
         std::holds_alternative<MemberUpdateRequest>(p) ||
         std::holds_alternative<LeaseKeepAliveRequest>(p) ||
         std::holds_alternative<LeaseTimeToLiveRequest>(p) ||
         std::holds_alternative<LeaseLeasesRequest>(p) ||
         std::holds_alternative<MoveLeaderRequest>(p) || std::holds_alternative<AlarmRequest>(p);
}

namespace {

Status NoLeader() { return Status::Unavailable("ErrNoLeader", "etcdserver: no leader"); }
Status RequestTimedOut() {
  return Status(Status::Code::kTimeout, "ErrTimeout", "etcdserver: request timed out");
}

WriteRequest ToWriteRequest(const RequestPayload& payload) {
  return std::visit(
      [](const auto& r) -> WriteRequest {
        using T = std::decay_t<decltype(r)>;
        if constexpr (std::is_constructible_v<WriteRequest, T>) {
          return WriteRequest(r);
        } else {
          return WriteRequest(CompactionRequest{});  // not a write: never called
        }
      },
      payload);
}

}  // namespace

ResponseHeader Member::Impl::Now() const {
  ResponseHeader now;
  now.revision = engine->revision();
  return now;
}

void Member::Impl::Answer_(Answers* answers, std::unique_ptr<Request> request,
                           Result<Response> response, bool is_write) {
  answers->push_back(Answer{std::move(request), std::move(response), is_write});
}

void Member::Impl::Handle(std::unique_ptr<Request> request, Answers* answers) {
  // Checked here, on the member that received it, before it is forwarded
  // or served (the member that holds its token).
  if (Status allowed = Authorize(request.get()); !allowed.ok()) {
    if (TokenAhead(request->token)) {
      waiting_for_token.push_back(std::move(request));  // RetryWaiting
    } else {
      Answer_(answers, std::move(request), std::move(allowed));
    }
    return;
  }
  if (Status refused = AlarmGate(*request); !refused.ok()) {
    Answer_(answers, std::move(request), std::move(refused), IsWrite(request->payload));
    return;
  }
  const RequestPayload& payload = request->payload;
  if (std::holds_alternative<AuthRequest>(payload)) {
    HandleAuth(std::move(request), answers);
    return;
  }
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
  if (std::holds_alternative<MemberUpdateRequest>(payload)) {
    HandleMemberUpdate(std::move(request), answers);
    return;
  }
  if (std::holds_alternative<AlarmRequest>(payload)) {
    HandleAlarm(std::move(request), answers);
    return;
  }
  if (auto* range = std::get_if<RangeRequest>(&payload); range && !range->serializable) {
    // Linearizable: served once this member has applied everything the
    // leader had committed when the read arrived (ReadIndex).
    reads.Add(std::move(request));
    return;
  }
  if (std::holds_alternative<LeaseKeepAliveRequest>(payload) ||
      std::holds_alternative<LeaseTimeToLiveRequest>(payload) ||
      std::holds_alternative<LeaseLeasesRequest>(payload)) {
    // Lease deadlines live on the leader, so a lease is only renewed (or
    // reported) once a quorum confirms this member still leads: a leader
    // that was paused (a stopped process, a frozen VM) and has not yet
    // heard of its successor must not answer a renewal its successor never
    // saw. The read index round is that confirmation (one per turn for all).
    reads.Add(std::move(request));
    return;
  }
  HandleLocal(std::move(request), answers);
}

void Member::Impl::HandleLocal(std::unique_ptr<Request> request, Answers* answers) {
  if (std::holds_alternative<LeaseKeepAliveRequest>(request->payload)) {
    if (HandleKeepAlive(std::move(request), answers)) ProposeLeaseCheckpoints(false);
    return;
  }
  Result<Response> response = std::visit(
      [&](auto& r) -> Result<Response> {
        member_thread.AssertHeld();
        using T = std::decay_t<decltype(r)>;
        if constexpr (std::is_same_v<T, RangeRequest>) {
          if (options.metrics) options.metrics->range_total.Inc();
          Result<RangeResponse> range = engine->Range(r);
          if (!range.ok()) return range.status();
          return Response(std::move(range).value());
        } else if constexpr (std::is_same_v<T, LeaseTimeToLiveRequest>) {
          return Response(engine->LeaseTimeToLive(r));
        } else if constexpr (std::is_same_v<T, LeaseLeasesRequest>) {
          return Response(engine->LeaseLeases());
        } else if constexpr (std::is_same_v<T, StatusRequest>) {
          StatusResponse s;
          s.header = Now();
          Result<int64_t> size = engine->DatabaseSizeBytes();
          s.db_size = size.ok() ? *size : 0;
          Result<int64_t> in_use = engine->DatabaseSizeInUseBytes();
          s.db_size_in_use = in_use.ok() ? *in_use : s.db_size;
          s.leader = raft->lead();
          s.raft_index = raft->last_index();
          s.raft_applied_index = applied_index;
          s.raft_term = raft->term();
          const raft::ConfState cs = raft->conf_state();
          s.is_learner = std::count(cs.learners.begin(), cs.learners.end(), options.member_id) > 0;
          s.errors = AlarmErrors();
          return Response(std::move(s));
        } else if constexpr (std::is_same_v<T, HashKVRequest>) {
          // On the member thread, as etcd's (which holds its store's read
          // lock): the hash is of the applied state at one revision.
          Result<HashKVResponse> hash = engine->HashKV(r);
          if (!hash.ok()) return hash.status();
          return Response(std::move(hash).value());
        } else if constexpr (std::is_same_v<T, HashRequest>) {
          Result<HashResponse> hash = engine->Hash();
          if (!hash.ok()) return hash.status();
          return Response(std::move(hash).value());
        } else if constexpr (std::is_same_v<T, DefragmentRequest>) {
          // Blocks this member's turn (see Engine::Defragment): etcd too
          // stops serving while it defragments; the others keep serving.
          Result<DefragmentResponse> done = engine->Defragment();
          if (!done.ok()) return done.status();
          next_db_size_ms = 0;  // the metrics show the new size next turn
          return Response(std::move(done).value());
        } else if constexpr (std::is_same_v<T, MemberListRequest>) {
          return Response(MemberListResponse{Now(), membership.Members(raft->conf_state())});
        } else {
          return Status::Internal("request not served locally");
        }
      },
      request->payload);
  Answer_(answers, std::move(request), std::move(response));
}

// A renewal a new leader would not honour yet (one more than half a TTL
// past the replicated deadline, or the lease's first on this leader) is
// answered once the checkpoint that records it is applied
// (AnswerHeldRenewals); the caller proposes that checkpoint. Any other at
// once. A holder renewing every TTL/3 (etcd's clients) has every second
// keepalive wait for a commit: a checkpoint each 2/3 of a TTL.
bool Member::Impl::HandleKeepAlive(std::unique_ptr<Request> request, Answers* answers) {
  const LeaseKeepAliveRequest& keep = std::get<LeaseKeepAliveRequest>(request->payload);
  const int64_t now = clock->MonotonicMs();
  LeaseKeepAliveResponse renewed = engine->LeaseKeepAlive(keep);
  if (options.metrics && renewed.ttl > 0) options.metrics->lease_renewed.Inc();
  if (renewed.ttl > 0 && !engine->LeaseRenewalRecorded(keep.id, now)) {
    held_renewals.Add(
        HeldRenewals::Held{std::move(request), std::move(renewed), now, raft->term()});
    return true;
  }
  Answer_(answers, std::move(request), Response(std::move(renewed)));
  return false;
}

// On the leader: the write becomes a log entry; the answer waits for it to
// be applied (ApplyEntry).
void Member::Impl::HandleWrite(std::unique_ptr<Request> request, Answers* answers) {
  // A retry of a write already applied: answer what the first attempt got.
  if (std::optional<Result<Response>> remembered = Remembered(*request)) {
    Answer_(answers, std::move(request), std::move(*remembered), true);
    return;
  }
  LogCommand command;
  command.request = ToWriteRequest(request->payload);
  engine->Prepare(&command.request);
  command.request_id = request->request_id;
  command.request_expires_ms = clock->RealtimeMs() + options.request_id_window_ms;
  command.auth_revision = request->auth_revision;
  ProposeFor(std::move(command), std::move(request));
}

// Into this turn's batch (the leader's own entries too: lease expiry,
// checkpoints, compaction, the events published, which nobody waits for).
void Member::Impl::Propose(LogCommand command) {
  turn_entries.push_back(EncodeLogCommand(command));
  turn_commands.push_back(std::move(command));
}

void Member::Impl::ProposeFor(LogCommand command, std::unique_ptr<Request> request) {
  command.origin_member = options.member_id;
  command.origin_seq = proposals.Next();
  const uint64_t seq = command.origin_seq;
  Propose(std::move(command));
  turn_seqs.push_back(seq);
  proposals.Add(seq, raft->term(), std::move(request),
                clock->MonotonicMs() + options.request_timeout_ms);
}

// Everything proposed this turn goes to Raft as one batch: one append
// message per follower, not one per write.
void Member::Impl::FlushProposals(Answers* answers) {
  if (turn_entries.empty()) return;
  const uint64_t first_index = raft->last_index() + 1;
  const uint64_t term = raft->term();
  const size_t count = turn_entries.size();
  Status s = raft->ProposeBatch(std::move(turn_entries));
  turn_entries.clear();
  if (s.ok() && raft->last_index() + 1 == first_index + count) {
    proposed_commands.Add(first_index, term, std::move(turn_commands));
  }
  if (!s.ok()) {
    continuity.RecordDropped();
    // The renewals held for these checkpoints wait for the next ones.
    for (const LogCommand& command : turn_commands) {
      if (const auto* cp = std::get_if<LeaseCheckpointRequest>(&command.request);
          cp != nullptr && !command.events_published) {
        engine->LeaseCheckpointsDropped(*cp);
      }
    }
    for (uint64_t seq : turn_seqs) {
      std::unique_ptr<Request> request = proposals.TakeAnyTerm(seq);
      if (request == nullptr) continue;
      if (options.metrics) options.metrics->proposals_failed.Inc();
      Answer_(answers, std::move(request), s.code() == Status::Code::kUnavailable ? NoLeader() : s,
              true);
    }
  }
  turn_seqs.clear();
  turn_commands.clear();
}

void Member::Impl::Forward(std::unique_ptr<Request> request, Answers* answers) {
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
  if (options.metrics) options.metrics->forwarded_requests.Inc();
  transport->Forward(lead, std::move(request));
}

void Member::Impl::HandleMembership(std::unique_ptr<Request> request, Answers* answers) {
  std::string name;
  Result<raft::ConfChange> cc = Membership::Prepare(request->payload, *raft, &name);
  if (!cc.ok()) {
    Answer_(answers, std::move(request), cc.status());
    return;
  }
  std::vector<std::string> peer_urls;
  if (const auto* add = std::get_if<MemberAddRequest>(&request->payload)) {
    peer_urls = add->peer_urls;
    Status free = membership.CheckPeerUrlsFree(cc->node_id, peer_urls, raft->conf_state());
    if (!free.ok()) {
      Answer_(answers, std::move(request), free);
      return;
    }
  }
  const uint64_t seq = proposals.Next();
  cc->context = EncodeConfChangeContext(
      ConfChangeContext{options.member_id, seq, name, std::move(peer_urls)});
  if (!raft->ProposeConfChange(*cc).ok()) {
    Answer_(answers, std::move(request),
            Status::Unavailable("ErrProposalDropped",
                                "etcdserver: another membership change is in progress"));
    return;
  }
  proposals.Add(seq, raft->term(), std::move(request),
                clock->MonotonicMs() + options.request_timeout_ms);
}

void Member::Impl::HandleMoveLeader(std::unique_ptr<Request> request, Answers* answers) {
  const NodeId target = std::get<MoveLeaderRequest>(request->payload).target;
  if (Status s = Membership::CheckTransferee(target, raft->conf_state()); !s.ok()) {
    Answer_(answers, std::move(request), s);
    return;
  }
  if (target != options.member_id) raft->TransferLeader(target);
  moving_leader.push_back(MovingLeader{std::move(request), target});
  AnswerMovedLeader(answers);
}

void Member::Impl::AnswerMovedLeader(Answers* answers) {
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

void Member::Impl::ConfirmReads(Answers* answers) {
  std::vector<std::unique_ptr<Request>> refused;
  Status refusal;
  reads.Ask(*raft, clock->MonotonicMs(), &waiting_for_leader, &refused, &refusal);
  for (auto& request : refused) Answer_(answers, std::move(request), refusal);
}

void Member::Impl::ServeConfirmedReads(Answers* answers) {
  for (auto& request : reads.TakeServable(applied_index)) {
    // Leadership moved while the read index was asked (it was confirmed
    // by the new leader): a lease request goes to the leader after all.
    if (LeaderOnly(request->payload) && !leader) {
      Forward(std::move(request), answers);
    } else if (LeaderOnly(request->payload) && !leases_taken_over) {
      reads.Add(std::move(request));  // asked again once the leases are this leader's
    } else {
      HandleLocal(std::move(request), answers);
    }
  }
}

bool Member::Impl::TokenAhead(const std::string& token) const {
  const size_t dot = token.rfind('.');
  if (dot == std::string::npos) return false;
  const uint64_t index = strtoull(token.c_str() + dot + 1, nullptr, 10);
  return index > applied_index;
}

void Member::Impl::RetryWaiting(Answers* answers) {
  const int64_t now = clock->MonotonicMs();
  if (!waiting_for_token.empty()) {
    std::vector<std::unique_ptr<Request>> waiting = std::move(waiting_for_token);
    waiting_for_token.clear();
    for (auto& request : waiting) {
      if (!TokenAhead(request->token)) {
        Handle(std::move(request), answers);
      } else if (now - request->received_ms > options.request_timeout_ms) {
        Answer_(answers, std::move(request), auth::ErrInvalidAuthToken());  // a made-up index
      } else {
        waiting_for_token.push_back(std::move(request));
      }
    }
  }
  if (!tasks_waiting_for_token.empty()) {
    std::vector<TokenTask> waiting = std::move(tasks_waiting_for_token);
    tasks_waiting_for_token.clear();
    // In order; once one of a token's tasks stays, the later ones stay too.
    for (TokenTask& t : waiting) {
      const bool after_held =
          std::any_of(tasks_waiting_for_token.begin(), tasks_waiting_for_token.end(),
                      [&](const TokenTask& held) { return held.token == t.token; });
      if (after_held || (TokenAhead(t.token) && now - t.since_ms <= options.request_timeout_ms)) {
        tasks_waiting_for_token.push_back(std::move(t));
      } else {
        t.task(*engine);  // (past its deadline: the task answers the token invalid)
      }
    }
  }
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
  for (auto it = waiting_for_leader.begin(); it != waiting_for_leader.end();) {
    if (now - (*it)->received_ms > options.request_timeout_ms) {
      Answer_(answers, std::move(*it), NoLeader());
      it = waiting_for_leader.erase(it);
    } else {
      ++it;
    }
  }
  for (auto& request :
       reads.Retry(raft->lead(), now, options.election_timeout_ms, options.request_timeout_ms)) {
    Answer_(answers, std::move(request), RequestTimedOut());
  }
  for (auto& held : held_renewals.TakeIf([&](const HeldRenewals::Held& h) {
         return now - h.request->received_ms > options.request_timeout_ms;
       })) {
    Answer_(answers, std::move(held.request), RequestTimedOut());
  }
  for (auto& request : proposals.TakeExpired(now)) {
    if (options.metrics) options.metrics->proposals_failed.Inc();
    Answer_(answers, std::move(request), RequestTimedOut(), true);
  }
}

}  // namespace natcd::server
