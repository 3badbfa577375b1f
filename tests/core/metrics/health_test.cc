// etcd 3.5's health verdicts (server/etcdserver/api/etcdhttp/health.go).
#include "metrics/health.h"

#include <gtest/gtest.h>

namespace natcd::metrics {
namespace {

HealthState Healthy() { return {{}, /*has_leader=*/true, ""}; }

TEST(HealthTest, HealthyMemberAnswersTrue) {
  for (HealthProbe probe : {HealthProbe::kHealth, HealthProbe::kReadyz, HealthProbe::kLivez}) {
    HealthVerdict v = EvaluateHealth(probe, Healthy(), {});
    EXPECT_TRUE(v.healthy);
    EXPECT_EQ(v.Json(), R"({"health":"true","reason":""})");
  }
}

TEST(HealthTest, NoLeaderUnlessSerializable) {
  HealthState s = Healthy();
  s.has_leader = false;
  HealthVerdict v = EvaluateHealth(HealthProbe::kHealth, s, {});
  EXPECT_FALSE(v.healthy);
  EXPECT_EQ(v.Json(), R"({"health":"false","reason":"RAFT NO LEADER"})");
  EXPECT_FALSE(EvaluateHealth(HealthProbe::kReadyz, s, {}).healthy);
  HealthQuery serializable;
  serializable.serializable = true;
  EXPECT_TRUE(EvaluateHealth(HealthProbe::kHealth, s, serializable).healthy);
}

TEST(HealthTest, AlarmsComeFirstAndCanBeExcluded) {
  HealthState s = Healthy();
  s.alarms = {"NOSPACE"};
  s.has_leader = false;
  EXPECT_EQ(EvaluateHealth(HealthProbe::kHealth, s, {}).reason, "ALARM NOSPACE");
  // /livez always ignores NOSPACE: a full member is alive.
  EXPECT_EQ(EvaluateHealth(HealthProbe::kLivez, s, {}).reason, "RAFT NO LEADER");
  HealthQuery exclude;
  exclude.excluded_alarms = {"NOSPACE"};
  s.has_leader = true;
  EXPECT_TRUE(EvaluateHealth(HealthProbe::kHealth, s, exclude).healthy);
  s.alarms = {"CORRUPT"};
  EXPECT_EQ(EvaluateHealth(HealthProbe::kLivez, s, {}).reason, "ALARM CORRUPT");
  s.alarms = {"SOMETHING"};
  EXPECT_EQ(EvaluateHealth(HealthProbe::kReadyz, s, {}).reason, "ALARM UNKNOWN");
}

TEST(HealthTest, ApiErrorBeforeLeader) {
  HealthState s{{}, false, "NATS DISCONNECTED"};
  HealthVerdict v = EvaluateHealth(HealthProbe::kHealth, s, {});
  EXPECT_EQ(v.Json(), R"({"health":"false","reason":"NATS DISCONNECTED"})");
}

TEST(HealthTest, JsonEscapesReason) {
  HealthVerdict v{false, "a\"b\\c\nd"};
  EXPECT_EQ(v.Json(), R"({"health":"false","reason":"a\"b\\cd"})");
}

TEST(HealthTest, AlarmsFromStatusErrors) {
  EXPECT_EQ(AlarmsFromStatusErrors({"memberID:10276657743932975437 alarm:NOSPACE ",
                                    "something else", "alarm:CORRUPT"}),
            (std::vector<std::string>{"NOSPACE", "CORRUPT"}));
  EXPECT_TRUE(AlarmsFromStatusErrors({}).empty());
}

}  // namespace
}  // namespace natcd::metrics
