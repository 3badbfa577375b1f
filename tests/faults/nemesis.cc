#include "faults/nemesis.h"

#include <chrono>
#include <sstream>
#include <thread>

namespace natcd::testing {
namespace {

constexpr FaultKind kAllKinds[] = {
    FaultKind::kKillLeader,     FaultKind::kKillFollower, FaultKind::kPauseLeader,
    FaultKind::kPauseFollower,  FaultKind::kKillServer,   FaultKind::kCutLeader,
    FaultKind::kCutFollower,    FaultKind::kCutRoutes,    FaultKind::kFreezeLeader,
    FaultKind::kFreezeFollower, FaultKind::kDiskFull,
};

void SleepMs(int64_t ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

}  // namespace

const char* FaultName(FaultKind kind) {
  switch (kind) {
    case FaultKind::kKillLeader:
      return "kill-leader";
    case FaultKind::kKillFollower:
      return "kill-follower";
    case FaultKind::kPauseLeader:
      return "pause-leader";
    case FaultKind::kPauseFollower:
      return "pause-follower";
    case FaultKind::kKillServer:
      return "kill-server";
    case FaultKind::kCutLeader:
      return "cut-leader";
    case FaultKind::kCutFollower:
      return "cut-follower";
    case FaultKind::kCutRoutes:
      return "cut-routes";
    case FaultKind::kFreezeLeader:
      return "freeze-leader";
    case FaultKind::kFreezeFollower:
      return "freeze-follower";
    case FaultKind::kDiskFull:
      return "disk-full";
  }
  return "?";
}

std::optional<FaultKind> ParseFault(const std::string& name) {
  for (FaultKind kind : kAllKinds) {
    if (name == FaultName(kind)) return kind;
  }
  return std::nullopt;
}

std::vector<FaultStep> MakeSchedule(uint64_t seed, const std::vector<FaultKind>& kinds,
                                    int64_t total_ms, int64_t min_ms, int64_t max_ms,
                                    int64_t quiet_ms) {
  // A generator of its own, apart from the nemesis's target choices: the
  // schedule printed for a seed is the schedule run.
  std::mt19937_64 rng(seed ^ 0x5eed5c4ed01eULL);
  std::vector<FaultStep> steps;
  int64_t used = 0;
  while (used < total_ms || steps.empty()) {
    FaultStep step;
    step.kind = kinds[rng() % kinds.size()];
    step.duration_ms = min_ms + static_cast<int64_t>(rng() % (max_ms - min_ms + 1));
    step.quiet_ms = quiet_ms;
    used += step.duration_ms + step.quiet_ms;
    steps.push_back(step);
  }
  return steps;
}

std::vector<FaultStep> ShuffledSchedule(uint64_t seed, const std::vector<FaultKind>& kinds,
                                        int64_t min_ms, int64_t max_ms, int64_t quiet_ms) {
  std::mt19937_64 rng(seed ^ 0x5eed5c4ed01eULL);
  std::vector<FaultStep> steps;
  for (FaultKind kind : kinds) {
    steps.push_back(
        FaultStep{kind, min_ms + static_cast<int64_t>(rng() % (max_ms - min_ms + 1)), quiet_ms});
  }
  // Fisher-Yates with the same generator (std::shuffle's draws are not
  // specified across library versions).
  for (size_t i = steps.size(); i > 1; i--) std::swap(steps[i - 1], steps[rng() % i]);
  return steps;
}

std::string ScheduleToString(const std::vector<FaultStep>& steps) {
  std::ostringstream out;
  for (size_t i = 0; i < steps.size(); i++) {
    out << (i ? ", " : "") << FaultName(steps[i].kind) << " " << steps[i].duration_ms << " ms";
  }
  return out.str();
}

int Nemesis::PickOther(int not_this, int n) {
  int pick = static_cast<int>(rng_() % (n - (not_this >= 0 ? 1 : 0)));
  if (not_this >= 0 && pick >= not_this) pick++;
  return pick;
}

::testing::AssertionResult Nemesis::Apply(const FaultStep& step, FaultRecord* record) {
  FaultCluster& c = *cluster_;
  record->kind = FaultName(step.kind);
  const bool on_leader =
      step.kind == FaultKind::kKillLeader || step.kind == FaultKind::kPauseLeader ||
      step.kind == FaultKind::kCutLeader || step.kind == FaultKind::kFreezeLeader;
  const bool on_member = on_leader || step.kind == FaultKind::kKillFollower ||
                         step.kind == FaultKind::kPauseFollower ||
                         step.kind == FaultKind::kCutFollower ||
                         step.kind == FaultKind::kFreezeFollower;
  // The random draw happens whatever the fault, so that later choices do
  // not depend on who led.
  const int leader = c.LeaderIndex();
  const int other = PickOther(leader, c.members());
  const int server = static_cast<int>(rng_() % c.servers());
  int member = -1;
  if (on_member) {
    member = on_leader ? (leader >= 0 ? leader : other) : other;
    record->target = c.MemberName(member);
    if (on_leader && leader < 0) record->target += " (no leader known)";
  } else if (step.kind == FaultKind::kDiskFull) {
    member = c.options().tmpfs_member;
    record->target = member >= 0 ? c.MemberName(member) : "(no tmpfs member)";
    if (member == leader) record->target += " (leader)";
  } else {
    record->target = "nats-" + std::to_string(server);
  }
  record->begin_us = clock_->NowUs();
  ::testing::AssertionResult begun = ::testing::AssertionSuccess();
  switch (step.kind) {
    case FaultKind::kKillLeader:
    case FaultKind::kKillFollower:
      c.KillMember(member);
      break;
    case FaultKind::kPauseLeader:
    case FaultKind::kPauseFollower:
      c.PauseMember(member);
      break;
    case FaultKind::kCutLeader:
    case FaultKind::kCutFollower:
      c.CutMember(member);
      break;
    case FaultKind::kFreezeLeader:
    case FaultKind::kFreezeFollower:
      c.FreezeMember(member);
      break;
    case FaultKind::kKillServer:
      c.KillServer(server);
      break;
    case FaultKind::kCutRoutes:
      c.CutRoutes(server);
      break;
    case FaultKind::kDiskFull:
      if (member >= 0) begun = c.FillDisk(member);
      break;
  }
  if (!begun) return begun << " (" << record->kind << ")";
  SleepMs(step.duration_ms);
  ::testing::AssertionResult healed = ::testing::AssertionSuccess();
  switch (step.kind) {
    case FaultKind::kKillLeader:
    case FaultKind::kKillFollower:
      healed = c.RestartMember(member);
      break;
    case FaultKind::kPauseLeader:
    case FaultKind::kPauseFollower:
      c.ResumeMember(member);
      break;
    case FaultKind::kCutLeader:
    case FaultKind::kCutFollower:
    case FaultKind::kFreezeLeader:
    case FaultKind::kFreezeFollower:
      c.HealMember(member);
      break;
    case FaultKind::kKillServer:
      healed = c.RestartServer(server);
      break;
    case FaultKind::kCutRoutes:
      c.HealRoutes(server);
      break;
    case FaultKind::kDiskFull:
      if (member >= 0) c.FreeDisk(member);
      break;
  }
  record->end_us = clock_->NowUs();
  SleepMs(step.quiet_ms);
  if (!healed) return healed << " (healing " << record->kind << " " << record->target << ")";
  return ::testing::AssertionSuccess();
}

}  // namespace natcd::testing
