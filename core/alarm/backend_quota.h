// The backend quota, as etcd 3.5's (server/etcdserver/quota.go and
// --quota-backend-bytes): what a request would add to the database, and
// whether the member's database has room for it.
//
// Cost, etcd's estimate: a put costs kvOverhead (256) + its key + its value;
// a txn the larger of its two branches' puts (natcd counts the puts of
// nested txns too: etcd 3.5 has no nested txns); a lease grant
// leaseOverhead (64); anything else 0 (it never grows the store: reads,
// deletes, compaction, lease revoke, alarms). A request is refused when
// size + cost >= quota (etcd's Available is size + cost < quota), size being
// the database file's size as `endpoint status` reports it
// (Engine::DatabaseSizeBytes), so compaction and defragmentation give room
// back.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>

#include "natcd/types.h"

namespace natcd {

// etcd's DefaultQuotaBytes (2 GiB) and MaxQuotaBytes (8 GiB, above which
// etcd warns at start).
inline constexpr int64_t kDefaultQuotaBytes = int64_t{2} << 30;
inline constexpr int64_t kMaxQuotaBytes = int64_t{8} << 30;
// etcd's kvOverhead and leaseOverhead.
inline constexpr int64_t kKvOverheadBytes = 256;
inline constexpr int64_t kLeaseOverheadBytes = 64;

// The quota --quota-backend-bytes asks for: 0 means etcd's default, a
// negative value no quota (returned as 0).
int64_t QuotaBytesFromFlag(int64_t flag);

// What the request would add.
int64_t QuotaCost(const PutRequest& request);
int64_t QuotaCost(const TxnRequest& request);  // 0: no put in either branch
int64_t QuotaCost(const LeaseGrantRequest& request);

// Whether a database of db_size_bytes has room for cost more under quota
// (quota_bytes <= 0: no quota; cost 0 always has room).
bool QuotaAvailable(int64_t quota_bytes, int64_t db_size_bytes, int64_t cost);

}  // namespace natcd
