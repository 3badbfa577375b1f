// RaftLogFile: what is appended reads back after reopening -- entries,
// hard state, snapshot markers, overwritten suffixes, rotated and released
// segments -- and bad input is refused without changing anything.
#include "storage/raft_log/raft_log_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "core/storage/raft_log/raft_log_test_util.h"
#include "raft/storage.h"
#include "testutil.h"

namespace natcd::raftlog::testing {
namespace {

using natcd::testing::TempDir;

class RaftLogFileTest : public ::testing::Test {
 protected:
  void Reopen(uint64_t segment_bytes = 1ull << 20) {
    log_.reset();
    options_.segment_bytes = segment_bytes;
    Result<std::unique_ptr<RaftLogFile>> r = RaftLogFile::Open(&fs_, dir(), options_);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    log_ = std::move(r).value();
  }
  std::string dir() const { return tmp_.File("log"); }

  TempDir tmp_;
  PosixLogFs fs_;
  RaftLogOptions options_;
  std::unique_ptr<RaftLogFile> log_;
};

TEST_F(RaftLogFileTest, NewLogIsEmptyWithOneSegment) {
  Reopen();
  EXPECT_EQ(log_->FirstIndex(), 1u);
  EXPECT_EQ(log_->LastIndex(), 0u);
  EXPECT_TRUE(log_->hard_state().empty());
  EXPECT_EQ(log_->Term(0).value(), 0u);
  EXPECT_EQ(log_->SegmentNames(),
            std::vector<std::string>{"0000000000000000-0000000000000001.wal"});
  // Preallocated to the segment size.
  EXPECT_EQ(std::filesystem::file_size(SegmentPaths(dir())[0]), 1ull << 20);
  EXPECT_TRUE(log_->Entries(1, 1).value().empty());
}

TEST_F(RaftLogFileTest, EntriesAndHardStateSurviveReopen) {
  Reopen();
  std::vector<raft::Entry> want = MakeEntries(1, 3, 1);
  ASSERT_OK(log_->Append(want, raft::HardState{1, 7, 0}, true));
  std::vector<raft::Entry> more = MakeEntries(4, 250, 2, 100);
  more[10].type = raft::EntryType::kConfChange;
  more[11].data.clear();  // a leader's empty entry
  ASSERT_OK(log_->Append(more, raft::HardState{2, 0, 3}, true));
  ASSERT_OK(log_->Append({}, raft::HardState{2, 9, 200}, true));
  want.insert(want.end(), more.begin(), more.end());
  EXPECT_EQ(AllEntries(*log_), want);
  Reopen();
  EXPECT_EQ(log_->FirstIndex(), 1u);
  EXPECT_EQ(log_->LastIndex(), 253u);
  EXPECT_EQ(AllEntries(*log_), want);
  EXPECT_EQ(log_->hard_state(), (raft::HardState{2, 9, 200}));
  EXPECT_EQ(log_->Term(3).value(), 1u);
  EXPECT_EQ(log_->Term(4).value(), 2u);
  EXPECT_EQ(log_->torn_bytes_dropped(), 0u);
  // Ranges inside one record and across records.
  Result<std::vector<raft::Entry>> mid = log_->Entries(2, 6);
  ASSERT_TRUE(mid.ok());
  EXPECT_EQ(mid.value(), std::vector<raft::Entry>(want.begin() + 1, want.begin() + 5));
}

TEST_F(RaftLogFileTest, EntriesHonoursBoundsAndMaxBytes) {
  Reopen();
  ASSERT_OK(log_->Append(MakeEntries(1, 10, 1, 100), std::nullopt, true));
  // At least one entry, then only as many as fit.
  EXPECT_EQ(log_->Entries(1, 11, 1).value().size(), 1u);
  EXPECT_EQ(log_->Entries(1, 11, 250).value().size(), 2u);
  EXPECT_EQ(log_->Entries(1, 11, 300).value().size(), 3u);
  EXPECT_TRUE(raft::IsLogCompacted(log_->Entries(0, 3).status()));
  EXPECT_EQ(log_->Entries(1, 12).status().ToString(), raft::ErrLogUnavailable().ToString());
  EXPECT_TRUE(log_->Entries(5, 4).status().IsInvalidArgument());
  EXPECT_EQ(log_->Term(11).status().ToString(), raft::ErrLogUnavailable().ToString());
}

TEST_F(RaftLogFileTest, ConflictingSuffixIsReplacedDurably) {
  Reopen(1024);
  ASSERT_OK(log_->Append(MakeEntries(1, 10, 1, 40), raft::HardState{1, 1, 3}, true));
  ASSERT_OK(log_->Append(MakeEntries(11, 10, 1, 40), std::nullopt, true));
  ASSERT_GT(log_->SegmentNames().size(), 1u) << "the overwrite should reach back a segment";
  // A new leader's entries from 6 on replace 6..20 (Raft's conflict).
  std::vector<raft::Entry> replaced = MakeEntries(6, 3, 2, 40);
  ASSERT_OK(log_->Append(replaced, raft::HardState{2, 2, 3}, true));
  std::vector<raft::Entry> want = MakeEntries(1, 5, 1, 40);
  want.insert(want.end(), replaced.begin(), replaced.end());
  EXPECT_EQ(log_->LastIndex(), 8u);
  EXPECT_EQ(AllEntries(*log_), want);
  Reopen(1024);
  EXPECT_EQ(log_->LastIndex(), 8u);
  EXPECT_EQ(AllEntries(*log_), want);
  EXPECT_EQ(log_->Term(8).value(), 2u);
  // And the log goes on from there.
  ASSERT_OK(log_->Append(MakeEntries(9, 2, 2, 40), std::nullopt, true));
  Reopen(1024);
  EXPECT_EQ(log_->LastIndex(), 10u);
  EXPECT_EQ(log_->Entries(9, 11).value(), MakeEntries(9, 2, 2, 40));
}

TEST_F(RaftLogFileTest, RotatesAtTheSegmentSize) {
  Reopen(4096);
  std::vector<raft::Entry> want;
  for (uint64_t i = 1; i <= 200; i += 4) {
    std::vector<raft::Entry> batch = MakeEntries(i, 4, 1, 60);
    ASSERT_OK(log_->Append(batch, std::nullopt, true));
    want.insert(want.end(), batch.begin(), batch.end());
  }
  std::vector<std::string> names = log_->SegmentNames();
  ASSERT_GE(names.size(), 3u);
  std::vector<std::string> paths = SegmentPaths(dir());
  ASSERT_EQ(paths.size(), names.size());
  for (size_t k = 0; k < names.size(); k++) {
    std::optional<SegmentHeader> h = ParseSegmentFileName(names[k]);
    ASSERT_TRUE(h.has_value());
    EXPECT_EQ(h->seq, k);
    // Every full segment holds its records within the size, the rest zeros.
    std::string bytes = ReadWhole(paths[k]);
    EXPECT_EQ(bytes.size(), 4096u) << names[k];
    if (k > 0) {
      // Its first index is the entry after the previous one's last.
      std::optional<SegmentHeader> prev = ParseSegmentFileName(names[k - 1]);
      EXPECT_GT(h->first_index, prev->first_index);
    }
  }
  Reopen(4096);
  EXPECT_EQ(AllEntries(*log_), want);
  EXPECT_EQ(log_->SegmentNames(), names);
}

TEST_F(RaftLogFileTest, BatchLargerThanASegmentStaysWhole) {
  Reopen(1024);
  ASSERT_OK(log_->Append(MakeEntries(1, 2, 1), std::nullopt, true));
  std::vector<raft::Entry> big = MakeEntries(3, 50, 1, 200);
  ASSERT_OK(log_->Append(big, std::nullopt, true));
  ASSERT_OK(log_->Append(MakeEntries(53, 1, 1), std::nullopt, true));
  Reopen(1024);
  EXPECT_EQ(log_->LastIndex(), 53u);
  EXPECT_EQ(log_->Entries(3, 53).value(), big);
  EXPECT_EQ(log_->SegmentNames().size(), 3u);
}

TEST_F(RaftLogFileTest, SnapshotCompactsAndReleaseDeletesWholeSegments) {
  Reopen(2048);
  for (uint64_t i = 1; i <= 100; i += 5) {
    ASSERT_OK(log_->Append(MakeEntries(i, 5, 3, 50), raft::HardState{3, 1, i + 4}, true));
  }
  const size_t before = log_->SegmentNames().size();
  ASSERT_GE(before, 4u);
  // Nothing is released beyond the snapshot.
  EXPECT_TRUE(log_->ReleaseTo(10).IsInvalidArgument());
  EXPECT_EQ(log_->SegmentNames().size(), before);

  ASSERT_OK(log_->SaveSnapshot(SnapshotMarker{60, 3}));
  EXPECT_EQ(log_->FirstIndex(), 61u);
  EXPECT_EQ(log_->LastIndex(), 100u);
  EXPECT_EQ(log_->Term(60).value(), 3u);
  EXPECT_TRUE(raft::IsLogCompacted(log_->Term(59).status()));
  EXPECT_TRUE(raft::IsLogCompacted(log_->Entries(60, 62).status()));
  ASSERT_OK(log_->ReleaseTo(60));
  std::vector<std::string> kept = log_->SegmentNames();
  EXPECT_LT(kept.size(), before);
  EXPECT_EQ(SegmentPaths(dir()).size(), kept.size());
  // What is kept starts at or below the snapshot's next entry; the segment
  // after the first kept one starts past it.
  EXPECT_LE(ParseSegmentFileName(kept[0])->first_index, 61u);
  ASSERT_GE(kept.size(), 2u);
  EXPECT_GT(ParseSegmentFileName(kept[1])->first_index, 61u);

  std::vector<raft::Entry> want = MakeEntries(61, 40, 3, 50);
  for (uint64_t i = 0; i < want.size(); i++) {
    // Batches of five: the entries are those MakeEntries gave each batch.
    want[i] = MakeEntries(61 + i, 1, 3, 50)[0];
  }
  EXPECT_EQ(AllEntries(*log_), want);
  Reopen(2048);
  EXPECT_EQ(log_->FirstIndex(), 61u);
  EXPECT_EQ(log_->snapshot(), (SnapshotMarker{60, 3}));
  EXPECT_EQ(log_->Term(60).value(), 3u);
  EXPECT_EQ(AllEntries(*log_), want);
  EXPECT_EQ(log_->hard_state(), (raft::HardState{3, 1, 100}));
  // An older snapshot is refused; the same one is a no-op.
  EXPECT_TRUE(log_->SaveSnapshot(SnapshotMarker{50, 3}).IsInvalidArgument());
  EXPECT_TRUE(log_->SaveSnapshot(SnapshotMarker{60, 4}).IsInvalidArgument());
  EXPECT_OK(log_->SaveSnapshot(SnapshotMarker{60, 3}));
}

TEST_F(RaftLogFileTest, ReleaseKeepsWhatReopenNeedsEvenWithAnOldMarkerInTheHeader) {
  // The first kept segment was created before the snapshot: its header
  // holds the older marker, and the newer one is further on.
  Reopen(1024);
  for (uint64_t i = 1; i <= 40; i += 2) {
    ASSERT_OK(log_->Append(MakeEntries(i, 2, 1, 60), raft::HardState{1, 0, i + 1}, true));
  }
  ASSERT_OK(log_->SaveSnapshot(SnapshotMarker{log_->LastIndex() - 1, 1}));
  ASSERT_OK(log_->ReleaseTo(log_->snapshot().index));
  const uint64_t first = log_->FirstIndex();
  Reopen(1024);
  EXPECT_EQ(log_->FirstIndex(), first);
  EXPECT_EQ(log_->LastIndex(), 40u);
  EXPECT_EQ(log_->Entries(40, 41).value(), MakeEntries(40, 1, 1, 60));
}

TEST_F(RaftLogFileTest, SnapshotPastTheLogReplacesIt) {
  Reopen();
  ASSERT_OK(log_->Append(MakeEntries(1, 5, 1), raft::HardState{1, 1, 2}, true));
  // A snapshot from a leader, past this member's log.
  ASSERT_OK(log_->SaveSnapshot(SnapshotMarker{50, 4}));
  EXPECT_EQ(log_->FirstIndex(), 51u);
  EXPECT_EQ(log_->LastIndex(), 50u);
  EXPECT_EQ(log_->Term(50).value(), 4u);
  EXPECT_TRUE(log_->Append(MakeEntries(50, 1, 4), std::nullopt, true).IsInvalidArgument());
  ASSERT_OK(log_->Append(MakeEntries(51, 2, 4), raft::HardState{4, 0, 50}, true));
  Reopen();
  EXPECT_EQ(log_->FirstIndex(), 51u);
  EXPECT_EQ(AllEntries(*log_), MakeEntries(51, 2, 4));
  EXPECT_EQ(log_->hard_state(), (raft::HardState{4, 0, 50}));
}

TEST_F(RaftLogFileTest, SnapshotWhoseTermTheLogDoesNotHoldReplacesIt) {
  Reopen();
  ASSERT_OK(log_->Append(MakeEntries(1, 10, 1), std::nullopt, true));
  ASSERT_OK(log_->SaveSnapshot(SnapshotMarker{5, 2}));
  EXPECT_EQ(log_->FirstIndex(), 6u);
  EXPECT_EQ(log_->LastIndex(), 5u);
  Reopen();
  EXPECT_EQ(log_->LastIndex(), 5u);
  EXPECT_EQ(log_->Term(5).value(), 2u);
}

TEST_F(RaftLogFileTest, BadInputIsRefusedAndChangesNothing) {
  Reopen();
  ASSERT_OK(log_->Append(MakeEntries(1, 5, 2), raft::HardState{2, 3, 2}, true));
  ASSERT_OK(log_->SaveSnapshot(SnapshotMarker{1, 2}));
  const std::string before = ReadWhole(SegmentPaths(dir())[0]);
  struct Case {
    const char* what;
    std::vector<raft::Entry> entries;
    std::optional<raft::HardState> hs;
  };
  std::vector<raft::Entry> skipping = MakeEntries(6, 3, 2);
  skipping[2].index = 9;
  std::vector<raft::Entry> falling = MakeEntries(6, 3, 2);
  falling[2].term = 1;
  std::vector<Case> cases = {
      {"a gap", MakeEntries(7, 1, 2), std::nullopt},
      {"not consecutive", skipping, std::nullopt},
      {"a term going down in the batch", falling, std::nullopt},
      {"a term below the entry before", MakeEntries(6, 1, 1), std::nullopt},
      {"replacing committed entries", MakeEntries(2, 1, 3), std::nullopt},
      {"replacing the snapshot", MakeEntries(1, 1, 3), std::nullopt},
      {"a term going down", {}, raft::HardState{1, 0, 2}},
      {"a second vote", {}, raft::HardState{2, 4, 2}},
      {"commit going down", {}, raft::HardState{2, 3, 1}},
      {"commit past the log", {}, raft::HardState{2, 3, 6}},
      {"commit past the new entries", MakeEntries(4, 1, 2), raft::HardState{2, 3, 5}},
  };
  for (const Case& c : cases) {
    Status s = log_->Append(c.entries, c.hs, true);
    EXPECT_TRUE(s.IsInvalidArgument()) << c.what << ": " << s.ToString();
    EXPECT_NE(s.message().find("raft log: "), std::string_view::npos) << s.ToString();
  }
  EXPECT_EQ(ReadWhole(SegmentPaths(dir())[0]), before);
  EXPECT_EQ(log_->LastIndex(), 5u);
  EXPECT_EQ(log_->hard_state(), (raft::HardState{2, 3, 2}));
  EXPECT_TRUE(log_->poisoned().ok());
  // Still writable: a new term's vote, and entries past the commit.
  ASSERT_OK(log_->Append(MakeEntries(3, 1, 3), raft::HardState{3, 4, 3}, true));
  EXPECT_EQ(log_->LastIndex(), 3u);
  EXPECT_TRUE(
      RaftLogFile::Open(&fs_, tmp_.File("x"), RaftLogOptions{100}).status().IsInvalidArgument());
}

TEST_F(RaftLogFileTest, MissingSegmentIsCorruption) {
  Reopen(1024);
  for (uint64_t i = 1; i <= 60; i += 3) {
    ASSERT_OK(log_->Append(MakeEntries(i, 3, 1, 40), std::nullopt, true));
  }
  log_.reset();
  std::vector<std::string> paths = SegmentPaths(dir());
  ASSERT_GE(paths.size(), 3u);
  std::filesystem::remove(paths[1]);
  Result<std::unique_ptr<RaftLogFile>> r = RaftLogFile::Open(&fs_, dir(), RaftLogOptions{1024});
  ASSERT_EQ(r.status().code(), Status::Code::kCorruption) << r.status().ToString();
  EXPECT_NE(r.status().message().find("segment 1 is missing"), std::string_view::npos)
      << r.status().ToString();
}

TEST_F(RaftLogFileTest, SegmentWhoseHeaderDisagreesWithItsNameIsCorruption) {
  Reopen(1024);
  ASSERT_OK(log_->Append(MakeEntries(1, 3, 1), std::nullopt, true));
  log_.reset();
  std::string path = SegmentPaths(dir())[0];
  std::filesystem::rename(path, dir() + "/0000000000000000-0000000000000002.wal");
  Result<std::unique_ptr<RaftLogFile>> r = RaftLogFile::Open(&fs_, dir(), RaftLogOptions{1024});
  ASSERT_EQ(r.status().code(), Status::Code::kCorruption) << r.status().ToString();
  EXPECT_NE(r.status().message().find("its header says seq 0 and first index 1"),
            std::string_view::npos)
      << r.status().ToString();
}

TEST_F(RaftLogFileTest, HalfCreatedSegmentIsRemovedOnOpen) {
  Reopen(1024);
  ASSERT_OK(log_->Append(MakeEntries(1, 3, 1), std::nullopt, true));
  log_.reset();
  const std::string tmp = dir() + "/0000000000000001-0000000000000004.wal.tmp";
  WriteWhole(tmp, "half a header");
  Reopen(1024);
  EXPECT_FALSE(std::filesystem::exists(tmp));
  EXPECT_EQ(log_->LastIndex(), 3u);
  EXPECT_EQ(log_->SegmentNames().size(), 1u);
}

}  // namespace
}  // namespace natcd::raftlog::testing
