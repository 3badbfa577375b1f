// AUTH_CHANGE log entries (kind 12, core/server/member.proto's
// AuthChangeCommand), pinned: every data directory with auth changes holds
// these bytes. tests/adapters/auth_codec_compat_test.cc checks them against
// protobuf-c reading member.proto.
#include <gtest/gtest.h>

#include "core/server/codec_examples.h"
#include "server/log_command.h"

namespace natcd::server {
namespace {

using testing::Hex;
using testing::Unhex;

struct Golden {
  const char* name;
  LogCommand command;
  const char* hex;  // DO NOT CHANGE: persisted.
};

LogCommand Auth(AuthChange change, uint64_t origin_member, uint64_t origin_seq) {
  LogCommand command;
  command.auth_change = std::move(change);
  command.origin_member = origin_member;
  command.origin_seq = origin_seq;
  return command;
}

std::vector<Golden> Examples() {
  AuthChange grant;
  grant.kind = AuthChangeKind::kRoleGrantPermission;
  grant.role = "reader";
  grant.permission = Permission{PermissionType::kReadWrite, "/a/", "/a0"};
  AuthChange add;
  add.kind = AuthChangeKind::kUserAdd;
  add.user = "root";
  add.password_hash = "$2b$04$abc";
  AuthChange no_password;
  no_password.kind = AuthChangeKind::kUserAdd;
  no_password.user = "svc";
  no_password.no_password = true;
  AuthChange enable;
  enable.kind = AuthChangeKind::kEnable;
  AuthChange revoke;
  revoke.kind = AuthChangeKind::kRoleRevokePermission;
  revoke.role = "r";
  revoke.permission.key = "k";
  AuthChange authenticate;  // no password: only the user and the token's random part
  authenticate.kind = AuthChangeKind::kAuthenticate;
  authenticate.user = "alice";
  authenticate.token_prefix = "abcdefghijklmnop";
  return {
      {"role_grant_permission", Auth(grant, 5, 9),
       "080c1216080a1a0672656164657230023a032f612f42032f613018052009"},
      {"user_add", Auth(add, 0x0f6deb00dfd1a7fb, 1),
       "080c121408031204726f6f74220a2432622430342461626318fbcfc6fe8de0fab60f2001"},
      {"user_add_no_password", Auth(no_password, 7, 2), "080c120908031203737663280118072002"},
      {"enable", Auth(enable, 7, 3), "080c1202080118072003"},
      {"role_revoke_permission", Auth(revoke, 7, 4), "080c1208080b1a01723a016b18072004"},
      {"authenticate", Auth(authenticate, 7, 5),
       "080c121b080c1205616c6963654a106162636465666768696a6b6c6d6e6f7018072005"},
  };
}

TEST(AuthLogCommand, EncodesToItsPinnedBytesAndBack) {
  for (const Golden& g : Examples()) {
    EXPECT_EQ(Hex(EncodeLogCommand(g.command)), g.hex) << g.name;
    LogCommand out;
    ASSERT_TRUE(DecodeLogCommand(Unhex(g.hex), &out).ok()) << g.name;
    ASSERT_TRUE(out.auth_change.has_value()) << g.name;
    EXPECT_EQ(*out.auth_change, *g.command.auth_change) << g.name;
    EXPECT_EQ(out.origin_member, g.command.origin_member);
    EXPECT_EQ(out.origin_seq, g.command.origin_seq);
    EXPECT_FALSE(out.events_published.has_value());
    EXPECT_FALSE(out.member_attributes.has_value());
  }
}

TEST(AuthLogCommand, EveryChangeKindRoundTrips) {
  for (uint8_t k = 1; k <= kAuthChangeKindMax; ++k) {
    AuthChange c;
    c.kind = static_cast<AuthChangeKind>(k);
    c.user = std::string("u\0v", 3);  // names are bytes: a NUL survives
    c.role = "role";
    c.password_hash = "$2b$10$x";
    c.permission = Permission{PermissionType::kWrite, "a", std::string(1, '\0')};
    c.token_prefix = "abcdefghijklmnop";
    LogCommand out;
    ASSERT_TRUE(DecodeLogCommand(EncodeLogCommand(Auth(c, 1, k)), &out).ok());
    EXPECT_EQ(*out.auth_change, c) << int(k);
  }
}

TEST(AuthLogCommand, RefusesAnUnknownOpOrPermissionType) {
  LogCommand out;
  Status op = DecodeLogCommand(Unhex("080c1202080d"), &out);  // op 13
  EXPECT_EQ(op.ToString(), "ErrInvalidArgument: unknown auth change 13");
  Status none = DecodeLogCommand(Unhex("080c"), &out);  // op 0 (no request)
  EXPECT_EQ(none.ToString(), "ErrInvalidArgument: unknown auth change 0");
  Status type = DecodeLogCommand(Unhex("080c120408013003"), &out);
  EXPECT_EQ(type.ToString(), "ErrInvalidArgument: unknown permission type 3");
  Status malformed = DecodeLogCommand(Unhex("080c1203ffffff"), &out);
  EXPECT_EQ(malformed.ToString(), "ErrInvalidArgument: malformed natcd.v1.AuthChangeCommand");
}

}  // namespace
}  // namespace natcd::server
