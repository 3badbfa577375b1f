// A member of its own (a cluster of one, its own leader), driven turn by
// turn on a manual clock: requests submitted as a front end submits them,
// answers caught where they land.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "natcd/clock.h"
#include "server/member.h"
#include "server/member_identity.h"
#include "testutil.h"

namespace natcd::server {

// Where a request's answer lands.
struct Answer {
  std::optional<Result<Response>> result;
};

class Catch final : public Responder {
 public:
  explicit Catch(std::shared_ptr<Answer> answer) : answer_(std::move(answer)) {}
  void Respond(Result<Response> response, const ResponseContext&) override {
    answer_->result = std::move(response);
  }

 private:
  std::shared_ptr<Answer> answer_;
};

class OneMemberTest : public ::testing::Test {
 protected:
  void SetUp() override { Open(); }

  virtual MemberOptions Options() {
    MemberOptions o;
    o.name = "natcd-1";
    o.member_id = MemberIdOf(o.name);
    o.engine.db_path = dir_.File("natcd.db");
    o.engine.sync = false;
    o.engine.clock = &clock_;
    o.engine.seed = 7;
    o.raft_log_segment_bytes = 64 << 10;  // zero-filled when made
    return o;
  }

  void Open() {
    Result<std::unique_ptr<Member>> opened = Member::Open(Options());
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    member_ = std::move(opened).value();
    for (int i = 0; i < 20 && !member_->is_leader(); i++) member_->RunOneTurn();
    ASSERT_TRUE(member_->is_leader());
  }

  // Submits `request` (its payload set) as a front end would.
  std::shared_ptr<Answer> Submit(std::unique_ptr<Request> request) {
    auto answer = std::make_shared<Answer>();
    request->received_ms = clock_.MonotonicMs();
    request->responder = std::make_unique<Catch>(answer);
    member_->Submit(std::move(request));
    return answer;
  }
  std::shared_ptr<Answer> Submit(RequestPayload payload) {
    auto request = std::make_unique<Request>();
    request->payload = std::move(payload);
    return Submit(std::move(request));
  }

  // Turns until answered (at most `turns`); how many it took, 0 if none did.
  int TurnsUntilAnswered(const Answer& answer, int turns = 10) {
    for (int i = 1; i <= turns; i++) {
      member_->RunOneTurn();
      if (answer.result) return i;
    }
    return 0;
  }

  template <typename T>
  T Call(RequestPayload payload) {
    std::shared_ptr<Answer> answer = Submit(std::move(payload));
    EXPECT_GT(TurnsUntilAnswered(*answer), 0);
    if (!answer->result || !answer->result->ok()) {
      ADD_FAILURE() << "no answer or an error: "
                    << (answer->result ? answer->result->status().ToString() : "none");
      return T{};
    }
    return std::get<T>(answer->result->value());
  }

  natcd::testing::TempDir dir_;
  ManualClock clock_;
  std::unique_ptr<Member> member_;
};

}  // namespace natcd::server
