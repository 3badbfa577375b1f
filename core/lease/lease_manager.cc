#include "lease/lease_manager.h"

#include <algorithm>
#include <cassert>

namespace natcd {

Lease* LeaseManager::Find(int64_t id) {
  auto it = leases_.find(id);
  return it == leases_.end() ? nullptr : &it->second;
}

Lease& LeaseManager::Add(int64_t id, int64_t ttl_s, int64_t remaining_ms) {
  assert(!Exists(id));
  Lease& lease = leases_[id];
  lease.id = id;
  lease.ttl_s = ttl_s;
  lease.remaining_ms = remaining_ms;
  SetReplicatedDeadline(lease);
  if (primary_) {
    lease.earned_deadline_ms = lease.replicated_deadline_ms;
    SetDeadline(lease, lease.earned_deadline_ms);
  }
  return lease;
}

void LeaseManager::Remove(int64_t id) {
  auto it = leases_.find(id);
  if (it == leases_.end()) return;
  by_deadline_.erase({it->second.deadline_ms, id});
  renewed_.erase(id);
  leases_.erase(it);
}

void LeaseManager::Attach(int64_t id, const std::string& key) {
  Lease* lease = Find(id);
  assert(lease != nullptr);
  lease->keys.insert(key);
}

void LeaseManager::Detach(int64_t id, const std::string& key) {
  if (Lease* lease = Find(id)) lease->keys.erase(key);
}

void LeaseManager::SetCheckpoint(int64_t id, int64_t remaining_ms) {
  Lease* lease = Find(id);
  if (lease == nullptr) return;
  lease->remaining_ms = remaining_ms;
  lease->checkpoint_due = false;
  if (primary_ && lease->checkpoint_in_flight_ms != 0 &&
      lease->checkpoint_in_flight_remaining_ms == remaining_ms) {
    // The one this member offered: applied here later than any member
    // could count it from.
    lease->replicated_deadline_ms = lease->checkpoint_in_flight_ms;
    lease->checkpoint_in_flight_ms = 0;
    return;
  }
  SetReplicatedDeadline(*lease);
}

void LeaseManager::SetReplicatedDeadline(Lease& lease) {
  lease.replicated_deadline_ms =
      now_ms() + (lease.remaining_ms > 0 ? lease.remaining_ms : lease.ttl_s * 1000);
}

void LeaseManager::SetDeadline(Lease& lease, int64_t deadline_ms) {
  by_deadline_.erase({lease.deadline_ms, lease.id});
  lease.deadline_ms = deadline_ms;
  by_deadline_.insert({deadline_ms, lease.id});
}

void LeaseManager::Promote(int64_t extend_ms) {
  primary_ = true;
  by_deadline_.clear();
  renewed_.clear();
  for (auto& [id, lease] : leases_) {
    // From the replicated deadline, not from any deadline this member held
    // as an earlier leader: that one may include an earlier grace.
    lease.earned_deadline_ms = lease.replicated_deadline_ms;
    lease.deadline_ms = lease.earned_deadline_ms + extend_ms;
    lease.expiring = false;
    lease.checkpoint_due = true;
    lease.checkpoint_in_flight_ms = 0;
    by_deadline_.insert({lease.deadline_ms, id});
  }
}

void LeaseManager::Demote() {
  primary_ = false;
  by_deadline_.clear();
  renewed_.clear();
  for (auto& [id, lease] : leases_) {
    lease.earned_deadline_ms = lease.deadline_ms = 0;
    lease.checkpoint_in_flight_ms = 0;
  }
}

int64_t LeaseManager::KeepAlive(int64_t id) {
  Lease* lease = Find(id);
  if (lease == nullptr || !primary_) return 0;
  // A lease past its deadline is being revoked: do not revive it.
  if (lease->expiring || lease->deadline_ms <= now_ms()) return 0;
  lease->earned_deadline_ms = now_ms() + lease->ttl_s * 1000;
  SetDeadline(*lease, lease->earned_deadline_ms);
  renewed_.insert(id);
  return lease->ttl_s;
}

bool LeaseManager::RenewalRecorded(int64_t id, int64_t renewed_at_ms) const {
  auto it = leases_.find(id);
  if (it == leases_.end()) return true;
  if (!primary_) return false;
  const Lease& lease = it->second;
  const int64_t ttl_ms = lease.ttl_s * 1000;
  // The complement of what Checkpoints() offers a checkpoint for.
  return !lease.checkpoint_due &&
         renewed_at_ms + ttl_ms - lease.replicated_deadline_ms <= ttl_ms / 2;
}

int64_t LeaseManager::RemainingMs(int64_t id) const {
  auto it = leases_.find(id);
  if (it == leases_.end()) return -1;
  const Lease& lease = it->second;
  if (!primary_) return lease.remaining_ms > 0 ? lease.remaining_ms : lease.ttl_s * 1000;
  return std::max<int64_t>(0, lease.deadline_ms - clock_->MonotonicMs());
}

std::vector<int64_t> LeaseManager::Expired(size_t max, int64_t retry_ms) {
  std::vector<int64_t> ids;
  if (!primary_) return ids;
  int64_t now = now_ms();
  while (!by_deadline_.empty() && ids.size() < max && by_deadline_.begin()->first <= now) {
    ids.push_back(by_deadline_.begin()->second);
    by_deadline_.erase(by_deadline_.begin());
  }
  for (int64_t id : ids) {
    Lease& lease = leases_.at(id);
    lease.deadline_ms = now + retry_ms;
    lease.expiring = true;
    by_deadline_.insert({lease.deadline_ms, id});
  }
  return ids;
}

std::vector<LeaseManager::Checkpoint> LeaseManager::Checkpoints(bool scan_all) {
  std::vector<Checkpoint> out;
  if (!primary_) return out;
  const int64_t now = clock_->MonotonicMs();
  // What a new leader would start from (the replicated deadline) must stay
  // within half a TTL of what the holder earned.
  std::unordered_set<int64_t> in_flight;  // renewed, considered once applied
  for (int64_t id : renewed_) {
    const Lease& lease = leases_.at(id);
    if (lease.expiring) continue;
    if (lease.checkpoint_in_flight_ms != 0) {
      in_flight.insert(id);
      continue;
    }
    if (lease.checkpoint_due ||
        lease.earned_deadline_ms - lease.replicated_deadline_ms > lease.ttl_s * 1000 / 2) {
      out.push_back({id, std::max<int64_t>(1, lease.earned_deadline_ms - now)});
    }
  }
  renewed_ = std::move(in_flight);
  if (scan_all) {
    // A restart counts the recorded remaining TTL again from the reopen.
    for (const auto& [id, lease] : leases_) {
      if (lease.expiring || lease.checkpoint_in_flight_ms != 0) continue;
      const int64_t ttl_ms = lease.ttl_s * 1000;
      const int64_t actual = std::max<int64_t>(1, lease.earned_deadline_ms - now);
      if (actual >= ttl_ms / 2) continue;
      const int64_t recorded = lease.remaining_ms > 0 ? lease.remaining_ms : ttl_ms;
      if (recorded - actual >= std::max<int64_t>(1000, ttl_ms / 10)) out.push_back({id, actual});
    }
  }
  std::sort(out.begin(), out.end(),
            [](const Checkpoint& a, const Checkpoint& b) { return a.id < b.id; });
  out.erase(std::unique(out.begin(), out.end(),
                        [](const Checkpoint& a, const Checkpoint& b) { return a.id == b.id; }),
            out.end());
  for (const Checkpoint& cp : out) {
    Lease& lease = leases_.at(cp.id);
    lease.checkpoint_in_flight_ms = now + cp.remaining_ms;
    lease.checkpoint_in_flight_remaining_ms = cp.remaining_ms;
  }
  return out;
}

void LeaseManager::CheckpointsDropped(const std::vector<int64_t>& ids) {
  if (!primary_) return;
  for (int64_t id : ids) {
    Lease* lease = Find(id);
    if (lease == nullptr || lease->checkpoint_in_flight_ms == 0) continue;
    lease->checkpoint_in_flight_ms = 0;
    renewed_.insert(id);
  }
}

std::vector<int64_t> LeaseManager::Ids() const {
  std::vector<int64_t> ids;
  ids.reserve(leases_.size());
  for (const auto& [id, lease] : leases_) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  return ids;
}

}  // namespace natcd
