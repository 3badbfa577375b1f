#include "adapters/grpc/byte_buffers.h"

#include <vector>

namespace natcd::etcd_api {

grpc::ByteBuffer ToBuffer(std::string bytes) {
  auto* owned = new std::string(std::move(bytes));
  grpc::Slice slice(
      owned->data(), owned->size(), [](void* s) { delete static_cast<std::string*>(s); }, owned);
  return grpc::ByteBuffer(&slice, 1);
}

std::string Flatten(const grpc::ByteBuffer& buffer) {
  std::string out;
  std::vector<grpc::Slice> slices;
  if (!buffer.Dump(&slices).ok()) return out;
  size_t n = 0;
  for (const grpc::Slice& s : slices) n += s.size();
  out.reserve(n);
  for (const grpc::Slice& s : slices)
    out.append(reinterpret_cast<const char*>(s.begin()), s.size());
  return out;
}

}  // namespace natcd::etcd_api
