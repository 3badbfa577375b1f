// etcd's Auth service messages (etcd_rpc.proto: rpc.proto's Auth* and
// authpb's Permission) and the member's AuthRequest/AuthResponse.
//
// A request's password stays on the front end: DecodeAuthRequest hands it
// back apart, for the call to hash (UserAdd, UserChangePassword) or check
// (Authenticate) on its own thread before the request goes to the member.
//
// Thread safety: pure functions.
#pragma once

#include <protobuf-c/protobuf-c.h>

#include <string>

#include "adapters/grpc/etcd_codec.h"
#include "adapters/grpc/etcd_methods.h"
#include "natcd/status.h"
#include "server/request.h"

namespace natcd::etcd_api {

struct DecodedAuth {
  server::AuthRequest request;
  std::string password;         // Authenticate, UserAdd, UserChangePassword
  std::string hashed_password;  // UserAdd, UserChangePassword: etcd 3.5's hashedPassword
};

// Whether method is one of the Auth service's.
bool IsAuthMethod(Method method);

// The member request of an Auth method's message (decoded by the caller
// with the method's descriptor).
DecodedAuth DecodeAuthRequest(Method method, const ProtobufCMessage& message);

// The response message of the Auth method that was asked, encoded.
std::string EncodeAuthResponse(const server::AuthResponse& response, const ResponseInfo& info,
                               uint64_t raft_term);

}  // namespace natcd::etcd_api
