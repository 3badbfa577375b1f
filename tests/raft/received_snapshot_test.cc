// A database copy received from the leader becomes this member's database:
// the leader's Raft state goes, the snapshot's metadata comes in, the state
// machine stays as copied; the member's own log file, with its term and
// vote, is made to agree with the snapshot when the storage opens; a copy
// whose applied index disagrees with the metadata is refused untouched.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "natcd/clock.h"
#include "natcd/engine.h"
#include "raft/durable_raft_storage.h"
#include "storage/sqlite_backend.h"
#include "storage/sqlite_snapshot.h"
#include "testutil.h"

namespace natcd::raft {
namespace {

constexpr uint64_t kLeaderTerm = 3;
constexpr NodeId kLeader = 1;
constexpr uint64_t kApplied = 50;

class ReceivedSnapshotTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_NO_FATAL_FAILURE(MakeLeaderCopy()); }

  EngineOptions Options(const std::string& path) {
    EngineOptions options;
    options.db_path = path;
    options.sync = false;
    options.clock = &clock_;
    return options;
  }

  // A leader that applied entries 1..kApplied (each a put) with its log
  // and hard state in its log file and a boot mark in its database,
  // copied while open.
  void MakeLeaderCopy() {
    const std::string db = dir_.File("leader.db");
    Result<std::unique_ptr<Engine>> engine = Engine::Open(Options(db));
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    auto storage = engine.value()->OpenRaftLog(&fs_, DurableRaftStorage::LogDirOf(db),
                                               raftlog::RaftLogOptions{1 << 16});
    ASSERT_TRUE(storage.ok()) << storage.status().ToString();
    for (uint64_t i = 1; i <= kApplied; i++) {
      ASSERT_OK(
          storage.value()->Persist({Entry{kLeaderTerm, i, EntryType::kNormal, "e"}}, {}, false));
      WriteRequest put = PutRequest{"k" + std::to_string(i), "v" + std::to_string(i)};
      ASSERT_TRUE(engine.value()->Apply(put, i).ok());
      if (i % 10 == 0) ASSERT_OK(engine.value()->Commit());
    }
    ASSERT_OK(storage.value()->SetHardState(HardState{kLeaderTerm, kLeader, kApplied}));
    ASSERT_OK(storage.value()->MarkBootedOverExistingData());
    ASSERT_OK(storage.value()->SetMemberPeerUrls(3, {"http://n3:2380"}));
    ASSERT_OK(engine.value()->Commit());
    Result<uint64_t> applied = WriteDatabaseSnapshot(db, copy_);
    ASSERT_TRUE(applied.ok()) << applied.status().ToString();
    ASSERT_EQ(*applied, kApplied);
  }

  // This member's own log file beside the copy: entries 1..last at term,
  // and a hard state.
  void WriteOwnLog(uint64_t last, uint64_t term, const HardState& hs) {
    Result<std::unique_ptr<raftlog::RaftLogFile>> log =
        raftlog::RaftLogFile::Open(&fs_, DurableRaftStorage::LogDirOf(copy_));
    ASSERT_TRUE(log.ok()) << log.status().ToString();
    std::vector<Entry> entries;
    for (uint64_t i = 1; i <= last; i++) entries.push_back(Entry{term, i, EntryType::kNormal, "m"});
    ASSERT_OK((*log)->Append(entries, hs, true));
  }

  // The copy as a member would open it: engine first, Raft storage on it.
  void OpenCopy() {
    storage_.reset();
    engine_.reset();
    Result<std::unique_ptr<Engine>> engine = Engine::Open(Options(copy_));
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    engine_ = std::move(engine).value();
    auto storage = engine_->OpenRaftLog(&fs_, DurableRaftStorage::LogDirOf(copy_),
                                        raftlog::RaftLogOptions{1 << 16});
    ASSERT_TRUE(storage.ok()) << storage.status().ToString();
    storage_ = std::move(storage).value();
  }

  raftlog::PosixLogFs fs_;
  natcd::testing::TempDir dir_;
  ManualClock clock_;
  const std::string copy_ = dir_.File("received.db");
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<DurableRaftStorage> storage_;
};

TEST_F(ReceivedSnapshotTest, BecomesTheMembersDatabase) {
  const SnapshotMeta meta{kApplied, kLeaderTerm, ConfState{{1, 2, 3}, {4}}};
  // This member (2) is at a later term, voted for 3, committed little, and
  // its log does not reach the snapshot.
  ASSERT_NO_FATAL_FAILURE(WriteOwnLog(10, 2, HardState{7, 3, 10}));
  ASSERT_OK(DurableRaftStorage::PrepareReceivedSnapshot(copy_, meta));

  ASSERT_NO_FATAL_FAILURE(OpenCopy());
  EXPECT_TRUE(storage_->Initialized());
  EXPECT_EQ(storage_->FirstIndex(), kApplied + 1);
  EXPECT_EQ(storage_->LastIndex(), kApplied);
  EXPECT_EQ(storage_->Term(kApplied).value(), kLeaderTerm);
  EXPECT_TRUE(IsLogCompacted(storage_->Term(kApplied - 1).status()));
  EXPECT_EQ(storage_->GetSnapshot().value().meta, meta);
  EXPECT_EQ(storage_->InitialConfState(), meta.conf_state);
  // Term and vote are this member's; commit covers the snapshot.
  EXPECT_EQ(storage_->InitialHardState(), (HardState{7, 3, kApplied}));
  EXPECT_FALSE(storage_->booted_over_existing_data());
  EXPECT_FALSE(storage_->migrated());
  // The leader's membership rows come with it (a MemberUpdate's peer URLs).
  EXPECT_EQ(storage_->member_peer_urls().at(3), std::vector<std::string>{"http://n3:2380"});

  EXPECT_EQ(engine_->applied_index(), kApplied);
  EXPECT_EQ(engine_->key_count(), kApplied);
  for (uint64_t i = 1; i <= kApplied; i++) {
    RangeRequest get;
    get.key = "k" + std::to_string(i);
    Result<RangeResponse> got = engine_->Range(get);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    ASSERT_EQ(got->kvs.size(), 1u) << get.key;
    EXPECT_EQ(got->kvs[0].value, "v" + std::to_string(i));
  }

  // The member goes on from there: the next entry appends after the
  // snapshot and survives a reopen.
  ASSERT_OK(storage_->Persist({Entry{7, kApplied + 1, EntryType::kNormal, "next"}}, {}, true));
  ASSERT_NO_FATAL_FAILURE(OpenCopy());
  EXPECT_EQ(storage_->FirstIndex(), kApplied + 1);
  EXPECT_EQ(storage_->LastIndex(), kApplied + 1);
}

// A log that holds the snapshot's entry with its term keeps what follows
// it, and a commit index already past the snapshot.
TEST_F(ReceivedSnapshotTest, KeepsALogAndACommitAlreadyPastTheSnapshot) {
  const SnapshotMeta meta{kApplied, kLeaderTerm, ConfState{{1, 2, 3}, {}}};
  ASSERT_NO_FATAL_FAILURE(WriteOwnLog(80, kLeaderTerm, HardState{4, 0, 80}));
  ASSERT_OK(DurableRaftStorage::PrepareReceivedSnapshot(copy_, meta));
  ASSERT_NO_FATAL_FAILURE(OpenCopy());
  EXPECT_EQ(storage_->InitialHardState(), (HardState{4, kNoNode, 80}));
  EXPECT_EQ(storage_->LastIndex(), 80u);
  EXPECT_EQ(storage_->GetSnapshot().value().meta.index, kApplied);
}

// A leader from before the log file shipped its log inside the copy: it
// goes, and is not mistaken for this member's to migrate.
TEST_F(ReceivedSnapshotTest, ALeadersLogInsideTheCopyGoes) {
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(copy_.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db,
                           "CREATE TABLE IF NOT EXISTS raft_log_run (first_idx INTEGER PRIMARY KEY,"
                           " last_idx INTEGER NOT NULL, entries BLOB NOT NULL);"
                           "INSERT INTO raft_log_run VALUES (1, 1,"
                           " x'0300000000000000000100000065');"
                           "INSERT OR REPLACE INTO raft_state VALUES ('hard_state',"
                           " x'030000000000000001000000000000000100000000000000');",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(db);
  }
  const SnapshotMeta meta{kApplied, kLeaderTerm, ConfState{{1, 2, 3}, {}}};
  ASSERT_OK(DurableRaftStorage::PrepareReceivedSnapshot(copy_, meta));
  ASSERT_NO_FATAL_FAILURE(OpenCopy());
  EXPECT_FALSE(storage_->migrated());
  EXPECT_EQ(storage_->FirstIndex(), kApplied + 1);
  EXPECT_TRUE(storage_->InitialHardState().empty()) << "the leader's hard state came along";
}

TEST_F(ReceivedSnapshotTest, DisagreeingMetadataIsRefusedAndChangesNothing) {
  for (uint64_t index : {kApplied - 1, kApplied + 1}) {
    const SnapshotMeta meta{index, kLeaderTerm, ConfState{{1, 2, 3}, {}}};
    Status s = DurableRaftStorage::PrepareReceivedSnapshot(copy_, meta);
    EXPECT_EQ(s.code(), Status::Code::kCorruption) << index << ": " << s.ToString();
  }
  // Still the leader's copy, its boot mark included.
  ASSERT_NO_FATAL_FAILURE(OpenCopy());
  EXPECT_EQ(storage_->GetSnapshot().value().meta.index, 0u);
  EXPECT_TRUE(storage_->booted_over_existing_data());
}

TEST_F(ReceivedSnapshotTest, MissingOrForeignFileIsAnError) {
  const SnapshotMeta meta{kApplied, kLeaderTerm, ConfState{{1}, {}}};
  const std::string missing = dir_.File("missing.db");
  Status s = DurableRaftStorage::PrepareReceivedSnapshot(missing, meta);
  EXPECT_TRUE(s.IsNotFound()) << s.ToString();
  EXPECT_FALSE(std::filesystem::exists(missing)) << "an empty database was made up";

  const std::string text = dir_.File("text.db");
  { std::ofstream(text) << std::string(4096, 'x'); }
  s = DurableRaftStorage::PrepareReceivedSnapshot(text, meta);
  EXPECT_EQ(s.code(), Status::Code::kCorruption) << s.ToString();
}

}  // namespace
}  // namespace natcd::raft
