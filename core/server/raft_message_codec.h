// The Raft messages members exchange: natcd.v1.RaftMessage in protobuf
// binary (adapters/nats/natcd.proto), with its RaftEntry, RaftSnapshotMeta
// and RaftConfState. A snapshot's data is not in it (shipped in chunks).
//
// DO NOT CHANGE: persisted in the sense that matters for a rolling
// upgrade: members of two versions exchange these bytes.
// tests/core/server/raft_message_codec_test.cc pins them and
// tests/adapters/server_codec_compat_test.cc checks them against the
// protobuf-c codec (adapters/nats/raft_codec.cc).
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "natcd/status.h"
#include "raft/types.h"

namespace natcd::server {

// The snapshot meta is written for kSnap only.
std::string EncodeRaftMessage(const raft::Message& message);
// InvalidArgument when bytes are not a RaftMessage or name an unknown
// message or entry type. Reads what protobuf-c reads, to the same values.
Status DecodeRaftMessage(std::string_view bytes, raft::Message* out);

}  // namespace natcd::server
