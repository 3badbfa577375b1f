#include "alarm/capped_apply.h"

#include "alarm/alarm_errors.h"
#include "alarm/backend_quota.h"

namespace natcd {

int64_t WriteCost(const WriteRequest& request) {
  if (const auto* put = std::get_if<PutRequest>(&request)) return QuotaCost(*put);
  if (const auto* txn = std::get_if<TxnRequest>(&request)) return QuotaCost(*txn);
  if (const auto* grant = std::get_if<LeaseGrantRequest>(&request)) return QuotaCost(*grant);
  return 0;
}

Status AlarmRefusal(const AlarmStore& alarms, const WriteRequest& request) {
  if (std::holds_alternative<LeaseCheckpointRequest>(request)) return Status::OK();
  if (alarms.Any(AlarmType::kCorrupt)) return alarm::ErrCorrupt();
  if (alarms.Any(AlarmType::kNoSpace) && WriteCost(request) > 0) return alarm::ErrNoSpace();
  return Status::OK();
}

}  // namespace natcd
