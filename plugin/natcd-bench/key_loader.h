// Loads natcd with distinct keys as fast as a window of requests in flight
// allows: key i is "/load/k<i, 7 digits>" with the 100-byte value of
// request i (workload.h), one protobuf PutRequest on P.kv.put each, through
// the same pipelined requests (nats_requests.h) and closed loop (load.h)
// as the comparison's workloads. It fills a cluster before a member is
// added (catch_up.h), so the keys are apart from the workloads' /bench/.
//
// Thread safety: as a LoadTarget (target.h).
#pragma once

#include <nats/nats.h>

#include <cstdint>
#include <string>

#include "plugin/natcd-bench/load.h"
#include "plugin/natcd-bench/nats_requests.h"
#include "plugin/natcd-bench/target.h"

namespace natcd::bench {

// "/load/k0000042" for i = 42.
std::string LoadKey(uint64_t i);

class KeyLoader final : public LoadTarget {
 public:
  // nc is borrowed and must outlive the loader; prefix: natcd's subject
  // prefix ("natcd").
  KeyLoader(natsConnection* nc, std::string prefix);

  bool BeginLoad(int slots, ReplySink* sink) override;
  // Every request is a put of LoadKey(i), whatever op is.
  void Issue(int slot, Op op, uint64_t i) override;
  void EndLoad() override;

 private:
  natsConnection* const nc_;
  const std::string subject_;  // "<prefix>.kv.put"
  NatsRequests requests_;
};

// Puts keys 0 .. keys - 1 with `in_flight` requests outstanding, giving up
// after max_ms (what is left out is counted in timeouts).
LoadResult LoadKeys(natsConnection* nc, const std::string& prefix, uint64_t keys, int in_flight,
                    int64_t max_ms);

}  // namespace natcd::bench
