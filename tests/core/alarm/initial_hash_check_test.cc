// The verdict of the initial corruption check (core/alarm/
// initial_hash_check.h), as etcd's InitialCheck judges: only a hash that
// differs at the same compact revision fails the start; members that could
// not answer, are behind, or compacted differently are passed over.
#include "alarm/initial_hash_check.h"

#include <gtest/gtest.h>

namespace natcd::alarm {
namespace {

constexpr uint64_t kSelf = 0x8e9e05c52164694dull;

HashKVResponse Hash(uint32_t hash, int64_t revision, int64_t compact_revision) {
  HashKVResponse r;
  r.hash = hash;
  r.hash_revision = revision;
  r.header.revision = revision;
  r.compact_revision = compact_revision;
  return r;
}

PeerHashAnswer Peer(uint64_t id, Result<HashKVResponse> answer) {
  return PeerHashAnswer{id, std::move(answer)};
}

TEST(InitialHashCheckTest, EqualHashesPass) {
  std::vector<std::string> log;
  Status s = JudgeInitialHashes(kSelf, Hash(7, 10, 0),
                                {Peer(2, Hash(7, 10, 0)), Peer(3, Hash(7, 10, 0))}, &log);
  EXPECT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0],
            "initial corruption checking passed; no corruption (local-member-id 8e9e05c52164694d)");
}

TEST(InitialHashCheckTest, AHashThatDiffersAtTheSameCompactRevisionFails) {
  std::vector<std::string> log;
  Status s = JudgeInitialHashes(kSelf, Hash(7, 10, 4),
                                {Peer(2, Hash(7, 10, 4)), Peer(0xa, Hash(8, 10, 4))}, &log);
  EXPECT_EQ(s.ToString(), "ErrCorrupt: 8e9e05c52164694d found data inconsistency with peers");
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0].rfind("found different hash values from remote peer (", 0), 0u) << log[0];
  EXPECT_NE(log[0].find("remote-peer-id a, remote-peer-revision 10"), std::string::npos) << log[0];
}

TEST(InitialHashCheckTest, ADifferentCompactRevisionIsNotAMismatch) {
  std::vector<std::string> log;
  Status s = JudgeInitialHashes(kSelf, Hash(7, 10, 4), {Peer(2, Hash(8, 10, 6))}, &log);
  EXPECT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[0].rfind("found different compact revision values from remote peer", 0), 0u);
}

TEST(InitialHashCheckTest, MembersThatCannotAnswerArePassedOver) {
  std::vector<std::string> log;
  Status s = JudgeInitialHashes(
      kSelf, Hash(7, 10, 0),
      {Peer(2, Status::FutureRevision(10, 8)), Peer(3, Status::Compacted(10, 12)),
       Peer(4, Status::Unavailable("ErrUnavailable", "no responders"))},
      &log);
  EXPECT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(log.size(), 4u);
  EXPECT_EQ(log[0].rfind("cannot fetch hash from slow remote peer (", 0), 0u) << log[0];
  EXPECT_EQ(log[1].rfind("cannot fetch hash from remote peer; local member is behind (", 0), 0u)
      << log[1];
  EXPECT_EQ(log[2].rfind("failed hash kv request (", 0), 0u) << log[2];
  EXPECT_NE(log[2].find("no responders"), std::string::npos) << log[2];
}

TEST(InitialHashCheckTest, AMemberAloneHasNobodyToDisagreeWith) {
  std::vector<std::string> log;
  EXPECT_TRUE(JudgeInitialHashes(kSelf, Hash(7, 10, 0), {}, &log).ok());
}

}  // namespace
}  // namespace natcd::alarm
