// The data model and the requests/responses of the engine, mirroring etcd's
// v3 API (mvccpb and etcdserverpb) by name and meaning. These are plain C++
// values; the NATS adapter converts them to and from natcd.proto.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace natcd {

// A key's state at one revision. version is 1 on create, +1 per put, and the
// key is absent (version 0) after a delete.
struct KeyValue {
  std::string key;
  int64_t create_revision = 0;
  int64_t mod_revision = 0;
  int64_t version = 0;
  std::string value;
  int64_t lease = 0;

  bool operator==(const KeyValue&) const = default;
};

struct Event {
  // DO NOT CHANGE: persisted (as the tombstone flag) and on the wire.
  enum class Type : uint8_t { kPut = 0, kDelete = 1 };
  Type type = Type::kPut;
  // For a delete: key and mod_revision (the deletion's revision) only.
  KeyValue kv;
  // The key's previous state; set only when the watcher asked for prev_kv
  // and the previous state existed.
  bool has_prev_kv = false;
  KeyValue prev_kv;

  bool operator==(const Event&) const = default;
};

// As in etcd, a store that was never written is at revision 1, so the
// first write gets revision 2: etcd's clients rely on it (concurrency's
// Election and Mutex wait for keys created before "their revision - 1",
// and 0 there means no bound).
inline constexpr int64_t kEmptyStoreRevision = 1;

struct ResponseHeader {
  int64_t revision = 0;  // the store revision when the request was served
};

// ---- KV -------------------------------------------------------------------

enum class SortOrder : uint8_t { kNone = 0, kAscend = 1, kDescend = 2 };
enum class SortTarget : uint8_t { kKey = 0, kVersion = 1, kCreate = 2, kMod = 3, kValue = 4 };

// Reads [key, range_end). range_end empty: the single key. range_end "\0":
// every key >= key. revision <= 0: the current revision.
struct RangeRequest {
  std::string key;
  std::string range_end;
  int64_t limit = 0;
  int64_t revision = 0;
  SortOrder sort_order = SortOrder::kNone;
  SortTarget sort_target = SortTarget::kKey;
  bool serializable = false;
  bool keys_only = false;
  bool count_only = false;
  int64_t min_mod_revision = 0;
  int64_t max_mod_revision = 0;
  int64_t min_create_revision = 0;
  int64_t max_create_revision = 0;
};

struct RangeResponse {
  ResponseHeader header;
  std::vector<KeyValue> kvs;
  bool more = false;  // more keys matched than limit returned
  int64_t count = 0;  // keys in the range at the revision (ignores limit and min/max filters)
};

struct PutRequest {
  std::string key;
  std::string value;
  int64_t lease = 0;
  bool prev_kv = false;
  bool ignore_value = false;
  bool ignore_lease = false;
};

struct PutResponse {
  ResponseHeader header;
  bool has_prev_kv = false;
  KeyValue prev_kv;
};

struct DeleteRangeRequest {
  std::string key;
  std::string range_end;
  bool prev_kv = false;
};

struct DeleteRangeResponse {
  ResponseHeader header;
  int64_t deleted = 0;
  std::vector<KeyValue> prev_kvs;
};

struct Compare {
  // DO NOT CHANGE: wire values (etcd's Compare.CompareResult/CompareTarget).
  enum class Result : uint8_t { kEqual = 0, kGreater = 1, kLess = 2, kNotEqual = 3 };
  enum class Target : uint8_t { kVersion = 0, kCreate = 1, kMod = 2, kValue = 3, kLease = 4 };
  Result result = Result::kEqual;
  Target target = Target::kVersion;
  std::string key;
  std::string range_end;  // empty: key alone; else every key in [key, range_end)
  int64_t version = 0;
  int64_t create_revision = 0;
  int64_t mod_revision = 0;
  std::string value;
  int64_t lease = 0;
};

struct TxnRequest;
struct TxnResponse;

// One operation of a txn branch. Exactly one alternative is set.
struct RequestOp {
  std::variant<RangeRequest, PutRequest, DeleteRangeRequest, std::shared_ptr<TxnRequest>> op;
};

struct ResponseOp {
  std::variant<RangeResponse, PutResponse, DeleteRangeResponse, std::shared_ptr<TxnResponse>>
      response;
};

struct TxnRequest {
  std::vector<Compare> compare;
  std::vector<RequestOp> success;
  std::vector<RequestOp> failure;
};

struct TxnResponse {
  ResponseHeader header;
  bool succeeded = false;
  std::vector<ResponseOp> responses;
};

struct CompactionRequest {
  int64_t revision = 0;
  bool physical = false;
};

struct CompactionResponse {
  ResponseHeader header;
};

// ---- Leases -----------------------------------------------------------------

struct LeaseGrantRequest {
  int64_t ttl = 0;  // seconds
  int64_t id = 0;   // 0: the server picks
};

struct LeaseGrantResponse {
  ResponseHeader header;
  int64_t id = 0;
  int64_t ttl = 0;  // seconds, after the minimum was applied
};

struct LeaseRevokeRequest {
  int64_t id = 0;
};

struct LeaseRevokeResponse {
  ResponseHeader header;
};

struct LeaseKeepAliveRequest {
  int64_t id = 0;
};

struct LeaseKeepAliveResponse {
  ResponseHeader header;
  int64_t id = 0;
  int64_t ttl = 0;  // seconds; 0 when the lease does not exist (etcd)
};

struct LeaseTimeToLiveRequest {
  int64_t id = 0;
  bool keys = false;
};

struct LeaseTimeToLiveResponse {
  ResponseHeader header;
  int64_t id = 0;
  int64_t ttl = -1;  // remaining seconds; -1 when the lease does not exist (etcd)
  int64_t granted_ttl = 0;
  std::vector<std::string> keys;
};

struct LeaseLeasesResponse {
  ResponseHeader header;
  std::vector<int64_t> ids;
};

// ---- Maintenance (member-local: each member answers for its own state) ----

// etcd's HashKV: a hash of the MVCC state up to a revision, equal on every
// member that applied the same log (see KvStore::HashKV for what it covers).
struct HashKVRequest {
  int64_t revision = 0;  // 0: the current revision
};

struct HashKVResponse {
  ResponseHeader header;
  uint32_t hash = 0;
  // The compaction in force when the hash was taken (0: none; etcd says -1).
  int64_t compact_revision = 0;
  // The revision hashed up to (the current one for revision 0).
  int64_t hash_revision = 0;
};

// etcd's Hash (testing only): a hash of the whole stored state.
struct HashRequest {};

struct HashResponse {
  ResponseHeader header;
  uint32_t hash = 0;
};

// etcd's Defragment: gives the pages compaction freed back to the file system.
struct DefragmentRequest {};

struct DefragmentResponse {
  ResponseHeader header;
};

// Internal entries that only the leader proposes.

// Revokes every listed lease that still exists: the batched expiry. Each
// revoked lease with attached keys takes one revision.
struct LeaseExpireRequest {
  std::vector<int64_t> ids;
};

// Records the remaining TTL of leases so that a restart or a new leader does
// not give an abandoned lease its full TTL again.
struct LeaseCheckpointRequest {
  struct Checkpoint {
    int64_t id = 0;
    int64_t remaining_ms = 0;
  };
  std::vector<Checkpoint> checkpoints;
};

}  // namespace natcd
