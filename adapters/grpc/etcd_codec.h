// etcd's gRPC messages and the member's requests and responses: a request
// body (protobuf-c, decoded by the caller with the method's descriptor)
// into a member request of engine values, and a member response into the
// response message etcd's client expects, encoded.
//
// The KV and lease messages are natcd.v1's (the NATS contract's, with
// etcd's field numbers), converted by adapters/nats/convert.h: one codec for
// both front ends. What differs on gRPC is here: Status reports the etcd
// version natcd implements, members carry their client URLs.
//
// Thread safety: pure functions.
#pragma once

#include <protobuf-c/protobuf-c.h>

#include <cstdint>
#include <string>
#include <vector>

#include "adapters/grpc/etcd_methods.h"
#include "adapters/nats/convert.h"
#include "natcd/status.h"
#include "server/request.h"

namespace natcd::etcd_api {

// etcd's API version natcd implements, as Maintenance.Status reports it:
// clients enable features by it (kube-apiserver asks for watch progress
// only from 3.4.31 on and from 3.5.13 on).
inline constexpr const char* kEtcdApiVersion = "3.5.17";

// What every response of this member carries or needs.
struct ResponseInfo {
  nats::HeaderInfo header;  // cluster and member ID; the term comes per response
  std::string prefix;       // P and the cluster name: members' peer URLs
  std::string cluster_name;
};

// The member request a unary method's (or a keep-alive stream's) message
// asks for. InvalidArgument for a message etcd would refuse.
Result<server::RequestPayload> DecodeRequest(Method method, const ProtobufCMessage& message);

// The response message, encoded.
std::string EncodeResponse(const server::Response& response, const ResponseInfo& info,
                           uint64_t raft_term);

// Packs a protobuf-c message.
std::string Pack(const ProtobufCMessage& message);

}  // namespace natcd::etcd_api
