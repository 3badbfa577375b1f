// The engine's SQLite state is committed in batches (etcd's backend batch),
// off the acknowledgement path: a write is answered once its entry is
// durable in the Raft log and applied, the batch commits when it has been
// open the batch interval or holds the batch limit of entries, and a crash
// before that loses nothing: the restart applies the uncommitted tail again
// from the log, and only that tail. One member of its own, driven turn by
// turn on a manual clock; the database is read through a connection of its
// own (ReadDatabaseFacts), so it shows only what was committed.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "core/server/one_member_test.h"
#include "core/storage/fault_vfs.h"
#include "metrics/member_metrics.h"
#include "metrics/registry.h"
#include "storage/backup_file.h"

namespace natcd::server {
namespace {

using natcd::testing::FaultVfs;

constexpr int64_t kBatchIntervalMs = 100;

class MemberBatchCommitTest : public OneMemberTest {
 protected:
  MemberOptions Options() override {
    MemberOptions o = OneMemberTest::Options();
    o.engine.batch_interval_ms = kBatchIntervalMs;
    o.engine.batch_limit = batch_limit_;
    o.metrics = &metrics_->member;
    return o;
  }
  // Stopped before the metrics it reports to go.
  void TearDown() override { member_.reset(); }

  // What the database holds as committed.
  DatabaseFacts Committed() {
    Result<DatabaseFacts> facts = ReadDatabaseFacts(dir_.File("natcd.db"), false);
    EXPECT_TRUE(facts.ok()) << facts.status().ToString();
    return facts.ok() ? *facts : DatabaseFacts{};
  }

  RangeResponse Range(const std::string& key, const std::string& range_end = "") {
    RangeRequest request;
    request.key = key;
    request.range_end = range_end;
    return Call<RangeResponse>(request);
  }

  int64_t Put(const std::string& key) {
    return Call<PutResponse>(PutRequest{key, "v"}).header.revision;
  }

  // Reopens the member with fresh metrics, as a restarted process.
  void Restart() {
    member_.reset();
    metrics_ = std::make_unique<Metrics>();
    Open();
  }

  size_t batch_limit_ = 10'000;
  struct Metrics {
    metrics::Registry registry;
    metrics::MemberMetrics member{registry, "test"};
  };
  std::unique_ptr<Metrics> metrics_ = std::make_unique<Metrics>();
};

TEST_F(MemberBatchCommitTest, AnAnswerWaitsForTheLogNotForTheBatchCommit) {
  const DatabaseFacts before = Committed();
  const uint64_t commits = metrics_->member.backend_commit_seconds.Read().count;
  EXPECT_EQ(Put("/a"), 2);
  EXPECT_EQ(Range("/a").kvs.size(), 1u) << "reads see the open batch";
  EXPECT_EQ(Committed().revision, before.revision) << "answered before the batch committed";
  EXPECT_EQ(metrics_->member.backend_commit_seconds.Read().count, commits);

  // An idle member commits the batch once it has been open the interval.
  clock_.AdvanceMs(kBatchIntervalMs);
  member_->RunOneTurn();
  const DatabaseFacts after = Committed();
  EXPECT_EQ(after.revision, 2);
  EXPECT_GT(after.applied_index, before.applied_index) << "with the applied index";
  EXPECT_EQ(metrics_->member.backend_commit_seconds.Read().count, commits + 1);
}

TEST_F(MemberBatchCommitTest, TheBatchLimitCommitsWithoutWaitingForTheInterval) {
  batch_limit_ = 3;
  Restart();
  ASSERT_LT(Committed().revision, 2) << "no put committed yet";
  // Applied entries, counted from the last commit: the leader's empty
  // entry may be among the first three.
  for (int i = 0; i < 3; i++) Put("/k" + std::to_string(i));
  member_->RunOneTurn();
  EXPECT_GE(Committed().revision, 3) << "committed at the limit, the clock never moved";
}

// A crash with the batch open (after apply and answer, before the batched
// commit): every answered write comes back, each applied once, and the
// restart applies the uncommitted tail only.
TEST_F(MemberBatchCommitTest, ACrashMidBatchReplaysExactlyTheUncommittedTail) {
  for (int i = 0; i < 5; i++) Put("/committed/" + std::to_string(i));
  clock_.AdvanceMs(kBatchIntervalMs);
  member_->RunOneTurn();
  ASSERT_EQ(Committed().revision, 6);
  for (int i = 0; i < 4; i++) Put("/tail/" + std::to_string(i));
  ASSERT_EQ(Committed().revision, 6) << "the tail is in the open batch only";

  member_->TEST_Crash();
  Restart();
  const RangeResponse all = Range("/", "0");
  EXPECT_EQ(all.kvs.size(), 9u);
  EXPECT_EQ(all.header.revision, 10) << "one revision per answered put: none applied twice";
  EXPECT_EQ(metrics_->member.put_total.Value(), 4u)
      << "the restart applied the tail, and only the tail";
  EXPECT_EQ(Put("/after"), 11);
}

// Disk full or an I/O error at the batched COMMIT: the member leaves Raft
// (as a failed commit always did), and what it answered is in the log.
TEST_F(MemberBatchCommitTest, AFailedBatchCommitLeavesRaftAndLosesNoAnsweredWrite) {
  member_.reset();
  FaultVfs vfs;
  vfs.Register(/*as_default=*/true);
  Open();
  EXPECT_EQ(Put("/answered"), 2);
  vfs.FailNth(FaultVfs::Op::kWrite, 1, FaultVfs::Mode::kDiskGone);
  clock_.AdvanceMs(kBatchIntervalMs);
  member_->RunOneTurn();
  ASSERT_TRUE(vfs.fired()) << "the batched commit wrote";
  std::shared_ptr<Answer> refused = Submit(PutRequest{"/refused", "v"});
  ASSERT_GT(TurnsUntilAnswered(*refused), 0);
  ASSERT_FALSE(refused->result->ok());
  EXPECT_EQ(refused->result->status().name(), "ErrStopped") << refused->result->status().ToString();
  EXPECT_FALSE(member_->is_leader()) << "out of Raft";

  vfs.Disarm();
  member_.reset();
  vfs.Unregister();
  Restart();
  const RangeResponse all = Range("/", "0");
  ASSERT_EQ(all.kvs.size(), 1u);
  EXPECT_EQ(all.kvs[0].key, "/answered");
  EXPECT_EQ(all.header.revision, 2);
}

// A backup is of everything applied when it was asked for: the open batch
// is committed first (the copy is taken on another connection).
TEST_F(MemberBatchCommitTest, ABackupHoldsEveryAnsweredWrite) {
  EXPECT_EQ(Put("/in-the-backup"), 2);
  std::shared_ptr<Result<BackupChunk>> first;
  std::atomic<bool> ready{false};
  member_->BeginBackup(1 << 20, [&](Result<BackupChunk> chunk) {
    first = std::make_shared<Result<BackupChunk>>(std::move(chunk));
    ready = true;
  });
  member_->RunOneTurn();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!ready.load() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_TRUE(ready.load()) << "no copy within 10 s";
  ASSERT_TRUE(first->ok()) << first->status().ToString();
  EXPECT_EQ((*first)->revision, 2);
  member_->backups().End((*first)->backup_id);
}

}  // namespace
}  // namespace natcd::server
