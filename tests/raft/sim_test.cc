// Runs the cluster simulator (real server::Members, raft/sim/simulation.h)
// over many seeds. Each seed is one whole run: faults, safety checks after
// every step, healing, liveness, convergence, and a linearizability check
// of the clients' history.
//
//   NATCD_SIM_SEEDS=N        seeds 1..N (default: make check-raft's)
//   NATCD_SIM_FIRST_SEED=F   seeds F..F+N-1 instead (to split a long run)
//   NATCD_SIM_SKIP_SEEDS="A B"  seeds not run: known failures, each replayed
//                            by a DISABLED_ test below until its bug is fixed
//   NATCD_SIM_SEED=S         only seed S, with a trace of every event and
//                            the members' own log lines
//   NATCD_SIM_CHECK_STEPS=N  the linearizability search budget per key
//   NATCD_SIM_DISK_FULL=P    the chance per step that a member's disk fills
//                            (SimOptions::disk_full; default 0)
//   NATCD_SIM_DIR=D          where the members' databases go (/dev/shm)
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <initializer_list>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/storage/fault_vfs.h"
#include "raft/sim/simulation.h"

namespace natcd::raft::sim {
namespace {

uint64_t EnvOr(const char* name, uint64_t fallback) {
  const char* v = getenv(name);
  return v != nullptr && *v != '\0' ? std::strtoull(v, nullptr, 10) : fallback;
}

double DiskFullFromEnv() {
  const char* v = getenv("NATCD_SIM_DISK_FULL");
  return v != nullptr && *v != '\0' ? std::strtod(v, nullptr) : 0;
}

// The members log their role changes and snapshots on stderr: thousands of
// lines a seed. Kept out of the way while many seeds run (a replay shows
// them).
class QuietStderr {
 public:
  QuietStderr() {
    fflush(stderr);
    saved_ = dup(2);
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0) {
      dup2(null, 2);
      close(null);
    }
  }
  ~QuietStderr() {
    fflush(stderr);
    if (saved_ >= 0) {
      dup2(saved_, 2);
      close(saved_);
    }
  }

 private:
  int saved_ = -1;
};

// One seed in a child process, so that a member that crashes (a segfault,
// an abort) fails that seed, named, instead of ending the whole run.
SimResult RunIsolated(const SimOptions& options) {
  int fds[2];
  if (pipe(fds) != 0) return RunSimulation(options);
  fflush(stdout);
  const pid_t child = fork();
  if (child == 0) {
    close(fds[0]);
    SimResult r = RunSimulation(options);
    const size_t n = r.failure.size();
    bool ok = write(fds[1], &r.ok, sizeof r.ok) == sizeof r.ok &&
              write(fds[1], &r.stats, sizeof r.stats) == sizeof r.stats &&
              write(fds[1], &n, sizeof n) == sizeof n &&
              write(fds[1], r.failure.data(), n) == static_cast<ssize_t>(n);
    _exit(ok ? 0 : 1);
  }
  close(fds[1]);
  SimResult r;
  size_t n = 0;
  bool got = child > 0 && read(fds[0], &r.ok, sizeof r.ok) == sizeof r.ok &&
             read(fds[0], &r.stats, sizeof r.stats) == sizeof r.stats &&
             read(fds[0], &n, sizeof n) == sizeof n;
  if (got) {
    r.failure.resize(n);
    size_t at = 0;
    while (at < n) {
      ssize_t k = read(fds[0], r.failure.data() + at, n - at);
      if (k <= 0) break;
      at += static_cast<size_t>(k);
    }
    got = at == n;
  }
  close(fds[0]);
  int status = 0;
  if (child > 0) waitpid(child, &status, 0);
  if (!got) {
    r = SimResult{};
    r.ok = false;
    r.failure = "seed " + std::to_string(options.seed) + ": the run died" +
                (WIFSIGNALED(status) ? " (signal " + std::to_string(WTERMSIG(status)) + ")" : "");
  }
  return r;
}

TEST(RaftSimulation, SeedsKeepSafetyLivenessAndLinearizability) {
  // Every member's database goes through it: crashes may lose what was
  // not fsynced.
  testing::FaultVfs vfs;
  vfs.Register(/*as_default=*/true);
  const uint64_t only = EnvOr("NATCD_SIM_SEED", 0);
  if (only != 0) {
    SimOptions o;
    o.vfs = &vfs;
    o.seed = only;
    o.trace = getenv("NATCD_SIM_TRACE") == nullptr || *getenv("NATCD_SIM_TRACE") != '0';
    o.check_steps = EnvOr("NATCD_SIM_CHECK_STEPS", o.check_steps);
    o.disk_full = DiskFullFromEnv();
    SimResult r = RunSimulation(o);
    EXPECT_TRUE(r.ok) << r.failure;
    return;
  }
  const uint64_t seeds = EnvOr("NATCD_SIM_SEEDS", 20);
  const uint64_t first = EnvOr("NATCD_SIM_FIRST_SEED", 1);
  std::set<uint64_t> skip;
  if (const char* list = getenv("NATCD_SIM_SKIP_SEEDS")) {
    std::istringstream in(list);
    for (uint64_t seed; in >> seed;) skip.insert(seed);
  }
  uint64_t skipped = 0;
  std::vector<std::pair<uint64_t, std::string>> failures;
  SimStats total;
  int64_t worst_heal = 0;
  const auto started = std::chrono::steady_clock::now();
  {
    QuietStderr quiet;
    for (uint64_t seed = first; seed < first + seeds; seed++) {
      if (skip.count(seed) != 0) {
        skipped++;
        continue;
      }
      SimOptions o;
      o.seed = seed;
      o.vfs = &vfs;
      o.check_steps = EnvOr("NATCD_SIM_CHECK_STEPS", o.check_steps);
      o.disk_full = DiskFullFromEnv();
      SimResult r = RunIsolated(o);
      if (!r.ok) failures.emplace_back(seed, r.failure);
      total.elections += r.stats.elections;
      total.final_revision += r.stats.final_revision;
      total.ops_acknowledged += r.stats.ops_acknowledged;
      total.ops_unknown += r.stats.ops_unknown;
      total.retries += r.stats.retries;
      total.serializable_reads += r.stats.serializable_reads;
      total.crashes += r.stats.crashes;
      total.power_losses += r.stats.power_losses;
      total.power_losses_losing_data += r.stats.power_losses_losing_data;
      total.partitions += r.stats.partitions;
      total.conf_changes += r.stats.conf_changes;
      total.snapshots_sent += r.stats.snapshots_sent;
      total.transfers += r.stats.transfers;
      total.forwards += r.stats.forwards;
      total.resubmits += r.stats.resubmits;
      total.leases_kept += r.stats.leases_kept;
      total.leases_expired += r.stats.leases_expired;
      total.leases_cut_short += r.stats.leases_cut_short;
      worst_heal = std::max(worst_heal, r.stats.heal_ms);
      if (getenv("NATCD_SIM_PROGRESS") != nullptr) {
        printf("seed %llu: %s\n", static_cast<unsigned long long>(seed),
               r.ok ? "ok" : r.failure.c_str());
        fflush(stdout);
      }
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  printf(
      "cluster simulation: seeds %llu..%llu (%llu skipped) in %.1f s (%.2f seeds/s), %llu "
      "failed; %llu elections, %llu revisions, %llu ops acknowledged, %llu unknown, %llu retries, "
      "%llu "
      "serializable reads, %llu crashes (%llu power losses, %llu files losing unsynced writes), "
      "%llu partitions, %llu conf "
      "changes, %llu snapshots sent, %llu transfers, %llu forwards (%llu resubmitted), %llu "
      "keepalives extending a lease, %llu leases expired (%llu short of the TTL from their last "
      "keepalive); slowest recovery %lld ms\n",
      static_cast<unsigned long long>(first), static_cast<unsigned long long>(first + seeds - 1),
      static_cast<unsigned long long>(skipped), seconds,
      (seeds - skipped) / std::max(seconds, 1e-9), static_cast<unsigned long long>(failures.size()),
      static_cast<unsigned long long>(total.elections),
      static_cast<unsigned long long>(total.final_revision),
      static_cast<unsigned long long>(total.ops_acknowledged),
      static_cast<unsigned long long>(total.ops_unknown),
      static_cast<unsigned long long>(total.retries),
      static_cast<unsigned long long>(total.serializable_reads),
      static_cast<unsigned long long>(total.crashes),
      static_cast<unsigned long long>(total.power_losses),
      static_cast<unsigned long long>(total.power_losses_losing_data),
      static_cast<unsigned long long>(total.partitions),
      static_cast<unsigned long long>(total.conf_changes),
      static_cast<unsigned long long>(total.snapshots_sent),
      static_cast<unsigned long long>(total.transfers),
      static_cast<unsigned long long>(total.forwards),
      static_cast<unsigned long long>(total.resubmits),
      static_cast<unsigned long long>(total.leases_kept),
      static_cast<unsigned long long>(total.leases_expired),
      static_cast<unsigned long long>(total.leases_cut_short), static_cast<long long>(worst_heal));
  for (size_t i = 0; i < failures.size() && i < 20; i++) {
    ADD_FAILURE() << failures[i].second << "\n  replay: NATCD_SIM_SEED=" << failures[i].first
                  << " build/bin/raft_tests --gtest_filter='RaftSimulation.Seeds*'";
  }
  EXPECT_TRUE(failures.empty()) << failures.size() << " of " << seeds << " seeds failed";
}

TEST(RaftSimulation, ASeedReplaysExactly) {
  testing::FaultVfs vfs;
  vfs.Register(/*as_default=*/true);
  SimOptions o;
  o.vfs = &vfs;
  o.power_loss = 0.5;
  SimResult a, b;
  {
    QuietStderr quiet;
    // The first seed whose run has power losses among its crashes.
    for (o.seed = 1; o.seed < 50; o.seed++) {
      a = RunSimulation(o);
      if (a.stats.power_losses > 0) break;
    }
    b = RunSimulation(o);
  }
  ASSERT_TRUE(a.ok) << a.failure;
  ASSERT_GT(a.stats.power_losses, 0u);
  EXPECT_EQ(a.stats.trace_hash, b.stats.trace_hash);
  EXPECT_EQ(a.stats.elections, b.stats.elections);
  EXPECT_EQ(a.stats.final_revision, b.stats.final_revision);
  EXPECT_EQ(a.stats.ops_acknowledged, b.stats.ops_acknowledged);
  EXPECT_EQ(a.stats.heal_ms, b.stats.heal_ms);
  EXPECT_GT(a.stats.final_revision, 10u);
  EXPECT_GT(a.stats.ops_acknowledged, 10u);
}

// ---- Failures the simulator found in today's member (core/server/
// member.cc), each replaying seeds that fail now and pass with the fixes
// proposed with issue 13 item 4 (all of them applied: one alone may leave a
// seed failing on another). make check-raft skips those among its own seeds
// (SIM_KNOWN_FAILING_SEEDS in mk/raft.mk). Replay one with a trace:
//   NATCD_SIM_SEED=S build/bin/raft_tests --gtest_filter='RaftSimulation.Seeds*'

void ExpectSeedsPass(std::initializer_list<uint64_t> seeds) {
  testing::FaultVfs vfs;
  vfs.Register(/*as_default=*/true);
  for (uint64_t seed : seeds) {
    SimOptions o;
    o.seed = seed;
    o.vfs = &vfs;
    SimResult r;
    {
      QuietStderr quiet;
      r = RunIsolated(o);
    }
    EXPECT_TRUE(r.ok) << r.failure;
  }
}

// Proposal numbers start at 0 again when a member opens. A leader that
// crashed with entries in its log and leads again after a restart applies
// them once they commit, and takes each for the new request that has its
// number: that request gets the old entry's answer (a lease grant answered
// with a put's response, seed 20) and a put is acknowledged that was never
// applied (seed 1206: the acknowledged write is missing at its revision).
// Fixed: a proposal remembers its term; an entry answers it only if its
// term matches (the restarted member leads in a later term than it proposed
// in).
TEST(RaftSimulation, ARestartedLeaderAnswersRequestsWithItsEarlierIncarnationsEntries) {
  ExpectSeedsPass({20, 102, 1206, 2026, 2530, 3404});
}

// A follower that gets the leader's snapshot and, in the same turn, the
// appends right behind it installs the database with Raft's commit index,
// which points past the snapshot at entries that were never stored; the new
// Raft refuses to start ("commit index beyond the last stored entry") and
// the member dereferences the Raft it no longer has (SIGSEGV). Fixed: term
// and vote are kept, the commit index is the snapshot's.
TEST(RaftSimulation, AnAppendRightBehindAShippedSnapshotCrashesTheMember) {
  ExpectSeedsPass({505, 2013, 5308});
}

// A new leader renews leases before it applied the entries of earlier
// terms; an expiry of the lease its predecessor proposed, applied just
// after, revokes the lease it just told the holder was good for a TTL
// (seed 568: revoked 30 ms after a keepalive answered with ttl 1 s).
// Fixed: a leader answers keepalives after a read index round (which a new
// leader answers only once this term's first entry is committed) and once
// it took the leases over (below).
TEST(RaftSimulation, ANewLeaderRenewsALeaseItsPredecessorsExpiryThenRevokes) {
  ExpectSeedsPass({568, 615});
}

// A new leader takes over lease expiry (PromoteLeases) when it becomes
// leader, before it applied the earlier terms' checkpoints still in its log:
// a checkpoint applied afterwards changes only the replicated deadline, and
// the lease expires by the stale one (seed 161: expired 1 s after a
// keepalive with TTL 2 s). Fixed: leases are taken over once this term's
// first entry is applied, the time waited counted into the grace.
TEST(RaftSimulation, ANewLeaderTakesOverLeasesBeforeApplyingEarlierCheckpoints) {
  ExpectSeedsPass({161, 734});
}

// A renewal that runs more than half a TTL past the replicated deadline is
// answered at once, before the checkpoint that records it is proposed (and
// none is while a leadership transfer is under way); when leadership moves
// or the leader dies first, the next leader starts from the old deadline
// (seed 472: expired 200 ms after a keepalive with TTL 2 s, across a move
// of the leader). Fix: answer such a keepalive once its checkpoint is
// applied (at most one in half a TTL per lease goes through the log).
// Fixed: such a keepalive is held until its checkpoint is applied, or
// fails when leadership moves first (server/held_renewals.h). Seeds 472
// and 586 passed before the fix by timing; 340, 369, 570 and 2256 failed
// (12 of seeds 1..3000 did, every one this case; none since, nor any of
// 3001..23000).
TEST(RaftSimulation, ARenewalAnsweredBeforeItsCheckpointIsLostWithTheLeader) {
  ExpectSeedsPass({472, 586, 340, 369, 570, 2256});
}

// A member whose disk filled (its Raft log's writes fail with ENOSPC) leaves
// Raft, the others go on without it, and once the disk has room again it
// comes back by itself (crashes spare it: no restart) and catches up: every
// seed heals, converges and checks out. Before members rejoined, every seed
// with a full disk failed to converge ("members did not converge").
TEST(RaftSimulation, AMemberWhoseDiskFilledRejoinsOnceSpaceReturns) {
  testing::FaultVfs vfs;
  vfs.Register(/*as_default=*/true);
  const uint64_t seeds = EnvOr("NATCD_SIM_DISK_SEEDS", 20);
  SimStats total;
  for (uint64_t seed = 1; seed <= seeds; seed++) {
    SimOptions o;
    o.seed = seed;
    o.vfs = &vfs;
    o.disk_full = 1.0 / 600;  // about three full disks a seed
    SimResult r;
    {
      QuietStderr quiet;
      r = RunIsolated(o);
    }
    EXPECT_TRUE(r.ok) << r.failure << "\n  replay: NATCD_SIM_SEED=" << seed
                      << " NATCD_SIM_DISK_FULL=" << o.disk_full
                      << " build/bin/raft_tests --gtest_filter='RaftSimulation.Seeds*'";
    total.disk_fulls += r.stats.disk_fulls;
    total.disk_full_leaders += r.stats.disk_full_leaders;
    total.ops_acknowledged += r.stats.ops_acknowledged;
    total.slowest_rejoin_ms = std::max(total.slowest_rejoin_ms, r.stats.slowest_rejoin_ms);
  }
  printf(
      "full disks: %llu seeds, %llu disks filled (%llu the leader's), %llu ops acknowledged, "
      "slowest rejoin %lld ms after the disk was freed\n",
      static_cast<unsigned long long>(seeds), static_cast<unsigned long long>(total.disk_fulls),
      static_cast<unsigned long long>(total.disk_full_leaders),
      static_cast<unsigned long long>(total.ops_acknowledged),
      static_cast<long long>(total.slowest_rejoin_ms));
  EXPECT_GT(total.disk_fulls, seeds);
  EXPECT_GT(total.disk_full_leaders, 0u);
  // A disk full for at most 4 s is tried again at most 8 s later (the
  // backoff doubles from 1 s), then the leader catches the member up.
  EXPECT_LE(total.slowest_rejoin_ms, 12'000);
}

// A follower installing the leader's snapshot on a full disk could not open
// its Raft storage again, went on without a Raft and dereferenced it
// (seed 101 with disk_full 1/600: SIGSEGV). Fixed: it leaves Raft, and
// rejoining opens it all again.
TEST(RaftSimulation, ASnapshotInstallOnAFullDiskLeavesRaftInsteadOfCrashing) {
  testing::FaultVfs vfs;
  vfs.Register(/*as_default=*/true);
  SimOptions o;
  o.seed = 101;
  o.vfs = &vfs;
  o.disk_full = 1.0 / 600;
  SimResult r;
  {
    QuietStderr quiet;
    r = RunIsolated(o);
  }
  EXPECT_TRUE(r.ok) << r.failure;
}

}  // namespace
}  // namespace natcd::raft::sim
