// Runs the Raft simulator over many seeds. Each seed is one whole run:
// faults, safety checks after every step, healing, liveness, and a
// linearizability check of the clients' history.
//
//   NATCD_SIM_SEEDS=N    seeds 1..N (default 2,000)
//   NATCD_SIM_SEED=S     only seed S, with a trace of every event
//   NATCD_SIM_CHECK_STEPS=N  the linearizability search budget per key
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#include "raft/sim/simulation.h"

namespace natcd::raft::sim {
namespace {

uint64_t EnvOr(const char* name, uint64_t fallback) {
  const char* v = getenv(name);
  return v != nullptr && *v != '\0' ? std::strtoull(v, nullptr, 10) : fallback;
}

TEST(RaftSimulation, SeedsKeepSafetyLivenessAndLinearizability) {
  uint64_t only = EnvOr("NATCD_SIM_SEED", 0);
  if (only != 0) {
    SimOptions o;
    o.seed = only;
    o.trace = getenv("NATCD_SIM_TRACE") == nullptr || *getenv("NATCD_SIM_TRACE") != '0';
    o.check_steps = EnvOr("NATCD_SIM_CHECK_STEPS", o.check_steps);
    SimResult r = RunSimulation(o);
    EXPECT_TRUE(r.ok) << r.failure;
    return;
  }
  uint64_t seeds = EnvOr("NATCD_SIM_SEEDS", 2000);
  std::atomic<uint64_t> next{1};
  std::mutex mu;
  std::vector<std::pair<uint64_t, std::string>> failures;
  SimStats total;
  int64_t worst_heal = 0;
  auto worker = [&] {
    for (uint64_t seed = next++; seed <= seeds; seed = next++) {
      SimOptions o;
      o.seed = seed;
      o.check_steps = EnvOr("NATCD_SIM_CHECK_STEPS", o.check_steps);
      SimResult r = RunSimulation(o);
      std::lock_guard<std::mutex> lock(mu);
      if (!r.ok) failures.emplace_back(seed, r.failure);
      total.elections += r.stats.elections;
      total.committed_entries += r.stats.committed_entries;
      total.ops_acknowledged += r.stats.ops_acknowledged;
      total.ops_unknown += r.stats.ops_unknown;
      total.crashes += r.stats.crashes;
      total.partitions += r.stats.partitions;
      total.conf_changes += r.stats.conf_changes;
      total.snapshots_sent += r.stats.snapshots_sent;
      total.transfers += r.stats.transfers;
      worst_heal = std::max(worst_heal, r.stats.heal_time);
    }
  };
  unsigned n = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> threads;
  for (unsigned i = 0; i < n; i++) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  printf(
      "raft simulation: %llu seeds, %llu elections, %llu entries committed, %llu ops "
      "acknowledged, %llu unknown, %llu crashes, %llu partitions, %llu conf changes, "
      "%llu snapshots sent, %llu transfers; slowest recovery %lld time units\n",
      (unsigned long long)seeds, (unsigned long long)total.elections,
      (unsigned long long)total.committed_entries, (unsigned long long)total.ops_acknowledged,
      (unsigned long long)total.ops_unknown, (unsigned long long)total.crashes,
      (unsigned long long)total.partitions, (unsigned long long)total.conf_changes,
      (unsigned long long)total.snapshots_sent, (unsigned long long)total.transfers,
      (long long)worst_heal);
  std::sort(failures.begin(), failures.end());
  for (size_t i = 0; i < failures.size() && i < 10; i++) {
    ADD_FAILURE() << failures[i].second << "\n  replay: NATCD_SIM_SEED=" << failures[i].first
                  << " build/bin/raft_tests --gtest_filter='RaftSimulation.Seeds*'";
  }
  EXPECT_TRUE(failures.empty()) << failures.size() << " of " << seeds << " seeds failed";
}

TEST(RaftSimulation, ASeedReplaysExactly) {
  SimOptions o;
  o.seed = 7;
  SimResult a = RunSimulation(o);
  SimResult b = RunSimulation(o);
  ASSERT_TRUE(a.ok) << a.failure;
  EXPECT_EQ(a.stats.elections, b.stats.elections);
  EXPECT_EQ(a.stats.committed_entries, b.stats.committed_entries);
  EXPECT_EQ(a.stats.ops_acknowledged, b.stats.ops_acknowledged);
  EXPECT_EQ(a.stats.crashes, b.stats.crashes);
  EXPECT_EQ(a.stats.heal_time, b.stats.heal_time);
  EXPECT_GT(a.stats.committed_entries, 10u);
  EXPECT_GT(a.stats.ops_acknowledged, 10u);
}

}  // namespace
}  // namespace natcd::raft::sim
