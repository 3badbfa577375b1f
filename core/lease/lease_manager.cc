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
  if (primary_) {
    SetDeadline(lease, now_ms() + (remaining_ms > 0 ? remaining_ms : ttl_s * 1000));
  }
  return lease;
}

void LeaseManager::Remove(int64_t id) {
  auto it = leases_.find(id);
  if (it == leases_.end()) return;
  by_deadline_.erase({it->second.deadline_ms, id});
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
  if (Lease* lease = Find(id)) lease->remaining_ms = remaining_ms;
}

void LeaseManager::SetDeadline(Lease& lease, int64_t deadline_ms) {
  by_deadline_.erase({lease.deadline_ms, lease.id});
  lease.deadline_ms = deadline_ms;
  by_deadline_.insert({deadline_ms, lease.id});
}

void LeaseManager::Promote(int64_t extend_ms) {
  primary_ = true;
  by_deadline_.clear();
  int64_t now = now_ms();
  for (auto& [id, lease] : leases_) {
    int64_t remaining = lease.remaining_ms > 0 ? lease.remaining_ms : lease.ttl_s * 1000;
    lease.deadline_ms = now + remaining + extend_ms;
    lease.expiring = false;
    by_deadline_.insert({lease.deadline_ms, id});
  }
}

void LeaseManager::Demote() {
  primary_ = false;
  by_deadline_.clear();
  for (auto& [id, lease] : leases_) lease.deadline_ms = 0;
}

int64_t LeaseManager::KeepAlive(int64_t id) {
  Lease* lease = Find(id);
  if (lease == nullptr || !primary_) return 0;
  // A lease past its deadline is being revoked: do not revive it.
  if (lease->expiring || lease->deadline_ms <= now_ms()) return 0;
  SetDeadline(*lease, now_ms() + lease->ttl_s * 1000);
  return lease->ttl_s;
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

std::vector<LeaseManager::Checkpoint> LeaseManager::Checkpoints() const {
  std::vector<Checkpoint> out;
  if (!primary_) return out;
  int64_t now = clock_->MonotonicMs();
  for (const auto& [id, lease] : leases_) {
    if (lease.expiring) continue;
    int64_t ttl_ms = lease.ttl_s * 1000;
    int64_t actual = std::max<int64_t>(1, lease.deadline_ms - now);
    if (actual < ttl_ms / 2) {
      int64_t recorded = lease.remaining_ms > 0 ? lease.remaining_ms : ttl_ms;
      if (recorded - actual >= std::max<int64_t>(1000, ttl_ms / 10)) out.push_back({id, actual});
    } else if (lease.remaining_ms != 0) {
      out.push_back({id, 0});
    }
  }
  std::sort(out.begin(), out.end(),
            [](const Checkpoint& a, const Checkpoint& b) { return a.id < b.id; });
  return out;
}

std::vector<int64_t> LeaseManager::Ids() const {
  std::vector<int64_t> ids;
  ids.reserve(leases_.size());
  for (const auto& [id, lease] : leases_) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  return ids;
}

}  // namespace natcd
