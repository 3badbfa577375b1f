// A write as the replicated log carries it: natcd.v1.LogCommand in
// protobuf binary (adapters/nats/natcd.proto), its `request` field holding
// the write's natcd.v1 request message (server/write_request_codec.h).
//
// DO NOT CHANGE: persisted. Every Raft log in every data directory holds
// these bytes; tests/core/server/log_command_test.cc pins them and
// tests/adapters/server_codec_compat_test.cc checks them against the
// protobuf-c codec that wrote them.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "natcd/alarm.h"
#include "natcd/auth.h"
#include "natcd/engine.h"
#include "natcd/status.h"

namespace natcd::server {

// Which list a MemberAttributes sets. DO NOT CHANGE: persisted
// (MemberAttributesCommand.Attribute).
enum class MemberAttribute : uint8_t {
  kClientUrls = 0,
  kPeerUrls = 1,
};

// A member's attributes the others learn through the log, for MemberList:
// its client URLs (etcd's ClusterMemberAttrSet) or its peer URLs (etcd's
// MemberUpdate, a ConfChangeUpdateNode there).
struct MemberAttributes {
  uint64_t member_id = 0;
  std::vector<std::string> client_urls;
  std::vector<std::string> peer_urls;
  MemberAttribute sets = MemberAttribute::kClientUrls;
  bool operator==(const MemberAttributes&) const = default;
};

struct LogCommand {
  WriteRequest request;  // unless events_published, member_attributes, auth_change or alarm is set
  // Set: an EVENTS_PUBLISHED entry (no request): the events of every
  // revision up to this one reached the front end's event stream.
  std::optional<int64_t> events_published;
  // Set: a MEMBER_ATTRIBUTES entry (no request).
  std::optional<MemberAttributes> member_attributes;
  // Set: an AUTH_CHANGE entry (no request).
  std::optional<AuthChange> auth_change;
  // Set: an ALARM entry (no request).
  std::optional<AlarmChange> alarm;
  uint64_t origin_member = 0;  // 0: proposed by the leader itself (timers)
  uint64_t origin_seq = 0;
  // The client's idempotency key. Written up to its first NUL byte, as
  // protobuf-c (a C string) always did.
  std::string request_id;
  int64_t request_expires_ms = 0;
  // The auth store's revision the request was checked at; 0: unchecked.
  uint64_t auth_revision = 0;
};

// The bytes protobuf-c packed for the same command (fields in number order,
// proto3 defaults left out).
std::string EncodeLogCommand(const LogCommand& command);

// InvalidArgument ("ErrInvalidArgument", with today's texts) when bytes are
// not a LogCommand or its request is not one of its kind. For an
// EVENTS_PUBLISHED entry out->request is left as it was, as before.
Status DecodeLogCommand(std::string_view bytes, LogCommand* out);

}  // namespace natcd::server
