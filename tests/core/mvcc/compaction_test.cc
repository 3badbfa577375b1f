// Compact(R): history below R is gone except what reads at R need; reads
// below R fail with ErrCompacted carrying the compact revision; physical
// removal is bounded per commit and survives a restart.
#include <string>

#include "core/engine_fixture.h"

namespace natcd::testing {
namespace {

using CompactionTest = EngineTest;

TEST_F(CompactionTest, ReadsBelowCompactRevisionFail) {
  Put("a", "1");  // 2
  Put("a", "2");  // 3
  Put("b", "1");  // 4
  Put("a", "3");  // 5
  ASSERT_TRUE(engine_->Compact({4}).ok());
  ASSERT_OK(engine_->Commit());

  RangeRequest request;
  request.key = "a";
  request.revision = 3;
  Result<RangeResponse> r = engine_->Range(request);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsCompacted());
  EXPECT_EQ(r.status().compact_revision(), 4);
  // At the compact revision itself reads still work, and see a's version 2.
  EXPECT_EQ(Get("a", 4).value, "2");
  EXPECT_EQ(Get("a", 4).version, 2);
  EXPECT_EQ(Get("b", 4).value, "1");
  EXPECT_EQ(Get("a").value, "3");
}

TEST_F(CompactionTest, CompactErrors) {
  Put("a", "1");  // 2
  Put("a", "2");  // 3
  Result<CompactionResponse> future = engine_->Compact({4});
  ASSERT_FALSE(future.ok());
  EXPECT_TRUE(future.status().IsFutureRevision());
  ASSERT_TRUE(engine_->Compact({3}).ok());
  Result<CompactionResponse> again = engine_->Compact({3});
  ASSERT_FALSE(again.ok());
  EXPECT_TRUE(again.status().IsCompacted());
  EXPECT_EQ(engine_->Compact({2}).status().compact_revision(), 3);
}

TEST_F(CompactionTest, DeletedKeysVanishAndNewGenerationsSurvive) {
  Put("gone", "1");  // 2
  Delete("gone");    // 3
  Put("back", "1");  // 4
  Delete("back");    // 5
  Put("back", "2");  // 6
  ASSERT_TRUE(engine_->Compact({6}).ok());
  ASSERT_OK(engine_->Commit());
  EXPECT_EQ(engine_->key_count(), 1u);
  EXPECT_EQ(Get("gone").version, 0);
  KeyValue back = Get("back");
  EXPECT_EQ(back.version, 1);
  EXPECT_EQ(back.create_revision, 6);
}

TEST_F(CompactionTest, PhysicalRemovalIsBoundedPerCommitAndResumesAfterRestart) {
  for (int i = 0; i < 10; ++i) {
    for (int k = 0; k < 300; ++k) Put("k" + std::to_string(k), std::to_string(i));
  }
  int64_t rev = engine_->revision();
  ASSERT_TRUE(engine_->Compact({rev}).ok());
  // 300 keys x 9 old versions are dropped, but the last key keeps the
  // version before its write at rev (the prev_kv of that event): 2,699.
  // 1,000 go per commit.
  EXPECT_EQ(engine_->compaction_rows_pending(), 2699u);
  ASSERT_OK(engine_->Commit());
  EXPECT_EQ(engine_->compaction_rows_pending(), 1699u);
  ASSERT_OK(engine_->Commit());
  EXPECT_EQ(engine_->compaction_rows_pending(), 699u);
  // A restart recomputes what is left from the persisted compact revision.
  Reopen();
  EXPECT_EQ(engine_->compaction_rows_pending(), 699u);
  EXPECT_EQ(engine_->CompactRevision(), rev);
  ASSERT_OK(engine_->Commit());
  EXPECT_EQ(engine_->compaction_rows_pending(), 0u);
  Reopen();
  EXPECT_EQ(engine_->compaction_rows_pending(), 0u);
  EXPECT_EQ(Get("k7").value, "9");
  EXPECT_EQ(Get("k7").version, 10);
}

TEST_F(CompactionTest, PhysicalCompactionRemovesEverythingAtOnce) {
  for (int i = 0; i < 5; ++i) Put("k", std::to_string(i));
  CompactionRequest request{engine_->revision(), /*physical=*/true};
  ASSERT_TRUE(engine_->Compact(request).ok());
  EXPECT_EQ(engine_->compaction_rows_pending(), 0u);
}

}  // namespace
}  // namespace natcd::testing
