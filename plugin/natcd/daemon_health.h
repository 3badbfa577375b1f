// The daemon's HealthSource: what /health, /readyz and /livez look at.
//
//   API      the member's NATS connection is up (nats.c's connection
//            status: "NATS DISCONNECTED" otherwise), and P.maint.status
//            is answered within 1 s ("STATUS ERROR:<why>" otherwise)
//   leader   that answer names a leader
//   alarms   that answer's errors, which carry etcd's alarm texts
//
// P.maint.status goes to the member's queue group, so in a cluster another
// member may answer: the leader check is then the cluster's, as etcd's
// linearizable health read is. Once the member records
// etcd_server_has_leader itself (MemberMetrics::has_leader), the local
// gauge can stand in for the answer's leader field.
//
// Thread safety: Read may be called from any thread (the metrics
// listener's); the connection must outlive this object.
#pragma once

#include <nats/nats.h>

#include <string>

#include "metrics/health.h"

namespace natcd {

class DaemonHealth final : public metrics::HealthSource {
 public:
  DaemonHealth(natsConnection* nc, std::string prefix) : nc_(nc), prefix_(std::move(prefix)) {}

  metrics::HealthState Read(bool serializable) override;

 private:
  natsConnection* const nc_;
  const std::string prefix_;
};

}  // namespace natcd
