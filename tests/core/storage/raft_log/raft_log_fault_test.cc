// Failing file-system calls: a failed fdatasync or write poisons the log
// (that call and every later write return IOError; reads go on), and
// failing each call of a workload in turn -- the 1st, 2nd, ... write,
// sync, truncate, preallocation, rename, remove, directory sync -- always
// leaves a directory that opens and holds at least what was acknowledged.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "core/storage/raft_log/fault_log_fs.h"
#include "core/storage/raft_log/raft_log_test_util.h"
#include "core/storage/raft_log/raft_log_workload.h"
#include "storage/raft_log/raft_log_file.h"
#include "testutil.h"

namespace natcd::raftlog::testing {
namespace {

using natcd::testing::TempDir;

TEST(RaftLogFaultTest, FailedFdatasyncPoisonsTheLog) {
  TempDir tmp;
  FaultLogFs fs;
  auto opened = RaftLogFile::Open(&fs, tmp.File("log"), RaftLogOptions{4096});
  ASSERT_TRUE(opened.ok());
  RaftLogFile& log = *opened.value();
  ASSERT_OK(log.Append(MakeEntries(1, 3, 1), raft::HardState{1, 1, 1}, true));
  fs.FailNth(FsOp::kSync, 1);
  Status s = log.Append(MakeEntries(4, 2, 1), raft::HardState{1, 1, 3}, true);
  ASSERT_EQ(s.code(), Status::Code::kIOError) << s.ToString();
  EXPECT_NE(s.message().find("injected failure"), std::string_view::npos) << s.ToString();
  EXPECT_FALSE(log.poisoned().ok());
  // The failed Append changed nothing the log reports.
  EXPECT_EQ(log.LastIndex(), 3u);
  EXPECT_EQ(log.hard_state(), (raft::HardState{1, 1, 1}));
  // Every later write is refused, even though the file system works again.
  const int syncs = fs.count(FsOp::kSync);
  const int writes = fs.count(FsOp::kWrite);
  for (Status later :
       {log.Append(MakeEntries(4, 1, 1), std::nullopt, true), log.Append({}, std::nullopt, true),
        log.SaveSnapshot({1, 1}), log.ReleaseTo(0)}) {
    EXPECT_EQ(later.code(), Status::Code::kIOError) << later.ToString();
    EXPECT_NE(later.message().find("failed earlier and must be reopened"), std::string_view::npos)
        << later.ToString();
  }
  EXPECT_EQ(fs.count(FsOp::kSync), syncs);
  EXPECT_EQ(fs.count(FsOp::kWrite), writes);
  // Reads still work.
  EXPECT_EQ(log.Entries(1, 4).value(), MakeEntries(1, 3, 1));
  // Reopened, the log holds what was acknowledged (the failed batch may or
  // may not have reached the disk: it was never acknowledged).
  opened.value().reset();
  PosixLogFs posix;
  auto again = RaftLogFile::Open(&posix, tmp.File("log"), RaftLogOptions{4096});
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_GE(again.value()->LastIndex(), 3u);
  EXPECT_EQ(again.value()->Entries(1, 4).value(), MakeEntries(1, 3, 1));
  EXPECT_TRUE(again.value()->poisoned().ok());
}

// The batch whose fdatasync failed reached the page cache: reopened as it
// is, the log reads it back (and a member would vote and acknowledge on it)
// though a power loss may take it. DiscardUnsynced zeroes it first: the
// log reopened holds exactly what was synced.
TEST(RaftLogFaultTest, DiscardUnsyncedDropsTheBatchWhoseFdatasyncFailed) {
  TempDir tmp;
  FaultLogFs fs;
  auto opened = RaftLogFile::Open(&fs, tmp.File("log"), RaftLogOptions{4096});
  ASSERT_TRUE(opened.ok());
  RaftLogFile& log = *opened.value();
  ASSERT_OK(log.Append(MakeEntries(1, 3, 1), raft::HardState{1, 1, 1}, true));
  fs.FailNth(FsOp::kSync, 1);
  ASSERT_EQ(log.Append(MakeEntries(4, 2, 2), raft::HardState{2, 2, 3}, true).code(),
            Status::Code::kIOError);
  ASSERT_OK(log.DiscardUnsynced());
  EXPECT_FALSE(log.poisoned().ok());
  ASSERT_OK(log.DiscardUnsynced());  // nothing left to discard
  opened.value().reset();
  PosixLogFs posix;
  auto again = RaftLogFile::Open(&posix, tmp.File("log"), RaftLogOptions{4096});
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again.value()->LastIndex(), 3u);
  EXPECT_EQ(again.value()->hard_state(), (raft::HardState{1, 1, 1}));
  EXPECT_EQ(again.value()->torn_bytes_dropped(), 0u);
  // And it takes the batch again.
  ASSERT_OK(again.value()->Append(MakeEntries(4, 2, 2), raft::HardState{2, 2, 3}, true));
}

TEST(RaftLogFaultTest, FailedWritePoisonsTheLog) {
  TempDir tmp;
  FaultLogFs fs;
  auto opened = RaftLogFile::Open(&fs, tmp.File("log"), RaftLogOptions{4096});
  ASSERT_TRUE(opened.ok());
  RaftLogFile& log = *opened.value();
  fs.FailNth(FsOp::kWrite, 1);
  EXPECT_EQ(log.Append(MakeEntries(1, 1, 1), std::nullopt, false).code(), Status::Code::kIOError);
  EXPECT_EQ(log.LastIndex(), 0u);
  EXPECT_EQ(log.Append(MakeEntries(1, 1, 1), std::nullopt, false).code(), Status::Code::kIOError);
}

// Runs a seeded workload on fs until a call fails; returns the states the
// log may be found in afterwards (from the last acknowledged operation on)
// and whether a failure happened.
struct FaultRun {
  bool failed = false;
  std::vector<LogModel> allowed;
};

FaultRun RunUntilFailure(FaultLogFs* fs, const std::string& dir, uint32_t seed) {
  FaultRun run;
  std::mt19937 rng(seed);
  const RaftLogOptions options{1024};
  LogModel model;
  run.allowed = {model};
  auto opened = RaftLogFile::Open(fs, dir, options);
  if (!opened.ok()) {
    run.failed = true;
    return run;
  }
  std::unique_ptr<RaftLogFile> log = std::move(opened).value();
  for (int step = 0; step < 14; step++) {
    LogOp op = NextOp(model, &rng);
    if (op.kind == LogOp::Kind::kReopen) {
      log.reset();
      auto again = RaftLogFile::Open(fs, dir, options);
      if (!again.ok()) {
        run.failed = true;
        return run;
      }
      log = std::move(again).value();
      continue;
    }
    // Syncing every append: what returned is what must be there.
    op.sync = true;
    LogModel entries_only = model;
    entries_only.ApplyEntries(op);
    Status s = RunOp(log.get(), op);
    LogModel after = model;
    after.Apply(op);
    if (!s.ok()) {
      EXPECT_EQ(s.code(), Status::Code::kIOError) << s.ToString();
      run.failed = true;
      // Written but not acknowledged: either way is allowed.
      run.allowed = {model, entries_only, after};
      return run;
    }
    model = after;
    run.allowed = {model};
  }
  return run;
}

TEST(RaftLogFaultTest, FailingEachCallInTurnLeavesAReadableLog) {
  const uint32_t seed = natcd::testing::RandomSeed();
  int failures = 0;
  for (FsOp op : {FsOp::kOpen, FsOp::kWrite, FsOp::kSync, FsOp::kTruncate, FsOp::kPreallocate,
                  FsOp::kRename, FsOp::kRemove, FsOp::kSyncDir}) {
    for (int n = 1; n < 200; n++) {
      TempDir tmp;
      FaultLogFs fs;
      fs.FailNth(op, n);
      FaultRun run = RunUntilFailure(&fs, tmp.File("log"), seed);
      if (!run.failed) break;  // the workload made fewer than n such calls
      failures++;
      PosixLogFs posix;
      auto after = RaftLogFile::Open(&posix, tmp.File("log"), RaftLogOptions{1024});
      ASSERT_TRUE(after.ok()) << "op " << static_cast<int>(op) << " call " << n << ": "
                              << after.status().ToString();
      LogModel got = Observe(*after.value());
      EXPECT_NE(std::find(run.allowed.begin(), run.allowed.end(), got), run.allowed.end())
          << "op " << static_cast<int>(op) << " call " << n << ": last index " << got.last();
    }
  }
  EXPECT_GT(failures, 25) << "the workload should reach many calls of each kind";
}

}  // namespace
}  // namespace natcd::raftlog::testing
