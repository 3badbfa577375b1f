#include "adapters/nats/front_end/reply.h"

#include <cstdlib>
#include <string>

#include "adapters/nats/codec/wire.h"

namespace natcd::nats {

natsStatus Respond(natsConnection* nc, const char* reply, const std::string& body, bool json) {
  if (reply == nullptr || reply[0] == '\0') return NATS_OK;
  if (!json) {
    return natsConnection_Publish(nc, reply, body.data(), static_cast<int>(body.size()));
  }
  natsMsg* msg = nullptr;
  natsStatus s = natsMsg_Create(&msg, reply, nullptr, body.data(), static_cast<int>(body.size()));
  if (s == NATS_OK) s = natsMsgHeader_Set(msg, kContentTypeHeader, kJsonContentType);
  if (s == NATS_OK) s = natsConnection_PublishMsg(nc, msg);
  natsMsg_Destroy(msg);
  return s;
}

natsStatus ErrorReplyMessage(const char* reply, const ServiceError& error, natsMsg** out) {
  natsMsg* msg = nullptr;
  std::string code = std::to_string(error.code);
  // Header values cannot hold line breaks.
  std::string text = error.text;
  for (char& c : text) {
    if (c == '\r' || c == '\n') c = ' ';
  }
  natsStatus s = natsMsg_Create(&msg, reply, nullptr, nullptr, 0);
  if (s == NATS_OK) s = natsMsgHeader_Set(msg, kServiceErrorCodeHeader, code.c_str());
  if (s == NATS_OK) s = natsMsgHeader_Set(msg, kServiceErrorHeader, text.c_str());
  if (s == NATS_OK && error.compact_revision > 0) {
    s = natsMsgHeader_Set(msg, kCompactRevisionHeader,
                          std::to_string(error.compact_revision).c_str());
  }
  if (s != NATS_OK) {
    natsMsg_Destroy(msg);
    return s;
  }
  *out = msg;
  return NATS_OK;
}

natsStatus RespondError(natsConnection* nc, const char* reply, const ServiceError& error) {
  if (reply == nullptr || reply[0] == '\0') return NATS_OK;
  natsMsg* msg = nullptr;
  natsStatus s = ErrorReplyMessage(reply, error, &msg);
  if (s == NATS_OK) s = natsConnection_PublishMsg(nc, msg);
  natsMsg_Destroy(msg);
  return s;
}

bool ReadErrorReply(natsMsg* msg, ServiceError* error) {
  const char* value = nullptr;
  if (natsMsgHeader_Get(msg, kServiceErrorCodeHeader, &value) != NATS_OK || value == nullptr) {
    return false;
  }
  *error = ServiceError();
  error->code = atoi(value);
  if (natsMsgHeader_Get(msg, kServiceErrorHeader, &value) == NATS_OK && value != nullptr) {
    error->text = value;
  }
  if (natsMsgHeader_Get(msg, kCompactRevisionHeader, &value) == NATS_OK && value != nullptr) {
    error->compact_revision = strtoll(value, nullptr, 10);
  }
  return true;
}

}  // namespace natcd::nats
