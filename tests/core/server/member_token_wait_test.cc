// Member::RunOnMemberThreadWithToken: a front end's watch creation waits,
// as requests do, while the token's index (after its dot) is past what the
// member has applied (etcd's simple tokens wait for their index), in the
// order the tasks came, and runs once the index is applied or the request
// timeout passed. A member of its own, driven turn by turn.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "core/server/one_member_test.h"

namespace natcd::server {
namespace {

class MemberTokenWaitTest : public OneMemberTest {
 protected:
  // As root would, through a member that checked it.
  AuthResponse Auth(AuthOp op, const std::string& user, const std::string& role = "") {
    AuthRequest r;
    r.op = op;
    r.user = user;
    r.role = role;
    r.password_hash = "$2b$04$not-checked-here";
    auto request = std::make_unique<Request>();
    request->payload = r;
    request->auth_checked = true;
    std::shared_ptr<Answer> answer = Submit(std::move(request));
    EXPECT_GT(TurnsUntilAnswered(*answer), 0);
    EXPECT_TRUE(answer->result && answer->result->ok());
    if (!answer->result || !answer->result->ok()) return {};
    return std::get<AuthResponse>(answer->result->value());
  }
  void Put(const std::string& key) {
    auto request = std::make_unique<Request>();
    request->payload = PutRequest{key, "v", 0, false, false, false};
    request->auth_checked = true;
    std::shared_ptr<Answer> answer = Submit(std::move(request));
    EXPECT_GT(TurnsUntilAnswered(*answer), 0);
  }
  // A task that records, when it runs, what a watch on /w with `token`
  // would be answered.
  void WatchWith(const std::string& token, const std::string& name) {
    member_->RunOnMemberThreadWithToken(token, [this, token, name](Engine&) {
      Status s = member_->AuthorizeWatch(token, false, false, "/w", "");
      ran_.push_back(name + ": " + (s.ok() ? "OK" : std::string(s.name())));
    });
  }
  std::vector<std::string> ran_;
};

TEST_F(MemberTokenWaitTest, AWatchWaitsForItsTokensIndexInOrder) {
  Auth(AuthOp::kUserAdd, "root");
  Auth(AuthOp::kUserGrantRole, "root", "root");
  Auth(AuthOp::kEnable, "");
  const std::string token = Auth(AuthOp::kAuthenticate, "root").token;
  const size_t dot = token.rfind('.');
  ASSERT_NE(dot, std::string::npos) << token;
  const uint64_t index = std::stoull(token.substr(dot + 1));
  // A token from an Authenticate two entries ahead of this member (made
  // up: no entry assigns it, so once its index is applied it is invalid).
  const std::string ahead = token.substr(0, dot) + "." + std::to_string(index + 2);

  WatchWith(ahead, "first");
  WatchWith(token, "applied");
  WatchWith(ahead, "second");
  member_->RunOneTurn();
  EXPECT_EQ(ran_, std::vector<std::string>{"applied: OK"});
  Put("/w/1");
  EXPECT_EQ(ran_, std::vector<std::string>{"applied: OK"}) << "one entry short";
  Put("/w/2");
  member_->RunOneTurn();
  EXPECT_EQ(ran_, (std::vector<std::string>{"applied: OK", "first: ErrInvalidAuthToken",
                                            "second: ErrInvalidAuthToken"}));

  // An index never reached: answered once the request timeout passed.
  ran_.clear();
  WatchWith(token.substr(0, dot) + "." + std::to_string(index + 1000), "far");
  member_->RunOneTurn();
  EXPECT_TRUE(ran_.empty());
  clock_.AdvanceMs(Options().request_timeout_ms + 1);
  member_->RunOneTurn();
  EXPECT_EQ(ran_, std::vector<std::string>{"far: ErrInvalidAuthToken"});
}

}  // namespace
}  // namespace natcd::server
