// A protobuf-c message as the bytes of a request body.
#pragma once

#include <protobuf-c/protobuf-c.h>

#include <cstdint>
#include <string>

namespace natcd::bench {

inline std::string Pack(const ProtobufCMessage* m) {
  std::string out(protobuf_c_message_get_packed_size(m), '\0');
  protobuf_c_message_pack(m, reinterpret_cast<uint8_t*>(out.data()));
  return out;
}

}  // namespace natcd::bench
