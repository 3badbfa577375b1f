// Member and cluster IDs and the conf-change context, pinned. The IDs were
// computed by node.cc's Fnv1a (the same loop, mirrored in Python:
// h = 1469598103934665603; for each byte h = (h ^ b) * 1099511628211 mod
// 2^64; 0 becomes 1).
#include "server/member_identity.h"

#include <gtest/gtest.h>

namespace natcd::server {
namespace {

TEST(MemberIdentity, MemberIdsArePinned) {
  // DO NOT CHANGE: persisted.
  EXPECT_EQ(NameHash(""), 0x14650fb0739d0383ULL);
  EXPECT_EQ(MemberIdOf("a"), 0x44bd8ad473cd9906ULL);
  EXPECT_EQ(MemberIdOf("foobar"), 0x88fad7c0a8ff07f2ULL);
  EXPECT_EQ(MemberIdOf("n1"), 0x9bd11e00c67a74b2ULL);
  EXPECT_EQ(MemberIdOf("n2"), 0x9bd11d00c67a72ffULL);
  EXPECT_EQ(MemberIdOf("n3"), 0x9bd11c00c67a714cULL);
  EXPECT_EQ(MemberIdOf("natcd-1"), 0x0f6deb00dfd1a7fbULL);
  // Bytes, not characters: a NUL counts.
  EXPECT_NE(MemberIdOf(std::string("n1\0", 3)), MemberIdOf("n1"));
}

TEST(MemberIdentity, ClusterIdHashesPrefixSlashName) {
  // DO NOT CHANGE: persisted. The defaults: prefix "natcd", cluster "default".
  EXPECT_EQ(ClusterIdOf("natcd", "default"), 0xb1662c9d8d5fd253ULL);
  EXPECT_EQ(ClusterIdOf("natcd", "default"), NameHash("natcd/default"));
  EXPECT_NE(ClusterIdOf("natcd", "x"), ClusterIdOf("natcd/", "x"));
}

TEST(MemberIdentity, ConfChangeContextIsOriginSeqName) {
  // DO NOT CHANGE: persisted.
  EXPECT_EQ(EncodeConfChangeContext({0x9bd11e00c67a74b2ULL, 12, "n4"}),
            "11227788334690104498:12:n4");
  EXPECT_EQ(EncodeConfChangeContext({0, 0, ""}), "0:0:");
  EXPECT_EQ(DecodeConfChangeContext("11227788334690104498:12:n4"),
            (ConfChangeContext{0x9bd11e00c67a74b2ULL, 12, "n4"}));
  // A name may hold colons: only the first two separate.
  EXPECT_EQ(DecodeConfChangeContext("1:2:a:b"), (ConfChangeContext{1, 2, "a:b"}));
}

TEST(MemberIdentity, ConfChangeContextCarriesPeerUrlsAfterNuls) {
  // DO NOT CHANGE: persisted. A MemberAdd's peer URLs, each after a NUL.
  using namespace std::string_literals;
  const ConfChangeContext added{7, 3, "n4", {"http://10.0.0.4:2380", "http://h4:2380"}};
  const std::string bytes = "7:3:n4\0http://10.0.0.4:2380\0http://h4:2380"s;
  EXPECT_EQ(EncodeConfChangeContext(added), bytes);
  EXPECT_EQ(DecodeConfChangeContext(bytes), added);
  EXPECT_EQ(DecodeConfChangeContext("1:2:n\0"s), (ConfChangeContext{1, 2, "n", {""}}));
  // Without URLs, nothing after the name (the bytes written before).
  EXPECT_EQ(EncodeConfChangeContext({1, 2, "a:b", {}}), "1:2:a:b");
}

TEST(MemberIdentity, ConfChangeContextReadsEverythingAsBefore) {
  // Fewer than two colons: all name (a context written by hand, or none).
  EXPECT_EQ(DecodeConfChangeContext("n5"), (ConfChangeContext{0, 0, "n5"}));
  EXPECT_EQ(DecodeConfChangeContext("1:n5"), (ConfChangeContext{0, 0, "1:n5"}));
  EXPECT_EQ(DecodeConfChangeContext(""), (ConfChangeContext{0, 0, ""}));
  // Numbers read as strtoull reads them.
  EXPECT_EQ(DecodeConfChangeContext("x:7y:n"), (ConfChangeContext{0, 7, "n"}));
  EXPECT_EQ(DecodeConfChangeContext(" 3:-1:n"), (ConfChangeContext{3, UINT64_MAX, "n"}));
  EXPECT_EQ(DecodeConfChangeContext("99999999999999999999999:1:n"),
            (ConfChangeContext{UINT64_MAX, 1, "n"}));
}

}  // namespace
}  // namespace natcd::server
