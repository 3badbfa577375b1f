// A database copy received from the leader becomes this member's database:
// the leader's Raft log and hard state go, the snapshot's metadata and the
// member's own hard state come in, the state machine stays as copied; a
// copy whose applied index disagrees with the metadata is refused untouched.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "natcd/clock.h"
#include "natcd/engine.h"
#include "raft/sqlite_raft_storage.h"
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

  // A leader that applied entries 1..kApplied (each a put) with its log,
  // hard state and a boot mark in the same database, copied while open.
  void MakeLeaderCopy() {
    Result<std::unique_ptr<Engine>> engine = Engine::Open(Options(dir_.File("leader.db")));
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    auto storage = engine.value()->OpenRaftLog();
    ASSERT_TRUE(storage.ok()) << storage.status().ToString();
    for (uint64_t i = 1; i <= kApplied; i++) {
      ASSERT_OK(storage.value()->Append({Entry{kLeaderTerm, i, EntryType::kNormal, "e"}}));
      WriteRequest put = PutRequest{"k" + std::to_string(i), "v" + std::to_string(i)};
      ASSERT_TRUE(engine.value()->Apply(put, i).ok());
      if (i % 10 == 0) ASSERT_OK(engine.value()->Commit());
    }
    ASSERT_OK(storage.value()->SetHardState(HardState{kLeaderTerm, kLeader, kApplied}));
    ASSERT_OK(storage.value()->MarkBootedOverExistingData());
    ASSERT_OK(engine.value()->Commit());
    Result<uint64_t> applied = WriteDatabaseSnapshot(dir_.File("leader.db"), copy_);
    ASSERT_TRUE(applied.ok()) << applied.status().ToString();
    ASSERT_EQ(*applied, kApplied);
  }

  // The copy as a member would open it: engine first, Raft storage on it.
  void OpenCopy() {
    storage_.reset();
    engine_.reset();
    Result<std::unique_ptr<Engine>> engine = Engine::Open(Options(copy_));
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    engine_ = std::move(engine).value();
    auto storage = engine_->OpenRaftLog();
    ASSERT_TRUE(storage.ok()) << storage.status().ToString();
    storage_ = std::move(storage).value();
  }

  natcd::testing::TempDir dir_;
  ManualClock clock_;
  const std::string copy_ = dir_.File("received.db");
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<SqliteRaftStorage> storage_;
};

TEST_F(ReceivedSnapshotTest, BecomesTheMembersDatabase) {
  const SnapshotMeta meta{kApplied, kLeaderTerm, ConfState{{1, 2, 3}, {4}}};
  // This member (2) is at a later term, voted for 3, committed little.
  const HardState mine{7, 3, 10};
  ASSERT_OK(SqliteRaftStorage::PrepareReceivedSnapshot(copy_, meta, mine));

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
  ASSERT_OK(storage_->Append({Entry{7, kApplied + 1, EntryType::kNormal, "next"}}));
  ASSERT_OK(engine_->Commit());
  ASSERT_NO_FATAL_FAILURE(OpenCopy());
  EXPECT_EQ(storage_->FirstIndex(), kApplied + 1);
  EXPECT_EQ(storage_->LastIndex(), kApplied + 1);
}

TEST_F(ReceivedSnapshotTest, KeepsACommitAlreadyPastTheSnapshot) {
  const SnapshotMeta meta{kApplied, kLeaderTerm, ConfState{{1, 2, 3}, {}}};
  ASSERT_OK(SqliteRaftStorage::PrepareReceivedSnapshot(copy_, meta, HardState{4, 0, 80}));
  ASSERT_NO_FATAL_FAILURE(OpenCopy());
  EXPECT_EQ(storage_->InitialHardState(), (HardState{4, kNoNode, 80}));
}

TEST_F(ReceivedSnapshotTest, DisagreeingMetadataIsRefusedAndChangesNothing) {
  for (uint64_t index : {kApplied - 1, kApplied + 1}) {
    const SnapshotMeta meta{index, kLeaderTerm, ConfState{{1, 2, 3}, {}}};
    Status s = SqliteRaftStorage::PrepareReceivedSnapshot(copy_, meta, HardState{7, 3, 10});
    EXPECT_EQ(s.code(), Status::Code::kCorruption) << index << ": " << s.ToString();
  }
  // Still the leader's copy, log and all.
  ASSERT_NO_FATAL_FAILURE(OpenCopy());
  EXPECT_EQ(storage_->FirstIndex(), 1u);
  EXPECT_EQ(storage_->LastIndex(), kApplied);
  EXPECT_EQ(storage_->InitialHardState(), (HardState{kLeaderTerm, kLeader, kApplied}));
  EXPECT_TRUE(storage_->booted_over_existing_data());
}

TEST_F(ReceivedSnapshotTest, MissingOrForeignFileIsAnError) {
  const SnapshotMeta meta{kApplied, kLeaderTerm, ConfState{{1}, {}}};
  const std::string missing = dir_.File("missing.db");
  Status s = SqliteRaftStorage::PrepareReceivedSnapshot(missing, meta, HardState{});
  EXPECT_TRUE(s.IsNotFound()) << s.ToString();
  EXPECT_FALSE(std::filesystem::exists(missing)) << "an empty database was made up";

  const std::string text = dir_.File("text.db");
  { std::ofstream(text) << std::string(4096, 'x'); }
  s = SqliteRaftStorage::PrepareReceivedSnapshot(text, meta, HardState{});
  EXPECT_EQ(s.code(), Status::Code::kCorruption) << s.ToString();
}

}  // namespace
}  // namespace natcd::raft
