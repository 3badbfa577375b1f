#include "alarm/alarm_store.h"

#include <sqlite3.h>

#include <cstring>
#include <string>

#include "storage/sqlite_backend.h"

namespace natcd {
namespace {

// DO NOT CHANGE: persisted.
constexpr const char* kAlarmSchema = R"sql(
CREATE TABLE IF NOT EXISTS alarm (
  member_id INTEGER NOT NULL,
  type INTEGER NOT NULL,
  PRIMARY KEY (member_id, type)
) WITHOUT ROWID;
)sql";

int64_t AsStored(uint64_t member_id) {
  int64_t v;
  std::memcpy(&v, &member_id, sizeof v);
  return v;
}

uint64_t FromStored(int64_t stored) {
  uint64_t v;
  std::memcpy(&v, &stored, sizeof v);
  return v;
}

// Runs one statement with (member_id, type) bound, to completion.
Status Run(sqlite3* db, const char* sql, const AlarmMember& alarm) {
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr);
  if (rc == SQLITE_OK) {
    sqlite3_bind_int64(stmt, 1, AsStored(alarm.member_id));
    sqlite3_bind_int64(stmt, 2, static_cast<int64_t>(alarm.alarm));
    rc = sqlite3_step(stmt);
    if (rc == SQLITE_DONE) rc = SQLITE_OK;
  }
  Status s = rc == SQLITE_OK ? Status::OK() : SqliteStatus(db, rc, sql);
  sqlite3_finalize(stmt);
  return s;
}

}  // namespace

Status AlarmStore::Check(const AlarmChange& change) {
  if (change.action != AlarmAction::kActivate && change.action != AlarmAction::kDeactivate) {
    return Status::InvalidArgument(
        "ErrInvalidArgument",
        "etcdserver: unknown alarm action " + std::to_string(static_cast<int>(change.action)));
  }
  if (change.alarm != AlarmType::kNoSpace && change.alarm != AlarmType::kCorrupt) {
    return Status::InvalidArgument("ErrInvalidArgument",
                                   "etcdserver: unknown alarm type " +
                                       std::to_string(static_cast<int>(change.alarm)) +
                                       " (NOSPACE or CORRUPT)");
  }
  return Status::OK();
}

Status AlarmStore::Load() {
  sqlite3* db = backend_->handle();
  char* err = nullptr;
  int rc = sqlite3_exec(db, kAlarmSchema, nullptr, nullptr, &err);
  sqlite3_free(err);
  if (rc != SQLITE_OK) return SqliteStatus(db, rc, "create alarm table");
  sqlite3_stmt* stmt = nullptr;
  rc = sqlite3_prepare_v2(db, "SELECT member_id, type FROM alarm", -1, &stmt, nullptr);
  if (rc != SQLITE_OK) return SqliteStatus(db, rc, "read alarms");
  alarms_.clear();
  Status s;
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    const int64_t type = sqlite3_column_int64(stmt, 1);
    if (type <= 0 || type > kAlarmTypeMax) {
      s = Status::Corruption("alarm table: unknown alarm type " + std::to_string(type));
      break;
    }
    alarms_.insert(
        AlarmMember{FromStored(sqlite3_column_int64(stmt, 0)), static_cast<AlarmType>(type)});
  }
  if (s.ok() && rc != SQLITE_DONE) s = SqliteStatus(db, rc, "read alarms");
  sqlite3_finalize(stmt);
  return s;
}

Status AlarmStore::Apply(const AlarmChange& change) {
  NATCD_RETURN_IF_ERROR(Check(change));
  const AlarmMember alarm{change.member_id, change.alarm};
  if (change.action == AlarmAction::kActivate) {
    if (alarms_.count(alarm)) return Status::OK();
    NATCD_RETURN_IF_ERROR(
        Run(backend_->handle(), "INSERT INTO alarm (member_id, type) VALUES (?, ?)", alarm));
    alarms_.insert(alarm);
    return Status::OK();
  }
  if (!alarms_.count(alarm)) return Status::OK();
  NATCD_RETURN_IF_ERROR(
      Run(backend_->handle(), "DELETE FROM alarm WHERE member_id = ? AND type = ?", alarm));
  alarms_.erase(alarm);
  return Status::OK();
}

bool AlarmStore::Any(AlarmType type) const {
  for (const AlarmMember& a : alarms_) {
    if (a.alarm == type) return true;
  }
  return false;
}

}  // namespace natcd
