// What the raised alarms refuse, as etcd's appliers: applierV3Corrupt (with
// CORRUPT raised, every KV and lease request: ErrCorrupt) and
// applierV3Capped (with NOSPACE raised, a put, a txn with a put, a lease
// grant: ErrNoSpace). Checked when an entry is applied, so every member
// refuses the same entries (the alarm set is replicated state), and by the
// member when a request arrives, so a refused request costs no log entry.
// Deletes, compaction, lease revokes and checkpoints, reads of the
// maintenance calls and the alarms themselves are never refused by NOSPACE.
//
// Thread safety: pure functions.
#pragma once

#include "alarm/alarm_store.h"
#include "natcd/engine.h"
#include "natcd/status.h"

namespace natcd {

// OK, or the error the raised alarms answer the write with (it must then
// change nothing). A lease checkpoint is never refused (it only records a
// deadline).
Status AlarmRefusal(const AlarmStore& alarms, const WriteRequest& request);

// What a write would add to the database (backend_quota.h); 0 for one that
// does not grow it.
int64_t WriteCost(const WriteRequest& request);

}  // namespace natcd
