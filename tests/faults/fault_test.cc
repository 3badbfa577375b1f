// The fault harness's runs (issue 16): real natcd members on real
// nats-servers, clients through the C client library, a seeded nemesis,
// and the histories checked (fault_run.h).
//
// `make test` runs the Short* schedules: a fixed seed each, a few faults,
// safety asserted strictly, availability printed only (this machine is
// shared: its figures depend on what else runs).
//
// `make check-faults` sets NATCD_FAULT_LONG=1, which enables:
//   FaultsLong.*          long schedules on each topology, one run per seed
//                         of NATCD_FAULT_SEEDS (comma-separated; default: 3
//                         seeds drawn from the time, printed), each
//                         NATCD_FAULT_DURATION_S long (default 120)
//   FaultsAvailability.*  one fault each (the leader paused, a follower
//                         paused, the leader killed, a nats-server killed),
//                         held NATCD_FAULT_HOLD_S (default 15), with the
//                         write availability figures; asserted only when
//                         NATCD_FAULT_MIN_AVAILABILITY (a share, e.g. 0.99)
//                         is set.
// A Short* run replays with NATCD_FAULT_SEEDS=<seed> too. NATCD_FAULT_LOGS=1
// prints the members' and servers' logs of runs that passed as well.
#include <gtest/gtest.h>

#include <unistd.h>
#include <chrono>
#include <thread>

#include <cstdlib>
#include <sstream>

#include "faults/fault_run.h"

namespace natcd::testing {
namespace {

std::string Env(const char* name, const std::string& fallback = "") {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : fallback;
}

bool LongEnabled() { return Env("NATCD_FAULT_LONG") == "1"; }

std::vector<uint64_t> Seeds(const std::vector<uint64_t>& fallback) {
  std::string list = Env("NATCD_FAULT_SEEDS");
  if (list.empty()) return fallback;
  std::vector<uint64_t> seeds;
  std::stringstream in(list);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (!item.empty()) seeds.push_back(std::stoull(item));
  }
  return seeds;
}

std::vector<uint64_t> TimeSeeds(int n) {
  const uint64_t base = static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch() /
                                              std::chrono::seconds(1));
  std::vector<uint64_t> seeds;
  for (int i = 0; i < n; i++) seeds.push_back(base % 1'000'000 + static_cast<uint64_t>(i));
  return seeds;
}

std::string TestName() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return std::string(info->test_suite_name()) + "." + info->name();
}

std::string ReplayCommand(uint64_t seed) {
  std::ostringstream out;
  out << "NATCD_BIN=build/bin/natcd" << (LongEnabled() ? " NATCD_FAULT_LONG=1" : "")
      << " NATCD_FAULT_SEEDS=" << seed;
  if (!Env("NATCD_FAULT_DURATION_S").empty()) {
    out << " NATCD_FAULT_DURATION_S=" << Env("NATCD_FAULT_DURATION_S");
  }
  if (!Env("NATCD_FAULT_HOLD_S").empty()) {
    out << " NATCD_FAULT_HOLD_S=" << Env("NATCD_FAULT_HOLD_S");
  }
  out << " build/bin/fault_tests --gtest_filter=" << TestName();
  return out.str();
}

// Runs, prints what it found, and fails the test on any safety anomaly.
RunResult RunAndCheck(RunOptions options) {
  options.keep_logs = Env("NATCD_FAULT_LOGS") == "1";
  RunResult result = RunFaults(options);
  const std::string described = result.Describe(options, ReplayCommand(options.seed));
  std::cout << described;
  EXPECT_TRUE(result.started) << described;
  EXPECT_TRUE(result.setup_error.empty()) << described;
  EXPECT_TRUE(result.report.ok()) << described;
  return result;
}

TopologyOptions OneServer(int members) {
  TopologyOptions t;
  t.members = members;
  t.nats_servers = 1;
  t.proxy_members = true;
  return t;
}

TopologyOptions NatsCluster() {
  TopologyOptions t;
  t.members = 3;
  t.nats_servers = 3;
  t.proxy_routes = true;
  return t;
}

// --- make test: short fixed-seed schedules -----------------------------------

// The faults of one member, for the topologies without routes to cut.
const std::vector<FaultKind> kMemberFaults = {FaultKind::kPauseLeader, FaultKind::kPauseFollower,
                                              FaultKind::kKillLeader,  FaultKind::kKillFollower,
                                              FaultKind::kCutLeader,   FaultKind::kCutFollower};

// How late an abandoned lease may expire in make test: generous, for this
// shared machine (7.3 s beyond the TTL was seen; the long runs derive a
// tighter bound from their schedule).
constexpr int64_t kShortLeaseSlackMs = 20'000;

TEST(Faults, ShortScheduleOnOneServer) {
  RunOptions options;
  options.topology = OneServer(3);
  options.seed = Seeds({16})[0];
  options.steps =
      ShuffledSchedule(options.seed,
                       {FaultKind::kPauseLeader, FaultKind::kPauseFollower, FaultKind::kKillLeader,
                        FaultKind::kCutLeader, FaultKind::kFreezeLeader},
                       2500, 4000, 4000);
  options.lease_slack_ms = kShortLeaseSlackMs;
  RunAndCheck(options);
}

TEST(Faults, ShortScheduleOnNatsCluster) {
  RunOptions options;
  options.topology = NatsCluster();
  options.seed = Seeds({1616})[0];
  options.steps = ShuffledSchedule(options.seed,
                                   {FaultKind::kKillServer, FaultKind::kCutRoutes,
                                    FaultKind::kPauseLeader, FaultKind::kKillLeader},
                                   2500, 4000, 4000);
  options.lease_slack_ms = kShortLeaseSlackMs;
  RunAndCheck(options);
}

// The disk of one member fills up (a tmpfs of its own) and is freed: once
// with that member a follower, once with it leading.
TEST(FaultsDisk, DiskFullOfOneMember) {
  if (!LongEnabled()) GTEST_SKIP() << "NATCD_FAULT_LONG=1 (make check-faults) runs it";
  if (geteuid() != 0) GTEST_SKIP() << "mounting a tmpfs needs root";
  RunOptions options;
  options.topology = OneServer(3);
  options.topology.tmpfs_member = 0;
  options.seed = Seeds({5})[0];
  options.steps = {FaultStep{FaultKind::kDiskFull, 8000, 6000},
                   FaultStep{FaultKind::kPauseLeader, 3000, 5000},
                   FaultStep{FaultKind::kDiskFull, 8000, 6000}};
  RunAndCheck(options);
}

// The paused-member black hole (issue 16): a stopped leader keeps its queue
// subscriptions (most of the write ones: its weight) until its nats-server
// drops the connection (minutes: it goes on delivering to it, which counts
// as activity, so its pings never find it stale), and what the server hands
// it meanwhile is never answered. The C client sends writes to the leader
// that answered its last write (P.to.<leader>.*) and, when that one does
// not answer, to the queue group, where any member hands them to the new
// leader, which the reply names: from two election timeouts into the
// pause, once one of its writes reached the new leader, every later write
// of the client succeeds at its first attempt. Through the queue group
// alone about half of the attempts time out.
void ExpectPausedLeaderReleasesItsRequests(const TopologyOptions& topology) {
  FaultCluster cluster(topology);
  ASSERT_TRUE(cluster.Start());
  const int leader = cluster.LeaderIndex();
  ASSERT_GE(leader, 0);
  constexpr int64_t kAttemptMs = 1000;  // the harness's clients' settings
  natcdClient* client = ConnectClient(cluster.ClientUrls(), kAttemptMs, 3);
  ASSERT_NE(client, nullptr);
  ASSERT_EQ(natcdKV_Put(nullptr, client, NATCD_STR("black-hole/before"), NATCD_STR("v"), nullptr),
            natcdStatus_OK);
  const auto paused_at = std::chrono::steady_clock::now();
  cluster.PauseMember(leader);
  std::this_thread::sleep_until(paused_at +
                                std::chrono::milliseconds(2 * topology.election_timeout_ms));
  int new_leader = cluster.LeaderIndex();
  for (int i = 0; i < 100 && new_leader == leader; i++) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    new_leader = cluster.LeaderIndex();
  }
  EXPECT_NE(new_leader, leader) << "no other member took over\n" << cluster.Logs();
  // Until one of its writes reaches the new leader, a client's attempts go
  // through the queue group, where the paused leader still takes about half
  // of them: bounded here, not measured.
  bool learnt = false;
  for (int i = 0; i < 20 && !learnt; i++) {
    const std::string key = "black-hole/first/" + std::to_string(i);
    learnt =
        natcdKV_Put(nullptr, client, key.data(), key.size(), "v", 1, nullptr) == natcdStatus_OK;
  }
  ASSERT_TRUE(learnt) << "no write reached another leader\n" << cluster.Logs();
  constexpr int kWrites = 30;
  int ok = 0;
  int slow = 0;  // writes that took an attempt's timeout
  std::string failures;
  for (int i = 0; i < kWrites; i++) {
    const std::string key = "black-hole/" + std::to_string(i);
    const auto begin = std::chrono::steady_clock::now();
    if (natcdKV_Put(nullptr, client, key.data(), key.size(), "v", 1, nullptr) == natcdStatus_OK) {
      ok++;
    } else {
      natcdError e;
      natcd_GetLastError(&e);
      failures += "  " + key + ": " + e.text + "\n";
    }
    const auto took = std::chrono::steady_clock::now() - begin;
    if (took >= std::chrono::milliseconds(kAttemptMs)) {
      slow++;
      failures += "  " + key + " took " +
                  std::to_string(std::chrono::duration<double>(took).count()) + " s\n";
    }
  }
  const double paused_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - paused_at).count();
  cluster.ResumeMember(leader);
  DestroyClient(client);
  EXPECT_EQ(ok, kWrites) << failures;
  EXPECT_EQ(slow, 0) << "the leader paused " << paused_s << " s:\n" << failures;
}

TEST(Faults, PausedLeaderReleasesItsRequestsOnOneServer) {
  ExpectPausedLeaderReleasesItsRequests(OneServer(3));
}

// The same on the NATS cluster; in make check-faults (make test keeps the
// one-server case: its time budget).
TEST(FaultsLongChecks, PausedLeaderReleasesItsRequestsOnNatsCluster) {
  if (!LongEnabled()) GTEST_SKIP() << "NATCD_FAULT_LONG=1 (make check-faults) runs it";
  ExpectPausedLeaderReleasesItsRequests(NatsCluster());
}

// A paused follower held its share of the linearizable reads (a third of
// them, from the queue group) until it ran again: each cost its client an
// attempt's timeout. The C client now sends them to the leader it learnt
// from its last write, as it sends writes, so none meets the follower.
TEST(Faults, PausedFollowerHoldsNoLinearizableReads) {
  const TopologyOptions topology = OneServer(3);
  FaultCluster cluster(topology);
  ASSERT_TRUE(cluster.Start());
  const int leader = cluster.LeaderIndex();
  ASSERT_GE(leader, 0);
  const int follower = (leader + 1) % topology.members;
  constexpr int64_t kAttemptMs = 1000;
  natcdClient* client = ConnectClient(cluster.ClientUrls(), kAttemptMs, 3);
  ASSERT_NE(client, nullptr);
  ASSERT_EQ(natcdKV_Put(nullptr, client, NATCD_STR("paused-follower/k"), NATCD_STR("v"), nullptr),
            natcdStatus_OK);
  cluster.PauseMember(follower);
  constexpr int kReads = 30;
  int ok = 0;
  int slow = 0;
  for (int i = 0; i < kReads; i++) {
    const auto begin = std::chrono::steady_clock::now();
    natcdRangeResponse* resp = nullptr;
    ok += natcdKV_Get(&resp, client, NATCD_STR("paused-follower/k"), nullptr) == natcdStatus_OK;
    natcdRangeResponse_Destroy(resp);
    slow += std::chrono::steady_clock::now() - begin >= std::chrono::milliseconds(kAttemptMs);
  }
  cluster.ResumeMember(follower);
  DestroyClient(client);
  EXPECT_EQ(ok, kReads);
  EXPECT_EQ(slow, 0) << "reads that waited for the paused follower";
}

// Issue 16: a leader whose disk is full held the cluster hostage: it went
// on sending heartbeats (they leave before its fsync), so nothing
// committed and no follower campaigned (0 of 9 writes in 8 s). A member
// that cannot persist now leaves Raft: from two election timeouts into the
// fault, every write succeeds through another leader. And once space is
// freed it comes back by itself, the same process: it answers its own
// status with a leader again and can lead again (before, it stayed out
// until restarted: its status was ErrStopped for good).
TEST(Faults, LeaderWithAFullDiskGivesWayAndServesAgainOnceFreed) {
  if (geteuid() != 0) GTEST_SKIP() << "mounting a tmpfs needs root";
  TopologyOptions topology = OneServer(3);
  topology.tmpfs_member = 0;
  FaultCluster cluster(topology);
  ASSERT_TRUE(cluster.Start());
  natcdClient* client = ConnectClient(cluster.ClientUrls(), 1000, 3);
  ASSERT_NE(client, nullptr);
  uint64_t full_member = 0;
  {
    natcdMemberResponse* list = nullptr;
    ASSERT_EQ(natcdMember_List(&list, client), natcdStatus_OK);
    for (size_t i = 0; i < list->n_members; i++) {
      if (cluster.MemberName(0) == list->members[i].name) full_member = list->members[i].id;
    }
    natcdMemberResponse_Destroy(list);
  }
  ASSERT_NE(full_member, 0u);
  // The member on the small disk leads.
  if (cluster.LeaderIndex() != 0) {
    ASSERT_EQ(natcdMaint_MoveLeader(nullptr, client, full_member), natcdStatus_OK);
  }
  for (int i = 0; i < 50 && cluster.LeaderIndex() != 0; i++) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(cluster.LeaderIndex(), 0);
  const pid_t pid = cluster.member_pid(0);
  ASSERT_EQ(natcdKV_Put(nullptr, client, NATCD_STR("disk-full/before"), NATCD_STR("v"), nullptr),
            natcdStatus_OK);
  using Clock = std::chrono::steady_clock;
  const auto full_at = Clock::now();
  ASSERT_TRUE(cluster.FillDisk(0));
  // Writes meanwhile, not counted: the leader learns that its disk is full
  // when it next writes. The longest time without a successful write is the
  // fault's availability window.
  const auto counted_from = full_at + std::chrono::milliseconds(2 * topology.election_timeout_ms);
  auto last_ok = full_at;
  Clock::duration window{};
  auto put = [&](const std::string& key) {
    const bool ok =
        natcdKV_Put(nullptr, client, key.data(), key.size(), "v", 1, nullptr) == natcdStatus_OK;
    if (ok) {
      window = std::max(window, Clock::now() - last_ok);
      last_ok = Clock::now();
    }
    return ok;
  };
  for (int i = 0; Clock::now() < counted_from; i++)
    (void)put("disk-full/early/" + std::to_string(i));
  constexpr int kWrites = 30;
  int ok = 0;
  std::string failures;
  for (int i = 0; i < kWrites; i++) {
    const std::string key = "disk-full/" + std::to_string(i);
    if (put(key)) {
      ok++;
    } else {
      natcdError e;
      natcd_GetLastError(&e);
      failures += "  " + key + ": " + e.text + "\n";
    }
  }
  const int leader = cluster.LeaderIndex();
  EXPECT_EQ(ok, kWrites) << failures << cluster.Logs();
  EXPECT_NE(leader, 0) << "the member with the full disk still leads";
  // Out of the cluster: its own status is refused.
  natcdStatusResponse* status = nullptr;
  EXPECT_NE(natcdMaint_MemberStatus(&status, client, full_member), natcdStatus_OK);
  natcdStatusResponse_Destroy(status);
  status = nullptr;

  const auto freed_at = Clock::now();
  cluster.FreeDisk(0);
  // Back within the rejoin backoff (it doubles from 1 s to 10 s while the
  // disk is full: a few seconds here) and a catch-up.
  const auto give_up = freed_at + std::chrono::seconds(20);
  bool serving = false;
  while (!serving && Clock::now() < give_up) {
    if (natcdMaint_MemberStatus(&status, client, full_member) == natcdStatus_OK) {
      serving = status->leader != 0 && status->n_errors == 0;
    }
    natcdStatusResponse_Destroy(status);
    status = nullptr;
    if (!serving) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const auto serving_at = Clock::now();
  ASSERT_TRUE(serving) << "not back 20 s after its disk was freed\n" << cluster.Logs();
  // It takes writes again as the leader, caught up, in the same process.
  EXPECT_EQ(natcdMaint_MoveLeader(nullptr, client, full_member), natcdStatus_OK);
  EXPECT_EQ(natcdKV_Put(nullptr, client, NATCD_STR("disk-full/after"), NATCD_STR("v"), nullptr),
            natcdStatus_OK);
  EXPECT_EQ(cluster.LeaderIndex(), 0);
  EXPECT_EQ(cluster.member_pid(0), pid) << "restarted";
  DestroyClient(client);
  using std::chrono::duration;
  printf(
      "leader's disk full: no write succeeded for %.2f s at most (election timeout %d ms); "
      "serving again %.2f s after space was freed\n",
      duration<double>(window).count(), topology.election_timeout_ms,
      duration<double>(serving_at - freed_at).count());
}

// --- make check-faults: long and random schedules ----------------------------

struct LongCase {
  const char* name;
  TopologyOptions topology;
  std::vector<FaultKind> kinds;
};

class FaultsLong : public ::testing::TestWithParam<LongCase> {};

TEST_P(FaultsLong, RandomSchedule) {
  if (!LongEnabled()) GTEST_SKIP() << "NATCD_FAULT_LONG=1 (make check-faults) runs it";
  const int64_t duration_s = std::stoll(Env("NATCD_FAULT_DURATION_S", "120"));
  for (uint64_t seed : Seeds(TimeSeeds(3))) {
    RunOptions options;
    options.topology = GetParam().topology;
    options.kinds = GetParam().kinds;
    options.seed = seed;
    options.schedule_ms = duration_s * 1000;
    options.min_fault_ms = 2000;
    options.max_fault_ms = 18'000;
    RunAndCheck(options);
    if (HasFailure()) break;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Topologies, FaultsLong,
    ::testing::Values(LongCase{"ThreeMembersOneServer", OneServer(3), kMemberFaults},
                      LongCase{"FiveMembersOneServer", OneServer(5), kMemberFaults},
                      LongCase{
                          "ThreeMembersThreeServers",
                          NatsCluster(),
                          {FaultKind::kPauseLeader, FaultKind::kPauseFollower,
                           FaultKind::kKillLeader, FaultKind::kKillServer, FaultKind::kCutRoutes}}),
    [](const ::testing::TestParamInfo<LongCase>& info) { return std::string(info.param.name); });

struct AvailabilityCase {
  const char* name;
  TopologyOptions topology;
  FaultKind kind;
};

class FaultsAvailability : public ::testing::TestWithParam<AvailabilityCase> {};

TEST_P(FaultsAvailability, OneFault) {
  if (!LongEnabled()) GTEST_SKIP() << "NATCD_FAULT_LONG=1 (make check-faults) runs it";
  const int64_t hold_s = std::stoll(Env("NATCD_FAULT_HOLD_S", "15"));
  RunOptions options;
  options.topology = GetParam().topology;
  options.seed = Seeds({7})[0];
  options.warmup_ms = 4000;
  options.steps = {FaultStep{GetParam().kind, hold_s * 1000, 8000}};
  RunResult result = RunAndCheck(options);
  ASSERT_EQ(result.availability.size(), 1u);
  const Availability& a = result.availability[0];
  std::cout << "AVAILABILITY " << GetParam().name << ": " << a.ToString() << "\n";
  const std::string min = Env("NATCD_FAULT_MIN_AVAILABILITY");
  if (!min.empty()) {
    EXPECT_GE(a.share_ok(), std::stod(min)) << a.ToString();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Faults, FaultsAvailability,
    ::testing::Values(AvailabilityCase{"PauseLeader", OneServer(3), FaultKind::kPauseLeader},
                      AvailabilityCase{"PauseFollower", OneServer(3), FaultKind::kPauseFollower},
                      AvailabilityCase{"KillLeader", OneServer(3), FaultKind::kKillLeader},
                      AvailabilityCase{"FreezeLeader", OneServer(3), FaultKind::kFreezeLeader},
                      AvailabilityCase{"KillServer", NatsCluster(), FaultKind::kKillServer},
                      AvailabilityCase{"PauseLeaderOnNatsCluster", NatsCluster(),
                                       FaultKind::kPauseLeader}),
    [](const ::testing::TestParamInfo<AvailabilityCase>& info) {
      return std::string(info.param.name);
    });

}  // namespace
}  // namespace natcd::testing
