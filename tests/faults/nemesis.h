// The nemesis: a schedule of faults drawn from a seed, applied to a
// FaultCluster one at a time (begin, hold, heal, quiet), each recorded.
//
// The schedule (which faults, how long, the pauses between them) and every
// random choice of a target (which follower, which server) come from the
// seed, so a run replays from it; "the leader" is whoever leads when the
// fault begins.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "faults/fault_cluster.h"
#include "faults/history.h"

namespace natcd::testing {

enum class FaultKind : uint8_t {
  kKillLeader,      // kill -9 of the leader, restarted at the end
  kKillFollower,    // kill -9 of a follower, restarted at the end
  kPauseLeader,     // SIGSTOP of the leader, SIGCONT at the end
  kPauseFollower,   // SIGSTOP of a follower, SIGCONT at the end
  kKillServer,      // kill -9 of a nats-server, restarted at the end
  kCutLeader,       // the leader's NATS connection cut (proxy_members)
  kCutFollower,     // a follower's NATS connection cut (proxy_members)
  kCutRoutes,       // every route of a nats-server cut (proxy_routes)
  kFreezeLeader,    // the leader's NATS connection silent (proxy_members)
  kFreezeFollower,  // a follower's NATS connection silent (proxy_members)
  kDiskFull,        // the tmpfs_member's disk filled, freed at the end
};

const char* FaultName(FaultKind kind);
// "pause-leader" -> kPauseLeader.
std::optional<FaultKind> ParseFault(const std::string& name);

struct FaultStep {
  FaultKind kind = FaultKind::kPauseLeader;
  int64_t duration_ms = 0;  // from the fault's begin to its heal
  int64_t quiet_ms = 0;     // after the heal, before the next fault
};

// Steps drawn from `kinds` until they fill total_ms: each lasts
// [min_ms, max_ms], each is followed by quiet_ms.
std::vector<FaultStep> MakeSchedule(uint64_t seed, const std::vector<FaultKind>& kinds,
                                    int64_t total_ms, int64_t min_ms, int64_t max_ms,
                                    int64_t quiet_ms);
// Each of `kinds` once, in an order drawn from the seed.
std::vector<FaultStep> ShuffledSchedule(uint64_t seed, const std::vector<FaultKind>& kinds,
                                        int64_t min_ms, int64_t max_ms, int64_t quiet_ms);
std::string ScheduleToString(const std::vector<FaultStep>& steps);

class Nemesis {
 public:
  Nemesis(FaultCluster* cluster, const RunClock* clock, uint64_t seed)
      : cluster_(cluster), clock_(clock), rng_(seed) {}

  // Begins the fault, holds it for its duration, heals it, waits out the
  // quiet time. Call from the thread that started the cluster.
  ::testing::AssertionResult Apply(const FaultStep& step, FaultRecord* record);

 private:
  int PickOther(int not_this, int n);

  FaultCluster* cluster_;
  const RunClock* clock_;
  std::mt19937_64 rng_;
};

}  // namespace natcd::testing
