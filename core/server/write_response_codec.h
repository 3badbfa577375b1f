// The write responses as natcd.v1 messages (adapters/nats/natcd.proto,
// etcdserverpb's by name and number) in protobuf binary: PutResponse,
// DeleteRangeResponse, TxnResponse (with its RangeResponse, PutResponse,
// DeleteRangeResponse and TxnResponse ops), CompactionResponse,
// LeaseGrantResponse, LeaseRevokeResponse. The two internal writes, which no
// client sees, get natcd's own shape: LeaseExpireResponse {header = 1,
// revoked = 2}, LeaseCheckpointResponse {header = 1}.
//
// DO NOT CHANGE: persisted (inside remembered outcomes,
// server/request_outcome.h).
//
// The header carries the revision only: cluster_id, member_id and
// raft_term belong to the member that answers, so they are not the
// response's; a decoded header drops them. Encoding writes what protobuf-c
// packs for the adapter's ToProto with a zero HeaderInfo (every header and
// every present sub-message written, proto3 defaults left out).
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "natcd/engine.h"
#include "natcd/status.h"
#include "server/write_kind.h"

namespace natcd::server {

std::string EncodeWriteResponse(const WriteResponse& response);
// Reads the response message of `kind`. A singular sub-message given twice
// reads as its last occurrence (protobuf-c would merge them; protobuf-c
// never wrote one twice). InvalidArgument when the bytes are not one.
Status DecodeWriteResponse(WriteKind kind, std::string_view bytes, WriteResponse* out);

}  // namespace natcd::server
