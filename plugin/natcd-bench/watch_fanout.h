// Watch fan-out: one writer, N watchers of one prefix over NATS. Every
// watcher acknowledges each message; each event's value carries the time it
// was written, so the delay from write to delivery (lag) is measured per
// event.
#pragma once

#include <nats/nats.h>

#include <cstdint>
#include <string>
#include <vector>

namespace natcd::bench {

struct FanoutResult {
  int watchers = 0;
  uint64_t writes = 0;
  uint64_t delivered = 0;  // events received, all watchers together
  double seconds = 0;
  std::vector<int64_t> lag_ns;  // a sample of write-to-delivery delays
  double per_second() const { return seconds > 0 ? delivered / seconds : 0; }
};

// Writes for duration_ms with `inflight` puts outstanding, then waits (up to
// 10 s) for every watcher to receive every event.
FanoutResult RunWatchFanout(natsConnection* nc, const std::string& prefix, int watchers,
                            int inflight, int64_t duration_ms);

}  // namespace natcd::bench
