// Durability: a writer process is killed with SIGKILL at a random moment;
// every write it had acknowledged is there after reopening, and no txn is
// half-applied. The writer is tests/crash/crash_writer.cc, found through
// $NATCD_CRASH_WRITER (set by `make check`).
#include <stdlib.h>

#include <random>
#include <string>

#include "core/engine_fixture.h"
#include "support/crash_writer_child.h"

namespace natcd::testing {
namespace {

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
    CrashWriterAcked acked =
        RunCrashWriterAndKill(writer_, db, static_cast<int>(rng()), 1 + rng() % 40);
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
