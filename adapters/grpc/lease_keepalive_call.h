// /etcdserverpb.Lease/LeaseKeepAlive: a bidirectional stream of renewals.
// Each request renews its lease through the member (the leader renews;
// a follower forwards) and its answer is sent on the stream, {ID, TTL} (TTL
// 0 for a lease that does not exist, as etcd); any other error ends the
// stream with etcd's status, as etcd's server does.
//
// Renewals in flight per stream are bounded: past the bound the stream
// stops reading until answers come back, so one client cannot queue
// without limit.
//
// Thread safety: as StreamCall; the in-flight count is atomic.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "adapters/grpc/call_context.h"
#include "adapters/grpc/etcd_methods.h"
#include "adapters/grpc/stream_call.h"

namespace natcd::etcd_api {

class LeaseKeepAliveCall final : public StreamCall {
 public:
  static grpc::ServerGenericBidiReactor* Start(grpc::GenericCallbackServerContext* context,
                                               const MethodInfo* method, const CallContext* calls);

 private:
  static constexpr int kInFlightMax = 1'024;
  LeaseKeepAliveCall(grpc::GenericCallbackServerContext* context, const MethodInfo* method,
                     const CallContext* calls)
      : StreamCall(context), method_(method), calls_(calls) {}
  bool OnMessage(std::string bytes) override;
  void Answered();

  const MethodInfo* const method_;
  const CallContext* const calls_;
  std::atomic<int> in_flight_{0};
};

}  // namespace natcd::etcd_api
