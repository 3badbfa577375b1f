// /etcdserverpb.Watch/Watch: one bidirectional stream carrying many
// watches. Each WatchRequest (create, cancel, progress) runs on the member
// thread, in the order the client sent them (so `created` replies come in
// request order, as clientv3 and the npm etcd3 client expect), through the
// WatchRegistry, which also delivers the watches' events on the stream.
//
// A half-closed stream keeps its watches (as etcd's: the stream lives until
// the client cancels it); a stream that ends cancels them.
//
// Thread safety: as StreamCall.
#pragma once

#include <memory>
#include <string>

#include "adapters/grpc/call_context.h"
#include "adapters/grpc/etcd_methods.h"
#include "adapters/grpc/stream_call.h"

namespace natcd::etcd_api {

class WatchCall final : public StreamCall {
 public:
  static grpc::ServerGenericBidiReactor* Start(grpc::GenericCallbackServerContext* context,
                                               const MethodInfo* method, const CallContext* calls);

 private:
  WatchCall(grpc::GenericCallbackServerContext* context, const MethodInfo* method,
            const CallContext* calls)
      : StreamCall(context), method_(method), calls_(calls) {}
  bool OnMessage(std::string bytes) override;
  void OnCallEnded() override;

  const MethodInfo* const method_;
  const CallContext* const calls_;
};

}  // namespace natcd::etcd_api
