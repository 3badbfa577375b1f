// The alarm store (core/alarm/alarm_store.h) through the engine that applies
// it: etcd's semantics (activating twice or deactivating what is not raised
// changes nothing), bad changes refused without a change, persistence across
// a reopen, the pinned SQLite format, and a database from before alarms.
#include "alarm/alarm_store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include "alarm/backend_quota.h"
#include "core/engine_fixture.h"

namespace natcd {
namespace {

constexpr uint64_t kBig = 0x8e9e05c52164694dull;  // above INT64_MAX: stored as its bits

class AlarmStoreTest : public testing::EngineTest {
 protected:
  Status Change(AlarmAction action, uint64_t member, AlarmType type) {
    Status s = engine_->ApplyAlarm(AlarmChange{action, member, type}, ++index_);
    EXPECT_OK(engine_->Commit());
    return s;
  }
  std::vector<AlarmMember> List() { return engine_->alarms().List(); }
  uint64_t index_ = 0;
};

TEST_F(AlarmStoreTest, ActivateAndDeactivateAsEtcd) {
  EXPECT_TRUE(List().empty());
  ASSERT_OK(Change(AlarmAction::kActivate, 2, AlarmType::kNoSpace));
  ASSERT_OK(Change(AlarmAction::kActivate, 2, AlarmType::kNoSpace));  // again: one alarm
  ASSERT_OK(Change(AlarmAction::kActivate, 1, AlarmType::kCorrupt));
  ASSERT_OK(Change(AlarmAction::kActivate, 2, AlarmType::kCorrupt));
  EXPECT_EQ(List(),
            (std::vector<AlarmMember>{
                {1, AlarmType::kCorrupt}, {2, AlarmType::kNoSpace}, {2, AlarmType::kCorrupt}}));
  EXPECT_TRUE(engine_->alarms().Any(AlarmType::kNoSpace));
  ASSERT_OK(Change(AlarmAction::kDeactivate, 2, AlarmType::kNoSpace));
  ASSERT_OK(Change(AlarmAction::kDeactivate, 2, AlarmType::kNoSpace));  // not raised: nothing
  ASSERT_OK(Change(AlarmAction::kDeactivate, 9, AlarmType::kCorrupt));  // nor this
  EXPECT_FALSE(engine_->alarms().Any(AlarmType::kNoSpace));
  EXPECT_TRUE(engine_->alarms().Has({1, AlarmType::kCorrupt}));
  EXPECT_EQ(List().size(), 2u);
  EXPECT_EQ(engine_->applied_index(), index_);
}

TEST_F(AlarmStoreTest, ABadChangeIsRefusedAndChangesNothing) {
  ASSERT_OK(Change(AlarmAction::kActivate, 2, AlarmType::kNoSpace));
  const int64_t revision = engine_->revision();
  EXPECT_EQ(Change(AlarmAction::kGet, 2, AlarmType::kNoSpace).ToString(),
            "ErrInvalidArgument: etcdserver: unknown alarm action 0");
  EXPECT_EQ(Change(static_cast<AlarmAction>(7), 2, AlarmType::kNoSpace).ToString(),
            "ErrInvalidArgument: etcdserver: unknown alarm action 7");
  EXPECT_EQ(Change(AlarmAction::kActivate, 2, AlarmType::kNone).ToString(),
            "ErrInvalidArgument: etcdserver: unknown alarm type 0 (NOSPACE or CORRUPT)");
  EXPECT_EQ(Change(AlarmAction::kDeactivate, 2, static_cast<AlarmType>(3)).ToString(),
            "ErrInvalidArgument: etcdserver: unknown alarm type 3 (NOSPACE or CORRUPT)");
  EXPECT_EQ(List(), (std::vector<AlarmMember>{{2, AlarmType::kNoSpace}}));
  EXPECT_EQ(engine_->revision(), revision);
  EXPECT_OK(engine_->health());
  // The entries were still applied (as no-ops): a restart resumes after them.
  EXPECT_EQ(engine_->applied_index(), index_);
}

TEST_F(AlarmStoreTest, AlarmsSurviveAReopen) {
  Put("k", "v");
  ASSERT_OK(Change(AlarmAction::kActivate, kBig, AlarmType::kNoSpace));
  ASSERT_OK(Change(AlarmAction::kActivate, 3, AlarmType::kCorrupt));
  Reopen();
  EXPECT_EQ(List(),
            (std::vector<AlarmMember>{{3, AlarmType::kCorrupt}, {kBig, AlarmType::kNoSpace}}));
  EXPECT_EQ(engine_->applied_index(), index_);
}

TEST_F(AlarmStoreTest, AnUncommittedAlarmIsLostWithItsBatch) {
  ASSERT_OK(engine_->ApplyAlarm({AlarmAction::kActivate, 1, AlarmType::kNoSpace}, 1));
  // No Commit: a crash here loses the entry's effects, as any write's.
  Reopen();
  EXPECT_TRUE(List().empty());
}

// DO NOT CHANGE: persisted. The table and rows an alarm set leaves in SQLite.
TEST_F(AlarmStoreTest, TheTableHoldsThePinnedFormat) {
  ASSERT_OK(Change(AlarmAction::kActivate, kBig, AlarmType::kNoSpace));
  ASSERT_OK(Change(AlarmAction::kActivate, 3, AlarmType::kCorrupt));
  engine_.reset();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(dir_.File("natcd.db").c_str(), &db), SQLITE_OK);
  auto rows = [&](const char* sql) {
    std::string out;
    sqlite3_stmt* stmt = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr), SQLITE_OK) << sql;
    while (sqlite3_step(stmt) == SQLITE_ROW) {
      for (int i = 0; i < sqlite3_column_count(stmt); ++i) {
        out += reinterpret_cast<const char*>(sqlite3_column_text(stmt, i));
        out += " ";
      }
      out += "|";
    }
    sqlite3_finalize(stmt);
    return out;
  };
  EXPECT_EQ(rows("SELECT member_id, typeof(member_id), type, typeof(type) FROM alarm "
                 "ORDER BY member_id"),
            "-8170086329776576179 integer 1 integer |3 integer 2 integer |");
  EXPECT_EQ(rows("SELECT sql FROM sqlite_master WHERE name = 'alarm'"),
            "CREATE TABLE alarm (\n  member_id INTEGER NOT NULL,\n  type INTEGER NOT NULL,\n"
            "  PRIMARY KEY (member_id, type)\n) WITHOUT ROWID |");
  sqlite3_close(db);
}

TEST(AlarmStoreOpen, ADatabaseFromBeforeAlarmsOpensWithNone) {
  testing::TempDir dir;
  ManualClock clock;
  EngineOptions options;
  options.db_path = dir.File("natcd.db");
  options.sync = false;
  options.clock = &clock;
  {
    auto engine = Engine::Open(options);
    ASSERT_TRUE(engine.ok());
    ASSERT_OK((*engine)->Put(PutRequest{"k", "v"}).status());
    ASSERT_OK((*engine)->Commit());
  }
  // What main's natcd leaves: every table but the alarm table.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(dir.File("natcd.db").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "DROP TABLE alarm", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  auto engine = Engine::Open(options);
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  EXPECT_TRUE((*engine)->alarms().List().empty());
  EXPECT_EQ((*engine)->revision(), 2);
  ASSERT_OK((*engine)->ApplyAlarm({AlarmAction::kActivate, 1, AlarmType::kNoSpace}, 1));
  ASSERT_OK((*engine)->Commit());
  EXPECT_EQ((*engine)->alarms().List().size(), 1u);
}

TEST(AlarmStoreOpen, AnUnknownStoredTypeIsCorruption) {
  testing::TempDir dir;
  ManualClock clock;
  EngineOptions options;
  options.db_path = dir.File("natcd.db");
  options.sync = false;
  options.clock = &clock;
  { ASSERT_TRUE(Engine::Open(options).ok()); }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(dir.File("natcd.db").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "INSERT INTO alarm VALUES (1, 9)", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  auto engine = Engine::Open(options);
  ASSERT_FALSE(engine.ok());
  EXPECT_EQ(engine.status().ToString(), "ErrCorrupt: alarm table: unknown alarm type 9");
}

// etcd's capped applier: with NOSPACE raised the engine refuses, at apply,
// what would grow the store, and applies the rest.
TEST_F(AlarmStoreTest, NoSpaceRefusesGrowingWritesAtApply) {
  Put("a", "1");
  const int64_t lease = Grant(60);
  ASSERT_OK(Change(AlarmAction::kActivate, 1, AlarmType::kNoSpace));
  const int64_t revision = engine_->revision();
  EXPECT_EQ(engine_->Put(PutRequest{"b", "2"}).status().ToString(),
            "ErrNoSpace: etcdserver: mvcc: database space exceeded");
  EXPECT_EQ(engine_->LeaseGrant(LeaseGrantRequest{60, 0}).status().name(), "ErrNoSpace");
  TxnRequest put_in_failure;
  put_in_failure.failure.push_back(RequestOp{PutRequest{"c", "3"}});
  EXPECT_EQ(engine_->Txn(put_in_failure).status().name(), "ErrNoSpace");
  EXPECT_EQ(engine_->revision(), revision);
  EXPECT_OK(engine_->health());
  TxnRequest reads;
  RangeRequest get;
  get.key = "a";
  reads.success.push_back(RequestOp{get});
  EXPECT_OK(engine_->Txn(reads).status());
  EXPECT_OK(engine_->LeaseRevoke(LeaseRevokeRequest{lease}).status());
  EXPECT_EQ(Delete("a").deleted, 1);
  EXPECT_OK(engine_->Compact(CompactionRequest{engine_->revision(), false}).status());
  ASSERT_OK(engine_->Commit());
  ASSERT_OK(Change(AlarmAction::kDeactivate, 1, AlarmType::kNoSpace));
  EXPECT_OK(engine_->Put(PutRequest{"b", "2"}).status());
}

TEST_F(AlarmStoreTest, CorruptRefusesEveryWriteButCheckpointsAtApply) {
  const int64_t lease = Grant(60);
  ASSERT_OK(Change(AlarmAction::kActivate, 1, AlarmType::kCorrupt));
  EXPECT_EQ(engine_->Put(PutRequest{"b", "2"}).status().ToString(),
            "ErrCorrupt: etcdserver: corrupt cluster");
  EXPECT_EQ(engine_->LeaseRevoke(LeaseRevokeRequest{lease}).status().name(), "ErrCorrupt");
  EXPECT_EQ(engine_->DeleteRange(DeleteRangeRequest{"b", ""}).status().name(), "ErrCorrupt");
  EXPECT_OK(engine_->health());  // a refusal, not a storage failure
  LeaseCheckpointRequest cp;
  cp.checkpoints.push_back({lease, 1'000});
  EXPECT_OK(engine_->Apply(cp, ++index_).status());
}

TEST(BackendQuota, CostsAreEtcds) {
  EXPECT_EQ(QuotaCost(PutRequest{"key", "value"}), 256 + 3 + 5);
  EXPECT_EQ(QuotaCost(LeaseGrantRequest{60, 0}), 64);
  TxnRequest txn;
  txn.success.push_back(RequestOp{PutRequest{"a", "12"}});
  txn.success.push_back(RequestOp{DeleteRangeRequest{"x", ""}});
  txn.failure.push_back(RequestOp{PutRequest{"b", ""}});
  txn.failure.push_back(RequestOp{PutRequest{"c", ""}});
  EXPECT_EQ(QuotaCost(txn), 2 * 257);  // the larger branch
  TxnRequest reads;
  reads.success.push_back(RequestOp{RangeRequest{}});
  EXPECT_EQ(QuotaCost(reads), 0);
  TxnRequest nested;
  nested.success.push_back(RequestOp{std::make_shared<TxnRequest>(txn)});
  EXPECT_EQ(QuotaCost(nested), 2 * 257);
  // etcd's Available: size + cost < quota.
  EXPECT_TRUE(QuotaAvailable(1000, 700, 299));
  EXPECT_FALSE(QuotaAvailable(1000, 700, 300));
  EXPECT_TRUE(QuotaAvailable(0, 1 << 30, 300));  // no quota
  EXPECT_TRUE(QuotaAvailable(1000, 5000, 0));    // grows nothing
  EXPECT_EQ(QuotaBytesFromFlag(0), int64_t{2} << 30);
  EXPECT_EQ(QuotaBytesFromFlag(-1), 0);
  EXPECT_EQ(QuotaBytesFromFlag(12345), 12345);
}

TEST(AlarmText, IsEtcdsAlarmMemberString) {
  EXPECT_EQ(AlarmText({kBig, AlarmType::kNoSpace}), "memberID:10276657743932975437 alarm:NOSPACE ");
  EXPECT_EQ(AlarmText({3, AlarmType::kCorrupt}), "memberID:3 alarm:CORRUPT ");
  EXPECT_EQ(AlarmName(AlarmType::kNone), "NONE");
}

}  // namespace
}  // namespace natcd
