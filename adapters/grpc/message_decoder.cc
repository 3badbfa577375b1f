#include "adapters/grpc/message_decoder.h"

namespace natcd::etcd_api {

Message DecodeMessage(const ProtobufCMessageDescriptor* descriptor, const std::string& bytes,
                      grpc::Status* error) {
  Message message(protobuf_c_message_unpack(descriptor, nullptr, bytes.size(),
                                            reinterpret_cast<const uint8_t*>(bytes.data())));
  if (message == nullptr) {
    *error = grpc::Status(
        grpc::StatusCode::INTERNAL,
        std::string("grpc: error unmarshalling request: not a ") + descriptor->name + " message");
  }
  return message;
}

}  // namespace natcd::etcd_api
