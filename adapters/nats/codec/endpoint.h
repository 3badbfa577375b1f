// One request-reply endpoint of the wire contract and its statistics, as
// the NATS micro-services protocol (ADR-32) reports them.
#pragma once

#include <protobuf-c/protobuf-c.h>

#include <cstdint>
#include <string>

#include "metrics/histogram.h"
#include "natcd/mutex.h"

namespace natcd::nats {

enum class EndpointKind {
  kRange,
  kPut,
  kDeleteRange,
  kTxn,
  kCompact,
  kLeaseGrant,
  kLeaseRevoke,
  kLeaseKeepAlive,     // P.lease.keepalive: LeaseKeepAliveRequest
  kLeaseKeepAliveHex,  // P.lease.keepalive.<hex id>: any body
  kLeaseTimeToLive,
  kLeaseLeases,
  kWatchCreate,
  kWatchCancel,
  kWatchProgress,
  kWatchAck,
  kStatus,
  kHashKV,
  kHash,
  kDefragment,
  kMoveLeader,
  kMemberList,
  kMemberAdd,
  kMemberRemove,
  kMemberPromote,
  kMemberUpdate,
  kSnapshot,      // P.maint.snapshot: an online backup, chunk by chunk
  kAlarm,         // P.maint.alarm
  kAuthenticate,  // P.auth.authenticate: etcd's Authenticate
};

struct EndpointStats {
  uint64_t num_requests = 0;
  uint64_t num_errors = 0;
  std::string last_error;
  int64_t processing_time_ns = 0;
};

class Endpoint {
 public:
  Endpoint(std::string name, std::string subject, std::string queue_group, EndpointKind kind,
           const ProtobufCMessageDescriptor* request)
      : name_(std::move(name)),
        subject_(std::move(subject)),
        queue_group_(std::move(queue_group)),
        kind_(kind),
        request_(request) {}

  const std::string& name() const { return name_; }
  const std::string& subject() const { return subject_; }
  // Empty: every member receives every message (watch control, which only
  // the member holding the watch acts on).
  const std::string& queue_group() const { return queue_group_; }
  EndpointKind kind() const { return kind_; }
  // The body's message type; null when the body is ignored.
  const ProtobufCMessageDescriptor* request() const { return request_; }

  // Where Record also observes each request's duration (natcd_request_
  // duration_seconds{endpoint}); set before the endpoint serves.
  void SetLatencyHistogram(metrics::Histogram* histogram) { latency_ = histogram; }

  // Thread-safe: called from NATS callback threads and the engine thread.
  void Record(int64_t processing_ns, const std::string* error) {
    if (latency_ != nullptr) latency_->Observe(static_cast<double>(processing_ns) / 1e9);
    MutexLock lock(&mu_);
    ++stats_.num_requests;
    stats_.processing_time_ns += processing_ns;
    if (error != nullptr) {
      ++stats_.num_errors;
      stats_.last_error = *error;
    }
  }
  EndpointStats stats() const {
    MutexLock lock(&mu_);
    return stats_;
  }

 private:
  const std::string name_;
  const std::string subject_;
  const std::string queue_group_;
  const EndpointKind kind_;
  const ProtobufCMessageDescriptor* const request_;
  metrics::Histogram* latency_ = nullptr;
  mutable Mutex mu_;
  EndpointStats stats_ GUARDED_BY(mu_);
};

}  // namespace natcd::nats
