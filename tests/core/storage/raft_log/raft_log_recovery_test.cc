// Reading back a damaged log: a torn last record is dropped at whatever
// byte it was cut, damage that a crash cannot explain is refused as
// Corruption naming the segment and offset, and a failed open changes no
// byte.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "core/storage/raft_log/raft_log_test_util.h"
#include "storage/raft_log/raft_log_file.h"
#include "storage/raft_log/segment_scan.h"
#include "testutil.h"

namespace natcd::raftlog::testing {
namespace {

using natcd::testing::TempDir;

constexpr uint64_t kSegmentBytes = 4096;

// A log of three synced Appends in one segment: A (entries 1-3), B
// (entries 4-5 and a hard state), C (entries 6-7 and a hard state).
struct ThreeAppends {
  std::string name;   // the segment's file name
  std::string bytes;  // the whole segment
  uint64_t c_start = 0;
  uint64_t c_end = 0;
  uint64_t b_start = 0;
};

class RaftLogRecoveryTest : public ::testing::Test {
 protected:
  ThreeAppends Write(bool sync_b_and_c = true) {
    std::string d = tmp_.File("source");
    auto log = RaftLogFile::Open(&fs_, d, RaftLogOptions{kSegmentBytes});
    EXPECT_TRUE(log.ok()) << log.status().ToString();
    EXPECT_OK(log.value()->Append(MakeEntries(1, 3, 1), raft::HardState{1, 1, 0}, true));
    EXPECT_OK(log.value()->Append(MakeEntries(4, 2, 1), raft::HardState{1, 1, 3}, sync_b_and_c));
    EXPECT_OK(log.value()->Append(MakeEntries(6, 2, 2), raft::HardState{2, 0, 5}, sync_b_and_c));
    log.value().reset();
    ThreeAppends out;
    std::vector<std::string> paths = SegmentPaths(d);
    EXPECT_EQ(paths.size(), 1u);
    out.name = std::filesystem::path(paths[0]).filename().string();
    out.bytes = ReadWhole(paths[0]);
    SegmentScan scan = ScanSegment(out.bytes, true);
    // header, hard state, snapshot; two records for each Append.
    EXPECT_EQ(scan.records.size(), 9u);
    EXPECT_EQ(scan.how, SegmentScan::End::kClean);
    out.b_start = scan.records[5].offset;
    out.c_start = scan.records[7].offset;
    out.c_end = scan.end;
    return out;
  }
  // A fresh log directory holding one segment with these bytes.
  std::string Install(const ThreeAppends& log, const std::string& bytes) {
    std::string d = tmp_.File("case" + std::to_string(++cases_));
    std::filesystem::create_directory(d);
    WriteWhole(d + "/" + log.name, bytes);
    return d;
  }

  TempDir tmp_;
  PosixLogFs fs_;
  int cases_ = 0;
};

// Truncated at every byte of the last Append, or with its tail zeroed
// (a preallocated file keeps its size): the first two Appends read back,
// the torn one is dropped, and the log goes on from there.
TEST_F(RaftLogRecoveryTest, TornLastAppendAtEveryByteIsDropped) {
  ThreeAppends src = Write();
  for (uint64_t cut = src.c_start; cut < src.c_end; cut++) {
    for (bool zeroed : {false, true}) {
      std::string bytes = src.bytes.substr(0, cut);
      if (zeroed) bytes.resize(src.bytes.size(), '\0');
      std::string d = Install(src, bytes);
      auto r = RaftLogFile::Open(&fs_, d, RaftLogOptions{kSegmentBytes});
      ASSERT_TRUE(r.ok()) << "cut at " << cut << ": " << r.status().ToString();
      RaftLogFile& log = *r.value();
      // A record survives the cut whole when the bytes cut off were zeros
      // anyway and zeros replaced them (not when the file ends short of
      // it); C's entry record may survive with its hard state torn.
      const uint64_t c_entries_end = src.c_start + EntriesRecordBytes(MakeEntries(6, 2, 2));
      auto whole = [&](uint64_t end) {
        if (!zeroed) return cut >= end;
        for (uint64_t i = cut; i < end; i++) {
          if (src.bytes[i] != 0) return false;
        }
        return true;
      };
      const bool c_entries = whole(c_entries_end);
      const bool c_hard_state = whole(src.c_end);
      std::vector<raft::Entry> want = MakeEntries(1, 3, 1);
      for (const auto& e : MakeEntries(4, 2, 1)) want.push_back(e);
      if (c_entries) {
        for (const auto& e : MakeEntries(6, 2, 2)) want.push_back(e);
      }
      ASSERT_EQ(AllEntries(log), want) << "cut at " << cut;
      EXPECT_EQ(log.hard_state(),
                (c_hard_state ? raft::HardState{2, 0, 5} : raft::HardState{1, 1, 3}))
          << "cut at " << cut;
      // Dropped: from the torn record to the last byte of it that is not zero.
      uint64_t torn_start = c_hard_state ? cut : c_entries ? c_entries_end : src.c_start;
      uint64_t torn_end = cut;
      while (torn_end > torn_start && src.bytes[torn_end - 1] == 0) torn_end--;
      EXPECT_EQ(log.torn_bytes_dropped(), torn_end - torn_start) << "cut at " << cut;
      // The file is cut there and preallocated again; appending goes on.
      std::string path = d + "/" + src.name;
      EXPECT_EQ(std::filesystem::file_size(path), std::max<uint64_t>(kSegmentBytes, bytes.size()));
      if (cut % 4 != 0) {
        r.value().reset();
        std::filesystem::remove_all(d);
        continue;
      }
      ASSERT_OK(log.Append(MakeEntries(6, 1, 3), raft::HardState{3, 0, 5}, true));
      r.value().reset();
      auto again = RaftLogFile::Open(&fs_, d, RaftLogOptions{kSegmentBytes});
      ASSERT_TRUE(again.ok()) << again.status().ToString();
      EXPECT_EQ(again.value()->LastIndex(), 6u);
      EXPECT_EQ(again.value()->Entries(6, 7).value(), MakeEntries(6, 1, 3)) << "cut at " << cut;
      EXPECT_EQ(again.value()->torn_bytes_dropped(), 0u);
      std::filesystem::remove_all(d);
    }
  }
}

// One flipped bit in a record that later records say was durable: refused,
// with the segment and offset named, and the file left as it was.
TEST_F(RaftLogRecoveryTest, DamagedDurableRecordIsCorruption) {
  ThreeAppends src = Write();
  for (uint64_t at : {src.b_start, src.b_start + 5, src.b_start + 13, src.c_start - 1}) {
    std::string bytes = src.bytes;
    bytes[at] = static_cast<char>(bytes[at] ^ 0x10);
    std::string d = Install(src, bytes);
    auto r = RaftLogFile::Open(&fs_, d, RaftLogOptions{kSegmentBytes});
    ASSERT_EQ(r.status().code(), Status::Code::kCorruption) << "at " << at;
    // B's first record is where reading stops (B's hard state record when
    // the damage is in it).
    EXPECT_NE(
        r.status().message().find("segment " + d + "/" + src.name + ": bad record at offset "),
        std::string_view::npos)
        << r.status().ToString();
    EXPECT_EQ(ReadWhole(d + "/" + src.name), bytes) << "a failed open changed the file";
  }
}

// The same damage inside Appends that were never synced is what a crash
// can leave: a torn tail, dropped with everything after it.
TEST_F(RaftLogRecoveryTest, DamageInsideTheUnsyncedTailIsATornTail) {
  ThreeAppends src = Write(/*sync_b_and_c=*/false);
  std::string bytes = src.bytes;
  bytes[src.b_start + 20] = static_cast<char>(bytes[src.b_start + 20] ^ 0x01);
  std::string d = Install(src, bytes);
  auto r = RaftLogFile::Open(&fs_, d, RaftLogOptions{kSegmentBytes});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r.value()->LastIndex(), 3u);
  EXPECT_GT(r.value()->torn_bytes_dropped(), 0u);
  EXPECT_LE(r.value()->torn_bytes_dropped(), src.c_end - src.b_start);
}

// Garbage after the records' end, past a zero header, with no durable
// record after it: a torn tail too. A durable record after it: Corruption.
TEST_F(RaftLogRecoveryTest, GarbageAfterTheEndIsTornUnlessADurableRecordFollows) {
  ThreeAppends src = Write();
  std::string bytes = src.bytes;
  bytes[src.c_end + 40] = 'x';
  auto r = RaftLogFile::Open(&fs_, Install(src, bytes), RaftLogOptions{kSegmentBytes});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r.value()->LastIndex(), 7u);
  EXPECT_EQ(r.value()->torn_bytes_dropped(), 41u);

  // A copy of A's record (durable-flagged) placed after a hole.
  std::string with_durable = src.bytes;
  std::string a = src.bytes.substr(ScanSegment(src.bytes, true).records[3].offset,
                                   ScanSegment(src.bytes, true).records[3].bytes);
  with_durable.replace(src.c_end + 64, a.size(), a);
  auto bad = RaftLogFile::Open(&fs_, Install(src, with_durable), RaftLogOptions{kSegmentBytes});
  ASSERT_EQ(bad.status().code(), Status::Code::kCorruption) << bad.status().ToString();
  EXPECT_NE(bad.status().message().find("bad record at offset " + std::to_string(src.c_end)),
            std::string_view::npos)
      << bad.status().ToString();
}

// A segment that is not the last was synced before the next was created:
// any bad record in it is Corruption, even its last one.
TEST_F(RaftLogRecoveryTest, DamageInAnEarlierSegmentIsCorruption) {
  std::string d = tmp_.File("multi");
  {
    auto log = RaftLogFile::Open(&fs_, d, RaftLogOptions{1024});
    ASSERT_TRUE(log.ok());
    for (uint64_t i = 1; i <= 60; i += 3) {
      ASSERT_OK(log.value()->Append(MakeEntries(i, 3, 1, 40), std::nullopt, true));
    }
  }
  std::vector<std::string> paths = SegmentPaths(d);
  ASSERT_GE(paths.size(), 3u);
  std::string bytes = ReadWhole(paths[0]);
  SegmentScan scan = ScanSegment(bytes, false);
  ASSERT_EQ(scan.how, SegmentScan::End::kClean);
  const RecordView& last = scan.records.back();
  bytes[last.offset + last.bytes - 1] ^= 0x40;
  WriteWhole(paths[0], bytes);
  auto r = RaftLogFile::Open(&fs_, d, RaftLogOptions{1024});
  ASSERT_EQ(r.status().code(), Status::Code::kCorruption) << r.status().ToString();
  EXPECT_NE(
      r.status().message().find(paths[0] + ": bad record at offset " + std::to_string(last.offset)),
      std::string_view::npos)
      << r.status().ToString();
  EXPECT_EQ(ReadWhole(paths[0]), bytes);
}

}  // namespace
}  // namespace natcd::raftlog::testing
