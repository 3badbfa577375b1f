// A unary call of etcd's API (KV, Lease but KeepAlive, Cluster,
// Maintenance, Auth, Health): its one request message decoded into a member
// request, answered by the member. The health check is answered from the
// member's Status: a member is SERVING while it knows a leader.
//
// These methods are registered with grpc++ as unary methods (UnaryService),
// not carried by the generic service as streams: grpc++ then reads the
// request before the call starts, so no separate read has to complete
// through grpc++'s callback threads before the member gets the request, and
// Finish sends the answer and the status in one batch.
//
// Lifetime: the call deletes itself once grpc++ is done with it (OnDone),
// which is never before Finish, even for a call the client canceled: the
// member answers every request it takes (the ones it holds at shutdown
// with "server stopped").
//
// Thread safety: Start runs on grpc++'s thread; the answer may come from
// any thread (the member's, or the peer transport's for a forwarded
// request), once.
#pragma once

#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/server_callback.h>

#include "adapters/grpc/call_context.h"
#include "adapters/grpc/etcd_methods.h"

namespace natcd::etcd_api {

class UnaryCall final : public grpc::ServerUnaryReactor {
 public:
  // The reactor for one call of `method`; `response` is filled when the
  // member answers.
  static grpc::ServerUnaryReactor* Start(grpc::CallbackServerContext* context,
                                         const MethodInfo* method, const CallContext* calls,
                                         const grpc::ByteBuffer* request,
                                         grpc::ByteBuffer* response);

 private:
  explicit UnaryCall(grpc::ByteBuffer* response) : response_(response) {}
  void Begin(grpc::CallbackServerContext* context, const MethodInfo* method,
             const CallContext* calls, const grpc::ByteBuffer& request);
  void OnDone() override { delete this; }

  friend class UnaryResponder;
  grpc::ByteBuffer* const response_;  // grpc++'s, written once before Finish
};

}  // namespace natcd::etcd_api
