// Idempotent retries: remembered outcomes are durable with their write,
// survive a restart and are forgotten after their window.
#include "core/engine_fixture.h"

namespace natcd::testing {
namespace {

using RequestMemoryTest = EngineTest;

TEST_F(RequestMemoryTest, RememberedUntilExpiryAndAcrossRestart) {
  Put("k", "v");
  int64_t expires = clock_.RealtimeMs() + 120'000;
  ASSERT_OK(engine_->RememberRequest("req-1", expires, "outcome-1"));
  ASSERT_OK(engine_->Commit());
  ASSERT_NE(engine_->FindRequest("req-1"), nullptr);
  EXPECT_EQ(*engine_->FindRequest("req-1"), "outcome-1");
  EXPECT_EQ(engine_->FindRequest("req-2"), nullptr);

  Reopen();
  ASSERT_NE(engine_->FindRequest("req-1"), nullptr);
  EXPECT_EQ(*engine_->FindRequest("req-1"), "outcome-1");

  clock_.AdvanceMs(120'000);
  EXPECT_EQ(engine_->FindRequest("req-1"), nullptr);
  ASSERT_OK(engine_->Commit());  // prunes
  EXPECT_EQ(engine_->remembered_requests(), 0u);
  Reopen();
  EXPECT_EQ(engine_->remembered_requests(), 0u);
}

TEST_F(RequestMemoryTest, UncommittedMemoryIsLostWithItsWrite) {
  ASSERT_TRUE(engine_->Put(PutRequest{"k", "v"}).ok());
  ASSERT_OK(engine_->RememberRequest("req", clock_.RealtimeMs() + 1'000, "x"));
  Reopen();  // no Commit: neither the write nor the memory is durable
  EXPECT_EQ(engine_->FindRequest("req"), nullptr);
  EXPECT_EQ(Get("k").version, 0);
}

}  // namespace
}  // namespace natcd::testing
