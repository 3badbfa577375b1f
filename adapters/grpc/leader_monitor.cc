#include "adapters/grpc/leader_monitor.h"

#include <algorithm>

namespace natcd::etcd_api {

bool RequiresLeader(const grpc::GenericCallbackServerContext& context) {
  const auto& metadata = context.client_metadata();
  auto it = metadata.find("hasleader");
  return it != metadata.end() && it->second == "true";
}

void LeaderMonitor::Add(const std::shared_ptr<StreamCall>& call) {
  MutexLock lock(&mu_);
  std::erase_if(calls_, [](const std::weak_ptr<StreamCall>& c) { return c.expired(); });
  calls_.push_back(call);
}

void LeaderMonitor::Tick() {
  on_member_thread_.AssertHeld();
  // A leader seen at any tick restarts the count, not only at a check:
  // otherwise checks made before a leader was first known (a member's
  // start) would count towards ending a stream moments after a later loss.
  if (member_->leader() != 0) {
    checks_without_leader_ = 0;
    return;
  }
  const int64_t now = clock_->MonotonicMs();
  if (now < next_check_ms_) return;
  next_check_ms_ = now + election_timeout_ms_;
  if (++checks_without_leader_ < kChecksWithoutLeader) return;
  std::vector<std::shared_ptr<StreamCall>> open;
  {
    MutexLock lock(&mu_);
    for (const auto& weak : calls_) {
      if (auto call = weak.lock()) open.push_back(std::move(call));
    }
    calls_.clear();
  }
  for (const auto& call : open) {
    call->End(grpc::Status(grpc::StatusCode::UNAVAILABLE, "etcdserver: no leader"));
  }
}

}  // namespace natcd::etcd_api
