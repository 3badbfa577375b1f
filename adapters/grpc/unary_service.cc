#include "adapters/grpc/unary_service.h"

#include <grpcpp/impl/codegen/rpc_service_method.h>
#include <grpcpp/impl/codegen/server_callback_handlers.h>

#include "adapters/grpc/unary_call.h"

namespace natcd::etcd_api {

bool ServedAsUnaryCall(const MethodInfo& method) {
  switch (method.method) {
    // Unary, but each runs a recipe of its own (ConcurrencyCall).
    case Method::kLock:
    case Method::kUnlock:
    case Method::kCampaign:
    case Method::kProclaim:
    case Method::kLeader:
    case Method::kResign:
      return false;
    default:
      return method.shape == Shape::kUnary;
  }
}

UnaryService::UnaryService(const CallContext* calls) {
  int index = 0;
  for (const MethodInfo& method : AllMethods()) {
    if (!ServedAsUnaryCall(method)) continue;
    // The paths are string literals: NUL-terminated, and they outlive the
    // server.
    AddMethod(new grpc::internal::RpcServiceMethod(method.path.data(),
                                                   grpc::internal::RpcMethod::NORMAL_RPC, nullptr));
    const MethodInfo* m = &method;
    MarkMethodRawCallback(
        index++, new grpc::internal::CallbackUnaryHandler<grpc::ByteBuffer, grpc::ByteBuffer>(
                     [m, calls](grpc::CallbackServerContext* context,
                                const grpc::ByteBuffer* request, grpc::ByteBuffer* response) {
                       return UnaryCall::Start(context, m, calls, request, response);
                     }));
  }
}

}  // namespace natcd::etcd_api
