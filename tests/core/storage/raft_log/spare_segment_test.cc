// The spare segment (spare_segment.h): rotation takes a zero-filled,
// synced spare prepared on a thread of its own, a spare a crash left is
// removed on Open, and a torn write into the zeros reads as a torn tail.
#include "storage/raft_log/spare_segment.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "core/storage/raft_log/raft_log_test_util.h"
#include "storage/raft_log/raft_log_file.h"
#include "testutil.h"

namespace natcd::raftlog::testing {
namespace {

using natcd::testing::TempDir;

constexpr uint64_t kSegmentBytes = 4096;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

bool AllZero(const std::string& data) { return data.find_first_not_of('\0') == std::string::npos; }

class SpareSegmentTest : public ::testing::Test {
 protected:
  std::unique_ptr<RaftLogFile> Open(bool background) {
    Result<std::unique_ptr<RaftLogFile>> r =
        RaftLogFile::Open(&fs_, dir(), RaftLogOptions{kSegmentBytes, background});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? std::move(r).value() : nullptr;
  }
  std::string dir() const { return tmp_.File("log"); }
  std::string spare() const { return dir() + "/" + std::string(kSpareName); }

  TempDir tmp_;
  PosixLogFs fs_;
};

TEST_F(SpareSegmentTest, RotationTakesTheSpareAndTheNextIsPreparedInTheBackground) {
  std::vector<raft::Entry> want;
  {
    std::unique_ptr<RaftLogFile> log = Open(true);
    ASSERT_NE(log, nullptr);
    for (uint64_t i = 1; i <= 60; i++) {
      std::vector<raft::Entry> e = MakeEntries(i, 1, 1, 200);
      ASSERT_OK(log->Append(e, std::nullopt, true));
      want.insert(want.end(), e.begin(), e.end());
    }
    ASSERT_GE(log->SegmentNames().size(), 3u);
  }  // closing waits for the spare being filled
  // Every segment is the spare it was made from: zero-filled to the size.
  for (const std::string& path : SegmentPaths(dir())) {
    EXPECT_EQ(std::filesystem::file_size(path), kSegmentBytes) << path;
  }
  const std::string left = ReadAll(spare());
  EXPECT_EQ(left.size(), kSegmentBytes);
  EXPECT_TRUE(AllZero(left));
  std::unique_ptr<RaftLogFile> log = Open(true);
  ASSERT_NE(log, nullptr);
  EXPECT_EQ(log->Entries(1, 61).value(), want);
  EXPECT_EQ(log->torn_bytes_dropped(), 0u);
}

TEST_F(SpareSegmentTest, ASpareACrashLeftIsRemovedOnOpen) {
  {
    std::unique_ptr<RaftLogFile> log = Open(false);
    ASSERT_OK(log->Append(MakeEntries(1, 3, 1), std::nullopt, true));
  }
  // As a crash between writing the new segment's header into the spare
  // and renaming it into place leaves it: not zeros.
  {
    std::ofstream out(spare(), std::ios::binary);
    out << std::string(1000, 'x');
  }
  std::unique_ptr<RaftLogFile> log = Open(false);
  ASSERT_NE(log, nullptr);
  EXPECT_FALSE(std::filesystem::exists(spare()));
  EXPECT_EQ(log->LastIndex(), 3u);
  // Rotation fills a new spare from nothing.
  for (uint64_t i = 4; i <= 40; i++) {
    ASSERT_OK(log->Append(MakeEntries(i, 1, 1, 200), std::nullopt, true));
  }
  ASSERT_GE(log->SegmentNames().size(), 2u);
  log.reset();
  log = Open(false);
  ASSERT_NE(log, nullptr);
  EXPECT_EQ(log->Entries(1, 41).value().size(), 40u);
}

// A torn write whose first block (the record's header) never reached the
// disk but a later one did: zeros where the record starts, data after.
TEST_F(SpareSegmentTest, ATornWriteIntoTheZerosIsATornTail) {
  {
    std::unique_ptr<RaftLogFile> log = Open(false);
    ASSERT_OK(log->Append(MakeEntries(1, 2, 1, 50), std::nullopt, true));
  }
  const std::string path = SegmentPaths(dir()).back();
  const std::string before = ReadAll(path);
  const size_t end = before.find_last_not_of('\0') + 1;  // entry data is not zero
  {
    std::fstream f(path, std::ios::binary | std::ios::in | std::ios::out);
    f.seekp(static_cast<std::streamoff>(end + 100));
    f << "torn";
  }
  std::unique_ptr<RaftLogFile> log = Open(false);
  ASSERT_NE(log, nullptr);
  EXPECT_EQ(log->LastIndex(), 2u);
  EXPECT_EQ(log->torn_bytes_dropped(), 104u);
  // The torn bytes are gone: the log goes on and reads back clean.
  ASSERT_OK(log->Append(MakeEntries(3, 1, 1, 50), std::nullopt, true));
  log.reset();
  log = Open(false);
  ASSERT_NE(log, nullptr);
  EXPECT_EQ(log->LastIndex(), 3u);
  EXPECT_EQ(log->torn_bytes_dropped(), 0u);
  // Without the stray bytes, the zeros after the records are the end.
  EXPECT_TRUE(AllZero(ReadAll(path).substr(end + 200)));
}

}  // namespace
}  // namespace natcd::raftlog::testing
