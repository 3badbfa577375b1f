// The permission checks etcd makes of a client request while auth is
// enabled (server/etcdserver/apply_auth.go and v3_server.go), for a user
// whose token was valid:
//  - Range: READ on its key or range. Put: WRITE on the key, READ too with
//    prev_kv, and WRITE on every key already attached to its lease (etcd's
//    checkLeasePuts). DeleteRange: WRITE on the range, READ too with
//    prev_kv. Txn: READ on each compare's key or range, and each op of
//    both branches (nested txns included) as above.
//  - LeaseRevoke: WRITE on every key attached to the lease.
//  - LeaseGrant, keepalives, TimeToLive, Leases, Compaction, Status,
//    MemberList: no check at all, not even of a token (etcd checks none of
//    them: a health check or `endpoint status` works without a user).
//  - Member add, remove and promote, MoveLeader, Hash, HashKV and
//    Defragment: the root role (etcd's admin).
// Auth requests have their own rules (member_auth.cc).
//
// Thread safety: the member thread (it reads the engine).
#pragma once

#include <string>

#include "auth/auth_store.h"
#include "natcd/engine.h"
#include "natcd/status.h"
#include "server/request.h"

namespace natcd::server {

// Whether the request is checked at all (the token must then name a user).
bool RequiresUser(const RequestPayload& payload);

// OK, or etcd's ErrPermissionDenied.
Status CheckRequestPermissions(Engine& engine, const std::string& user,
                               const RequestPayload& payload);

}  // namespace natcd::server
