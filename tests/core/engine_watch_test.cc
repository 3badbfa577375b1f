// Watches on the real engine: catch-up from SQLite below the history ring,
// racing new writes, prev_kv from stored history, lease revoke events,
// compaction cancel. Reference: etcd api_guarantees.md (watch: ordered,
// unique, reliable, atomic, resumable).
#include <random>
#include <string>
#include <vector>

#include "core/engine_fixture.h"
#include "natcd/key_range.h"

namespace natcd::testing {
namespace {

class EngineWatchTest : public EngineTest {
 protected:
  EngineOptions Options() override {
    EngineOptions options = EngineTest::Options();
    // A tiny ring, so catch-up must read SQLite.
    options.watch.history_events_max = 16;
    options.watch.catchup_events_max = 7;
    return options;
  }

  // Drains every message of the watcher; returns false once it is canceled.
  bool Drain(WatchId id, std::vector<Event>* events, WatchMessage* last = nullptr) {
    WatchMessage message;
    while (engine_->watches().Poll(id, 1'000, &message)) {
      for (const EventRef& e : message.events) events->push_back(*e);
      if (last) *last = message;
      if (message.canceled) return false;
      message = WatchMessage{};
    }
    return true;
  }
};

TEST_F(EngineWatchTest, CatchUpFromSqliteRacingWritesIsGapFreeAndInOrder) {
  std::mt19937 rng(RandomSeed());
  for (int i = 0; i < 200; ++i) Put("w/" + std::to_string(rng() % 10), std::to_string(i));
  WatchOptions options;
  options.key = "w/";
  options.range_end = PrefixRangeEnd("w/");
  options.start_revision = 5;
  options.prev_kv = true;
  Result<WatchId> id = engine_->watches().Create(options);
  ASSERT_TRUE(id.ok());

  std::vector<Event> seen;
  // Writes keep coming while the watcher catches up in small steps.
  for (int i = 200; i < 400; ++i) {
    Put("w/" + std::to_string(rng() % 10), std::to_string(i));
    if (i % 3 == 0) Delete("w/" + std::to_string(rng() % 10));
    engine_->watches().SyncUnsynced(1);
    ASSERT_TRUE(Drain(*id, &seen));
  }
  while (engine_->watches().SyncUnsynced(16)) ASSERT_TRUE(Drain(*id, &seen));
  ASSERT_TRUE(Drain(*id, &seen));

  // Exactly the stored history from revision 5, in order, with prev_kv.
  std::vector<Event> expected;
  ASSERT_OK(engine_->ReadEvents("w/", PrefixRangeEnd("w/"), 5, engine_->revision(), SIZE_MAX, true,
                                &expected));
  ASSERT_EQ(seen.size(), expected.size());
  for (size_t i = 0; i < seen.size(); ++i) {
    EXPECT_EQ(seen[i].kv.mod_revision, expected[i].kv.mod_revision) << i;
    EXPECT_EQ(seen[i].type, expected[i].type) << i;
    EXPECT_EQ(seen[i].kv, expected[i].kv) << i;
    EXPECT_EQ(seen[i].has_prev_kv, expected[i].has_prev_kv) << i;
    EXPECT_EQ(seen[i].prev_kv, expected[i].prev_kv) << i;
  }
  EXPECT_EQ(seen.front().kv.mod_revision, 5);
  EXPECT_EQ(seen.back().kv.mod_revision, engine_->revision());
}

TEST_F(EngineWatchTest, EventsReachWatchersOnlyAfterCommit) {
  WatchOptions options;
  options.key = "k";
  Result<WatchId> id = engine_->watches().Create(options);
  ASSERT_TRUE(id.ok());
  ASSERT_TRUE(engine_->Put(PutRequest{"k", "v"}).ok());
  std::vector<Event> seen;
  Drain(*id, &seen);
  EXPECT_TRUE(seen.empty());  // applied, not yet durable
  ASSERT_OK(engine_->Commit());
  Drain(*id, &seen);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].kv.value, "v");
}

TEST_F(EngineWatchTest, LeaseRevokeDeliversDeleteEvents) {
  int64_t lease = Grant(10);
  Put("l/a", "1", lease);
  Put("l/b", "2", lease);
  WatchOptions options;
  options.key = "l/";
  options.range_end = PrefixRangeEnd("l/");
  options.prev_kv = true;
  Result<WatchId> id = engine_->watches().Create(options);
  ASSERT_TRUE(id.ok());
  clock_.AdvanceMs(10'000);
  ASSERT_TRUE(engine_->Apply(*engine_->ExpiredLeases()).ok());
  ASSERT_OK(engine_->Commit());
  std::vector<Event> seen;
  Drain(*id, &seen);
  ASSERT_EQ(seen.size(), 2u);
  for (const Event& e : seen) {
    EXPECT_EQ(e.type, Event::Type::kDelete);
    EXPECT_EQ(e.kv.mod_revision, 4);
    EXPECT_EQ(e.prev_kv.lease, lease);
  }
}

TEST_F(EngineWatchTest, WatchBelowCompactionIsCanceledWithTheCompactRevision) {
  for (int i = 0; i < 10; ++i) Put("c", std::to_string(i));
  ASSERT_TRUE(engine_->Compact({6}).ok());
  ASSERT_OK(engine_->Commit());
  WatchOptions options;
  options.key = "c";
  options.start_revision = 3;
  Result<WatchId> id = engine_->watches().Create(options);
  ASSERT_TRUE(id.ok());
  engine_->watches().SyncUnsynced(16);
  std::vector<Event> seen;
  WatchMessage last;
  EXPECT_FALSE(Drain(*id, &seen, &last));
  EXPECT_TRUE(last.canceled);
  EXPECT_EQ(last.compact_revision, 6);
  EXPECT_TRUE(seen.empty());

  // From the compact revision itself the history is complete.
  options.start_revision = 6;
  Result<WatchId> ok = engine_->watches().Create(options);
  ASSERT_TRUE(ok.ok());
  while (engine_->watches().SyncUnsynced(16)) {
  }
  ASSERT_TRUE(Drain(*ok, &seen));
  ASSERT_EQ(seen.size(), 6u);  // revisions 6 to 11
  EXPECT_EQ(seen.front().kv.mod_revision, 6);
}

TEST_F(EngineWatchTest, ResumeAfterRestartFromLastRevisionPlusOne) {
  for (int i = 0; i < 30; ++i) Put("r/" + std::to_string(i % 4), std::to_string(i));
  int64_t last_seen = 17;
  Reopen();
  for (int i = 30; i < 40; ++i) Put("r/" + std::to_string(i % 4), std::to_string(i));
  WatchOptions options;
  options.key = "r/";
  options.range_end = PrefixRangeEnd("r/");
  options.start_revision = last_seen + 1;
  Result<WatchId> id = engine_->watches().Create(options);
  ASSERT_TRUE(id.ok());
  while (engine_->watches().SyncUnsynced(16)) {
  }
  std::vector<Event> seen;
  ASSERT_TRUE(Drain(*id, &seen));
  ASSERT_EQ(seen.size(), 41u - 17u);  // revisions 18 to 41
  for (size_t i = 0; i < seen.size(); ++i) {
    EXPECT_EQ(seen[i].kv.mod_revision, static_cast<int64_t>(18 + i));
  }
}

}  // namespace
}  // namespace natcd::testing
