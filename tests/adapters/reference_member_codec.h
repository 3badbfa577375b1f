// The protobuf-c codec of the member's messages (core/server/member.proto),
// as natcd used it before the member had its own (core/server/
// log_command.h, raft_message_codec.h): kept in the tests as the reference
// the member's codec is checked against, byte for byte.
// Every decoder treats its input as untrusted: anything malformed is an
// InvalidArgument, never a crash.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "natcd/engine.h"
#include "natcd/status.h"
#include "raft/types.h"

namespace natcd::nats {

std::string EncodeRaftMessage(const raft::Message& m);
Status DecodeRaftMessage(std::string_view bytes, raft::Message* out);

// A write as the log carries it.
struct LogCommand {
  WriteRequest request;  // unless events_published is set
  // Set: an EVENTS_PUBLISHED entry (no request): P.ev.* reached the NATS
  // server up to this revision.
  std::optional<int64_t> events_published;
  uint64_t origin_member = 0;  // 0: proposed by the leader itself (timers)
  uint64_t origin_seq = 0;
  std::string request_id;
  int64_t request_expires_ms = 0;
};

// Encodes a write. For a request that came from a client, pass its
// protobuf body as received (request_proto: binary, already validated)
// to avoid converting it back; otherwise the request is encoded from the
// C++ value (only the kinds the leader proposes itself: compaction, lease
// expiry, lease checkpoints, and a lease grant).
// Internal when a put, delete or txn comes without its proto.
Result<std::string> EncodeLogCommand(const LogCommand& command,
                                     const std::string* request_proto = nullptr);
Status DecodeLogCommand(std::string_view bytes, LogCommand* out);

}  // namespace natcd::nats
