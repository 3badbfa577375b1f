// The Raft log in SQLite: what a member wrote and committed is what it
// reads back after a restart; what it did not commit is gone.
#include "raft/sqlite_raft_storage.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <random>

#include "raft/raft.h"
#include "storage/sqlite_backend.h"
#include "testutil.h"

namespace natcd::raft {
namespace {

Entry E(uint64_t term, uint64_t index, std::string data = "") {
  return Entry{term, index, EntryType::kNormal, std::move(data)};
}

class SqliteRaftStorageTest : public ::testing::Test {
 protected:
  void Open(const std::string& name = "db") {
    storage_.reset();
    backend_.reset();
    auto backend = SqliteBackend::Open(BackendOptions{dir_.path() + "/" + name, true});
    ASSERT_TRUE(backend.ok()) << backend.status().ToString();
    backend_ = std::move(backend.value());
    auto storage = SqliteRaftStorage::Open(backend_.get());
    ASSERT_TRUE(storage.ok()) << storage.status().ToString();
    storage_ = std::move(storage.value());
  }
  void Commit() { ASSERT_TRUE(backend_->CommitBatch().ok()); }

  natcd::testing::TempDir dir_;
  std::unique_ptr<SqliteBackend> backend_;
  std::unique_ptr<SqliteRaftStorage> storage_;
};

TEST_F(SqliteRaftStorageTest, EmptyUntilWritten) {
  Open();
  EXPECT_FALSE(storage_->Initialized());
  EXPECT_EQ(storage_->FirstIndex(), 1u);
  EXPECT_EQ(storage_->LastIndex(), 0u);
  EXPECT_TRUE(storage_->InitialHardState().empty());
}

TEST_F(SqliteRaftStorageTest, CommittedLogAndHardStateSurviveReopen) {
  Open();
  ASSERT_TRUE(storage_->Append({E(1, 1, "a"), E(1, 2, "b"), E(2, 3, "c")}).ok());
  ASSERT_TRUE(storage_->SetHardState(HardState{2, 7, 3}).ok());
  Commit();
  ASSERT_TRUE(storage_->Append({E(3, 3, "c2")}).ok());  // replaces index 3
  Commit();
  Open();
  EXPECT_TRUE(storage_->Initialized());
  EXPECT_EQ(storage_->InitialHardState(), (HardState{2, 7, 3}));
  EXPECT_EQ(storage_->LastIndex(), 3u);
  auto entries = storage_->Entries(1, 4, UINT64_MAX);
  ASSERT_TRUE(entries.ok());
  EXPECT_EQ(entries.value(), (std::vector<Entry>{E(1, 1, "a"), E(1, 2, "b"), E(3, 3, "c2")}));
}

TEST_F(SqliteRaftStorageTest, UncommittedWritesAreGoneAfterReopen) {
  Open();
  ASSERT_TRUE(storage_->Append({E(1, 1, "kept")}).ok());
  Commit();
  ASSERT_TRUE(storage_->Append({E(1, 2, "lost")}).ok());
  ASSERT_TRUE(storage_->SetHardState(HardState{1, 1, 2}).ok());
  backend_->RollbackBatch();  // as a crash before the commit would
  Open();
  EXPECT_EQ(storage_->LastIndex(), 1u);
  EXPECT_TRUE(storage_->InitialHardState().empty());
}

TEST_F(SqliteRaftStorageTest, MemberNamesSurviveReopenOnceCommitted) {
  Open();
  ASSERT_TRUE(storage_->SetMemberName(0x9bd11c00c67a714cull, "n1").ok());
  ASSERT_TRUE(storage_->SetMemberName(7, "seven").ok());
  Commit();
  ASSERT_TRUE(storage_->SetMemberName(7, "renamed").ok());
  ASSERT_TRUE(storage_->SetMemberName(8, "never committed").ok());
  EXPECT_EQ(storage_->member_names().at(8), "never committed");
  backend_->RollbackBatch();
  Open();
  EXPECT_EQ(storage_->member_names(),
            (std::map<NodeId, std::string>{{7, "seven"}, {0x9bd11c00c67a714cull, "n1"}}));
}

TEST_F(SqliteRaftStorageTest, SnapshotCompactsAndSurvivesReopen) {
  Open();
  std::vector<Entry> entries;
  for (uint64_t i = 1; i <= 10; i++) entries.push_back(E(1 + i / 5, i, std::to_string(i)));
  ASSERT_TRUE(storage_->Append(entries).ok());
  ConfState cs{{1, 2, 3}, {4}};
  ASSERT_TRUE(storage_->CreateSnapshot(SnapshotMeta{8, 0, cs}, 6).ok());
  Commit();
  Open();
  EXPECT_EQ(storage_->FirstIndex(), 7u);
  EXPECT_EQ(storage_->LastIndex(), 10u);
  EXPECT_EQ(storage_->Term(6).value(), 2u);
  auto snap = storage_->GetSnapshot().value();
  EXPECT_EQ(snap.meta.index, 8u);
  EXPECT_EQ(snap.meta.term, 2u);
  EXPECT_EQ(snap.meta.conf_state, cs);
  EXPECT_EQ(storage_->InitialConfState(), cs);
  ASSERT_TRUE(storage_->Append({E(3, 11, "11")}).ok());
  Commit();
  Open();
  EXPECT_EQ(storage_->LastIndex(), 11u);
}

TEST_F(SqliteRaftStorageTest, AppliedSnapshotReplacesTheLog) {
  Open();
  ASSERT_TRUE(storage_->Append({E(1, 1), E(1, 2)}).ok());
  Commit();
  ASSERT_TRUE(storage_->ApplySnapshot(SnapshotMeta{50, 4, ConfState{{1, 2, 3}, {}}}).ok());
  ASSERT_TRUE(storage_->Append({E(4, 51, "next")}).ok());
  Commit();
  Open();
  EXPECT_EQ(storage_->FirstIndex(), 51u);
  EXPECT_EQ(storage_->LastIndex(), 51u);
  EXPECT_EQ(storage_->Term(50).value(), 4u);
  EXPECT_EQ(storage_->GetSnapshot().value().meta.index, 50u);
}

TEST_F(SqliteRaftStorageTest, RaftRestartsWhereItLeftOff) {
  Open();
  ASSERT_TRUE(storage_->ApplySnapshot(SnapshotMeta{1, 1, ConfState{{1}, {}}}).ok());
  Commit();
  Config cfg;
  cfg.id = 1;
  cfg.storage = storage_.get();
  uint64_t term = 0;
  {
    auto raft = Raft::Create(cfg);
    ASSERT_TRUE(raft.ok());
    ASSERT_TRUE(raft.value()->Campaign().ok());
    ASSERT_TRUE(raft.value()->Propose("x").ok());
    Ready rd = raft.value()->GetReady();
    ASSERT_TRUE(storage_->Append(rd.entries).ok());
    ASSERT_TRUE(storage_->SetHardState(*rd.hard_state).ok());
    Commit();
    term = raft.value()->term();
    ASSERT_EQ(rd.committed_entries.size(), 2u);  // the leader's empty entry and "x"
  }
  Open();
  cfg.storage = storage_.get();
  auto raft = Raft::Create(cfg);
  ASSERT_TRUE(raft.ok());
  EXPECT_EQ(raft.value()->term(), term);
  EXPECT_EQ(raft.value()->committed(), 3u);
  Ready rd = raft.value()->GetReady();
  ASSERT_EQ(rd.committed_entries.size(), 2u);  // handed back: nothing was applied
  EXPECT_EQ(rd.committed_entries[1].data, "x");
}

// The log as the storage serves it: [FirstIndex, LastIndex] and the term
// of the entry before.
struct LogView {
  uint64_t first = 0;
  uint64_t last = 0;
  uint64_t term_before = 0;
  std::vector<Entry> entries;
  bool operator==(const LogView&) const = default;
};

LogView View(const SqliteRaftStorage& storage) {
  LogView v;
  v.first = storage.FirstIndex();
  v.last = storage.LastIndex();
  v.term_before = storage.Term(v.first - 1).value();
  if (v.last >= v.first) v.entries = storage.Entries(v.first, v.last + 1, UINT64_MAX).value();
  return v;
}

// Random appends (overwriting suffixes, reaching below the log start),
// compactions and installed snapshots: whatever was committed reads back
// the same after a reopen (the runs on disk hold what the mirror holds).
TEST_F(SqliteRaftStorageTest, RandomHistoriesReadBackAfterReopen) {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 rng(seed);
    auto pick = [&](uint64_t lo, uint64_t hi) {  // [lo, hi]
      return std::uniform_int_distribution<uint64_t>(lo, hi)(rng);
    };
    const std::string name = "db" + std::to_string(seed);
    Open(name);
    uint64_t term = 1;
    for (int step = 0; step < 300; ++step) {
      const uint64_t first = storage_->FirstIndex();
      const uint64_t last = storage_->LastIndex();
      const uint64_t op = pick(0, 19);
      if (op < 14) {
        // Append as Raft does: from past the snapshot (what it covers is
        // committed and never rewritten), or from below the log start with
        // the compacted part skipped; over a suffix (replaced by a new
        // term's entries) or at the end.
        const uint64_t snapshot = storage_->GetSnapshot().value().meta.index;
        const uint64_t lowest = first > snapshot ? (first > 3 ? first - 3 : 1) : snapshot + 1;
        const uint64_t from = pick(lowest, last + 1);
        bool replacing = false;
        std::vector<Entry> entries;
        for (uint64_t i = from, n = pick(1, 6); i < from + n; ++i) {
          if (i < first) {
            entries.push_back(E(1, i, "compacted"));
          } else {
            if (i <= last && !replacing) {
              replacing = true;
              ++term;
            }
            std::string data(pick(0, 40), '\0');
            for (char& c : data) c = static_cast<char>(pick(0, 255));
            Entry e = E(term, i, std::move(data));
            if (pick(0, 9) == 0) e.type = EntryType::kConfChange;
            entries.push_back(std::move(e));
          }
        }
        ASSERT_TRUE(storage_->Append(entries).ok());
      } else if (op < 18 && last > storage_->GetSnapshot().value().meta.index) {
        const uint64_t index =
            pick(std::max(first, storage_->GetSnapshot().value().meta.index + 1), last);
        const uint64_t compact_to = pick(first - 1, index);
        ASSERT_TRUE(
            storage_->CreateSnapshot(SnapshotMeta{index, 0, ConfState{{1, 2}, {3}}}, compact_to)
                .ok());
      } else if (op == 18) {
        ++term;
        ASSERT_TRUE(
            storage_->ApplySnapshot(SnapshotMeta{last + pick(1, 5), term, ConfState{{1}, {}}})
                .ok());
      }
      Commit();
      if (pick(0, 9) == 0) {
        const LogView before = View(*storage_);
        Open(name);
        ASSERT_EQ(View(*storage_), before) << "step " << step;
      }
    }
  }
}

// A database written when the log was a row per entry: its entries are
// read as they were, now as runs, and the old table is gone.
TEST_F(SqliteRaftStorageTest, ALogOfOneRowPerEntryIsRewrittenAsRuns) {
  {
    auto backend = SqliteBackend::Open(BackendOptions{dir_.path() + "/db", true});
    ASSERT_TRUE(backend.ok());
    sqlite3* db = backend.value()->handle();
    ASSERT_EQ(sqlite3_exec(db,
                           "CREATE TABLE raft_log (idx INTEGER PRIMARY KEY, term INTEGER NOT NULL,"
                           " type INTEGER NOT NULL, data BLOB NOT NULL);"
                           "INSERT INTO raft_log VALUES (1, 1, 0, x''), (2, 1, 0, x'6101'),"
                           " (3, 2, 1, x'00ff'), (4, 2, 0, x'62');",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
  }
  Open();
  EXPECT_EQ(storage_->FirstIndex(), 1u);
  ASSERT_EQ(storage_->LastIndex(), 4u);
  Entry conf = E(2, 3, std::string("\0\xff", 2));
  conf.type = EntryType::kConfChange;
  const std::vector<Entry> want = {E(1, 1), E(1, 2, std::string("a\x01", 2)), conf, E(2, 4, "b")};
  EXPECT_EQ(storage_->Entries(1, 5, UINT64_MAX).value(), want);
  sqlite3_stmt* stmt = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(backend_->handle(),
                               "SELECT count(*) FROM sqlite_master WHERE name = 'raft_log'", -1,
                               &stmt, nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(stmt), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(stmt, 0), 0);
  sqlite3_finalize(stmt);
  ASSERT_TRUE(storage_->Append({E(3, 4, "c"), E(3, 5, "d")}).ok());  // replaces 4
  Commit();
  Open();
  EXPECT_EQ(storage_->Entries(1, 6, UINT64_MAX).value(),
            (std::vector<Entry>{E(1, 1), E(1, 2, std::string("a\x01", 2)), conf, E(3, 4, "c"),
                                E(3, 5, "d")}));
}

// A large old log becomes several runs of about a MiB (one transaction
// per migration, but no run too big to read back whole).
TEST_F(SqliteRaftStorageTest, ALargeOldLogBecomesRunsOfAboutAMiB) {
  {
    auto backend = SqliteBackend::Open(BackendOptions{dir_.path() + "/db", true});
    ASSERT_TRUE(backend.ok());
    ASSERT_EQ(sqlite3_exec(backend.value()->handle(),
                           "CREATE TABLE raft_log (idx INTEGER PRIMARY KEY, term INTEGER NOT NULL,"
                           " type INTEGER NOT NULL, data BLOB NOT NULL);"
                           "INSERT INTO raft_log VALUES (1, 1, 0, zeroblob(600000)),"
                           " (2, 1, 0, zeroblob(600000)), (3, 1, 0, zeroblob(600000));",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
  }
  Open();
  const std::vector<Entry> want = {E(1, 1, std::string(600000, '\0')),
                                   E(1, 2, std::string(600000, '\0')),
                                   E(1, 3, std::string(600000, '\0'))};
  EXPECT_EQ(storage_->Entries(1, 4, UINT64_MAX).value(), want);
  sqlite3_stmt* stmt = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(backend_->handle(),
                               "SELECT first_idx, last_idx FROM raft_log_run ORDER BY first_idx",
                               -1, &stmt, nullptr),
            SQLITE_OK);
  std::vector<std::pair<int64_t, int64_t>> runs;
  while (sqlite3_step(stmt) == SQLITE_ROW) {
    runs.emplace_back(sqlite3_column_int64(stmt, 0), sqlite3_column_int64(stmt, 1));
  }
  sqlite3_finalize(stmt);
  EXPECT_EQ(runs, (std::vector<std::pair<int64_t, int64_t>>{{1, 2}, {3, 3}}));
}

// A run on disk that does not decode is reported, not served.
TEST_F(SqliteRaftStorageTest, ACorruptRunIsReported) {
  Open();
  ASSERT_TRUE(storage_->Append({E(1, 1, "a"), E(1, 2, "b")}).ok());
  Commit();
  ASSERT_EQ(sqlite3_exec(backend_->handle(), "UPDATE raft_log_run SET entries = x'0102'", nullptr,
                         nullptr, nullptr),
            SQLITE_OK);
  storage_.reset();
  auto reopened = SqliteRaftStorage::Open(backend_.get());
  ASSERT_FALSE(reopened.ok());
  EXPECT_EQ(reopened.status().code(), Status::Code::kCorruption);
}

}  // namespace
}  // namespace natcd::raft
