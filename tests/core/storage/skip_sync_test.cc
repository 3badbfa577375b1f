// SqliteBackend::SkipSyncOfNextCommit: one commit at synchronous=NORMAL,
// then FULL again; no effect inside a batch (SQLite refuses the change
// there); the data is committed either way.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include "storage/sqlite_backend.h"
#include "testutil.h"

namespace natcd {
namespace {

int Synchronous(SqliteBackend& backend) {
  sqlite3_stmt* stmt = nullptr;
  sqlite3_prepare_v2(backend.handle(), "PRAGMA synchronous", -1, &stmt, nullptr);
  int level = sqlite3_step(stmt) == SQLITE_ROW ? sqlite3_column_int(stmt, 0) : -1;
  sqlite3_finalize(stmt);
  return level;
}

constexpr int kNormal = 1;
constexpr int kFull = 2;

TEST(SkipSyncTest, OneCommitWithoutFsyncThenFullAgain) {
  testing::TempDir dir;
  BackendOptions options;
  options.path = dir.path() + "/db";
  Result<std::unique_ptr<SqliteBackend>> opened = SqliteBackend::Open(options);
  ASSERT_TRUE(opened.ok());
  SqliteBackend& backend = **opened;
  EXPECT_EQ(Synchronous(backend), kFull);

  ASSERT_TRUE(backend.SkipSyncOfNextCommit().ok());
  EXPECT_EQ(Synchronous(backend), kNormal);
  ASSERT_TRUE(backend.BeginBatch().ok());
  ASSERT_TRUE(backend.SetMeta("skip_sync_test", 7).ok());
  ASSERT_TRUE(backend.CommitBatch().ok());
  EXPECT_EQ(Synchronous(backend), kFull) << "only the next commit";
  EXPECT_EQ(backend.GetMeta("skip_sync_test", 0).value(), 7);

  // Nothing written after all: ended by hand, the next batch syncs.
  ASSERT_TRUE(backend.SkipSyncOfNextCommit().ok());
  ASSERT_TRUE(backend.EndSkipSync().ok());
  EXPECT_EQ(Synchronous(backend), kFull);

  // Inside a batch it changes nothing (and is not an error).
  ASSERT_TRUE(backend.BeginBatch().ok());
  ASSERT_TRUE(backend.SkipSyncOfNextCommit().ok());
  EXPECT_EQ(Synchronous(backend), kFull);
  ASSERT_TRUE(backend.SetMeta("skip_sync_test", 8).ok());
  ASSERT_TRUE(backend.CommitBatch().ok());
  EXPECT_EQ(backend.GetMeta("skip_sync_test", 0).value(), 8);
}

}  // namespace
}  // namespace natcd
