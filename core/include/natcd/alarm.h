// Alarms, as etcd's (server/etcdserver/api/v3alarm and etcdserverpb's
// AlarmRequest/AlarmMember): a member raises an alarm about itself (or the
// leader about another member) through the Raft log, so every member holds
// the same set and refuses the same requests at apply. NOSPACE: a member's
// database passed its quota (--quota-backend-bytes); requests that would grow
// the store are refused until an operator disarms it. CORRUPT: a member's
// HashKV differs from the others' at the same revision; KV and lease requests
// are refused.
//
// Thread safety: plain values.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace natcd {

// DO NOT CHANGE: persisted (the alarm table, AlarmCommand in the log) and
// etcd's etcdserverpb.AlarmType values.
enum class AlarmType : uint8_t {
  kNone = 0,
  kNoSpace = 1,
  kCorrupt = 2,
};
inline constexpr uint8_t kAlarmTypeMax = 2;

// DO NOT CHANGE: persisted (AlarmCommand.action in the log) and etcd's
// AlarmRequest.AlarmAction values.
enum class AlarmAction : uint8_t {
  kGet = 0,
  kActivate = 1,
  kDeactivate = 2,
};
inline constexpr uint8_t kAlarmActionMax = 2;

// One raised alarm: which member it is about and what.
struct AlarmMember {
  uint64_t member_id = 0;
  AlarmType alarm = AlarmType::kNone;
  bool operator==(const AlarmMember&) const = default;
  auto operator<=>(const AlarmMember&) const = default;
};

// One replicated change of the alarm set (a log entry): activate or
// deactivate `alarm` for `member_id`.
struct AlarmChange {
  AlarmAction action = AlarmAction::kActivate;
  uint64_t member_id = 0;
  AlarmType alarm = AlarmType::kNone;
  bool operator==(const AlarmChange&) const = default;
};

// etcd's names: "NONE", "NOSPACE", "CORRUPT".
std::string_view AlarmName(AlarmType type);

// etcd's AlarmMember text (gogo protobuf's compact text form, which etcd
// puts in StatusResponse.errors and etcdctl prints for `alarm list`):
// "memberID:10276657743932975437 alarm:NOSPACE " (the trailing space is
// etcd's).
std::string AlarmText(const AlarmMember& alarm);

}  // namespace natcd
