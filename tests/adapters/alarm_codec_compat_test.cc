// ALARM log entries (core/server/log_command.h) against protobuf-c reading
// and writing core/server/member.proto's AlarmCommand: the member's own
// codec writes exactly the schema's bytes, both ways.
#include <gtest/gtest.h>

#include <string>

#include "core/server/member.pb-c.h"
#include "server/log_command.h"

namespace natcd {
namespace {

TEST(AlarmCodecCompat, WhatTheMemberWritesProtobufCReads) {
  for (AlarmAction action : {AlarmAction::kActivate, AlarmAction::kDeactivate}) {
    for (AlarmType type : {AlarmType::kNoSpace, AlarmType::kCorrupt}) {
      server::LogCommand command;
      const AlarmChange c{action, 0xfedcba9876543210ull, type};
      command.alarm = c;
      command.origin_member = 0xabcdef0123;
      command.origin_seq = 42;
      const std::string bytes = server::EncodeLogCommand(command);
      Natcd__V1__LogCommand* log = natcd__v1__log_command__unpack(
          nullptr, bytes.size(), reinterpret_cast<const uint8_t*>(bytes.data()));
      ASSERT_NE(log, nullptr);
      EXPECT_EQ(log->kind, NATCD__V1__LOG_COMMAND__KIND__ALARM);
      EXPECT_EQ(log->origin_member, 0xabcdef0123u);
      Natcd__V1__AlarmCommand* a =
          natcd__v1__alarm_command__unpack(nullptr, log->request.len, log->request.data);
      ASSERT_NE(a, nullptr);
      EXPECT_EQ(static_cast<int>(a->action), static_cast<int>(action));
      EXPECT_EQ(a->member_id, c.member_id);
      EXPECT_EQ(static_cast<int>(a->alarm), static_cast<int>(type));

      std::string packed(natcd__v1__log_command__get_packed_size(log), '\0');
      natcd__v1__log_command__pack(log, reinterpret_cast<uint8_t*>(packed.data()));
      EXPECT_EQ(packed, bytes);
      server::LogCommand back;
      ASSERT_TRUE(server::DecodeLogCommand(packed, &back).ok());
      EXPECT_EQ(*back.alarm, c);
      natcd__v1__alarm_command__free_unpacked(a, nullptr);
      natcd__v1__log_command__free_unpacked(log, nullptr);
    }
  }
}

}  // namespace
}  // namespace natcd
