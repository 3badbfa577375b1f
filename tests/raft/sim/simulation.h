// The deterministic Raft simulator: N members running the real Raft core
// (core/raft) against a simulated network and disk, with clients doing
// put/get/compare-and-swap, all driven by one seed. The network drops,
// delays, duplicates and reorders messages and partitions members in any
// shape; members crash (losing what was not fsynced) and restart; the
// membership changes (learners added, promoted, voters removed);
// leadership is transferred. After every step the safety properties are
// checked; at the end the faults heal and the cluster must make progress
// within a bounded time, and the clients' history must be linearizable.
#pragma once

#include <cstdint>
#include <string>

namespace natcd::raft::sim {

struct SimOptions {
  uint64_t seed = 1;
  // Initial voters (3 or 5); 0 = chosen by the seed.
  int members = 0;
  // Simulated time units with faults, then the healing phase's budget.
  int fault_time = 3000;
  int heal_budget = 3000;
  // Print every event (for replaying a failing seed).
  bool trace = false;
  // Search steps the linearizability check may take per key before it
  // gives up (a give-up fails the seed: it proves nothing).
  uint64_t check_steps = 100'000'000;
};

struct SimStats {
  int members = 0;
  uint64_t elections = 0;          // distinct (term, leader) pairs seen
  uint64_t committed_entries = 0;  // highest index applied anywhere
  uint64_t ops_acknowledged = 0;
  uint64_t ops_unknown = 0;  // clients gave up waiting
  uint64_t crashes = 0;
  uint64_t partitions = 0;
  uint64_t conf_changes = 0;
  uint64_t snapshots_sent = 0;
  uint64_t transfers = 0;
  int64_t heal_time = 0;  // time units from healing to a committed proposal everywhere
};

struct SimResult {
  bool ok = true;
  std::string failure;  // what broke, and when
  SimStats stats;
};

SimResult RunSimulation(const SimOptions& options);

}  // namespace natcd::raft::sim
