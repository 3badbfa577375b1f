#include "adapters/nats/codec/wire.h"

#include "adapters/nats/codec/wire_guard.h"

namespace natcd::nats {

Status DecodeMessage(const ProtobufCMessageDescriptor* descriptor, std::string_view body, bool json,
                     UniqueMessage* out) {
  if (json) {
    std::string error;
    UniqueMessage message = JsonToMessage(descriptor, body.empty() ? "{}" : body, &error);
    if (!message) {
      return Status::InvalidArgument(
          "ErrInvalidArgument", std::string("malformed JSON ") + descriptor->name + ": " + error);
    }
    *out = std::move(message);
    return Status::OK();
  }
  // protobuf-c recurses without a bound: refuse deep nesting first.
  if (!ProtobufDepthWithin(descriptor, reinterpret_cast<const uint8_t*>(body.data()),
                           body.size())) {
    return Status::InvalidArgument(
        "ErrInvalidArgument",
        std::string("malformed or too deeply nested protobuf: not a ") + descriptor->name);
  }
  ProtobufCMessage* message = protobuf_c_message_unpack(
      descriptor, nullptr, body.size(), reinterpret_cast<const uint8_t*>(body.data()));
  if (message == nullptr) {
    return Status::InvalidArgument("ErrInvalidArgument",
                                   std::string("malformed protobuf: not a ") + descriptor->name);
  }
  out->reset(message);
  return Status::OK();
}

std::string EncodeMessage(const ProtobufCMessage* message, bool json) {
  if (json) return MessageToJson(message);
  std::string out(protobuf_c_message_get_packed_size(message), '\0');
  protobuf_c_message_pack(message, reinterpret_cast<uint8_t*>(out.data()));
  return out;
}

}  // namespace natcd::nats
