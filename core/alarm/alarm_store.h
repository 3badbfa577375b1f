// AlarmStore: the replicated alarm set (natcd/alarm.h), as etcd's
// v3alarm.AlarmStore: which member has which alarm raised. Apply() is the
// state machine (deterministic: every member that applies the same changes
// holds the same set); the set lives in memory and, written through in the
// engine's open batch, in the engine's SQLite database, so a change is
// durable exactly when the log entry that made it is applied and a snapshot
// (the database shipped whole) carries it.
//
// Persisted format (DO NOT CHANGE: persisted; tests/core/alarm/
// alarm_store_test.cc pins it). The table is created when missing, so a
// data directory from before alarms opens with none raised:
//   alarm(member_id INTEGER, type INTEGER, PRIMARY KEY (member_id, type))
//     member_id: the member's 64-bit ID, stored as the signed integer of
//                the same bits (SQLite integers are signed)
//     type:      AlarmType (1 NOSPACE, 2 CORRUPT)
//
// Thread safety: none; owned by the engine, on the member thread.
#pragma once

#include <set>
#include <vector>

#include "natcd/alarm.h"
#include "natcd/status.h"

namespace natcd {

class SqliteBackend;

class AlarmStore {
 public:
  explicit AlarmStore(SqliteBackend* backend) : backend_(backend) {}

  // Reads the set (creating the table when missing; outside a batch).
  Status Load();

  // One replicated change (the backend's batch must be open). Activating
  // an alarm already raised, or deactivating one that is not, changes
  // nothing. InvalidArgument (and nothing changes) for an action other
  // than activate/deactivate or an alarm other than NOSPACE/CORRUPT.
  Status Apply(const AlarmChange& change);

  // Every raised alarm, by member ID then type.
  std::vector<AlarmMember> List() const { return {alarms_.begin(), alarms_.end()}; }
  bool Has(const AlarmMember& alarm) const { return alarms_.count(alarm) > 0; }
  // Whether any member has this alarm raised.
  bool Any(AlarmType type) const;

  // The change's validity, without applying it (the member checks a
  // request before proposing it with the same rules).
  static Status Check(const AlarmChange& change);

 private:
  SqliteBackend* backend_;
  std::set<AlarmMember> alarms_;
};

}  // namespace natcd
