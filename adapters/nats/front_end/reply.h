// Publishing replies and error replies, and reading an error reply back.
// Thread-safe (natsConnection is).
#pragma once

#include <nats/nats.h>

#include <string>

#include "adapters/nats/codec/service_error.h"

namespace natcd::nats {

inline constexpr const char* kServiceErrorHeader = "Nats-Service-Error";
inline constexpr const char* kServiceErrorCodeHeader = "Nats-Service-Error-Code";
inline constexpr const char* kCompactRevisionHeader = "Natcd-Compact-Revision";

// Publishes body to reply (nothing when reply is null or empty); with
// Content-Type: application/json when json.
natsStatus Respond(natsConnection* nc, const char* reply, const std::string& body, bool json);
// An error reply: empty body and the NATS service-error headers.
natsStatus RespondError(natsConnection* nc, const char* reply, const ServiceError& error);
// The message RespondError publishes (the caller destroys *out).
natsStatus ErrorReplyMessage(const char* reply, const ServiceError& error, natsMsg** out);
// Reads an error reply back: true, with *error set, when `msg` carries
// Nats-Service-Error-Code; false for a success reply.
bool ReadErrorReply(natsMsg* msg, ServiceError* error);

}  // namespace natcd::nats
