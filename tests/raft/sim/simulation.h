// The deterministic cluster simulator: N real natcd members
// (server::Member, the code that ships: its Ready loop, sync policy,
// apply, forwarding, ReadIndex, leases, membership, snapshot shipping),
// each on its own SQLite database, driven turn by turn (RunOneTurn) on
// manual clocks over a simulated network (sim_network.h) and peer
// transport (sim_peer_transport.h), all from one seed. No thread, no real
// time: the same seed gives the same run.
//
// Faults: the network drops, delays, duplicates and reorders packets and
// partitions members in any shape; members crash (TEST_Crash) and restart
// on their files, optionally losing what was not fsynced (power loss,
// through the fault VFS); a member's disk fills and is freed again (it
// leaves Raft and must come back by itself); the membership changes (learners added,
// promoted, voters removed, through MemberAddRequest and friends);
// leadership is moved (MoveLeaderRequest).
//
// Clients send puts and deletes (retried with the same request id after an unknown
// outcome), compare-and-swap txns, linearizable and serializable reads to
// any member; lease clients grant leases, attach a key, keep them alive
// through leader changes and abandon them. Checked: two leaders never
// share a term; the KV history is linearizable; serializable reads return
// only written values, monotonically per member incarnation; a value at a
// (key, revision) is the same wherever it is seen (reads, events, final
// state); every acknowledged write is in the final state at its revision;
// a lease is never gone before half its TTL plus an election timeout ran
// out from the last successful keepalive (natcd's promise; short of the
// whole TTL, etcd's, is counted); every revision is published as an
// event; after the faults heal the cluster makes progress, every abandoned lease expires, and every
// member ends with the same revision, keys and leases.
#pragma once

#include <cstdint>
#include <string>

namespace natcd::testing {
class FaultVfs;
}

namespace natcd::raft::sim {

struct SimOptions {
  uint64_t seed = 1;
  // Initial voters (3 or 5); 0 = chosen by the seed.
  int members = 0;
  // Simulated milliseconds with faults, then the healing phase's budget.
  int64_t fault_ms = 8'000;
  int64_t heal_budget_ms = 30'000;
  // The fault VFS, registered as SQLite's default, through which every
  // member's database goes: with it members fsync (simulated: it costs
  // nothing) and a crash may be a power loss, losing what was not synced.
  // Null: members do not fsync and crashes are process crashes only.
  testing::FaultVfs* vfs = nullptr;
  // With vfs: the share of crashes that are power losses; -1 chosen by the
  // seed (none for half the seeds).
  double power_loss = -1;
  // With vfs: the chance per step (5 ms) that a member's disk fills (its
  // Raft log's writes fail with ENOSPC) for 0.2-4 s. 0: never, and the
  // seed's run is the same as before disks could fill.
  double disk_full = 0;
  // Print every event (for replaying a failing seed).
  bool trace = false;
  // Search steps the linearizability check may take per key before it
  // gives up (a give-up fails the seed: it proves nothing).
  uint64_t check_steps = 100'000'000;
};

struct SimStats {
  int members = 0;
  uint64_t elections = 0;  // distinct terms that had a leader
  uint64_t final_revision = 0;
  uint64_t ops_acknowledged = 0;
  uint64_t ops_unknown = 0;  // no answer, or an error: may or may not have happened
  uint64_t retries = 0;      // writes sent again with their request id
  uint64_t serializable_reads = 0;
  uint64_t crashes = 0;
  uint64_t power_losses = 0;
  uint64_t power_losses_losing_data = 0;  // files that lost unsynced writes in them
  uint64_t partitions = 0;
  uint64_t disk_fulls = 0;         // disks filled (options.disk_full)
  uint64_t disk_full_leaders = 0;  // of those, the leader's
  // The longest from a member's disk freed to it knowing a leader again
  // (back in Raft: no restart, crashes spare a member with a full disk).
  int64_t slowest_rejoin_ms = 0;
  uint64_t conf_changes = 0;  // acknowledged
  uint64_t snapshots_sent = 0;
  uint64_t transfers = 0;  // acknowledged
  uint64_t forwards = 0;
  uint64_t resubmits = 0;
  uint64_t leases_kept = 0;     // leases kept alive through at least one keepalive
  uint64_t leases_expired = 0;  // lease keys deleted by expiry
  // Leases that ended before their TTL ran out from the last keepalive,
  // within what natcd's design allows (not etcd's: see LeaseGone).
  uint64_t leases_cut_short = 0;
  int64_t heal_ms = 0;      // from healing to a write acknowledged and every member converged
  uint64_t trace_hash = 0;  // of every event traced (printed or not): same seed, same hash
};

struct SimResult {
  bool ok = true;
  std::string failure;  // what broke, and when
  SimStats stats;
};

SimResult RunSimulation(const SimOptions& options);

}  // namespace natcd::raft::sim
