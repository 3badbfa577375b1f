// The Raft log in SQLite: what a member wrote and committed is what it
// reads back after a restart; what it did not commit is gone.
#include "raft/sqlite_raft_storage.h"

#include <gtest/gtest.h>

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
  void Open() {
    storage_.reset();
    backend_.reset();
    auto backend = SqliteBackend::Open(BackendOptions{dir_.path() + "/db", true});
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

}  // namespace
}  // namespace natcd::raft
