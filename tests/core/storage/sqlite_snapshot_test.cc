// WriteDatabaseSnapshot: a copy of a database that another thread keeps
// writing holds exactly the state of one commit -- every key as of one
// applied Raft index, nothing of a batch half-written -- and opens as an
// engine; a missing or foreign source is a clear error that leaves no file.
#include "storage/sqlite_snapshot.h"

#include <sqlite3.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "natcd/clock.h"
#include "natcd/engine.h"
#include "testutil.h"

namespace natcd {
namespace {

// The workload: entry i (Raft index i, from 1) puts Key(i % kKeys) =
// Value(i); a Commit follows every kBatch entries. So the state at applied
// index A is fully known, and A is always a multiple of kBatch.
constexpr uint64_t kKeys = 500;
constexpr uint64_t kBatch = 50;

std::string Key(uint64_t i) {
  char key[32];
  std::snprintf(key, sizeof(key), "k/%04llu", static_cast<unsigned long long>(i % kKeys));
  return key;
}
std::string Value(uint64_t i) { return "v" + std::to_string(i) + std::string(200, 'x'); }

// What a store that applied entries 1..applied holds: key -> entry index.
std::map<std::string, uint64_t> ModelAt(uint64_t applied) {
  std::map<std::string, uint64_t> model;
  for (uint64_t i = 1; i <= applied; i++) model[Key(i)] = i;
  return model;
}

class SqliteSnapshotTest : public ::testing::Test {
 protected:
  EngineOptions Options(const std::string& path) {
    EngineOptions options;
    options.db_path = path;
    options.sync = false;  // the copy's consistency is the point, not durability
    options.clock = &clock_;
    return options;
  }
  std::unique_ptr<Engine> OpenEngine(const std::string& path) {
    Result<std::unique_ptr<Engine>> engine = Engine::Open(Options(path));
    EXPECT_TRUE(engine.ok()) << engine.status().ToString();
    return engine.ok() ? std::move(engine).value() : nullptr;
  }
  // Applies entries (from, to] with a Commit after every kBatch.
  static void ApplyEntries(Engine* engine, uint64_t from, uint64_t to) {
    for (uint64_t i = from + 1; i <= to; i++) {
      WriteRequest put = PutRequest{Key(i), Value(i)};
      ASSERT_TRUE(engine->Apply(put, i).ok());
      if (i % kBatch == 0) ASSERT_OK(engine->Commit());
    }
  }
  // Everything under k/ in the engine: key -> the entry that wrote it.
  static std::map<std::string, uint64_t> Contents(Engine* engine) {
    RangeRequest all;
    all.key = "k/";
    all.range_end = "k0";
    Result<RangeResponse> range = engine->Range(all);
    EXPECT_TRUE(range.ok()) << range.status().ToString();
    std::map<std::string, uint64_t> got;
    if (!range.ok()) return got;
    for (const KeyValue& kv : range->kvs) {
      uint64_t i = std::stoull(kv.value.substr(1));
      EXPECT_EQ(kv.value, Value(i)) << kv.key;
      got[kv.key] = i;
    }
    return got;
  }

  natcd::testing::TempDir dir_;
  ManualClock clock_;
};

TEST_F(SqliteSnapshotTest, CopyWhileAnotherThreadWritesHoldsOneCommitExactly) {
  const std::string db = dir_.File("natcd.db");
  std::unique_ptr<Engine> engine = OpenEngine(db);
  ASSERT_NE(engine, nullptr);
  const int64_t empty_revision = engine->revision();
  // Enough data that a copy takes a while, so commits land during it.
  constexpr uint64_t kPreloaded = 20'000;
  ApplyEntries(engine.get(), 0, kPreloaded);

  std::atomic<bool> stop{false};
  // committing: the last batch whose Commit began; committed: the last
  // whose Commit returned. A copy may see a commit before the writer
  // records it as returned, never one before it began.
  std::atomic<uint64_t> committing{kPreloaded};
  std::atomic<uint64_t> committed{kPreloaded};
  std::thread writer([&] {
    // From here on only this thread touches the engine.
    for (uint64_t i = kPreloaded + 1; !stop.load(); i++) {
      WriteRequest put = PutRequest{Key(i), Value(i)};
      if (!engine->Apply(put, i).ok()) return;
      if (i % kBatch == 0) {
        committing.store(i);
        if (!engine->Commit().ok()) return;
        committed.store(i);
      }
    }
  });

  struct Copy {
    std::string path;
    uint64_t applied;
    uint64_t committed_before, committing_after;
  };
  std::vector<Copy> copies;
  int overlapped = 0;
  for (int n = 0; n < 6; n++) {
    Copy copy;
    copy.path = dir_.File("copy" + std::to_string(n) + ".db");
    copy.committed_before = committed.load();
    Result<uint64_t> applied = WriteDatabaseSnapshot(db, copy.path);
    copy.committing_after = committing.load();
    ASSERT_TRUE(applied.ok()) << applied.status().ToString();
    copy.applied = *applied;
    if (copy.committing_after > copy.committed_before) overlapped++;
    copies.push_back(copy);
  }
  stop.store(true);
  writer.join();
  ASSERT_TRUE(engine->health().ok()) << engine->health().ToString();
  // Otherwise the test proved nothing about a live database.
  EXPECT_GT(overlapped, 0) << "no commit happened while a copy was being made";
  std::string applied_list;
  for (const Copy& copy : copies) applied_list += " " + std::to_string(copy.applied);
  std::printf("[   INFO   ] copies at applied indexes%s; %d of %zu overlapped commits\n",
              applied_list.c_str(), overlapped, copies.size());

  for (const Copy& copy : copies) {
    SCOPED_TRACE(copy.path);
    // The copy is of a commit begun before it returned, no older than the
    // last commit finished before it started.
    EXPECT_GE(copy.applied, copy.committed_before);
    EXPECT_LE(copy.applied, copy.committing_after);
    EXPECT_EQ(copy.applied % kBatch, 0u) << "a batch is half in the copy";
    EXPECT_FALSE(std::filesystem::exists(copy.path + ".tmp"));
    std::unique_ptr<Engine> restored = OpenEngine(copy.path);
    ASSERT_NE(restored, nullptr);
    EXPECT_EQ(restored->applied_index(), copy.applied);
    EXPECT_EQ(restored->revision(), empty_revision + static_cast<int64_t>(copy.applied));
    EXPECT_EQ(Contents(restored.get()), ModelAt(copy.applied));
  }
}

TEST_F(SqliteSnapshotTest, CopyIsCompactAndReplacesAnOldOneAndALeftover) {
  const std::string db = dir_.File("natcd.db");
  const std::string out = dir_.File("snap.db");
  std::unique_ptr<Engine> engine = OpenEngine(db);
  ASSERT_NE(engine, nullptr);
  ApplyEntries(engine.get(), 0, 1000);
  Result<uint64_t> first = WriteDatabaseSnapshot(db, out);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(*first, 1000u);

  // A crashed earlier attempt left a temporary file behind.
  { std::ofstream(out + ".tmp") << "half a database"; }
  ApplyEntries(engine.get(), 1000, 1500);
  Result<uint64_t> second = WriteDatabaseSnapshot(db, out);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(*second, 1500u);
  EXPECT_FALSE(std::filesystem::exists(out + ".tmp"));
  // VACUUM leaves no free pages: the copy is at most the live file plus
  // its WAL (the live database keeps both while the engine runs).
  std::error_code ignored;
  uintmax_t live =
      std::filesystem::file_size(db) + std::filesystem::file_size(db + "-wal", ignored);
  EXPECT_LE(std::filesystem::file_size(out), live);
  engine.reset();
  std::unique_ptr<Engine> restored = OpenEngine(out);
  ASSERT_NE(restored, nullptr);
  EXPECT_EQ(restored->applied_index(), 1500u);
  EXPECT_EQ(Contents(restored.get()), ModelAt(1500));
}

TEST_F(SqliteSnapshotTest, NeverAppliedCopiesIndexZero) {
  const std::string db = dir_.File("natcd.db");
  std::unique_ptr<Engine> engine = OpenEngine(db);
  ASSERT_NE(engine, nullptr);
  Result<uint64_t> applied = WriteDatabaseSnapshot(db, dir_.File("snap.db"));
  ASSERT_TRUE(applied.ok()) << applied.status().ToString();
  EXPECT_EQ(*applied, 0u);
}

TEST_F(SqliteSnapshotTest, MissingSourceIsNotFoundAndWritesNothing) {
  const std::string out = dir_.File("snap.db");
  Result<uint64_t> applied = WriteDatabaseSnapshot(dir_.File("nope.db"), out);
  ASSERT_FALSE(applied.ok());
  EXPECT_TRUE(applied.status().IsNotFound()) << applied.status().ToString();
  EXPECT_NE(applied.status().message().find("nope.db"), std::string_view::npos);
  EXPECT_FALSE(std::filesystem::exists(out));
  EXPECT_FALSE(std::filesystem::exists(out + ".tmp"));
  EXPECT_FALSE(std::filesystem::exists(dir_.File("nope.db")));
}

TEST_F(SqliteSnapshotTest, ForeignFilesAreErrorsAndWriteNothing) {
  const std::string out = dir_.File("snap.db");
  // Not SQLite at all.
  const std::string text = dir_.File("text.db");
  { std::ofstream(text) << std::string(8192, 'x'); }
  Result<uint64_t> applied = WriteDatabaseSnapshot(text, out);
  ASSERT_FALSE(applied.ok());
  EXPECT_EQ(applied.status().code(), Status::Code::kCorruption) << applied.status().ToString();
  EXPECT_FALSE(std::filesystem::exists(out));
  EXPECT_FALSE(std::filesystem::exists(out + ".tmp"));

  // SQLite, but not natcd's.
  const std::string other = dir_.File("other.db");
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(other.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(
      sqlite3_exec(db, "CREATE TABLE t (x); INSERT INTO t VALUES (1);", nullptr, nullptr, nullptr),
      SQLITE_OK);
  sqlite3_close(db);
  applied = WriteDatabaseSnapshot(other, out);
  ASSERT_FALSE(applied.ok());
  EXPECT_EQ(applied.status().code(), Status::Code::kCorruption) << applied.status().ToString();
  EXPECT_FALSE(std::filesystem::exists(out));
  EXPECT_FALSE(std::filesystem::exists(out + ".tmp"));
}

}  // namespace
}  // namespace natcd
