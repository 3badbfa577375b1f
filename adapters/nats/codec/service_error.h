// The one place where an engine Status becomes a NATS service error (and
// back): the HTTP-like code for `Nats-Service-Error-Code` and the text for
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

// The Status an error reply stands for, back: a member reads the leader's
// error reply to a request it handed over, so that the request's own front
// end answers it as the leader's would. The name and message come from the
// text ("ErrName: message"; the text is the message when it has no
// ": "); the code from the number, split by name where ToServiceError
// joins several (400: kFutureRevision, kLeaseTTLTooLarge, kNotFound for
// the NotFound names, else kInvalidArgument; 503: kNotLeader, kBusy, else
// kUnavailable; 500: kIOError, kCorruption, else kInternal); a number it
// does not know is kInternal. An ErrCompacted keeps its compact revision
// (error.compact_revision, else its message's) when its message is the
// engine's.
Status FromServiceError(const ServiceError& error);

}  // namespace natcd::nats
