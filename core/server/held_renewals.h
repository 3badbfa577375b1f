// HeldRenewals: keepalives the leader renewed but answers only once the
// checkpoint that records the renewal is applied (Engine::
// LeaseRenewalRecorded). Answered before, a renewal that ran more than half
// a TTL past the lease's replicated deadline was lost when leadership moved
// or the leader died before its checkpoint was applied: the next leader
// started from the old deadline and the lease ended earlier than its holder
// was told (found by the simulator, seeds 472 and 586). Each held renewal is
// answered exactly once: with its renewal when recorded, or with an error
// when the member stops deciding lease expiry in its term, times out, or
// stops (member_leader.cc, member.cc).
//
// Thread safety: none; the member thread owns it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "natcd/types.h"
#include "server/request.h"

namespace natcd::server {

class HeldRenewals {
 public:
  struct Held {
    std::unique_ptr<Request> request;
    LeaseKeepAliveResponse response;  // the answer once recorded
    int64_t renewed_at_ms = 0;        // on the member's monotonic clock
    uint64_t term = 0;                // the Raft term of the leader that renewed it
  };

  void Add(Held held) { held_.push_back(std::move(held)); }
  // Takes those `take` says are to be answered now, in the order held.
  std::vector<Held> TakeIf(const std::function<bool(const Held&)>& take);
  std::vector<std::unique_ptr<Request>> TakeAll();
  bool empty() const { return held_.empty(); }
  size_t size() const { return held_.size(); }

 private:
  std::vector<Held> held_;
};

}  // namespace natcd::server
