// What a member remembers about an idempotent write (Engine::RememberRequest
// stores these bytes in SQLite under the request id), so that a retry to any
// member gets the first attempt's answer.
//
// DO NOT CHANGE: persisted. tests/core/server/request_outcome_test.cc pins
// every form.
//
// Written now: 'O' followed by a protobuf-wire message of natcd's own:
//   1  kind              varint  WriteKind of the response   (success only)
//   2  response          bytes   the natcd.v1 response        (success only)
//                                (server/write_response_codec.h)
//   3  code              varint  Status::Code, never 0        (error only)
//   4  name              bytes   etcd's error name, "ErrCompacted"
//   5  message           bytes   etcd's error message
//   6  compact_revision  varint  Status::compact_revision()    (if not 0)
// Why: the engine's own code and fields, not a transport's HTTP-like code,
// so every front end answers a retry as it answers the first attempt (a
// replayed ErrCompacted keeps its compact revision); the response as the
// natcd.v1 (= etcdserverpb) message without the answering member's
// identity, which is the replying member's to stamp; the kind, so a request
// id reused for another kind of write is noticed instead of misread; a
// distinct first byte, so rows of the deployed version keep their meaning.
//
// Read as well (rows of the deployed version, alive until they expire):
//   'R' + the natcd.v1 response message of the retried request's kind, with
//       the first member's header identity (dropped);
//   'E' + the three-digit NATS service-error code + "ErrName: message"
//       (adapters/nats/codec/service_error.cc). The code and the name give back
//       the Status::Code (400 splits by name into kFutureRevision,
//       kNotFound, kLeaseTTLTooLarge and kInvalidArgument; 503 into kNotLeader,
//       kBusy and kUnavailable; 500 into kIOError, kCorruption and
//       kInternal; 404 kLeaseNotFound, 408 kTimeout, 409 kLeaseExists, 410
//       kCompacted, 413 kTooLarge, 429 kTooManyRequests; anything else
//       kInternal), and an ErrCompacted's compact revision is read back out
//       of its text. Names are matched here only because this old form kept
//       nothing else.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "natcd/engine.h"
#include "natcd/status.h"
#include "server/write_kind.h"

namespace natcd::server {

std::string EncodeOutcome(const Result<WriteResponse>& outcome);

// The remembered answer for a retry that expects a `expected` response: the
// response, or the error the first attempt got. A new-form success of
// another kind is InvalidArgument (the request id was reused for a
// different write); bytes that are none of the forms are Internal
// ("remembered outcome does not decode: ...").
Result<WriteResponse> DecodeOutcome(std::string_view bytes, WriteKind expected);

}  // namespace natcd::server
