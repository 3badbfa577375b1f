// etcd's gRPC messages and the member's requests and responses: a request
// body (protobuf-c, decoded by the caller with the method's descriptor)
// into a member request of engine values, and a member response into the
// response message etcd's client expects, encoded.
//
// The messages are natcd.v1's (the NATS contract's, with etcd's field
// numbers), decoded and encoded by the NATS front end's own code
// (request_payload.h, nats_responder.h): one codec for both front ends.
// What differs on gRPC is here: the etcd version Status reports, the
// member a MemberAdd names by its peer URL, HashKV's -1.
//
// Thread safety: pure functions.
#pragma once

#include <protobuf-c/protobuf-c.h>

#include <cstdint>
#include <string>
#include <vector>

#include "adapters/grpc/etcd_methods.h"
#include "adapters/nats/codec/convert.h"
#include "adapters/nats/front_end/nats_responder.h"
#include "natcd/status.h"
#include "server/request.h"

namespace natcd::etcd_api {

// etcd's API version natcd implements, as Maintenance.Status reports it:
// clients enable features by it (kube-apiserver asks for watch progress
// only from 3.4.31 on and from 3.5.13 on).
inline constexpr const char* kEtcdApiVersion = "3.5.17";

// What every response of this member carries: the NATS front end's reply
// context (cluster and member ID, P and the cluster name for the members'
// peer URLs), its version kEtcdApiVersion; no connection is used.
using ResponseInfo = nats::ReplyContext;

// The member request a unary method's (or a keep-alive stream's) message
// asks for. InvalidArgument for a message etcd would refuse.
Result<server::RequestPayload> DecodeRequest(Method method, const ProtobufCMessage& message);

// The response message, encoded: as the NATS front end encodes it (one
// codec), but for HashKV's compact revision before any compaction (etcd's -1).
std::string EncodeResponse(const server::Response& response, const ResponseInfo& info,
                           uint64_t raft_term);

// Packs a protobuf-c message.
std::string Pack(const ProtobufCMessage& message);

}  // namespace natcd::etcd_api
