// A system under test, behind which every workload is written once: natcd
// over NATS, JetStream KV on the same nats-server, etcd over gRPC, and the
// NATS echo floor. A target translates the bench's operations (workload.h)
// into its own API; what it cannot do (JetStream KV has no leases and no
// range reads) it says through Supports, and the report shows "n/a".
//
// Thread safety: Issue may be called from any thread, including from inside
// ReplySink::OnReply; a slot has at most one request outstanding. The other
// calls are made from one thread, between loads.
#pragma once

#include <cstdint>
#include <string>

#include "plugin/natcd-bench/workload.h"

namespace natcd::bench {

// Where a target reports the end of a request. Called once per Issue, from
// the target's own thread (NATS delivery, gRPC callback); ok is false when
// the system answered with an error.
class ReplySink {
 public:
  virtual ~ReplySink() = default;
  virtual void OnReply(int slot, bool ok) = 0;
};

// Where watchers report each event's value (any thread, concurrently).
class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void OnEvent(const void* value, size_t len) = 0;
};

// The counter of the compare-and-swap workload as a client last saw it.
struct Counter {
  int64_t revision = 0;  // the system's version of it: mod revision / stream sequence
  int64_t value = 0;
};

enum class CasOutcome { kSwapped, kConflict, kError };

// What a closed-loop load (load.h) drives: the sending part of a target.
// Apart from Target so that a plain loader (key_loader.h) can use the same
// closed loop without the workloads' other calls.
class LoadTarget {
 public:
  virtual ~LoadTarget() = default;
  // BeginLoad prepares `slots` concurrent requests whose replies go to
  // `sink`; Issue sends request i of op on a slot; EndLoad returns when no
  // reply can reach the sink any more (outstanding ones are abandoned after
  // a bounded wait).
  virtual bool BeginLoad(int slots, ReplySink* sink) = 0;
  virtual void Issue(int slot, Op op, uint64_t i) = 0;
  virtual void EndLoad() = 0;
};

class Target : public LoadTarget {
 public:
  // The name in the report ("natcd", "etcd", "JetStream KV", ...).
  virtual std::string name() const = 0;
  virtual bool Supports(Op op) const = 0;

  // Grants the lease that Op::kKeepAlive renews. Leases of Op::kLeaseGrant
  // request i are kept under i (up to `leases`, reserved by
  // ReserveLeases before the load) for Op::kPutLeased.
  virtual bool PrepareKeepAlive() { return false; }
  virtual void ReserveLeases(uint64_t /*leases*/) {}
  // TTL of the leases Op::kLeaseGrant grants (kGrantTtlS unless set).
  virtual void SetLeaseTtl(int64_t /*seconds*/) {}

  // The compare-and-swap counter: sync calls, any thread.
  virtual bool ResetCounter() = 0;
  virtual bool ReadCounter(Counter* out) = 0;
  // Writes seen.value + 1 if the counter is still at seen.revision; on a
  // conflict *now is the counter's current state when the system tells it
  // (else re-read).
  virtual CasOutcome SwapCounter(const Counter& seen, Counter* now, bool* now_known) = 0;

  // Watchers of every key Op::kWatchPut writes, created before the writer
  // starts; each event's value goes to sink. CloseWatchers cancels them;
  // no event reaches the sink after it returns.
  virtual bool OpenWatchers(int watchers, EventSink* sink) = 0;
  virtual void CloseWatchers() = 0;
  // Gaps the watchers saw in their group's group_seq since OpenWatchers
  // (messages NATS dropped: those events are lost to the run) and how
  // many messages they spanned; zeros for a target without watch groups.
  struct WatchGaps {
    uint64_t gaps = 0;
    uint64_t messages_missed = 0;
  };
  virtual WatchGaps WatchGapsSeen() const { return {}; }

  // How many keys of space ("l") exist now; -1 if the target cannot count.
  virtual int64_t CountKeys(const std::string& /*space*/) { return -1; }
};

}  // namespace natcd::bench
