// The daemon's HealthSource: what /health, /readyz and /livez look at.
//
//   API      the member's NATS connection is up (nats.c's connection
//            status: "NATS DISCONNECTED" otherwise), and the member answers
//            its own status subject, P.fwd.<member ID>.maint.status, within
//            1 s ("STATUS ERROR:<why>" otherwise)
//   leader   that answer names a leader
//   alarms   that answer's errors, which carry etcd's alarm texts
//
// The subject has no queue group: the answer is this member's, as etcd's
// /health is about the member it asks. Once the member records
// etcd_server_has_leader itself (MemberMetrics::has_leader), the local
// gauge could stand in for the answer's leader field, but not for the
// check that the member answers at all.
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
  // status_subject: P.fwd.<this member's ID>.maint.status.
  DaemonHealth(natsConnection* nc, std::string status_subject)
      : nc_(nc), status_subject_(std::move(status_subject)) {}

  metrics::HealthState Read(bool serializable) override;

 private:
  natsConnection* const nc_;
  const std::string status_subject_;
};

}  // namespace natcd
