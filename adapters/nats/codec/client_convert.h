// The client's side of convert.h: engine requests as natcd.proto messages
// (protobuf-c structs), and natcd.proto responses back as engine values.
// A member that hands a request which did not arrive over NATS to the
// leader (nats_peer_transport.h) asks over the wire contract as a client
// would, with these.
//
// Encoding builds structs that point into the C++ values and into the
// ProtoArena (both must outlive the pack), as convert.h's does. A Compare
// sets the member of its target_union that its target names (as etcd's
// clients do), so a zero or empty value is sent and compared as given.
// Decoding copies out of the unpacked message (which the caller frees) and
// refuses what the engine values cannot hold (a txn response op with no
// response, nesting deeper than kTxnDepthMax) with ErrInvalidArgument.
//
// Thread safety: pure functions.
#pragma once

#include "adapters/nats/codec/convert.h"
#include "adapters/nats/natcd.pb-c.h"
#include "natcd/status.h"
#include "natcd/types.h"

namespace natcd::nats {

// ---- encode (engine request → protobuf) ----
Natcd__V1__RangeRequest* ToProto(const RangeRequest& in, ProtoArena* arena);
Natcd__V1__PutRequest* ToProto(const PutRequest& in, ProtoArena* arena);
Natcd__V1__DeleteRangeRequest* ToProto(const DeleteRangeRequest& in, ProtoArena* arena);
Natcd__V1__TxnRequest* ToProto(const TxnRequest& in, ProtoArena* arena);
Natcd__V1__CompactionRequest* ToProto(const CompactionRequest& in, ProtoArena* arena);

// ---- decode (protobuf response → engine) ----
// The header's revision (cluster, member and term are the answering
// member's, not the engine response's); a missing header reads as 0.
ResponseHeader FromProto(const Natcd__V1__ResponseHeader* in);
KeyValue FromProto(const Natcd__V1__KeyValue& in);
Status FromProto(const Natcd__V1__RangeResponse& in, RangeResponse* out);
Status FromProto(const Natcd__V1__PutResponse& in, PutResponse* out);
Status FromProto(const Natcd__V1__DeleteRangeResponse& in, DeleteRangeResponse* out);
Status FromProto(const Natcd__V1__TxnResponse& in, TxnResponse* out, int depth = 0);
Status FromProto(const Natcd__V1__CompactionResponse& in, CompactionResponse* out);
Status FromProto(const Natcd__V1__LeaseGrantResponse& in, LeaseGrantResponse* out);
Status FromProto(const Natcd__V1__LeaseRevokeResponse& in, LeaseRevokeResponse* out);
Status FromProto(const Natcd__V1__LeaseKeepAliveResponse& in, LeaseKeepAliveResponse* out);
Status FromProto(const Natcd__V1__LeaseTimeToLiveResponse& in, LeaseTimeToLiveResponse* out);
Status FromProto(const Natcd__V1__LeaseLeasesResponse& in, LeaseLeasesResponse* out);

}  // namespace natcd::nats
