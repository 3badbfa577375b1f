// Randomized: seeded streams of appends, overwrites, snapshots, releases
// and reopens, with small segments so that rotation and release happen
// often, checked after every step against LogModel. Bounded: a few seeds
// of a few hundred operations. Replay a failure with --gtest_random_seed.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "core/storage/raft_log/fault_log_fs.h"
#include "core/storage/raft_log/raft_log_workload.h"
#include "storage/raft_log/raft_log_file.h"
#include "testutil.h"

namespace natcd::raftlog::testing {
namespace {

using natcd::testing::RandomSeed;
using natcd::testing::TempDir;

void ExpectSame(const RaftLogFile& log, const LogModel& model, bool full, const std::string& at) {
  ASSERT_EQ(log.FirstIndex(), model.offset) << at;
  ASSERT_EQ(log.LastIndex(), model.last()) << at;
  ASSERT_EQ(log.hard_state(), model.hard_state) << at;
  ASSERT_EQ(log.snapshot(), model.snapshot) << at;
  ASSERT_EQ(log.Term(model.offset - 1).value(), model.snapshot.term) << at;
  if (!model.entries.empty()) {
    ASSERT_EQ(log.Term(model.last()).value(), model.entries.back().term) << at;
  }
  if (full) {
    ASSERT_EQ(Observe(log), model) << at;
  }
}

TEST(RaftLogModelTest, RandomOperationsMatchTheModel) {
  const uint32_t base = RandomSeed();
  for (uint32_t round = 0; round < 4; round++) {
    const uint32_t seed = base + round;
    std::mt19937 rng(seed);
    TempDir tmp;
    PosixLogFs fs;
    const RaftLogOptions options{1024u << (rng() % 3)};
    auto opened = RaftLogFile::Open(&fs, tmp.File("log"), options);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    std::unique_ptr<RaftLogFile> log = std::move(opened).value();
    LogModel model;
    for (int step = 0; step < 300; step++) {
      const std::string at = "seed " + std::to_string(seed) + " step " + std::to_string(step);
      LogOp op = NextOp(model, &rng);
      if (op.kind == LogOp::Kind::kReopen) {
        log.reset();
        auto again = RaftLogFile::Open(&fs, tmp.File("log"), options);
        ASSERT_TRUE(again.ok()) << at << ": " << again.status().ToString();
        log = std::move(again).value();
        EXPECT_EQ(log->torn_bytes_dropped(), 0u) << at;
        ASSERT_NO_FATAL_FAILURE(ExpectSame(*log, model, true, at));
        continue;
      }
      // Durability is the power-loss test's business: syncs only cost time here.
      op.sync = false;
      Status s = RunOp(log.get(), op);
      ASSERT_TRUE(s.ok()) << at << ": " << s.ToString();
      model.Apply(op);
      ASSERT_NO_FATAL_FAILURE(ExpectSame(*log, model, step % 10 == 0, at));
    }
    // Releases happened: the log keeps few segments.
    log.reset();
    auto last = RaftLogFile::Open(&fs, tmp.File("log"), options);
    ASSERT_TRUE(last.ok()) << last.status().ToString();
    ASSERT_NO_FATAL_FAILURE(ExpectSame(*last.value(), model, true, "final"));
  }
}

// A power cut after random synced and unsynced appends: the log reads
// back as it was after some operation no earlier than the last one that
// synced (an unsynced batch may be lost, with everything after it), or
// with the last batch's entries and not its hard state.
TEST(RaftLogModelTest, PowerLossKeepsEverythingSynced) {
  const uint32_t base = RandomSeed();
  for (uint32_t round = 0; round < 12; round++) {
    const uint32_t seed = base * 31 + round;
    std::mt19937 rng(seed);
    TempDir tmp;
    FaultLogFs fs;
    const RaftLogOptions options{2048};
    auto opened = RaftLogFile::Open(&fs, tmp.File("log"), options);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    std::unique_ptr<RaftLogFile> log = std::move(opened).value();
    LogModel model;
    // States the log may come back as: from the last durable one on.
    std::vector<LogModel> allowed = {model};
    for (int step = 0; step < 40; step++) {
      LogOp op = NextOp(model, &rng, /*allow_reopen=*/false);
      ASSERT_OK(RunOp(log.get(), op));
      LogModel entries_only = model;
      entries_only.ApplyEntries(op);
      model.Apply(op);
      // What the API promises, not what the file system saw: a synced
      // Append or a snapshot marker is durable with everything before it.
      const bool synced =
          (op.kind == LogOp::Kind::kAppend && op.sync) || op.kind == LogOp::Kind::kSnapshot;
      if (synced) {
        allowed.clear();
      } else if (op.kind == LogOp::Kind::kAppend && op.hard_state && !op.entries.empty()) {
        allowed.push_back(entries_only);
      }
      allowed.push_back(model);
    }
    log.reset();
    fs.LosePower(&rng);
    PosixLogFs posix;
    auto after = RaftLogFile::Open(&posix, tmp.File("log"), options);
    ASSERT_TRUE(after.ok()) << "seed " << seed << ": " << after.status().ToString();
    LogModel got = Observe(*after.value());
    EXPECT_NE(std::find(allowed.begin(), allowed.end(), got), allowed.end())
        << "seed " << seed << ": the log came back as a state it never durably had: last index "
        << got.last() << ", hard state commit " << got.hard_state.commit;
  }
}

}  // namespace
}  // namespace natcd::raftlog::testing
