// A gRPC message body decoded with protobuf-c, for the length of a call's
// reaction. grpc-go answers bytes that are not the method's message with
// INTERNAL "grpc: error unmarshalling request"; so does natcd.
//
// Thread safety: pure functions.
#pragma once

#include <grpcpp/support/status.h>
#include <protobuf-c/protobuf-c.h>

#include <memory>
#include <string>

namespace natcd::etcd_api {

struct MessageFree {
  void operator()(ProtobufCMessage* m) const { protobuf_c_message_free_unpacked(m, nullptr); }
};
using Message = std::unique_ptr<ProtobufCMessage, MessageFree>;

// Null, with *error set, when `bytes` are not a `descriptor` message.
Message DecodeMessage(const ProtobufCMessageDescriptor* descriptor, const std::string& bytes,
                      grpc::Status* error);

}  // namespace natcd::etcd_api
