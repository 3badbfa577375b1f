// The workloads of issue 5, written once for every target: what each one
// sends (its operation and how many requests are in flight), the keys and
// values it uses, and how big a run is (--quick or full).
//
// Keys: every key is "<space>/<6-digit index>"; natcd and etcd see it as
// "/bench/<space>/<index>", JetStream KV (whose keys are subject tokens) as
// "<space>.<index>". Puts and gets go to 10,000 distinct keys of space "k";
// a range reads the 100 keys of one block "/bench/k/00bb" (bb = 00..99).
// Values are 100 bytes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace natcd::bench {

// One request a target knows how to send; request number i picks its key.
enum class Op {
  kPut,              // put k/(i mod 10,000)
  kGet,              // linearizable point read of k/(i mod 10,000)
  kGetSerializable,  // the same, served from the member's local state
  kRange100,         // the 100 keys of block i mod 100
  kWatchPut,         // put w/(i mod 1,000), the value starting with the send time
  kLeaseGrant,       // grant lease number i (kept by the target)
  kPutLeased,        // put l/i attached to lease number i
  kKeepAlive,        // renew the target's keep-alive lease
  kFill,             // put f/i: distinct keys, to measure the footprint
};

inline constexpr uint64_t kDataKeys = 10'000;
inline constexpr uint64_t kWatchKeys = 1'000;
inline constexpr uint64_t kRangeKeys = 100;
inline constexpr size_t kValueBytes = 100;
// TTL of the leases the grant workload takes: none expires during a run.
inline constexpr int64_t kGrantTtlS = 60;

// The index part of a key: six digits, zero-padded.
std::string KeyIndex(uint64_t i);
// The key op's request i writes or reads ("k/000042"), without the
// target's own prefix or separator. Not for kRange100 or kKeepAlive.
std::string KeyOf(Op op, uint64_t i);
// "/bench/" + key: the form natcd and etcd use.
std::string SlashKey(const std::string& key);
// key with '/' as '.': the form JetStream KV uses.
std::string DotKey(const std::string& key);
// The half-open range [key, range_end) of range request i, slash form: the
// 100 data keys "/bench/k/00bb00".."/bench/k/00bb99" under one prefix.
struct KeyRange {
  std::string key;
  std::string range_end;
};
KeyRange RangeOf(uint64_t i);
// etcd's prefix end: the prefix with its last byte incremented (bytes 0xff
// dropped first); "\0" when there is none (every key >= prefix).
std::string PrefixEnd(std::string prefix);

// The 100-byte value of request i. A watch put's value starts with the send
// time (steady clock, ns, little-endian), which the watchers read back to
// measure the lag.
std::string ValueOf(uint64_t i);
std::string TimestampedValue(int64_t now_ns);
// The time a TimestampedValue carries, if it is long enough.
std::optional<int64_t> TimestampOf(const void* data, size_t len);

// How big a run is. Full: the sizes; quick: small enough that every
// workload against every system ends in under two minutes.
struct Scale {
  int64_t load_ms;  // each closed-loop workload
  uint64_t load_requests_max;
  std::vector<int> watchers;  // fan-out sizes
  int64_t watch_ms;           // the writer's time per fan-out size
  uint64_t expiry_leases;     // leases expiring together (workload 7)
  int64_t expiry_ttl_s;       // their TTL: longer than granting them takes
  int64_t expiry_wait_s_max;
  uint64_t footprint_keys;  // workload 8
  int64_t fsync_ms;         // the fsync floor's run
};
Scale FullScale();
Scale QuickScale();

// A workload of the issue as the bench runs it.
enum class Kind {
  kLoad,       // closed loop: `inflight` requests of `op` outstanding
  kCas,        // `clients` clients incrementing one counter by compare-and-swap
  kFanout,     // one writer, N watchers of one prefix (N from Scale::watchers)
  kExpiry,     // leases expiring together
  kFootprint,  // RSS and disk after Scale::footprint_keys keys
};
struct Workload {
  int number;        // the numbering, 1-8
  std::string name;  // as --workloads names it
  Kind kind;
  Op op = Op::kPut;
  int inflight = 1;  // kLoad: requests in flight; kCas: clients
};

// Every workload in the order a run goes through them.
const std::vector<Workload>& AllWorkloads();
// The workloads named in a comma-separated list ("all" = every one), in
// AllWorkloads' order; nullopt and *unknown set to the first unknown name.
std::optional<std::vector<Workload>> SelectWorkloads(const std::string& csv, std::string* unknown);

}  // namespace natcd::bench
