// A closed-loop request load over NATS: keeps `inflight` requests
// outstanding, each reply (matched by its inbox token) releasing the next
// request, until `total` requests are answered or `max_ms` has passed.
// Records every latency. One subscription on a private inbox wildcard, so
// the load costs one socket and no per-request subscription.
#pragma once

#include <nats/nats.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace natcd::bench {

struct LoadResult {
  uint64_t completed = 0;
  uint64_t errors = 0;  // replies with a Nats-Service-Error-Code header
  uint64_t timeouts = 0;
  double seconds = 0;
  std::vector<int64_t> latencies_ns;  // one per completed request
  double per_second() const { return seconds > 0 ? completed / seconds : 0; }
};

struct LoadSpec {
  std::string subject;
  // The body of request number i.
  std::function<std::string(uint64_t i)> body;
  std::vector<std::pair<std::string, std::string>> headers;
  int inflight = 1;
  uint64_t total = 10'000;
  int64_t max_ms = 10'000;
};

LoadResult RunLoad(natsConnection* nc, const LoadSpec& spec);

// p in [0, 100]; latencies need not be sorted (a copy is sorted).
int64_t Percentile(std::vector<int64_t> latencies_ns, double p);

}  // namespace natcd::bench
