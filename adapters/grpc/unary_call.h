// A unary call of etcd's API (KV, Lease but KeepAlive, Cluster,
// Maintenance, Health): its one request message decoded into a member
// request, answered by the member through a CallResponder. The health
// check is answered from the member's Status: a member is SERVING while it
// knows a leader.
//
// Thread safety: as StreamCall.
#pragma once

#include <memory>
#include <string>

#include "adapters/grpc/call_context.h"
#include "adapters/grpc/etcd_methods.h"
#include "adapters/grpc/stream_call.h"

namespace natcd::etcd_api {

class UnaryCall final : public StreamCall {
 public:
  // Starts the call (CreateReactor).
  static grpc::ServerGenericBidiReactor* Start(grpc::GenericCallbackServerContext* context,
                                               const MethodInfo* method, const CallContext* calls);

 private:
  UnaryCall(grpc::GenericCallbackServerContext* context, const MethodInfo* method,
            const CallContext* calls)
      : StreamCall(context), method_(method), calls_(calls) {}
  bool OnMessage(std::string bytes) override;
  void OnReadsEnded() override;

  const MethodInfo* const method_;
  const CallContext* const calls_;
  bool received_ = false;  // grpc++ thread only
};

}  // namespace natcd::etcd_api
