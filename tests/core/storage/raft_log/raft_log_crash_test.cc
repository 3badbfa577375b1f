// Crash in the middle of a batch: a child process runs a seeded workload
// on the log and SIGKILLs itself at the nth file-system call -- every n
// the workload reaches, a write first writing only part of its bytes (a
// torn write) -- printing "acked <step>" after each operation returns.
// The parent reopens the log: every acknowledged operation is there, and
// the one in flight is there whole, in part (its entries, not its hard
// state) or not at all. The approach of tests/core/crash_test.cc, with the
// child forked rather than exec'd so that the crash points can be injected.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <random>
#include <string>
#include <vector>

#include "core/storage/raft_log/fault_log_fs.h"
#include "core/storage/raft_log/raft_log_workload.h"
#include "storage/raft_log/raft_log_file.h"
#include "testutil.h"

namespace natcd::raftlog::testing {
namespace {

using natcd::testing::TempDir;

constexpr int kSteps = 10;
const RaftLogOptions kOptions{1024};

std::vector<LogOp> Workload(uint32_t seed) {
  std::mt19937 rng(seed);
  LogModel model;
  std::vector<LogOp> ops;
  for (int i = 0; i < kSteps; i++) {
    LogOp op = NextOp(model, &rng);
    op.sync = true;  // an acknowledged append is a durable one
    model.Apply(op);
    ops.push_back(std::move(op));
  }
  return ops;
}

// Runs the workload; after each operation that returned OK, writes
// "acked <step>\n" to ack_fd. False (at once) when an operation fails.
bool RunWorkload(LogFs* fs, const std::string& dir, const std::vector<LogOp>& ops, int ack_fd) {
  auto opened = RaftLogFile::Open(fs, dir, kOptions);
  if (!opened.ok()) return false;
  std::unique_ptr<RaftLogFile> log = std::move(opened).value();
  for (size_t step = 0; step < ops.size(); step++) {
    if (ops[step].kind == LogOp::Kind::kReopen) {
      log.reset();
      auto again = RaftLogFile::Open(fs, dir, kOptions);
      if (!again.ok()) return false;
      log = std::move(again).value();
    } else if (!RunOp(log.get(), ops[step]).ok()) {
      return false;
    }
    if (ack_fd >= 0) dprintf(ack_fd, "acked %zu\n", step);
  }
  return true;
}

TEST(RaftLogCrashTest, SigkillAtEveryCallLosesNoAcknowledgedRecord) {
  const uint32_t seed = natcd::testing::RandomSeed();
  const std::vector<LogOp> ops = Workload(seed);
  // The models after 0, 1, ... operations.
  std::vector<LogModel> after = {LogModel{}};
  for (const LogOp& op : ops) {
    LogModel m = after.back();
    m.Apply(op);
    after.push_back(m);
  }
  long calls = 0;
  {
    TempDir dry;
    FaultLogFs fs;
    ASSERT_TRUE(RunWorkload(&fs, dry.File("log"), ops, -1));
    calls = fs.calls();
  }
  ASSERT_GT(calls, 2 * kSteps);
  for (long crash_at = 1; crash_at <= calls; crash_at++) {
    TempDir tmp;
    const std::string dir = tmp.File("log");
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      close(fds[0]);
      FaultLogFs fs;
      fs.CrashAt(crash_at, seed + static_cast<uint32_t>(crash_at));
      bool ok = RunWorkload(&fs, dir, ops, fds[1]);
      _exit(ok ? 0 : 3);
    }
    close(fds[1]);
    FILE* in = fdopen(fds[0], "r");
    long acked = 0;  // operations acknowledged
    char line[64];
    while (fgets(line, sizeof line, in) != nullptr) {
      size_t step = 0;
      if (sscanf(line, "acked %zu", &step) == 1) acked = static_cast<long>(step) + 1;
    }
    fclose(in);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
        << "crash at call " << crash_at << ": the child ended with status " << status;

    PosixLogFs posix;
    auto reopened = RaftLogFile::Open(&posix, dir, kOptions);
    ASSERT_TRUE(reopened.ok()) << "crash at call " << crash_at << ": "
                               << reopened.status().ToString();
    LogModel got = Observe(*reopened.value());
    std::vector<LogModel> allowed = {after[acked]};
    if (acked < kSteps) {
      LogModel entries_only = after[acked];
      entries_only.ApplyEntries(ops[acked]);
      allowed.push_back(entries_only);
      allowed.push_back(after[acked + 1]);
    }
    EXPECT_NE(std::find(allowed.begin(), allowed.end(), got), allowed.end())
        << "crash at call " << crash_at << " of " << calls << " after " << acked
        << " acknowledged operations: the log has last index " << got.last() << ", commit "
        << got.hard_state.commit << "; acknowledged: last index " << after[acked].last();
  }
}

}  // namespace
}  // namespace natcd::raftlog::testing
