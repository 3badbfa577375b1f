// The verdict of etcd's initial corruption check
// (--experimental-initial-corrupt-check; InitialCheck in etcd's
// server/etcdserver/corrupt.go): before a member that already has data
// serves, it hashes its store at its current revision (HashKV) and asks
// every other member for its hash at that revision. Only a hash that
// differs at the same compact revision is an inconsistency; a member that
// could not answer (unreachable, behind: ErrFutureRev, compacted past the
// revision: ErrCompacted) is reported and passed over, as etcd does, so
// that a member can restart while others are down.
//
// Asking the members is the front end's (adapters/nats/peer/
// initial_hash_asks.h); this is the transport-free judgement.
//
// Thread safety: a pure function.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "natcd/status.h"
#include "natcd/types.h"

namespace natcd::alarm {

// What one other member answered (or why it did not).
struct PeerHashAnswer {
  uint64_t member_id = 0;
  Result<HashKVResponse> answer = Status::Internal("not asked");
};

// OK when no member's hash differs at the same compact revision; else
// ErrCorrupt with etcd's "<member ID in hex> found data inconsistency
// with peers". *log gets one line per member that differs or was passed
// over (etcd's warnings), and the passing line when it passes.
Status JudgeInitialHashes(uint64_t self, const HashKVResponse& own,
                          const std::vector<PeerHashAnswer>& peers, std::vector<std::string>* log);

}  // namespace natcd::alarm
