// Member: what the leader decides for everyone (lease expiry and
// checkpoints, auto-compaction), the renewals it answers once recorded,
// what a new leader owes the leases, and the timers of every member (see
// member_impl.h).
#include <algorithm>

#include "server/member_impl.h"

namespace natcd::server {
namespace {

// How often the front ends' Tick runs (watch heartbeats and reclaiming;
// their own periods are longer).
constexpr int64_t kFrontEndTickMs = 100;

}  // namespace

void Member::Impl::Timers() {
  const int64_t now = clock->MonotonicMs();
  // Every member: forget the auth tokens nobody used for their TTL.
  if (now >= next_token_prune_ms) {
    next_token_prune_ms = now + 1'000;
    tokens.Prune();
  }
  // Lease expiry, checkpoints and compaction are decided by the leader and
  // replicated as entries, so every member deletes the same keys at the
  // same revision.
  if (leader && leases_taken_over && !leases_paused && now >= next_lease_check_ms) {
    next_lease_check_ms = now + options.lease_check_interval_ms;
    if (std::optional<LeaseExpireRequest> due = engine->ExpiredLeases()) {
      LogCommand command;
      command.request = std::move(*due);
      Propose(std::move(command));
    }
    const bool scan_all = now >= next_checkpoint_ms;
    if (scan_all) next_checkpoint_ms = now + options.lease_checkpoint_interval_ms;
    ProposeLeaseCheckpoints(scan_all);
  }
  if (leader && events != nullptr) {
    continuity.MaybeRecord(now, options.heartbeat_interval_ms, *events, membership.is_cluster());
  }
  if (leader) {
    if (std::optional<int64_t> due =
            compactor->Due(now, engine->revision(), engine->CompactRevision())) {
      LogCommand command;
      command.request = CompactionRequest{*due, false};
      Propose(std::move(command));
    }
  }
  MaybeCheckCorruption(now);
  MaybePublishAttributes(now);
  if (now >= next_front_end_tick_ms) {
    next_front_end_tick_ms = now + kFrontEndTickMs;
    for (FrontEnd* f : front_ends) f->Tick();
    backups.ExpireIdle();  // a client that stopped reading its backup
  }
  if (now >= next_progress_ms) {
    if (next_progress_ms != 0) engine->watches().NotifyProgressAll();
    next_progress_ms = now + options.watch_progress_interval_ms;
  }
}

void Member::Impl::BecameLeader(bool now_leader) {
  if (now_leader == leader) return;
  leader = now_leader;
  leader_now.store(leader);
  const int64_t now = clock->MonotonicMs();
  if (leader) {
    // Leases are taken over once the entries of earlier terms are applied
    // (MaybeTakeOverLeases): this term's first entry is the last one now.
    const raft::ConfState cs = raft->conf_state();
    const bool several_voters = cs.voters.size() > 1;
    leases_taken_over = false;
    leases_from_index = raft->last_index();
    leases_unrenewable_since_ms = leader_contact_ms;
    MaybeTakeOverLeases();
    continuity.BecameLeader(now, raft->last_index(), engine->CurrentRevision(), several_voters,
                            membership.is_cluster(), options.heartbeat_interval_ms, events);
  } else {
    leases_taken_over = false;
    engine->DemoteLeases();
    shipper.Abandon(raft.get());
    proposed_commands.Clear();
  }
  for (FrontEnd* f : front_ends) f->LeadershipChanged(leader);
  leader_contact_ms = now;
}

void Member::Impl::MaybeTakeOverLeases() {
  if (!leader || leases_taken_over || applied_index < leases_from_index) return;
  leases_taken_over = true;
  // Every lease gets its replicated deadline, plus the time no holder could
  // renew (no leader reachable, then this leader's wait for the earlier
  // terms), plus an election timeout: its holder may have been renewing
  // with the old leader until just now (what that leader did not checkpoint
  // yet is at most half a TTL: lease_manager.h).
  const raft::ConfState cs = raft->conf_state();
  const int64_t grace = cs.voters.size() > 1 ? options.election_timeout_ms : 0;
  const int64_t now = clock->MonotonicMs();
  engine->PromoteLeases(grace + std::max<int64_t>(0, now - leases_unrenewable_since_ms));
}

// As etcd's publish: a member whose client URLs differ from what the log
// recorded proposes its own (a follower's proposal goes to the leader with
// Raft's own forwarding), again each election timeout until it is applied.
void Member::Impl::MaybePublishAttributes(int64_t now) {
  if (client_urls.empty() || now < next_publish_ms || raft->lead() == raft::kNoNode) return;
  if (membership.client_urls(options.member_id) == client_urls) return;
  const raft::ConfState& cs = membership.now();
  if (std::count(cs.voters.begin(), cs.voters.end(), options.member_id) == 0 &&
      std::count(cs.learners.begin(), cs.learners.end(), options.member_id) == 0) {
    return;  // not (yet) a member
  }
  next_publish_ms = now + options.election_timeout_ms;
  LogCommand command;
  command.member_attributes = MemberAttributes{options.member_id, client_urls, {}};
  Propose(std::move(command));
}

void Member::Impl::ProposeLeaseCheckpoints(bool scan_all) {
  if (std::optional<LeaseCheckpointRequest> due = engine->LeaseCheckpoints(scan_all)) {
    LogCommand command;
    command.request = std::move(*due);
    Propose(std::move(command));
  }
}

// Every turn: the held renewals whose checkpoint is applied (and
// committed: it came in a Ready's committed entries) are answered. Those of
// a leadership that ended, or while this member is cut off from the
// clients (it decides no expiry then), fail: the holder renews again, with
// the leader there is now.
void Member::Impl::AnswerHeldRenewals(Answers* answers) {
  if (held_renewals.empty()) return;
  const uint64_t term = raft->term();
  const bool deciding = leader && leases_taken_over && !leases_paused;
  for (auto& h : held_renewals.TakeIf(
           [&](const HeldRenewals::Held& h) { return !deciding || h.term != term; })) {
    Answer_(answers, std::move(h.request),
            leases_paused && leader && h.term == term
                ? Status(Status::Code::kNotLeader, "ErrNotLeader", "etcdserver: not leader")
                : Status::Unavailable("ErrLeaderChanged", "etcdserver: leader changed"));
  }
  for (auto& h : held_renewals.TakeIf([&](const HeldRenewals::Held& h) {
         member_thread.AssertHeld();  // called back from this turn
         return engine->LeaseRenewalRecorded(h.response.id, h.renewed_at_ms);
       })) {
    Answer_(answers, std::move(h.request), Response(std::move(h.response)));
  }
}

}  // namespace natcd::server
