// A depth check on binary protobuf input, to run before protobuf-c sees it.
//
// protobuf_c_message_unpack() recurses once per nested message and has no
// depth limit. natcd.proto is recursive (RequestOp.request_txn ->
// TxnRequest.success -> RequestOp ...), so a request of about 150 KB that
// nests 20,000 transactions overflows an 8 MB stack and kills the process.
// Every handler that unpacks untrusted bytes must first call
// ProtobufDepthWithin and answer 400 when it returns false.
//
// The check walks the wire format with the message descriptors, recursing
// only into length-delimited fields that the descriptor declares as
// messages (at most depth_max levels), and skipping everything else. It
// does not allocate.
//
// Thread safety: pure function.
#pragma once

#include <protobuf-c/protobuf-c.h>

#include <cstddef>
#include <cstdint>

namespace natcd::nats {

// Deepest message nesting accepted from the wire, counting the top-level
// message as 1. Two levels per nested transaction (RequestOp, TxnRequest).
inline constexpr int kWireDepthMax = 64;

// True when data[0, len) is a well-formed protobuf encoding (as far as the
// wire format goes: tags, varints, lengths, no groups) of `descriptor`
// whose message nesting is at most `depth_max` levels. False otherwise;
// protobuf_c_message_unpack would reject most such inputs anyway.
[[nodiscard]] bool ProtobufDepthWithin(const ProtobufCMessageDescriptor* descriptor,
                                       const uint8_t* data, size_t len,
                                       int depth_max = kWireDepthMax);

}  // namespace natcd::nats
