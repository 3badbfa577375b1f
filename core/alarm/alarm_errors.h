// etcd's errors of the alarms (server/etcdserver/errors.go), as natcd
// Statuses: one place for their names and messages.
#pragma once

#include "natcd/status.h"

namespace natcd::alarm {

// A request that would grow the store while NOSPACE is raised, or past the
// quota (gRPC RESOURCE_EXHAUSTED).
inline Status ErrNoSpace() {
  return Status(Status::Code::kNoSpace, "ErrNoSpace", "etcdserver: mvcc: database space exceeded");
}

// A KV or lease request while CORRUPT is raised (gRPC DATA_LOSS).
inline Status ErrCorrupt() {
  return Status(Status::Code::kCorruption, "ErrCorrupt", "etcdserver: corrupt cluster");
}

}  // namespace natcd::alarm
