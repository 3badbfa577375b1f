// How a member's name becomes its ID, a cluster's name its cluster ID, and
// what a membership change carries in the log about who proposed it.
//
// DO NOT CHANGE: persisted. Member IDs are in every Raft log and hard state
// (votes, conf states) and in the member table; the conf-change context is
// in the log entries of every membership change. tests/core/server/
// member_identity_test.cc pins them.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace natcd::server {

// 64-bit FNV-1a of the bytes with a non-standard offset basis (see the .cc),
// 0 (Raft's "no member") mapped to 1.
uint64_t NameHash(std::string_view bytes);

// A member's ID: NameHash of its --name.
inline uint64_t MemberIdOf(std::string_view member_name) { return NameHash(member_name); }
// A cluster's ID: NameHash of "<subject prefix>/<cluster name>".
uint64_t ClusterIdOf(std::string_view subject_prefix, std::string_view cluster_name);

// The context of a membership change: "<origin member>:<proposal seq>:<name>"
// in decimal, then for each peer URL a MemberAdd was given a NUL and the
// URL (names and URLs arrive as C strings: neither holds a NUL, so an
// entry written before URLs were carried decodes as it did); the origin
// member answers the client once it is applied.
struct ConfChangeContext {
  uint64_t origin_member = 0;
  uint64_t origin_seq = 0;
  std::string member_name;
  std::vector<std::string> peer_urls = {};

  bool operator==(const ConfChangeContext&) const = default;
};

std::string EncodeConfChangeContext(const ConfChangeContext& context);
// Never fails, as before: a context without two ':' is all name (origin 0,
// seq 0); each number reads as strtoull reads it (leading digits, 0 if
// none), the way node.cc read it.
ConfChangeContext DecodeConfChangeContext(std::string_view context);

}  // namespace natcd::server
