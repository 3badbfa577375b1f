// ALARM log entries (kind 11, core/server/member.proto's AlarmCommand),
// pinned: every data directory that raised or cleared an alarm holds these
// bytes. tests/adapters/alarm_codec_compat_test.cc checks them against
// protobuf-c reading member.proto.
#include <gtest/gtest.h>

#include "core/server/codec_examples.h"
#include "server/log_command.h"

namespace natcd::server {
namespace {

using testing::Hex;
using testing::Unhex;

LogCommand Alarm(AlarmChange change, uint64_t origin_member, uint64_t origin_seq) {
  LogCommand command;
  command.alarm = change;
  command.origin_member = origin_member;
  command.origin_seq = origin_seq;
  return command;
}

TEST(AlarmLogCommand, EncodesToItsPinnedBytesAndBack) {
  struct Golden {
    const char* name;
    LogCommand command;
    const char* hex;  // DO NOT CHANGE: persisted.
  };
  const Golden examples[] = {
      // kind 11, request {action 1, member_id 5, alarm 1}, origin 5, seq 9.
      {"activate_nospace", Alarm({AlarmAction::kActivate, 5, AlarmType::kNoSpace}, 5, 9),
       "080b12060801100518011805"
       "2009"},
      {"deactivate_corrupt",
       Alarm({AlarmAction::kDeactivate, 0x8e9e05c52164694d, AlarmType::kCorrupt}, 7, 1),
       "080b120f080210cdd2918bd2b881cf8e0118021807"
       "2001"},
      // The leader raising CORRUPT for a peer: a proposal nobody waits on.
      {"activate_corrupt_by_leader", Alarm({AlarmAction::kActivate, 3, AlarmType::kCorrupt}, 0, 0),
       "080b1206080110031802"},
  };
  for (const Golden& g : examples) {
    EXPECT_EQ(Hex(EncodeLogCommand(g.command)), g.hex) << g.name;
    LogCommand out;
    ASSERT_TRUE(DecodeLogCommand(Unhex(g.hex), &out).ok()) << g.name;
    ASSERT_TRUE(out.alarm.has_value()) << g.name;
    EXPECT_EQ(*out.alarm, *g.command.alarm) << g.name;
    EXPECT_EQ(out.origin_member, g.command.origin_member);
    EXPECT_EQ(out.origin_seq, g.command.origin_seq);
    EXPECT_FALSE(out.auth_change.has_value());
    EXPECT_FALSE(out.events_published.has_value());
    EXPECT_FALSE(out.member_attributes.has_value());
  }
}

TEST(AlarmLogCommand, RefusesAnActionOrTypeEtcdDoesNotDefine) {
  LogCommand out;
  EXPECT_EQ(DecodeLogCommand(Unhex("080b12020803"), &out).ToString(),
            "ErrInvalidArgument: unknown alarm action 3");
  EXPECT_EQ(DecodeLogCommand(Unhex("080b120408011803"), &out).ToString(),
            "ErrInvalidArgument: unknown alarm type 3");
  EXPECT_EQ(DecodeLogCommand(Unhex("080b1203ffffff"), &out).ToString(),
            "ErrInvalidArgument: malformed natcd.v1.AlarmCommand");
  EXPECT_FALSE(out.alarm.has_value());
}

TEST(AlarmLogCommand, AnOlderEntryKindIsNotAnAlarm) {
  LogCommand out;
  out.alarm = AlarmChange{};
  // An EVENTS_PUBLISHED entry decoded into a command that held an alarm.
  ASSERT_TRUE(DecodeLogCommand(Unhex("08093805"), &out).ok());
  EXPECT_FALSE(out.alarm.has_value());
}

}  // namespace
}  // namespace natcd::server
