// The workloads that are more than one closed loop: compare-and-swap
// contention, watch fan-out and leases expiring together. Each drives a
// Target only through its interface, so every system runs the same code.
#pragma once

#include <cstdint>

#include "plugin/natcd-bench/histogram.h"
#include "plugin/natcd-bench/load.h"
#include "plugin/natcd-bench/target.h"

namespace natcd::bench {

// Workload 5: `clients` threads, each reading the counter and then trying
// compare-and-swap until it succeeds, for duration_ms.
struct CasResult {
  uint64_t increments = 0;  // successful swaps
  uint64_t conflicts = 0;   // swaps that lost a race
  uint64_t errors = 0;
  double seconds = 0;
  int64_t final_value = -1;  // the counter read back at the end
  double per_second() const { return seconds > 0 ? increments / seconds : 0; }
};
CasResult RunCas(Target& target, int clients, int64_t duration_ms);

// Workload 6: `watchers` watchers of one prefix and one writer with up to
// `window` puts in flight for duration_ms, then a wait (up to 10 s) until
// every watcher has every event. Lag: from sending a put to a watcher
// receiving its event.
//
// Unpaced, the writer goes as fast as puts are answered: the events/s is
// the system's fan-out capacity, but when the watchers fall behind, the lag
// is that of a queue growing for as long as the run lasts. Paced, the writer
// also never has more than `window` puts' events undelivered, so it runs as
// fast as the slowest watcher keeps up, and the lag is the system's at a
// rate it sustains.
struct FanoutResult {
  int watchers = 0;
  uint64_t writes = 0;
  uint64_t delivered = 0;  // events received, all watchers together
  uint64_t expected = 0;   // writes x watchers
  double seconds = 0;      // first write to last delivery (or giving up)
  Histogram lag;           // a sample: every watchers-th event
  Target::WatchGaps gaps;  // in watch groups' group_seq
  double per_second() const { return seconds > 0 ? delivered / seconds : 0; }
};
FanoutResult RunFanout(Target& target, int watchers, int window, int64_t duration_ms, bool paced);

// Workload 7's mass expiry: grants `leases` leases with ttl_s, puts one key
// on each, and measures how long after the last lease was due every key is
// gone (polled every 50 ms, for at most wait_s_max).
struct ExpiryResult {
  uint64_t granted = 0;
  uint64_t attached = 0;        // keys put on a live lease
  double setup_seconds = 0;     // granting and attaching
  double seconds_to_gone = -1;  // after the last lease was due; -1 = not within the wait
  int64_t keys_left = -1;       // when giving up
};
ExpiryResult RunExpiry(Target& target, uint64_t leases, int64_t ttl_s, int64_t wait_s_max);

}  // namespace natcd::bench
