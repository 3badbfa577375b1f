// etcd's leader monitor for streams that require a leader (opened with the
// "hasleader" metadata: clientv3.WithRequireLeader, as kube-apiserver's
// watches and keep-alive streams are). A member that has known no leader
// at three checks in a row, one election timeout apart, ends them with
// etcd's UNAVAILABLE "etcdserver: no leader", so their clients move to a
// member that has one instead of waiting on a partitioned member for ever.
// (A new call is refused at once without a leader: EtcdService.)
//
// Thread safety: Add from any thread (a call's start); Tick on the member
// thread (FrontEnd::Tick).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "adapters/grpc/stream_call.h"
#include "natcd/clock.h"
#include "natcd/mutex.h"
#include "server/member.h"

namespace natcd::etcd_api {

// The call asked for a leader (metadata "hasleader: true").
bool RequiresLeader(const grpc::GenericCallbackServerContext& context);

class LeaderMonitor {
 public:
  LeaderMonitor(server::Member* member, Clock* clock, int64_t election_timeout_ms)
      : member_(member), clock_(clock), election_timeout_ms_(election_timeout_ms) {}

  void Add(const std::shared_ptr<StreamCall>& call);
  void Tick();

  // etcd's maxNoLeaderCnt.
  static constexpr int kChecksWithoutLeader = 3;

 private:
  server::Member* const member_;
  Clock* const clock_;
  const int64_t election_timeout_ms_;

  Mutex mu_;
  std::vector<std::weak_ptr<StreamCall>> calls_ GUARDED_BY(mu_);

  ThreadRole on_member_thread_;
  int64_t next_check_ms_ GUARDED_BY(on_member_thread_) = 0;
  int checks_without_leader_ GUARDED_BY(on_member_thread_) = 0;
};

}  // namespace natcd::etcd_api
