// What every call of the gRPC front end needs: the member it hands requests
// to, the clock their deadlines run on, and what responses carry.
//
// Thread safety: fixed before the server starts, then read only.
#pragma once

#include <cstddef>

#include "adapters/grpc/etcd_codec.h"
#include "natcd/clock.h"
#include "server/member.h"

namespace natcd::etcd_api {

class HealthWatchers;
class LeaderMonitor;
class LiveCalls;
class WatchRegistry;

struct CallContext {
  server::Member* member = nullptr;
  Clock* clock = nullptr;
  ResponseInfo response;
  // etcd's --max-request-bytes: a larger request is refused.
  size_t request_bytes_max = 1'572'864;
  // etcd's --bcrypt-cost.
  int bcrypt_cost = 10;
  // The watches of every Watch stream (member thread).
  WatchRegistry* watches = nullptr;
  // The open streams, ended when the server stops.
  LiveCalls* live = nullptr;
  // The open streams that require a leader.
  LeaderMonitor* leader_monitor = nullptr;
  // The open Health/Watch streams.
  HealthWatchers* health = nullptr;
};

}  // namespace natcd::etcd_api
