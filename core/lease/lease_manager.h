// LeaseManager: the in-memory lease table and, on the member that decides
// expiry (the leader; the only member of a single-member cluster), each
// lease's deadline on the injected monotonic clock.
//
// Replicated state (identical on every member, changed only by applied
// entries): id, granted TTL, checkpointed remaining TTL, attached keys.
// Every member also notes, on its own clock, when that replicated state
// says the lease ends (`replicated_deadline_ms`: the apply time of the
// grant or of the last checkpoint plus the TTL it recorded).
// Leader-local state (never replicated): the deadline its holder earned with
// keepalives, and the extension added on promotion (the caller's: the time
// no leader was reachable plus a grace). Promote() starts a new leader from
// the replicated deadline plus that extension, never from an earlier
// leader's deadline, so graces do not add up over repeated elections: an
// abandoned lease ends within its TTL plus one grace (and the leaderless
// time) however many elections happen. A leader checkpoints a renewed lease once its earned
// deadline runs more than half a TTL ahead of the replicated one, so that a
// new leader never gives a kept lease less time than its holder needs to
// renew (every TTL/3, as etcd clients do); and such a renewal is answered
// only once that checkpoint is applied (RenewalRecorded): answered before,
// a leader that lost its leadership or died first left the next one the
// old replicated deadline (the simulator's seeds 472 and 586). One
// checkpoint per lease is in flight at a time, so at most one per half a
// TTL goes through the log.
//
// Thread safety: none; owned by the Engine.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "natcd/clock.h"

namespace natcd {

struct Lease {
  int64_t id = 0;
  int64_t ttl_s = 0;         // granted TTL, after the minimum was applied
  int64_t remaining_ms = 0;  // checkpointed remaining TTL; 0: none (full TTL)
  // When the replicated state says the lease ends, on this member's clock.
  int64_t replicated_deadline_ms = 0;
  // Leader only: the deadline the holder earned (grant, keepalive, or the
  // replicated one on promotion), and the deadline it expires at: earned
  // plus the promotion grace until the next keepalive.
  int64_t earned_deadline_ms = 0;
  int64_t deadline_ms = 0;
  bool expiring = false;  // leader only: offered by Expired(), revoke pending
  // Leader only: checkpoint at the next renewal whatever the lag. Set on
  // promotion: this member's replicated deadline may be later than the
  // others' (it counts from its own apply, or from a reopen of its
  // database: a restart, a snapshot installed), so the lag it measures may
  // be less than what the next leader will see.
  bool checkpoint_due = false;
  // Leader only: a checkpoint of this lease was offered (Checkpoints) and
  // is not applied yet: the remaining TTL it records and the deadline that
  // is, counted from the offer on this member's clock (every member applies
  // it later than that); 0: none.
  int64_t checkpoint_in_flight_ms = 0;
  int64_t checkpoint_in_flight_remaining_ms = 0;
  std::set<std::string> keys;
};

class LeaseManager {
 public:
  explicit LeaseManager(Clock* clock) : clock_(clock) {}

  Lease* Find(int64_t id);
  bool Exists(int64_t id) const { return leases_.count(id) != 0; }
  // Adds a lease; the caller checked that id is unused. On the leader the
  // deadline starts now.
  Lease& Add(int64_t id, int64_t ttl_s, int64_t remaining_ms);
  // Forgets the lease (its keys must already be deleted).
  void Remove(int64_t id);
  void Attach(int64_t id, const std::string& key);
  void Detach(int64_t id, const std::string& key);
  // A checkpoint applied. On the primary, the one in flight (the same
  // remaining TTL) makes the replicated deadline the one recorded at its
  // offer (the earliest any member counts it from); any other (one offered
  // before a Promote) counts from now, as on every other member.
  void SetCheckpoint(int64_t id, int64_t remaining_ms);

  // Leader duties. Promote: this member now decides expiry; every lease's
  // deadline becomes its replicated deadline + extend_ms (a lease whose
  // replicated deadline is long past expires at once). Demote: it no
  // longer does.
  void Promote(int64_t extend_ms);
  void Demote();
  bool is_primary() const { return primary_; }

  // Resets the deadline to now + TTL. Returns the TTL in seconds, or 0 when
  // the lease does not exist (etcd's keepalive answer). Only on the primary.
  int64_t KeepAlive(int64_t id);
  // Whether a renewal at renewed_at_ms (this member's clock) is recorded
  // well enough to be answered: a new leader would start the lease no more
  // than half a TTL before the deadline the renewal earned (its replicated
  // deadline, set by an applied checkpoint when the renewal needed one, no
  // earlier than that; and no checkpoint is due). True for a lease that is
  // gone (nothing to wait for), false on a member that is not the primary.
  bool RenewalRecorded(int64_t id, int64_t renewed_at_ms) const;
  // Remaining milliseconds until expiry (>= 0), or -1 if there is no such
  // lease. On a non-primary member: the checkpoint, else the full TTL.
  int64_t RemainingMs(int64_t id) const;
  // Up to max leases whose deadline has passed, earliest first. Each
  // returned lease gets a retry deadline retry_ms from now, so it is offered
  // again if the revoke it prompted never gets applied.
  std::vector<int64_t> Expired(size_t max, int64_t retry_ms);

  // Primary only: the checkpoints worth recording now, by id. A lease
  // renewed since the last call whose earned deadline is more than half a
  // TTL past its replicated one, or that is due one (checkpoint_due), gets
  // its remaining TTL (for a new leader). With scan_all, also every lease
  // below half its TTL whose recorded remaining TTL exceeds the real one by
  // max(1 s, TTL/10) or more (for a restart, where the recorded TTL counts
  // again from the reopen). A lease with a checkpoint in flight gets none
  // (a renewal meanwhile is considered again once it is applied); each
  // offered one is in flight until applied (SetCheckpoint) or dropped.
  struct Checkpoint {
    int64_t id;
    int64_t remaining_ms;
  };
  std::vector<Checkpoint> Checkpoints(bool scan_all);
  // The checkpoints of these leases never reached the log (Raft refused the
  // proposal): offered again at the next Checkpoints() if still needed.
  void CheckpointsDropped(const std::vector<int64_t>& ids);

  std::vector<int64_t> Ids() const;
  size_t size() const { return leases_.size(); }
  int64_t now_ms() const { return clock_->MonotonicMs(); }

 private:
  void SetDeadline(Lease& lease, int64_t deadline_ms);
  void SetReplicatedDeadline(Lease& lease);

  Clock* clock_;
  bool primary_ = false;
  std::unordered_map<int64_t, Lease> leases_;
  // (deadline, id) of every lease, primary only.
  std::set<std::pair<int64_t, int64_t>> by_deadline_;
  // Leases renewed since the last Checkpoints(), primary only.
  std::unordered_set<int64_t> renewed_;
};

}  // namespace natcd
