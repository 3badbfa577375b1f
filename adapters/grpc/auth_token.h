// The auth token of a call: etcd's clients send it in the "token" metadata
// (clientv3's rpctypes.TokenFieldNameGRPC) of every call after
// Authenticate.
//
// Thread safety: a call's grpc++ thread (its metadata is read only).
#pragma once

#include <grpcpp/server_context.h>

#include <string>

namespace natcd::etcd_api {

inline constexpr const char* kTokenMetadata = "token";

// Empty when the call carries none.
inline std::string AuthTokenOf(const grpc::ServerContextBase& context) {
  const auto& metadata = context.client_metadata();
  auto it = metadata.find(kTokenMetadata);
  if (it == metadata.end()) return "";
  return std::string(it->second.data(), it->second.size());
}

}  // namespace natcd::etcd_api
