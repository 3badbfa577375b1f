// The Raft log file's persisted format: the bytes of a segment with known
// contents are pinned (a change to them breaks every log on disk: it
// needs a new format version, not an edit of this test), and the record
// parser refuses each kind of damage.
#include "storage/raft_log/log_format.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/storage/raft_log/raft_log_test_util.h"
#include "storage/raft_log/raft_log_file.h"
#include "testutil.h"

namespace natcd::raftlog::testing {
namespace {

using natcd::testing::TempDir;

std::string Hex(std::string_view bytes) {
  static const char* d = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out.push_back(d[c >> 4]);
    out.push_back(d[c & 15]);
  }
  return out;
}

TEST(RaftLogFormat, SegmentBytesArePinned) {
  TempDir tmp;
  PosixLogFs fs;
  {
    auto log = RaftLogFile::Open(&fs, tmp.File("log"), RaftLogOptions{1024});
    ASSERT_TRUE(log.ok()) << log.status().ToString();
    std::vector<raft::Entry> entries = {
        raft::Entry{1, 1, raft::EntryType::kNormal, "a"},
        raft::Entry{2, 2, raft::EntryType::kConfChange, "bc"},
    };
    ASSERT_OK(log.value()->Append(entries, raft::HardState{2, 3, 1}, true));
    ASSERT_OK(log.value()->SaveSnapshot(SnapshotMarker{1, 1}));
  }
  std::vector<std::string> paths = SegmentPaths(tmp.File("log"));
  ASSERT_EQ(paths.size(), 1u);
  EXPECT_EQ(std::filesystem::path(paths[0]).filename(), "0000000000000000-0000000000000001.wal");
  std::string bytes = ReadWhole(paths[0]);
  ASSERT_EQ(bytes.size(), 1024u);  // preallocated
  const std::string want =
      // Segment header: crc, length 28, type 1, flags 1 (prior durable),
      // 0, "NATCDLOG", version 1, seq 0, first index 1.
      "d7207ed8"
      "1c000000"
      "01"
      "01"
      "0000"
      "4e415443444c4f47"
      "01000000"
      "0000000000000000"
      "0100000000000000"
      // Hard state then snapshot marker, as at the segment's creation
      // (both empty), flags 0.
      "0dbac055"
      "18000000"
      "03"
      "00"
      "0000"
      "000000000000000000000000000000000000000000000000"
      "61365fdc"
      "10000000"
      "04"
      "00"
      "0000"
      "00000000000000000000000000000000"
      // Entry batch: flags 1; first index 1, count 2; (term 1, normal,
      // 1 byte "a"), (term 2, conf change, 2 bytes "bc").
      "e2092ca1"
      "29000000"
      "02"
      "01"
      "0000"
      "0100000000000000"
      "02000000"
      "0100000000000000"
      "00"
      "01000000"
      "61"
      "0200000000000000"
      "01"
      "02000000"
      "6263"
      // Hard state: flags 0; term 2, vote 3, commit 1.
      "3454777e"
      "18000000"
      "03"
      "00"
      "0000"
      "0200000000000000"
      "0300000000000000"
      "0100000000000000"
      // Snapshot marker: flags 1; index 1, term 1.
      "5f0a54de"
      "10000000"
      "04"
      "01"
      "0000"
      "0100000000000000"
      "0100000000000000";
  EXPECT_EQ(Hex(bytes.substr(0, want.size() / 2)), want);
  EXPECT_EQ(bytes.substr(want.size() / 2), std::string(1024 - want.size() / 2, '\0'));
}

}  // namespace
}  // namespace natcd::raftlog::testing

namespace natcd::raftlog::testing {
namespace {

TEST(RaftLogFormat, SegmentFileNamesRoundTripAndNothingElseParses) {
  SegmentHeader h{0x1f, 0xabcdef0123};
  EXPECT_EQ(SegmentFileName(h), "000000000000001f-000000abcdef0123.wal");
  EXPECT_EQ(ParseSegmentFileName(SegmentFileName(h)), h);
  for (const char* bad :
       {"000000000000001f-000000abcdef0123.wal.tmp", "000000000000001F-000000abcdef0123.wal",
        "1f-123.wal", "000000000000001f_000000abcdef0123.wal",
        "000000000000001f-000000abcdef0123.log", "natcd.db"}) {
    EXPECT_FALSE(ParseSegmentFileName(bad).has_value()) << bad;
  }
}

TEST(RaftLogFormat, ParseRefusesEveryKindOfDamage) {
  std::string rec;
  AppendHardStateRecord(raft::HardState{5, 1, 4}, kFlagPriorDurable, &rec);
  RecordView view;
  ASSERT_EQ(ParseRecord(rec, 0, &view), ParseOutcome::kRecord);
  EXPECT_EQ(view.type, RecordType::kHardState);
  EXPECT_EQ(view.flags, kFlagPriorDurable);
  EXPECT_EQ(view.bytes, rec.size());
  raft::HardState hs;
  ASSERT_TRUE(DecodeHardState(view.payload, &hs));
  EXPECT_EQ(hs, (raft::HardState{5, 1, 4}));

  // Every single flipped bit is caught (header fields or checksum).
  for (size_t bit = 0; bit < rec.size() * 8; bit++) {
    std::string bad = rec;
    bad[bit / 8] = static_cast<char>(bad[bit / 8] ^ (1 << (bit % 8)));
    EXPECT_EQ(ParseRecord(bad, 0, &view), ParseOutcome::kBad) << "bit " << bit;
  }
  // Cut short anywhere.
  for (size_t n = 1; n < rec.size(); n++) {
    EXPECT_EQ(ParseRecord(rec.substr(0, n), 0, &view), ParseOutcome::kBad) << "length " << n;
  }
  EXPECT_EQ(ParseRecord(std::string(12, '\0'), 0, &view), ParseOutcome::kZero);
  EXPECT_EQ(ParseRecord(std::string(5, '\0'), 0, &view), ParseOutcome::kZero);
  EXPECT_EQ(ParseRecord("", 0, &view), ParseOutcome::kZero);
  // A payload of the wrong size for its type does not decode.
  EXPECT_FALSE(DecodeHardState(view.payload.substr(0, 23), &hs));
  SnapshotMarker m;
  EXPECT_FALSE(DecodeSnapshot(std::string(17, 'x'), &m));
}

TEST(RaftLogFormat, EntryBatchesDecodeOnlyWhenWellFormed) {
  std::vector<raft::Entry> entries = MakeEntries(7, 3, 2, 30);
  entries[1].type = raft::EntryType::kConfChange;
  std::string rec;
  AppendEntriesRecord(entries, 0, &rec);
  EXPECT_EQ(rec.size(), EntriesRecordBytes(entries));
  RecordView view;
  ASSERT_EQ(ParseRecord(rec, 0, &view), ParseOutcome::kRecord);
  uint64_t first = 0;
  std::vector<EntryView> views;
  ASSERT_TRUE(DecodeEntries(view.payload, &first, &views));
  ASSERT_EQ(first, 7u);
  ASSERT_EQ(views.size(), 3u);
  for (size_t k = 0; k < 3; k++) {
    EXPECT_EQ(views[k].term, entries[k].term);
    EXPECT_EQ(views[k].type, entries[k].type);
    EXPECT_EQ(views[k].data, entries[k].data);
  }
  std::string payload(view.payload);
  // Short at any point, a count the bytes cannot hold, an unknown entry
  // type, bytes left over: each refused.
  for (size_t n = 0; n < payload.size(); n++) {
    EXPECT_FALSE(DecodeEntries(payload.substr(0, n), &first, &views)) << "length " << n;
  }
  std::string big_count = payload;
  big_count[8] = '\x7f';
  EXPECT_FALSE(DecodeEntries(big_count, &first, &views));
  std::string bad_type = payload;
  bad_type[12 + 8] = 9;
  EXPECT_FALSE(DecodeEntries(bad_type, &first, &views));
  EXPECT_FALSE(DecodeEntries(payload + "x", &first, &views));
}

}  // namespace
}  // namespace natcd::raftlog::testing
