// Entries applied from the Raft log carry their index: the engine keeps it
// durable with the writes, and refuses nothing but tells the owner which
// entries it already holds, so a replay after a restart (or after receiving
// a newer database as a snapshot) never applies an entry twice.
#include <gtest/gtest.h>

#include "core/engine_fixture.h"

namespace natcd::testing {
namespace {

class LogIndexTest : public EngineTest {};

TEST_F(LogIndexTest, AppliedIndexIsDurableWithTheWrites) {
  EXPECT_EQ(engine_->applied_index(), 0u);
  EXPECT_FALSE(engine_->AlreadyApplied(1));
  PutRequest put;
  put.key = "k";
  put.value = "v";
  ASSERT_TRUE(engine_->Apply(put, 5).ok());
  ASSERT_TRUE(engine_->Commit().ok());
  EXPECT_TRUE(engine_->AlreadyApplied(5));
  EXPECT_TRUE(engine_->AlreadyApplied(4));
  EXPECT_FALSE(engine_->AlreadyApplied(6));
  EXPECT_FALSE(engine_->AlreadyApplied(0)) << "index 0 means: not from a log";
  Reopen();
  EXPECT_EQ(engine_->applied_index(), 5u);
  EXPECT_TRUE(engine_->AlreadyApplied(5));
  EXPECT_EQ(Get("k").value, "v");
}

TEST_F(LogIndexTest, AnUncommittedIndexIsNotDurable) {
  PutRequest put;
  put.key = "k";
  put.value = "v";
  ASSERT_TRUE(engine_->Apply(put, 3).ok());
  ASSERT_TRUE(engine_->Commit().ok());
  put.value = "w";
  ASSERT_TRUE(engine_->Apply(put, 4).ok());
  Reopen();  // without Commit: as a crash would
  EXPECT_EQ(engine_->applied_index(), 3u);
  EXPECT_EQ(Get("k").value, "v");
}

}  // namespace
}  // namespace natcd::testing
