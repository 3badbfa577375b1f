// etcd's check at apply: a write carries the auth store revision its
// permissions were checked at (on the member that received it, perhaps a
// follower that had not yet applied a revoke), and is refused with
// ErrAuthOldRevision when the store has changed since, on every member
// alike. A member of its own, its requests marked as a forwarding member
// marks them (checked, at a given revision).
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "core/server/one_member_test.h"

namespace natcd::server {
namespace {

class MemberAuthRevisionTest : public OneMemberTest {
 protected:
  AuthResponse Auth(AuthOp op, const std::string& user, const std::string& role) {
    AuthRequest r;
    r.op = op;
    r.user = user;
    r.role = role;
    return Auth(r);
  }
  // As root would, through a member that checked it.
  AuthResponse Auth(AuthRequest r) {
    r.password_hash = "$2b$04$not-checked-here";
    auto request = std::make_unique<Request>();
    request->payload = r;
    request->auth_checked = true;  // as a member that checked it forwards it
    std::shared_ptr<Answer> answer = Submit(std::move(request));
    EXPECT_GT(TurnsUntilAnswered(*answer), 0);
    EXPECT_TRUE(answer->result && answer->result->ok())
        << (answer->result ? answer->result->status().ToString() : "no answer");
    if (!answer->result || !answer->result->ok()) return {};
    return std::get<AuthResponse>(answer->result->value());
  }
  uint64_t AuthRevision() { return Auth(AuthOp::kStatus, "", "").auth_revision; }

  // A put checked at `auth_revision` (0: not checked against a user).
  Result<Response> CheckedPut(const std::string& key, uint64_t auth_revision) {
    auto request = std::make_unique<Request>();
    request->payload = PutRequest{key, "v", 0, false, false, false};
    request->auth_checked = true;
    request->auth_revision = auth_revision;
    std::shared_ptr<Answer> answer = Submit(std::move(request));
    EXPECT_GT(TurnsUntilAnswered(*answer), 0);
    if (!answer->result) return Status::Internal("no answer");
    return std::move(*answer->result);
  }

  int64_t Count(const std::string& key) {
    RangeRequest range;
    range.key = key;
    auto request = std::make_unique<Request>();
    request->payload = range;
    request->auth_checked = true;
    std::shared_ptr<Answer> answer = Submit(std::move(request));
    EXPECT_GT(TurnsUntilAnswered(*answer), 0);
    if (!answer->result || !answer->result->ok()) return -1;
    return std::get<RangeResponse>(answer->result->value()).count;
  }

  void EnableAuth() {
    Auth(AuthOp::kUserAdd, "root", "");
    Auth(AuthOp::kUserGrantRole, "root", "root");
    Auth(AuthOp::kEnable, "", "");
    ASSERT_TRUE(Auth(AuthOp::kStatus, "", "").enabled);
  }
};

TEST_F(MemberAuthRevisionTest, AWriteCheckedBeforeTheLastAuthChangeIsRefusedAndNotApplied) {
  EnableAuth();
  const uint64_t checked_at = AuthRevision();
  ASSERT_GT(checked_at, 0u);
  ASSERT_TRUE(CheckedPut("/current", checked_at).ok());

  Auth(AuthOp::kRoleAdd, "", "reader");  // the store moves on
  ASSERT_GT(AuthRevision(), checked_at);
  Result<Response> stale = CheckedPut("/stale", checked_at);
  ASSERT_FALSE(stale.ok());
  EXPECT_EQ(stale.status().name(), "ErrAuthOldRevision");
  EXPECT_EQ(stale.status().message(), "etcdserver: revision of auth store is old");
  EXPECT_EQ(Count("/stale"), 0);

  // Checked again (the client's retry): applied. Unchecked (a trusted
  // front end): applied.
  EXPECT_TRUE(CheckedPut("/stale", AuthRevision()).ok());
  EXPECT_EQ(Count("/stale"), 1);
  EXPECT_TRUE(CheckedPut("/trusted", 0).ok());
  EXPECT_EQ(Count("/trusted"), 1);
}

TEST_F(MemberAuthRevisionTest, AnOldRevisionIsNotCheckedWhileAuthIsDisabled) {
  // etcd's applier checks only while auth is enabled.
  Auth(AuthOp::kRoleAdd, "", "reader");
  Auth(AuthOp::kRoleAdd, "", "writer");
  ASSERT_GE(AuthRevision(), 2u);
  EXPECT_TRUE(CheckedPut("/k", 1).ok());
  EXPECT_EQ(Count("/k"), 1);
}

// The race itself, with nothing forged: bob's put reaches the member in the
// same turn as root's revoke of the permission it needs, so it is checked
// (and passes) before the revoke applies, and is applied after it.
TEST_F(MemberAuthRevisionTest, APutCheckedBeforeARevokeThatAppliesFirstIsRefused) {
  EnableAuth();
  Auth(AuthOp::kUserAdd, "bob", "");
  Auth(AuthOp::kRoleAdd, "", "writer");
  AuthRequest grant;
  grant.op = AuthOp::kRoleGrantPermission;
  grant.role = "writer";
  grant.permission = Permission{PermissionType::kWrite, "/b/", "/b0"};
  Auth(grant);
  Auth(AuthOp::kUserGrantRole, "bob", "writer");
  const std::string token = Auth(AuthOp::kAuthenticate, "bob", "").token;
  ASSERT_FALSE(token.empty());

  auto put_as_bob = [&](const std::string& key) {
    auto request = std::make_unique<Request>();
    request->payload = PutRequest{key, "v", 0, false, false, false};
    request->token = token;
    return Submit(std::move(request));
  };
  AuthRequest revoke_request = grant;
  revoke_request.op = AuthOp::kRoleRevokePermission;
  auto revoke = std::make_unique<Request>();
  revoke->payload = revoke_request;
  revoke->auth_checked = true;
  std::shared_ptr<Answer> revoked = Submit(std::move(revoke));
  std::shared_ptr<Answer> raced = put_as_bob("/b/raced");
  for (int i = 0; i < 10 && !(revoked->result && raced->result); i++) member_->RunOneTurn();
  ASSERT_TRUE(revoked->result && raced->result);
  ASSERT_TRUE(revoked->result->ok()) << revoked->result->status().ToString();
  ASSERT_FALSE(raced->result->ok());
  EXPECT_EQ(raced->result->status().name(), "ErrAuthOldRevision");
  EXPECT_EQ(Count("/b/raced"), 0);

  // bob's retry is checked against the store as it is now.
  std::shared_ptr<Answer> retry = put_as_bob("/b/raced");
  ASSERT_GT(TurnsUntilAnswered(*retry), 0);
  ASSERT_FALSE(retry->result->ok());
  EXPECT_EQ(retry->result->status().name(), "ErrPermissionDenied");
  EXPECT_EQ(Count("/b/raced"), 0);
}

// etcd's server retries an Authenticate whose auth revision went stale
// (v3_server.go): the client gets its token, not ErrAuthOldRevision.
TEST_F(MemberAuthRevisionTest, AnAuthenticateRacingAnAuthChangeIsTriedAgain) {
  EnableAuth();
  Auth(AuthOp::kUserAdd, "bob", "");
  auto checked = [&](AuthRequest r) {
    r.password_hash = "$2b$04$not-checked-here";  // as bob's (Auth above)
    auto request = std::make_unique<Request>();
    request->payload = r;
    request->auth_checked = true;
    return Submit(std::move(request));
  };
  AuthRequest role_add;
  role_add.op = AuthOp::kRoleAdd;
  role_add.role = "r1";
  AuthRequest authenticate;
  authenticate.op = AuthOp::kAuthenticate;
  authenticate.user = "bob";
  // Proposed in one turn: the Authenticate at the revision before the
  // role's addition, which applies first.
  std::shared_ptr<Answer> added = checked(role_add);
  std::shared_ptr<Answer> token = checked(authenticate);
  for (int i = 0; i < 10 && !(added->result && token->result); i++) member_->RunOneTurn();
  ASSERT_TRUE(added->result && token->result);
  ASSERT_TRUE(added->result->ok()) << added->result->status().ToString();
  ASSERT_TRUE(token->result->ok()) << token->result->status().ToString();
  EXPECT_FALSE(std::get<AuthResponse>(token->result->value()).token.empty());

  // One the store refuses now is answered as such (bob gone).
  std::shared_ptr<Answer> deleted = checked([] {
    AuthRequest r;
    r.op = AuthOp::kUserDelete;
    r.user = "bob";
    return r;
  }());
  token = checked(authenticate);
  for (int i = 0; i < 10 && !(deleted->result && token->result); i++) member_->RunOneTurn();
  ASSERT_TRUE(deleted->result && token->result);
  ASSERT_FALSE(token->result->ok());
  EXPECT_EQ(token->result->status().name(), "ErrAuthFailed");
}

}  // namespace
}  // namespace natcd::server
