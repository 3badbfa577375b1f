// LeaseManager: the in-memory lease table and, on the member that decides
// expiry (the leader; the only member of a single-member cluster), each
// lease's deadline on the injected monotonic clock.
//
// Replicated state (identical on every member, changed only by applied
// entries): id, granted TTL, checkpointed remaining TTL, attached keys.
// Leader-local state (never replicated): deadlines. Promote() gives every
// lease a deadline when a member starts deciding expiry.
//
// Thread safety: none; owned by the Engine.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "natcd/clock.h"

namespace natcd {

struct Lease {
  int64_t id = 0;
  int64_t ttl_s = 0;         // granted TTL, after the minimum was applied
  int64_t remaining_ms = 0;  // checkpointed remaining TTL; 0: none (full TTL)
  int64_t deadline_ms = 0;   // leader only: expires when the clock reaches it
  bool expiring = false;     // leader only: offered by Expired(), revoke pending
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
  void SetCheckpoint(int64_t id, int64_t remaining_ms);

  // Leader duties. Promote: this member now decides expiry; every lease's
  // deadline becomes now + (checkpointed remaining TTL, or the full TTL) +
  // extend_ms. Demote: it no longer does.
  void Promote(int64_t extend_ms);
  void Demote();
  bool is_primary() const { return primary_; }

  // Resets the deadline to now + TTL. Returns the TTL in seconds, or 0 when
  // the lease does not exist (etcd's keepalive answer). Only on the primary.
  int64_t KeepAlive(int64_t id);
  // Remaining milliseconds until expiry (>= 0), or -1 if there is no such
  // lease. On a non-primary member: the checkpoint, else the full TTL.
  int64_t RemainingMs(int64_t id) const;
  // Up to max leases whose deadline has passed, earliest first. Each
  // returned lease gets a retry deadline retry_ms from now, so it is offered
  // again if the revoke it prompted never gets applied.
  std::vector<int64_t> Expired(size_t max, int64_t retry_ms);

  // Primary only: the checkpoints worth recording now. A lease below half
  // its TTL whose checkpoint is missing or stale by more than
  // max(1 s, TTL/10) gets its remaining TTL; a lease renewed above half its
  // TTL that still has a checkpoint gets 0 (cleared: the full TTL applies).
  // Leases kept alive at TTL/3 never need one.
  struct Checkpoint {
    int64_t id;
    int64_t remaining_ms;
  };
  std::vector<Checkpoint> Checkpoints() const;

  std::vector<int64_t> Ids() const;
  size_t size() const { return leases_.size(); }
  int64_t now_ms() const { return clock_->MonotonicMs(); }

 private:
  void SetDeadline(Lease& lease, int64_t deadline_ms);

  Clock* clock_;
  bool primary_ = false;
  std::unordered_map<int64_t, Lease> leases_;
  // (deadline, id) of every lease, primary only.
  std::set<std::pair<int64_t, int64_t>> by_deadline_;
};

}  // namespace natcd
