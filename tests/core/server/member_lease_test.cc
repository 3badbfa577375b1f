// A member's keepalive answers: at once when a new leader would honour the
// renewal, else only once the checkpoint that records it is applied
// (server/held_renewals.h), and then every held one answered on every path.
// One member of its own, driven turn by turn on a manual clock.
#include <gtest/gtest.h>

#include <memory>

#include "core/server/one_member_test.h"

namespace natcd::server {
namespace {

class MemberLeaseTest : public OneMemberTest {
 protected:
  MemberOptions Options() override {
    MemberOptions o = OneMemberTest::Options();
    // Checkpoints every 5 s: none offered by the timers between two steps
    // of a test (the clock moves only when told to).
    o.lease_check_interval_ms = 5'000;
    o.lease_checkpoint_interval_ms = 5'000;
    return o;
  }

  // A lease of 10 s whose replicated state records 4 s left, 6 s after its
  // grant: the timers' full scan checkpointed it (a holder that stopped
  // renewing, as far as the leader could tell).
  int64_t LeaseCheckpointedAtFourSeconds() {
    const int64_t id = Call<LeaseGrantResponse>(LeaseGrantRequest{10, 0}).id;
    clock_.AdvanceMs(6'000);
    for (int i = 0; i < 5; i++) member_->RunOneTurn();  // the scan's checkpoint applied
    return id;
  }
};

// Renewed 6 s past a replicated deadline 4 s ahead: a leader that died
// after answering but before its checkpoint left the next one (here: the
// same member, restarted) 4 s for a lease its holder was told had 10 s.
TEST_F(MemberLeaseTest, AFarRenewalIsAnsweredOnceItsCheckpointIsApplied) {
  const int64_t lease = LeaseCheckpointedAtFourSeconds();
  std::shared_ptr<Answer> kept = Submit(LeaseKeepAliveRequest{lease});
  ASSERT_GT(TurnsUntilAnswered(*kept), 0);
  ASSERT_TRUE(kept->result->ok()) << kept->result->status().ToString();
  EXPECT_EQ(std::get<LeaseKeepAliveResponse>(kept->result->value()).ttl, 10);

  member_->TEST_Crash();  // at once after the answer
  member_.reset();
  Open();
  const LeaseTimeToLiveResponse ttl =
      Call<LeaseTimeToLiveResponse>(LeaseTimeToLiveRequest{lease, false});
  EXPECT_EQ(ttl.ttl, 10) << "the checkpoint recording the renewal was applied before its answer";
}

TEST_F(MemberLeaseTest, AKeepAliveWithinHalfATtlAnswersAsSoonAsATimeToLive) {
  const int64_t lease = Call<LeaseGrantResponse>(LeaseGrantRequest{10, 0}).id;
  clock_.AdvanceMs(4'000);  // renewed 4 s past the replicated deadline
  std::shared_ptr<Answer> ttl = Submit(LeaseTimeToLiveRequest{lease, false});
  std::shared_ptr<Answer> kept = Submit(LeaseKeepAliveRequest{lease});
  const int turns = TurnsUntilAnswered(*ttl);
  ASSERT_GT(turns, 0);
  ASSERT_TRUE(kept->result.has_value()) << "answered with the time-to-live, in turn " << turns;
  EXPECT_EQ(std::get<LeaseKeepAliveResponse>(kept->result->value()).ttl, 10);
}

TEST_F(MemberLeaseTest, AFarRenewalWaitsForItsCheckpointNotForTheTimers) {
  const int64_t lease = LeaseCheckpointedAtFourSeconds();
  std::shared_ptr<Answer> ttl = Submit(LeaseTimeToLiveRequest{lease, false});
  std::shared_ptr<Answer> kept = Submit(LeaseKeepAliveRequest{lease});
  const int ttl_turns = TurnsUntilAnswered(*ttl);
  ASSERT_GT(ttl_turns, 0);
  EXPECT_FALSE(kept->result.has_value()) << "answered before its checkpoint";
  // The checkpoint goes out with the next turn's batch; the clock stands
  // still, so no timer proposes it.
  EXPECT_GT(TurnsUntilAnswered(*kept, 3), 0);
  ASSERT_TRUE(kept->result->ok()) << kept->result->status().ToString();
  EXPECT_EQ(std::get<LeaseKeepAliveResponse>(kept->result->value()).ttl, 10);
  // Within half a TTL of what it recorded now: at once.
  std::shared_ptr<Answer> again = Submit(LeaseKeepAliveRequest{lease});
  std::shared_ptr<Answer> ttl_again = Submit(LeaseTimeToLiveRequest{lease, false});
  ASSERT_GT(TurnsUntilAnswered(*ttl_again), 0);
  EXPECT_TRUE(again->result.has_value());
}

TEST_F(MemberLeaseTest, AHeldRenewalIsAnsweredErrStoppedOnShutdown) {
  const int64_t lease = LeaseCheckpointedAtFourSeconds();
  std::shared_ptr<Answer> ttl = Submit(LeaseTimeToLiveRequest{lease, false});
  std::shared_ptr<Answer> kept = Submit(LeaseKeepAliveRequest{lease});
  ASSERT_GT(TurnsUntilAnswered(*ttl), 0);
  ASSERT_FALSE(kept->result.has_value());
  member_->Stop();
  ASSERT_TRUE(kept->result.has_value()) << "every held request is answered";
  EXPECT_EQ(kept->result->status().name(), "ErrStopped");
}

// Cut off from the clients the member decides no expiry: a held renewal
// fails (the holder retries), it is not answered by a checkpoint applied
// meanwhile.
TEST_F(MemberLeaseTest, AHeldRenewalFailsWhenTheMemberIsCutOff) {
  const int64_t lease = LeaseCheckpointedAtFourSeconds();
  std::shared_ptr<Answer> ttl = Submit(LeaseTimeToLiveRequest{lease, false});
  std::shared_ptr<Answer> kept = Submit(LeaseKeepAliveRequest{lease});
  ASSERT_GT(TurnsUntilAnswered(*ttl), 0);
  ASSERT_FALSE(kept->result.has_value());
  member_->OnDisconnected();
  ASSERT_GT(TurnsUntilAnswered(*kept, 1), 0);
  EXPECT_EQ(kept->result->status().name(), "ErrNotLeader");
}

TEST_F(MemberLeaseTest, AHeldRenewalTimesOut) {
  const int64_t lease = LeaseCheckpointedAtFourSeconds();
  std::shared_ptr<Answer> ttl = Submit(LeaseTimeToLiveRequest{lease, false});
  // Received long ago (a request that waited for a leader): past its
  // deadline by the time it is held.
  auto answer = std::make_shared<Answer>();
  auto request = std::make_unique<Request>();
  request->payload = LeaseKeepAliveRequest{lease};
  request->received_ms = clock_.MonotonicMs() - Options().request_timeout_ms - 1;
  request->responder = std::make_unique<Catch>(answer);
  member_->Submit(std::move(request));
  ASSERT_GT(TurnsUntilAnswered(*ttl), 0);
  ASSERT_GT(TurnsUntilAnswered(*answer, 1), 0);
  EXPECT_EQ(answer->result->status().name(), "ErrTimeout");
}

}  // namespace
}  // namespace natcd::server
