// Health: etcd's /health, /livez and /readyz verdicts (etcd 3.5,
// server/etcdserver/api/etcdhttp), computed from a snapshot of the member's
// state so that the verdict is the same whatever serves it (HTTP today).
//
//   /health   no alarm (but those excluded), a leader, the API answering
//   /readyz   the same
//   /livez    the same, the NOSPACE alarm always excluded (a full member is
//             alive)
//
// Query parameters, as etcd's: `exclude=<ALARM>` (repeatable) ignores that
// alarm; `serializable=true` skips the leader check (the local member
// alone). etcd's /readyz and /livez need no leader by name, but their
// check is a linearizable read, which without a leader fails; natcd's API
// check is not a read, so the leader check stands for it.
//
// The checks run in this order and the first failing one gives the reason:
// alarms ("ALARM NOSPACE", "ALARM CORRUPT", "ALARM UNKNOWN"), the API (the
// source's own reason, e.g. "NATS DISCONNECTED": without its transport a
// member sees no leader either, so the cause is reported, not the effect),
// then the leader ("RAFT NO LEADER").
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace natcd::metrics {

enum class HealthProbe { kHealth, kLivez, kReadyz };

// The member's state, as the checks need it.
struct HealthState {
  std::vector<std::string> alarms;  // raised alarms: "NOSPACE", "CORRUPT"
  bool has_leader = false;          // this member knows a leader
  std::string api_error;            // why the member cannot serve; empty: it can
};

// Reads the state; implemented by the program that runs the member.
// Called from the thread serving the probe: must be thread-safe and return
// within a bounded time.
class HealthSource {
 public:
  virtual ~HealthSource() = default;
  // serializable: the probe asked for the local member only
  // (`serializable=true`); a source may then skip a cluster-wide check.
  virtual HealthState Read(bool serializable) = 0;
};

struct HealthQuery {
  std::set<std::string> excluded_alarms;
  bool serializable = false;
};

struct HealthVerdict {
  bool healthy = false;
  std::string reason;  // empty when healthy
  // etcd's body: {"health":"true","reason":""}
  std::string Json() const;
};

HealthVerdict EvaluateHealth(HealthProbe probe, const HealthState& state, const HealthQuery& query);

// The alarm names in a StatusResponse's errors, which carry etcd's
// AlarmMember text ("memberID:10276657743932975437 alarm:NOSPACE ").
std::vector<std::string> AlarmsFromStatusErrors(const std::vector<std::string>& errors);

}  // namespace natcd::metrics
