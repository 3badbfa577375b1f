// The member request a NATS request body decodes to: what the member that
// takes a request (a client's, or one a follower handed over on
// P.fwd.<member>.<suffix>) submits, by the endpoint it arrived on.
//
// Thread safety: a pure function.
#pragma once

#include <protobuf-c/protobuf-c.h>

#include <cstdint>

#include "adapters/nats/codec/endpoint.h"
#include "natcd/status.h"
#include "server/request.h"

namespace natcd::nats {

// `body` is the decoded message of the endpoint's request type (ignored for
// kLeaseKeepAliveHex, whose lease is `hex_lease_id`, from the subject).
// ErrInvalidArgument for what the engine values refuse; Internal for an
// endpoint that is no member request (the watch endpoints).
Result<server::RequestPayload> ToPayload(EndpointKind kind, const ProtobufCMessage* body,
                                         int64_t hex_lease_id);

}  // namespace natcd::nats
