// grpc++'s message buffers to and from the bytes natcd's codec reads and
// writes.
//
// Thread safety: pure functions.
#pragma once

#include <grpcpp/support/byte_buffer.h>

#include <string>

namespace natcd::etcd_api {

// The bytes move into the buffer's one slice: no copy on the way out.
grpc::ByteBuffer ToBuffer(std::string bytes);
// The buffer's slices as one string (empty for an invalid buffer).
std::string Flatten(const grpc::ByteBuffer& buffer);

}  // namespace natcd::etcd_api
