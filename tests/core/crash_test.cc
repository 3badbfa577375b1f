// Durability: a writer process is killed with SIGKILL at a random moment;
// every write it had acknowledged is there after reopening, and no txn is
// half-applied. The writer is tests/crash/crash_writer.cc, found through
// $NATCD_CRASH_WRITER (set by `make check`).
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <random>
#include <string>

#include "core/engine_fixture.h"

namespace natcd::testing {
namespace {

struct Acked {
  long count = 0;  // keys k0 .. k(count-1) were acknowledged
  int64_t revision = 0;
};

// Runs the writer until it has acknowledged at least min_acks commits, then
// kills it with SIGKILL and returns the last acknowledgement it printed.
Acked RunAndKill(const std::string& writer, const std::string& db, int seed, int min_acks) {
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]);
    close(fds[1]);
    std::string seed_arg = std::to_string(seed);
    execl(writer.c_str(), writer.c_str(), db.c_str(), seed_arg.c_str(), nullptr);
    _exit(127);
  }
  close(fds[1]);
  FILE* out = fdopen(fds[0], "r");
  Acked last;
  char line[128];
  int acks = 0;
  while (acks < min_acks && fgets(line, sizeof line, out) != nullptr) {
    long long rev = 0;
    if (sscanf(line, "acked %ld %lld", &last.count, &rev) == 2) {
      last.revision = rev;
      ++acks;
    }
  }
  kill(pid, SIGKILL);
  // Lines already written before the kill were acknowledged too.
  while (fgets(line, sizeof line, out) != nullptr) {
    long long rev = 0;
    long count = 0;
    if (sscanf(line, "acked %ld %lld", &count, &rev) == 2) {
      last.count = count;
      last.revision = rev;
    }
  }
  fclose(out);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status)) << "writer exited by itself: status " << status;
  return last;
}

class CrashTest : public EngineTest {
 protected:
  void SetUp() override {
    const char* writer = getenv("NATCD_CRASH_WRITER");
    if (writer == nullptr) GTEST_SKIP() << "NATCD_CRASH_WRITER not set (make check sets it)";
    writer_ = writer;
  }
  std::string writer_;
};

TEST_F(CrashTest, AcknowledgedWritesSurviveSigkill) {
  std::mt19937 rng(RandomSeed());
  std::string db = dir_.File("natcd.db");
  for (int round = 0; round < 5; ++round) {
    // Each round restarts the writer on the same database, so recovery of a
    // database that was itself recovered is covered too.
    Acked acked = RunAndKill(writer_, db, static_cast<int>(rng()), 1 + rng() % 40);
    ASSERT_GT(acked.count, 0);
    Open();
    EXPECT_GE(engine_->revision(), acked.revision);
    // Every acknowledged key is there with its value (the writer restarts
    // its numbering each round, overwriting with identical values).
    for (long i = 0; i < acked.count; ++i) {
      KeyValue kv = Get("k" + std::to_string(i));
      ASSERT_EQ(kv.value, "v" + std::to_string(i)) << "round " << round << " key k" << i;
    }
    KeyValue a = Get("pair/a");
    KeyValue b = Get("pair/b");
    EXPECT_EQ(a.value, b.value);
    EXPECT_EQ(a.mod_revision, b.mod_revision);
    engine_.reset();
  }
}

}  // namespace
}  // namespace natcd::testing
