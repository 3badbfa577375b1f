#include "adapters/grpc/live_calls.h"

#include <algorithm>

#include "adapters/grpc/leader_monitor.h"

namespace natcd::etcd_api {

void LiveCalls::Add(const std::shared_ptr<StreamCall>& call) {
  grpc::Status ended_with;
  {
    MutexLock lock(&mu_);
    if (!ended_) {
      // Forget the calls that are over (amortized: at most as many as added).
      std::erase_if(calls_, [](const std::weak_ptr<StreamCall>& c) { return c.expired(); });
      calls_.push_back(call);
      return;
    }
    ended_with = status_;
  }
  call->End(ended_with);
}

void LiveCalls::EndAll(const grpc::Status& status) {
  std::vector<std::shared_ptr<StreamCall>> open;
  {
    MutexLock lock(&mu_);
    ended_ = true;
    status_ = status;
    for (const auto& weak : calls_) {
      if (auto call = weak.lock()) open.push_back(std::move(call));
    }
    calls_.clear();
  }
  for (const auto& call : open) call->End(status);
}

void TrackLongLived(const CallContext& calls, const std::shared_ptr<StreamCall>& call) {
  calls.live->Add(call);
  if (calls.leader_monitor != nullptr && RequiresLeader(*call->context())) {
    calls.leader_monitor->Add(call);
  }
}

}  // namespace natcd::etcd_api
