// MemoryStorage and RaftLog: the log bookkeeping every Raft rule rests on.
#include <gtest/gtest.h>

#include "raft/progress.h"
#include "raft/raft_log.h"
#include "raft/storage.h"

namespace natcd::raft {
namespace {

Entry E(uint64_t term, uint64_t index, std::string data = "") {
  return Entry{term, index, EntryType::kNormal, std::move(data)};
}

TEST(MemoryStorage, AppendReplacesAConflictingSuffix) {
  MemoryStorage s;
  ASSERT_TRUE(s.Append({E(1, 1), E(1, 2), E(1, 3)}).ok());
  ASSERT_TRUE(s.Append({E(2, 2, "new")}).ok());
  EXPECT_EQ(s.LastIndex(), 2u);
  EXPECT_EQ(s.Term(2).value(), 2u);
  EXPECT_FALSE(s.Append({E(3, 9)}).ok()) << "a gap must be refused";
}

TEST(MemoryStorage, CompactAndSnapshot) {
  MemoryStorage s;
  ASSERT_TRUE(s.Append({E(1, 1), E(1, 2), E(2, 3), E(2, 4)}).ok());
  ASSERT_TRUE(s.CreateSnapshot(3, ConfState{{1, 2, 3}, {}}, "data").ok());
  ASSERT_TRUE(s.Compact(3).ok());
  EXPECT_EQ(s.FirstIndex(), 4u);
  EXPECT_EQ(s.Term(3).value(), 2u);  // the dummy keeps the term
  EXPECT_TRUE(IsLogCompacted(s.Term(2).status()));
  EXPECT_TRUE(IsLogCompacted(s.Entries(3, 5, UINT64_MAX).status()));
  EXPECT_EQ(s.Entries(4, 5, UINT64_MAX).value().size(), 1u);
  EXPECT_FALSE(s.CreateSnapshot(2, {}, "").ok()) << "older than the snapshot held";
  EXPECT_EQ(s.GetSnapshot().value().meta.index, 3u);
  EXPECT_EQ(s.InitialConfState().voters, (std::vector<NodeId>{1, 2, 3}));
}

TEST(MemoryStorage, EntriesRespectTheSizeLimitButReturnAtLeastOne) {
  MemoryStorage s;
  ASSERT_TRUE(s.Append({E(1, 1, "aaaa"), E(1, 2, "bbbb"), E(1, 3, "cccc")}).ok());
  EXPECT_EQ(s.Entries(1, 4, 8).value().size(), 2u);
  EXPECT_EQ(s.Entries(1, 4, 1).value().size(), 1u);
  EXPECT_FALSE(s.Entries(1, 5, 100).ok());
}

TEST(RaftLog, UnstableEntriesShadowStorageUntilStable) {
  MemoryStorage s;
  ASSERT_TRUE(s.Append({E(1, 1), E(1, 2)}).ok());
  RaftLog log(&s, UINT64_MAX);
  EXPECT_EQ(log.LastIndex(), 2u);
  log.Append({E(2, 2, "x"), E(2, 3, "y")});  // replaces index 2
  EXPECT_EQ(log.LastIndex(), 3u);
  EXPECT_EQ(log.TermOr0(2), 2u);
  EXPECT_EQ(log.UnstableEntries().size(), 2u);
  ASSERT_TRUE(s.Append(log.UnstableEntries()).ok());
  log.StableTo(3, 2);
  EXPECT_TRUE(log.UnstableEntries().empty());
  EXPECT_EQ(log.Slice(1, 4, UINT64_MAX).value().size(), 3u);
}

TEST(RaftLog, MaybeAppendChecksTheMatchPoint) {
  MemoryStorage s;
  RaftLog log(&s, UINT64_MAX);
  log.Append({E(1, 1), E(1, 2)});
  EXPECT_FALSE(log.MaybeAppend(2, 2, 0, {E(2, 3)}));  // wrong term at 2
  EXPECT_FALSE(log.MaybeAppend(5, 1, 0, {}));         // beyond the log
  auto last = log.MaybeAppend(2, 1, 3, {E(2, 3)});
  ASSERT_TRUE(last);
  EXPECT_EQ(*last, 3u);
  EXPECT_EQ(log.committed(), 3u);
}

TEST(RaftLog, FindConflictByTermSkipsAWholeTerm) {
  MemoryStorage s;
  RaftLog log(&s, UINT64_MAX);
  log.Append({E(1, 1), E(1, 2), E(3, 3), E(3, 4), E(3, 5)});
  // The leader's entry at 5 has term 2: everything of term 3 goes.
  EXPECT_EQ(log.FindConflictByTerm(5, 2), (std::pair<uint64_t, uint64_t>{2, 1}));
  EXPECT_EQ(log.FindConflictByTerm(5, 3), (std::pair<uint64_t, uint64_t>{5, 3}));
}

TEST(RaftLog, CommittedEntriesComeAfterAPendingSnapshotIsApplied) {
  MemoryStorage s;
  RaftLog log(&s, UINT64_MAX);
  log.Append({E(1, 1, "a")});
  log.CommitTo(1);
  EXPECT_EQ(log.NextCommittedEntries().size(), 1u);
  Snapshot snap;
  snap.meta.index = 10;
  snap.meta.term = 3;
  log.Restore(snap);
  EXPECT_TRUE(log.NextCommittedEntries().empty());
  EXPECT_EQ(log.FirstIndex(), 11u);
  EXPECT_EQ(log.TermOr0(10), 3u);
  EXPECT_EQ(log.committed(), 10u);
}

TEST(Progress, ProbeAndReplicate) {
  Progress pr(2);
  pr.next = 5;
  EXPECT_FALSE(pr.IsPaused());
  pr.probe_sent = true;
  EXPECT_TRUE(pr.IsPaused());
  // A stale rejection (not for the probe in flight) is ignored.
  EXPECT_FALSE(pr.MaybeDecrTo(2, 1));
  EXPECT_TRUE(pr.MaybeDecrTo(4, 1));
  EXPECT_EQ(pr.next, 2u);
  EXPECT_TRUE(pr.MaybeUpdate(3));
  pr.BecomeReplicate();
  EXPECT_EQ(pr.next, 4u);
  pr.inflights.Add(5);
  pr.inflights.Add(6);
  EXPECT_TRUE(pr.IsPaused()) << "window of 2 is full";
  pr.inflights.FreeTo(5);
  EXPECT_FALSE(pr.IsPaused());
}

}  // namespace
}  // namespace natcd::raft
