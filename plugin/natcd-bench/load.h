// A closed-loop load against a target (target.h): keeps `inflight`
// requests of one operation outstanding, each reply releasing the next
// request, until `total` requests are answered or `max_ms` has passed.
// Latency is measured from send to reply for every request.
#pragma once

#include <cstdint>

#include "plugin/natcd-bench/histogram.h"
#include "plugin/natcd-bench/target.h"

namespace natcd::bench {

struct LoadResult {
  uint64_t completed = 0;  // replies, errors included
  uint64_t errors = 0;     // replies that were errors
  uint64_t timeouts = 0;   // requests never answered
  double seconds = 0;
  Histogram latency;  // successful requests only
  double per_second() const { return seconds > 0 ? (completed - errors) / seconds : 0; }
};

struct LoadSpec {
  Op op = Op::kPut;
  int inflight = 1;
  uint64_t first = 0;  // request numbers first .. first + total - 1
  uint64_t total = 10'000;
  int64_t max_ms = 10'000;
};

LoadResult RunLoad(LoadTarget& target, const LoadSpec& spec);

}  // namespace natcd::bench
