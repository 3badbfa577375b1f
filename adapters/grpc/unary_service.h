// etcd's unary methods served by UnaryCall, registered with grpc++ as raw
// (byte buffer) unary callback methods, each by its full path, whatever
// etcd service it belongs to. The other methods (streams, the server-side
// lock and election, unknown paths) reach the generic service.
//
// Thread safety: built before the server starts; grpc++ runs the handlers.
#pragma once

#include <grpcpp/impl/codegen/service_type.h>

#include "adapters/grpc/call_context.h"
#include "adapters/grpc/etcd_methods.h"

namespace natcd::etcd_api {

// The methods UnaryCall serves.
bool ServedAsUnaryCall(const MethodInfo& method);

class UnaryService final : public grpc::Service {
 public:
  explicit UnaryService(const CallContext* calls);
};

}  // namespace natcd::etcd_api
