// A member request as a request of the wire contract (docs/PROTOCOL.md
// "Requests and replies"), and a success reply back as the member's
// response: how a follower asks the leader, over P.fwd.<leader>.<suffix>,
// for a request that did not arrive over NATS (a second front end's), and
// reads its answer. The bodies are protobuf binary (natcd.proto, etcd's
// field numbers); error replies are service_error.h's.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "adapters/nats/codec/endpoint.h"
#include "natcd/status.h"
#include "server/request.h"

namespace natcd::nats {

struct WireRequest {
  EndpointKind kind = EndpointKind::kRange;  // the endpoint that takes it
  std::string suffix;                        // its subject after "P.": "kv.put"
  std::string body;                          // the request message, protobuf binary
};

// Every payload has its endpoint (a keepalive goes to P.lease.keepalive
// with its LeaseKeepAliveRequest).
WireRequest EncodeWireRequest(const server::RequestPayload& payload);

// The response to `asked` that a success reply's body holds: the response
// message of asked's endpoint (member remove and promote both answer a
// MembershipResponse). *raft_term gets the answering member's term from
// the response header (0 without one). Internal when the body is not that
// message: a member's reply that does not decode is a bug, not the
// client's mistake.
Result<server::Response> DecodeWireResponse(const server::RequestPayload& asked,
                                            std::string_view body, uint64_t* raft_term);

}  // namespace natcd::nats
