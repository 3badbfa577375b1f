// The member's Raft storage: the log and hard state in the log file, the
// snapshot and member names in the database. What a member persisted is
// what it reads back after a restart; the log file and the database's
// snapshot row are kept in agreement; a log from before the log file (in
// the database) is moved into it, once, even across a crash.
#include "raft/durable_raft_storage.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "raft/raft.h"
#include "storage/sqlite_backend.h"
#include "testutil.h"

namespace natcd::raft {
namespace {

Entry E(uint64_t term, uint64_t index, std::string data = "") {
  return Entry{term, index, EntryType::kNormal, std::move(data)};
}

class DurableRaftStorageTest : public ::testing::Test {
 protected:
  std::string DbPath(const std::string& name = "db") const { return dir_.path() + "/" + name; }
  std::string LogDir(const std::string& name = "db") const {
    return DurableRaftStorage::LogDirOf(DbPath(name));
  }
  void OpenBackend(const std::string& name) {
    storage_.reset();
    backend_.reset();
    auto backend = SqliteBackend::Open(BackendOptions{DbPath(name), true});
    ASSERT_TRUE(backend.ok()) << backend.status().ToString();
    backend_ = std::move(backend.value());
  }
  void Open(const std::string& name = "db") {
    ASSERT_NO_FATAL_FAILURE(OpenBackend(name));
    raftlog::RaftLogOptions log_options;
    log_options.segment_bytes = 4096;  // rotations and releases in small tests
    auto storage = DurableRaftStorage::Open(backend_.get(), &fs_, LogDir(name), log_options);
    ASSERT_TRUE(storage.ok()) << storage.status().ToString();
    storage_ = std::move(storage.value());
  }
  Status Reopen(const std::string& name = "db") {
    storage_.reset();
    return DurableRaftStorage::Open(backend_.get(), &fs_, LogDir(name),
                                    raftlog::RaftLogOptions{4096})
        .status();
  }
  void Commit() { ASSERT_OK(backend_->CommitBatch()); }
  void Exec(const std::string& sql) {
    char* err = nullptr;
    int rc = sqlite3_exec(backend_->handle(), sql.c_str(), nullptr, nullptr, &err);
    ASSERT_EQ(rc, SQLITE_OK) << (err ? err : "") << " in " << sql;
    sqlite3_free(err);
  }
  int64_t Count(const std::string& sql) {
    sqlite3_stmt* stmt = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(backend_->handle(), sql.c_str(), -1, &stmt, nullptr), SQLITE_OK);
    int64_t n = -1;
    if (sqlite3_step(stmt) == SQLITE_ROW) n = sqlite3_column_int64(stmt, 0);
    sqlite3_finalize(stmt);
    return n;
  }
  std::string Hex(const std::string& sql) {
    sqlite3_stmt* stmt = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(backend_->handle(), sql.c_str(), -1, &stmt, nullptr), SQLITE_OK);
    std::string out;
    if (sqlite3_step(stmt) == SQLITE_ROW) {
      out = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
    }
    sqlite3_finalize(stmt);
    return out;
  }
  // The format before the log file, as that code wrote it (pinned here):
  // runs of entries and the hard state and log start rows.
  void WriteOldFormatLog() {
    // term 2, vote 1, commit 3 / log start: index 1, term 1 / snapshot:
    // index 1, term 1, voters {1}, no learners.
    Exec(
        "INSERT INTO raft_state VALUES ('hard_state', "
        "x'020000000000000001000000000000000300000000000000');"
        "INSERT INTO raft_state VALUES ('log_start', x'01000000000000000100000000000000');"
        "INSERT INTO raft_state VALUES ('snapshot', x'0100000000000000010000000000000001000000"
        "0000000001000000000000000000000000000000');"
        "INSERT INTO raft_state VALUES ('member/0000000000000001', 'n1');"
        // Entries 2..3 (term 2, "a" and a membership change "\x00\xff"),
        // then 4 (term 2, empty).
        "INSERT INTO raft_log_run VALUES (2, 3, x'020000000000000000010000006102000000000000000102"
        "00000000ff');"
        "INSERT INTO raft_log_run VALUES (4, 4, x'02000000000000000000000000');");
  }
  void ExpectOldFormatLog() {
    EXPECT_EQ(storage_->FirstIndex(), 2u);
    ASSERT_EQ(storage_->LastIndex(), 4u);
    EXPECT_EQ(storage_->Term(1).value(), 1u);
    Entry conf = E(2, 3, std::string("\0\xff", 2));
    conf.type = EntryType::kConfChange;
    EXPECT_EQ(storage_->Entries(2, 5, UINT64_MAX).value(),
              (std::vector<Entry>{E(2, 2, "a"), conf, E(2, 4)}));
    EXPECT_EQ(storage_->InitialHardState(), (HardState{2, 1, 3}));
    EXPECT_EQ(storage_->InitialConfState(), (ConfState{{1}, {}}));
    EXPECT_EQ(storage_->member_names().at(1), "n1");
  }

  natcd::testing::TempDir dir_;
  raftlog::PosixLogFs fs_;
  std::unique_ptr<SqliteBackend> backend_;
  std::unique_ptr<DurableRaftStorage> storage_;
};

TEST_F(DurableRaftStorageTest, EmptyUntilWritten) {
  Open();
  EXPECT_FALSE(storage_->Initialized());
  EXPECT_EQ(storage_->FirstIndex(), 1u);
  EXPECT_EQ(storage_->LastIndex(), 0u);
  EXPECT_TRUE(storage_->InitialHardState().empty());
  EXPECT_FALSE(storage_->migrated());
  EXPECT_TRUE(std::filesystem::is_directory(LogDir()));
}

TEST_F(DurableRaftStorageTest, PersistedLogAndHardStateSurviveReopen) {
  Open();
  ASSERT_OK(
      storage_->Persist({E(1, 1, "a"), E(1, 2, "b"), E(2, 3, "c")}, HardState{2, 7, 2}, true));
  ASSERT_OK(storage_->Persist({E(3, 3, "c2")}, std::nullopt, true));  // replaces index 3
  Open();
  EXPECT_TRUE(storage_->Initialized());
  EXPECT_EQ(storage_->InitialHardState(), (HardState{2, 7, 2}));
  EXPECT_EQ(storage_->LastIndex(), 3u);
  EXPECT_EQ(storage_->Entries(1, 4, UINT64_MAX).value(),
            (std::vector<Entry>{E(1, 1, "a"), E(1, 2, "b"), E(3, 3, "c2")}));
  // Nothing of the log is in the database.
  EXPECT_EQ(Count("SELECT count(*) FROM raft_log_run"), 0);
  EXPECT_EQ(Count("SELECT count(*) FROM raft_state"), 0);
}

TEST_F(DurableRaftStorageTest, BadAppendsAreRefusedAndWriteNothing) {
  Open();
  ASSERT_OK(storage_->Persist({E(1, 1), E(1, 2)}, HardState{1, 0, 2}, true));
  EXPECT_FALSE(storage_->Persist({E(1, 4)}, std::nullopt, true).ok()) << "a gap";
  EXPECT_FALSE(storage_->Persist({E(2, 2)}, std::nullopt, true).ok()) << "a committed entry";
  Open();
  EXPECT_EQ(storage_->LastIndex(), 2u);
}

TEST_F(DurableRaftStorageTest, MemberNamesSurviveReopenOnceCommitted) {
  Open();
  ASSERT_OK(storage_->SetMemberName(0x9bd11c00c67a714cull, "n1"));
  ASSERT_OK(storage_->SetMemberName(7, "seven"));
  Commit();
  ASSERT_OK(storage_->SetMemberName(7, "renamed"));
  ASSERT_OK(storage_->SetMemberName(8, "never committed"));
  EXPECT_EQ(storage_->member_names().at(8), "never committed");
  backend_->RollbackBatch();
  Open();
  EXPECT_EQ(storage_->member_names(),
            (std::map<NodeId, std::string>{{7, "seven"}, {0x9bd11c00c67a714cull, "n1"}}));
}

// DO NOT CHANGE: persisted. Peer URLs (etcd's MemberUpdate) in rows
// "member-peer-urls/<16 hex digits>", one URL a line, beside the client
// URLs' "member-urls/" rows; each list survives a reopen apart.
TEST_F(DurableRaftStorageTest, MemberUrlsSurviveReopenInTheirPinnedRows) {
  Open();
  ASSERT_OK(storage_->SetMemberClientUrls(7, {"http://127.0.0.1:2379"}));
  ASSERT_OK(storage_->SetMemberPeerUrls(7, {"http://n7:2380", "https://10.0.0.7:2380"}));
  ASSERT_OK(storage_->SetMemberPeerUrls(0x9bd11c00c67a714cull, {"http://n1:2380"}));
  Commit();
  EXPECT_EQ(Hex("SELECT hex(value) FROM raft_state WHERE name = "
                "'member-peer-urls/0000000000000007'"),
            "687474703A2F2F6E373A323338300A68747470733A2F2F31302E302E302E373A323338300A");
  EXPECT_EQ(Count("SELECT count(*) FROM raft_state WHERE name = "
                  "'member-peer-urls/9bd11c00c67a714c'"),
            1);
  Open();
  using Urls = std::map<NodeId, std::vector<std::string>>;
  EXPECT_EQ(storage_->member_peer_urls(), (Urls{{7, {"http://n7:2380", "https://10.0.0.7:2380"}},
                                                {0x9bd11c00c67a714cull, {"http://n1:2380"}}}));
  EXPECT_EQ(storage_->member_client_urls(), (Urls{{7, {"http://127.0.0.1:2379"}}}));
}

TEST_F(DurableRaftStorageTest, ARemovedMembersUrlRowsGoItsNameStays) {
  Open();
  ASSERT_OK(storage_->SetMemberName(7, "n7"));
  ASSERT_OK(storage_->SetMemberClientUrls(7, {"http://127.0.0.1:2379"}));
  ASSERT_OK(storage_->SetMemberPeerUrls(7, {"http://n7:2380"}));
  ASSERT_OK(storage_->SetMemberPeerUrls(8, {"http://n8:2380"}));
  Commit();
  ASSERT_OK(storage_->ForgetMemberUrls(7));
  Commit();
  EXPECT_EQ(Count("SELECT count(*) FROM raft_state WHERE name LIKE 'member%/0000000000000007'"), 1);
  Open();
  using Urls = std::map<NodeId, std::vector<std::string>>;
  EXPECT_EQ(storage_->member_peer_urls(), (Urls{{8, {"http://n8:2380"}}}));
  EXPECT_TRUE(storage_->member_client_urls().empty());
  EXPECT_EQ(storage_->member_names().at(7), "n7");
}

TEST_F(DurableRaftStorageTest, SnapshotCompactsAndSurvivesReopen) {
  Open();
  std::vector<Entry> entries;
  for (uint64_t i = 1; i <= 10; i++) entries.push_back(E(1 + i / 5, i, std::to_string(i)));
  ASSERT_OK(storage_->Persist(entries, std::nullopt, true));
  ConfState cs{{1, 2, 3}, {4}};
  ASSERT_OK(storage_->CreateSnapshot(SnapshotMeta{8, 0, cs}, 6));
  Open();
  EXPECT_EQ(storage_->FirstIndex(), 7u);
  EXPECT_EQ(storage_->LastIndex(), 10u);
  EXPECT_EQ(storage_->Term(6).value(), 2u);
  auto snap = storage_->GetSnapshot().value();
  EXPECT_EQ(snap.meta.index, 8u);
  EXPECT_EQ(snap.meta.term, 2u);
  EXPECT_EQ(snap.meta.conf_state, cs);
  EXPECT_EQ(storage_->InitialConfState(), cs);
  ASSERT_OK(storage_->Persist({E(3, 11, "11")}, std::nullopt, true));
  Open();
  EXPECT_EQ(storage_->LastIndex(), 11u);
}

// The snapshot row needs a synced commit of its own, before the log drops
// anything: inside an open batch it is refused and changes nothing.
TEST_F(DurableRaftStorageTest, ASnapshotInsideABatchIsRefused) {
  Open();
  ASSERT_OK(storage_->Persist({E(1, 1), E(1, 2), E(1, 3)}, std::nullopt, true));
  ASSERT_OK(storage_->SetMemberName(1, "n1"));  // opens a batch
  Status s = storage_->CreateSnapshot(SnapshotMeta{2, 0, ConfState{{1}, {}}}, 2);
  EXPECT_EQ(s.code(), Status::Code::kInternal) << s.ToString();
  Commit();
  Open();
  EXPECT_EQ(storage_->FirstIndex(), 1u);
  EXPECT_EQ(storage_->GetSnapshot().value().meta.index, 0u);
}

TEST_F(DurableRaftStorageTest, AppliedSnapshotReplacesTheLog) {
  Open();
  ASSERT_OK(storage_->Persist({E(1, 1), E(1, 2)}, std::nullopt, true));
  ASSERT_OK(storage_->ApplySnapshot(SnapshotMeta{50, 4, ConfState{{1, 2, 3}, {}}}));
  ASSERT_OK(storage_->Persist({E(4, 51, "next")}, std::nullopt, true));
  Open();
  EXPECT_EQ(storage_->FirstIndex(), 51u);
  EXPECT_EQ(storage_->LastIndex(), 51u);
  EXPECT_EQ(storage_->Term(50).value(), 4u);
  EXPECT_EQ(storage_->GetSnapshot().value().meta.index, 50u);
}

// A crash between the database's snapshot row and the log file's marker
// (the row is written first): the log is made to agree on open.
TEST_F(DurableRaftStorageTest, ASnapshotRowAheadOfTheLogIsCaughtUpOnOpen) {
  Open();
  ASSERT_OK(storage_->Persist({E(1, 1), E(1, 2)}, HardState{1, 0, 1}, true));
  // As a shipped database brings it: the row alone.
  Exec(
      "INSERT INTO raft_state VALUES ('snapshot', x'1400000000000000030000000000000001000000"
      "0000000001000000000000000000000000000000');");
  Open();
  EXPECT_EQ(storage_->FirstIndex(), 21u);
  EXPECT_EQ(storage_->LastIndex(), 20u);
  EXPECT_EQ(storage_->Term(20).value(), 3u);
  EXPECT_EQ(storage_->InitialHardState(), (HardState{1, 0, 20}));
  EXPECT_EQ(storage_->InitialConfState(), (ConfState{{1}, {}}));
}

// A log file that starts after the database's snapshot is another
// database's (a data directory put together from two): refused.
TEST_F(DurableRaftStorageTest, ALogStartingAfterTheDatabasesSnapshotIsRefused) {
  Open("a");
  ASSERT_OK(storage_->Persist({E(1, 1), E(1, 2), E(1, 3)}, std::nullopt, true));
  ASSERT_OK(storage_->CreateSnapshot(SnapshotMeta{3, 0, ConfState{{1}, {}}}, 3));
  storage_.reset();
  Open("b");
  storage_.reset();
  std::filesystem::remove_all(LogDir("b"));
  std::filesystem::rename(LogDir("a"), LogDir("b"));
  Status s = Reopen("b");
  EXPECT_EQ(s.code(), Status::Code::kCorruption) << s.ToString();
  EXPECT_NE(s.ToString().find("belongs to another database"), std::string::npos) << s.ToString();
}

TEST_F(DurableRaftStorageTest, RaftRestartsWhereItLeftOff) {
  Open();
  ASSERT_OK(storage_->ApplySnapshot(SnapshotMeta{1, 1, ConfState{{1}, {}}}));
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
    ASSERT_OK(storage_->Persist(rd.entries, rd.hard_state, true));
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

LogView View(const DurableRaftStorage& storage) {
  LogView v;
  v.first = storage.FirstIndex();
  v.last = storage.LastIndex();
  v.term_before = storage.Term(v.first - 1).value();
  if (v.last >= v.first) v.entries = storage.Entries(v.first, v.last + 1, UINT64_MAX).value();
  return v;
}

// Random appends (overwriting suffixes, reaching below the log start),
// compactions and installed snapshots, in small segments so that some are
// released: whatever was persisted reads back the same after a reopen (the
// log file holds what the mirror holds).
TEST_F(DurableRaftStorageTest, RandomHistoriesReadBackAfterReopen) {
  for (uint32_t seed = 1; seed <= 6; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 rng(seed);
    auto pick = [&](uint64_t lo, uint64_t hi) {  // [lo, hi]
      return std::uniform_int_distribution<uint64_t>(lo, hi)(rng);
    };
    const std::string name = "db" + std::to_string(seed);
    Open(name);
    uint64_t term = 1;
    for (int step = 0; step < 200; ++step) {
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
        ASSERT_OK(storage_->Persist(entries, std::nullopt, pick(0, 1) == 0));
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
      if (pick(0, 9) == 0) {
        const LogView before = View(*storage_);
        Open(name);
        ASSERT_EQ(View(*storage_), before) << "step " << step;
      }
    }
  }
}

// ---- migration from the log in the database ----

TEST_F(DurableRaftStorageTest, ALogInTheDatabaseMovesToTheLogFile) {
  Open();
  storage_.reset();
  std::filesystem::remove_all(LogDir());  // a database from before the log file
  ASSERT_NO_FATAL_FAILURE(WriteOldFormatLog());
  Open();
  EXPECT_TRUE(storage_->migrated());
  ASSERT_NO_FATAL_FAILURE(ExpectOldFormatLog());
  EXPECT_EQ(Count("SELECT count(*) FROM raft_log_run"), 0);
  EXPECT_EQ(Count("SELECT count(*) FROM raft_state WHERE name IN ('hard_state', 'log_start')"), 0);
  EXPECT_FALSE(std::filesystem::exists(LogDir() + ".migrating"));
  // Once: the next open reads the file, and the log goes on from there.
  ASSERT_OK(storage_->Persist({E(3, 5, "e")}, HardState{3, 0, 4}, true));
  Open();
  EXPECT_FALSE(storage_->migrated());
  EXPECT_EQ(storage_->LastIndex(), 5u);
  EXPECT_EQ(storage_->InitialHardState(), (HardState{3, 0, 4}));
}

// A crash while the log file was being written left a partial one under
// its temporary name: thrown away and written again.
TEST_F(DurableRaftStorageTest, AMigrationCutShortIsDoneAgain) {
  Open();
  storage_.reset();
  std::filesystem::remove_all(LogDir());
  ASSERT_NO_FATAL_FAILURE(WriteOldFormatLog());
  std::filesystem::create_directory(LogDir() + ".migrating");
  { std::ofstream(LogDir() + ".migrating/0000000000000000-0000000000000001.wal") << "torn"; }
  Open();
  EXPECT_TRUE(storage_->migrated());
  ASSERT_NO_FATAL_FAILURE(ExpectOldFormatLog());
  EXPECT_FALSE(std::filesystem::exists(LogDir() + ".migrating"));
}

// A crash after the log file was renamed into place but before the rows
// were deleted: the file is the log, the rows only go.
TEST_F(DurableRaftStorageTest, RowsLeftAfterAFinishedMigrationOnlyGo) {
  Open();
  storage_.reset();
  std::filesystem::remove_all(LogDir());
  ASSERT_NO_FATAL_FAILURE(WriteOldFormatLog());
  Open();
  ASSERT_TRUE(storage_->migrated());
  storage_.reset();
  // The same rows again, as if never deleted; but the file is newer.
  Exec(
      "DELETE FROM raft_state WHERE name = 'member/0000000000000001'; DELETE FROM raft_state "
      "WHERE name = 'snapshot';");
  ASSERT_NO_FATAL_FAILURE(WriteOldFormatLog());
  // Were the migration done again, entry 4 would read "z".
  Exec("UPDATE raft_log_run SET entries = x'020000000000000000010000007a' WHERE first_idx = 4;");
  Open();
  EXPECT_TRUE(storage_->migrated());
  ASSERT_NO_FATAL_FAILURE(ExpectOldFormatLog());
  EXPECT_EQ(Count("SELECT count(*) FROM raft_log_run"), 0);
}

// A log directory beside a database that still holds a different log
// (one put there by hand): neither is thrown away; the open is refused
// with what to do.
TEST_F(DurableRaftStorageTest, ALogInBothPlacesThatDiffersIsRefused) {
  Open();
  ASSERT_OK(storage_->Persist({E(1, 1), E(1, 2)}, HardState{1, 0, 0}, true));
  storage_.reset();
  ASSERT_NO_FATAL_FAILURE(WriteOldFormatLog());
  Status s = Reopen();
  EXPECT_EQ(s.code(), Status::Code::kCorruption) << s.ToString();
  EXPECT_NE(s.ToString().find("move " + LogDir() + " away"), std::string::npos) << s.ToString();
  EXPECT_EQ(Count("SELECT count(*) FROM raft_log_run"), 2);
}

// A database written when the log was a row per entry (older still): its
// entries end up in the log file as they were.
TEST_F(DurableRaftStorageTest, ALogOfOneRowPerEntryMovesToTheLogFile) {
  ASSERT_NO_FATAL_FAILURE(OpenBackend("db"));
  Exec(
      "CREATE TABLE raft_log (idx INTEGER PRIMARY KEY, term INTEGER NOT NULL,"
      " type INTEGER NOT NULL, data BLOB NOT NULL);"
      "INSERT INTO raft_log VALUES (1, 1, 0, x''), (2, 1, 0, x'6101'),"
      " (3, 2, 1, x'00ff'), (4, 2, 0, x'62');");
  Open();
  EXPECT_TRUE(storage_->migrated());
  EXPECT_EQ(storage_->FirstIndex(), 1u);
  ASSERT_EQ(storage_->LastIndex(), 4u);
  Entry conf = E(2, 3, std::string("\0\xff", 2));
  conf.type = EntryType::kConfChange;
  const std::vector<Entry> want = {E(1, 1), E(1, 2, std::string("a\x01", 2)), conf, E(2, 4, "b")};
  EXPECT_EQ(storage_->Entries(1, 5, UINT64_MAX).value(), want);
  EXPECT_EQ(Count("SELECT count(*) FROM sqlite_master WHERE name = 'raft_log'"), 0);
  EXPECT_EQ(Count("SELECT count(*) FROM raft_log_run"), 0);
  Open();
  EXPECT_EQ(storage_->Entries(1, 5, UINT64_MAX).value(), want);
}

// More entries than one Append of the migration takes, and some large.
TEST_F(DurableRaftStorageTest, ALargeOldLogMovesWhole) {
  ASSERT_NO_FATAL_FAILURE(OpenBackend("db"));
  Exec(
      "CREATE TABLE raft_log (idx INTEGER PRIMARY KEY, term INTEGER NOT NULL,"
      " type INTEGER NOT NULL, data BLOB NOT NULL);"
      "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000)"
      " INSERT INTO raft_log SELECT i, 1 + i / 1000, 0, CAST(i AS TEXT) FROM n;"
      "UPDATE raft_log SET data = zeroblob(600000) WHERE idx = 1500;");
  Open();
  ASSERT_EQ(storage_->LastIndex(), 3000u);
  Open();
  ASSERT_EQ(storage_->LastIndex(), 3000u);
  auto entries = storage_->Entries(1, 3001, UINT64_MAX).value();
  ASSERT_EQ(entries.size(), 3000u);
  for (uint64_t i = 1; i <= 3000; i++) {
    ASSERT_EQ(entries[i - 1].term, 1 + i / 1000) << i;
    ASSERT_EQ(entries[i - 1].data, i == 1500 ? std::string(600000, '\0') : std::to_string(i)) << i;
  }
}

// A run in the database that does not decode is reported, not moved, and
// the database keeps it.
TEST_F(DurableRaftStorageTest, ACorruptOldRunIsReported) {
  Open();
  storage_.reset();
  std::filesystem::remove_all(LogDir());
  Exec("INSERT INTO raft_log_run VALUES (1, 2, x'0102');");
  Status s = Reopen();
  EXPECT_EQ(s.code(), Status::Code::kCorruption) << s.ToString();
  EXPECT_EQ(Count("SELECT count(*) FROM raft_log_run"), 1);
  EXPECT_FALSE(std::filesystem::exists(LogDir()));
}

// DO NOT CHANGE: persisted. The snapshot row's bytes and the log
// directory's name are read by every later version.
TEST_F(DurableRaftStorageTest, PersistedFormatIsPinned) {
  EXPECT_EQ(DurableRaftStorage::LogDirOf("/data/natcd.db"), "/data/natcd.db.raftlog");
  Open();
  ASSERT_OK(storage_->Persist({E(1, 1), E(2, 2), E(2, 3)}, std::nullopt, true));
  ASSERT_OK(storage_->CreateSnapshot(SnapshotMeta{3, 0, ConfState{{1, 0x102}, {7}}}, 1));
  EXPECT_EQ(Hex("SELECT hex(value) FROM raft_state WHERE name = 'snapshot'"),
            "0300000000000000"  // index
            "0200000000000000"  // term
            "0200000000000000"  // two voters
            "0100000000000000"
            "0201000000000000"  // 1, 0x102
            "0100000000000000"
            "0700000000000000");  // one learner: 7
}

}  // namespace
}  // namespace natcd::raft
