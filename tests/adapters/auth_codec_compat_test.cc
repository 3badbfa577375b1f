// AUTH_CHANGE log entries (core/server/log_command.h) against protobuf-c
// reading and writing core/server/member.proto's AuthChangeCommand: the
// member's own codec writes exactly the schema's bytes, both ways.
#include <gtest/gtest.h>

#include <string>

#include "core/server/member.pb-c.h"
#include "server/log_command.h"

namespace natcd {
namespace {

std::string Str(const ProtobufCBinaryData& b) {
  return std::string(reinterpret_cast<const char*>(b.data), b.len);
}

TEST(AuthCodecCompat, WhatTheMemberWritesProtobufCReads) {
  for (uint8_t k = 1; k <= kAuthChangeKindMax; ++k) {
    server::LogCommand command;
    AuthChange c;
    c.kind = static_cast<AuthChangeKind>(k);
    c.user = std::string("us\0er", 5);
    c.role = k % 2 ? "role" : "";
    c.password_hash = k % 3 ? "$2b$10$abcdefghijklmnopqrstuv" : "";
    c.no_password = k == 3;
    c.permission = Permission{static_cast<PermissionType>(k % 3), "key", k % 2 ? "" : "kez"};
    c.token_prefix = k == 12 ? "abcdefghijklmnop" : "";
    command.auth_change = c;
    command.origin_member = 0xabcdef0123;
    command.origin_seq = k;
    const std::string bytes = server::EncodeLogCommand(command);
    Natcd__V1__LogCommand* log = natcd__v1__log_command__unpack(
        nullptr, bytes.size(), reinterpret_cast<const uint8_t*>(bytes.data()));
    ASSERT_NE(log, nullptr);
    EXPECT_EQ(log->kind, NATCD__V1__LOG_COMMAND__KIND__AUTH_CHANGE);
    EXPECT_EQ(log->origin_member, 0xabcdef0123u);
    EXPECT_EQ(log->origin_seq, k);
    Natcd__V1__AuthChangeCommand* a =
        natcd__v1__auth_change_command__unpack(nullptr, log->request.len, log->request.data);
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(static_cast<int>(a->op), k);
    EXPECT_EQ(Str(a->user), c.user);
    EXPECT_EQ(Str(a->role), c.role);
    EXPECT_EQ(std::string(a->password_hash), c.password_hash);
    EXPECT_EQ(static_cast<bool>(a->no_password), c.no_password);
    EXPECT_EQ(a->permission_type, static_cast<uint32_t>(c.permission.type));
    EXPECT_EQ(Str(a->key), c.permission.key);
    EXPECT_EQ(Str(a->range_end), c.permission.range_end);
    EXPECT_EQ(std::string(a->token_prefix), c.token_prefix);

    // And protobuf-c's own packing of the same command is the same bytes.
    std::string packed_request(natcd__v1__auth_change_command__get_packed_size(a), '\0');
    natcd__v1__auth_change_command__pack(a, reinterpret_cast<uint8_t*>(packed_request.data()));
    EXPECT_EQ(packed_request, Str(log->request)) << int(k);
    std::string packed(natcd__v1__log_command__get_packed_size(log), '\0');
    natcd__v1__log_command__pack(log, reinterpret_cast<uint8_t*>(packed.data()));
    EXPECT_EQ(packed, bytes) << int(k);
    server::LogCommand back;
    ASSERT_TRUE(server::DecodeLogCommand(packed, &back).ok());
    EXPECT_EQ(*back.auth_change, c);
    natcd__v1__auth_change_command__free_unpacked(a, nullptr);
    natcd__v1__log_command__free_unpacked(log, nullptr);
  }
}

}  // namespace
}  // namespace natcd
