// The one place where an engine Status becomes a NATS service error: the
// HTTP-like code for `Nats-Service-Error-Code` and the text for
// `Nats-Service-Error` ("ErrName: message", etcd's error names).
#pragma once

#include <cstdint>
#include <string>

#include "natcd/status.h"

namespace natcd::nats {

struct ServiceError {
  int code = 500;
  std::string text;
  // ErrCompacted: the compact revision, sent as Natcd-Compact-Revision.
  int64_t compact_revision = 0;
};

// Codes: 400 invalid argument, 404 lease not found, 408 timeout, 409 lease
// exists, 410 compacted, 413 too large, 429 too many requests, 503 no leader
// or unavailable, 500 internal.
ServiceError ToServiceError(const Status& status);

}  // namespace natcd::nats
