// Request and reply bodies: protobuf binary by default, proto3 JSON when the
// request carries `Content-Type: application/json` (the reply then is JSON).
#pragma once

#include <protobuf-c/protobuf-c.h>

#include <string>
#include <string_view>

#include "adapters/nats/codec/json_codec.h"
#include "natcd/status.h"

namespace natcd::nats {

inline constexpr const char* kContentTypeHeader = "Content-Type";
inline constexpr const char* kJsonContentType = "application/json";
// A write carrying one is applied once (docs/PROTOCOL.md "Idempotent retries").
inline constexpr const char* kRequestIdHeader = "Natcd-Request-Id";
// On a request one member forwards to another (P.fwd.*): the auth store
// revision the first checked it at (decimal; absent: not checked).
inline constexpr const char* kAuthRevisionHeader = "Natcd-Auth-Revision";
// etcd's auth token (from P.auth.authenticate), on any request while auth
// is enabled: checked as the gRPC API's `token` metadata.
inline constexpr const char* kAuthTokenHeader = "Natcd-Auth-Token";

// Decodes body as a message of `descriptor`. InvalidArgument (400) when the
// bytes are not one.
Status DecodeMessage(const ProtobufCMessageDescriptor* descriptor, std::string_view body, bool json,
                     UniqueMessage* out);
std::string EncodeMessage(const ProtobufCMessage* message, bool json);

}  // namespace natcd::nats
