// Depth check of binary protobuf input; see wire_guard.h.

#include "adapters/nats/codec/wire_guard.h"

namespace natcd::nats {
namespace {

// Reads a varint at data[*pos, len); false if it is truncated or longer
// than 10 bytes.
bool ReadVarint(const uint8_t* data, size_t len, size_t* pos, uint64_t* value) {
  uint64_t v = 0;
  for (int shift = 0; shift < 70; shift += 7) {
    if (*pos >= len) return false;
    const uint8_t b = data[(*pos)++];
    v |= static_cast<uint64_t>(b & 0x7F) << shift;
    if ((b & 0x80) == 0) {
      *value = v;
      return true;
    }
  }
  return false;
}

// `depth`: the nesting level of this message (the top level is 1).
bool Walk(const ProtobufCMessageDescriptor* descriptor, const uint8_t* data, size_t len, int depth,
          int depth_max) {
  if (depth > depth_max) return false;
  size_t pos = 0;
  while (pos < len) {
    uint64_t tag;
    if (!ReadVarint(data, len, &pos, &tag)) return false;
    const uint64_t number = tag >> 3;
    if (number == 0 || number > 0x1FFFFFFF) return false;
    switch (tag & 7) {
      case 0: {  // varint
        uint64_t ignored;
        if (!ReadVarint(data, len, &pos, &ignored)) return false;
        break;
      }
      case 1:  // 64-bit
        if (len - pos < 8) return false;
        pos += 8;
        break;
      case 5:  // 32-bit
        if (len - pos < 4) return false;
        pos += 4;
        break;
      case 2: {  // length-delimited
        uint64_t size;
        if (!ReadVarint(data, len, &pos, &size)) return false;
        if (size > len - pos) return false;
        const ProtobufCFieldDescriptor* field =
            protobuf_c_message_descriptor_get_field(descriptor, static_cast<unsigned>(number));
        if (field != nullptr && field->type == PROTOBUF_C_TYPE_MESSAGE &&
            !Walk(static_cast<const ProtobufCMessageDescriptor*>(field->descriptor), data + pos,
                  static_cast<size_t>(size), depth + 1, depth_max)) {
          return false;
        }
        pos += static_cast<size_t>(size);
        break;
      }
      default:  // groups (3, 4) are not proto3; 6 and 7 do not exist
        return false;
    }
  }
  return true;
}

}  // namespace

bool ProtobufDepthWithin(const ProtobufCMessageDescriptor* descriptor, const uint8_t* data,
                         size_t len, int depth_max) {
  if (data == nullptr && len > 0) return false;
  return Walk(descriptor, data, len, 1, depth_max);
}

}  // namespace natcd::nats
