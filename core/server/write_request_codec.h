// The write requests as natcd.v1 messages (adapters/nats/natcd.proto, which
// are etcdserverpb's by name and number), in protobuf binary: PutRequest,
// DeleteRangeRequest, TxnRequest, CompactionRequest, LeaseGrantRequest,
// LeaseRevokeRequest, and natcd's LeaseExpireCommand and
// LeaseCheckpointCommand. A LogCommand carries one of them.
//
// DO NOT CHANGE: persisted (inside every log entry; tests/core/server pins
// the bytes).
//
// Encoding writes what protobuf-c packs for the same message: fields in
// number order, proto3 defaults left out. A Compare sets the member of its
// target_union that its target names (etcd's clients do the same), even
// when it is 0 or empty; the other four values are not written.
//
// Decoding reads every encoding protobuf-c 1.4 reads, to the same engine
// values and with the same errors as adapters/nats (wire.cc DecodeMessage
// then convert.cc FromProto): a wire-format or depth error over the whole
// message first, then a field that protobuf-c refuses, then the checks of
// FromProto in its order. The text of each error is today's.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "natcd/engine.h"
#include "natcd/status.h"
#include "server/write_kind.h"

namespace natcd::server {

// Nested txns deeper than this are refused (adapters/nats/codec/convert.h's
// kTxnDepthMax, which decided what today's logs hold).
inline constexpr int kTxnDepthMax = 16;

// The request's message.
std::string EncodeWriteRequest(const WriteRequest& request);
// Reads the message of `kind` into *out. InvalidArgument when it is not one.
Status DecodeWriteRequest(WriteKind kind, std::string_view bytes, WriteRequest* out);

// The protobuf full name of kind's request message, e.g. "natcd.v1.PutRequest".
const char* WriteRequestMessageName(WriteKind kind);

}  // namespace natcd::server
