// One run of the fault harness: start a topology, start the workload, let
// the nemesis apply a seeded schedule, heal, read the committed history
// back, run every checker, measure availability per fault.
//
//   RunOptions options;  // topology, workload, fault kinds, seed...
//   RunResult result = RunFaults(options);
//   EXPECT_TRUE(result.report.ok()) << result.Describe();
//
// Runs on the calling thread (it starts the processes; see FaultCluster).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "faults/checkers.h"
#include "faults/fault_cluster.h"
#include "faults/nemesis.h"
#include "faults/workload.h"

namespace natcd::testing {

struct RunOptions {
  TopologyOptions topology;
  WorkloadOptions workload;  // client_urls: filled in from the cluster when empty
  // Pin each client to one server, round robin (several servers), instead
  // of giving every client every server.
  bool pin_clients = true;
  std::vector<FaultKind> kinds;
  uint64_t seed = 1;
  int64_t schedule_ms = 30'000;  // faults drawn until they fill this
  int64_t min_fault_ms = 2500;
  int64_t max_fault_ms = 4000;
  int64_t quiet_ms = 5000;
  int64_t warmup_ms = 2000;
  // How late an abandoned lease may expire beyond its TTL. 0: derived from
  // the schedule (the longest fault + 4 election timeouts + 3 s).
  int64_t lease_slack_ms = 0;
  // How long two lock holders may overlap (the holders' sessions are kept
  // alive throughout, so none is expected).
  int64_t lock_slack_ms = 0;
  // Keep (and print) the members' logs even when the run passed.
  bool keep_logs = false;
  // A fixed schedule instead of a drawn one.
  std::vector<FaultStep> steps;
};

struct RunResult {
  bool started = false;  // the cluster and workload came up
  std::string setup_error;
  std::vector<FaultStep> steps;
  std::vector<FaultRecord> faults;
  CheckReport report;
  std::vector<Availability> availability;
  int64_t longest_gap_us = 0;  // the whole run
  int operations = 0;
  int watch_events = 0;
  int64_t duration_ms = 0;
  std::string logs;  // the members' logs, kept when the run failed (or keep_logs)
  // Everything above, readable; the replay line first.
  std::string Describe(const RunOptions& options, const std::string& replay) const;
};

RunResult RunFaults(const RunOptions& options);

}  // namespace natcd::testing
