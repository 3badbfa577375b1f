#include "adapters/nats/codec/header_msg.h"

#include <cstring>

#if NATS_VERSION_MAJOR == 3
// nats.c's own message constructor (src/msg.h): `buf` holds `hdrLen` bytes of
// encoded headers followed by the body; the message keeps the encoded bytes
// and publishes them unchanged.
extern "C" natsStatus natsMsg_create(natsMsg** newMsg, const char* subject, int subjLen,
                                     const char* reply, int replyLen, const char* buf, int bufLen,
                                     int hdrLen);
#define NATCD_NATS_ENCODED_HEADERS 1
#endif

namespace natcd::nats {
namespace {

constexpr std::string_view kHeaderLine = "NATS/1.0\r\n";

#ifdef NATCD_NATS_ENCODED_HEADERS
natsStatus CreateEncoded(natsMsg** msg, const std::string& subject, const std::string& encoded,
                         size_t header_bytes) {
  return natsMsg_create(msg, subject.data(), static_cast<int>(subject.size()), nullptr, 0,
                        encoded.data(), static_cast<int>(encoded.size()),
                        static_cast<int>(header_bytes));
}

// A message built from encoded bytes reads back through the public API as
// the same headers and body.
bool EncodedHeadersWork() {
  if (nats_GetVersionNumber() != NATS_VERSION_NUMBER) return false;
  // The public constructors open the library themselves; the internal one
  // does not (natsMsg_Destroy needs its garbage collector). Idempotent.
  if (nats_Open(-1) != NATS_OK) return false;
  const std::string subject = "natcd.header.check";
  const std::string header_block = std::string(kHeaderLine) + "Natcd-Check: 42\r\n\r\n";
  const std::string encoded = header_block + "body";
  natsMsg* msg = nullptr;
  if (CreateEncoded(&msg, subject, encoded, header_block.size()) != NATS_OK) return false;
  const char* value = nullptr;
  const bool ok = natsMsgHeader_Get(msg, "Natcd-Check", &value) == NATS_OK && value != nullptr &&
                  std::strcmp(value, "42") == 0 && natsMsg_GetDataLength(msg) == 4 &&
                  std::memcmp(natsMsg_GetData(msg), "body", 4) == 0 &&
                  subject == natsMsg_GetSubject(msg) && natsMsg_GetReply(msg) == nullptr;
  natsMsg_Destroy(msg);
  return ok;
}
#endif

}  // namespace

HeaderMsgBuilder::HeaderMsgBuilder(bool force_public_api) {
#ifdef NATCD_NATS_ENCODED_HEADERS
  encodes_headers_ = !force_public_api && EncodedHeadersWork();
#else
  (void)force_public_api;
#endif
  Reset();
}

void HeaderMsgBuilder::Reset() {
  encoded_.assign(kHeaderLine);
  pairs_.clear();
}

void HeaderMsgBuilder::Add(std::string_view name, std::string_view value) {
  if (!encodes_headers_) {
    pairs_.emplace_back(name, value);
    return;
  }
  encoded_.append(name);
  encoded_.append(": ");
  encoded_.append(value);
  encoded_.append("\r\n");
}

natsStatus HeaderMsgBuilder::Build(natsMsg** msg, const std::string& subject,
                                   std::string_view body) {
  *msg = nullptr;
#ifdef NATCD_NATS_ENCODED_HEADERS
  if (encodes_headers_) {
    encoded_.append("\r\n");
    const size_t header_bytes = encoded_.size();
    encoded_.append(body);
    const natsStatus s = CreateEncoded(msg, subject, encoded_, header_bytes);
    encoded_.resize(header_bytes - 2);  // as it was: Build may be called again
    return s;
  }
#endif
  natsStatus s =
      natsMsg_Create(msg, subject.c_str(), nullptr, body.data(), static_cast<int>(body.size()));
  for (const auto& [name, value] : pairs_) {
    if (s == NATS_OK) s = natsMsgHeader_Add(*msg, name.c_str(), value.c_str());
  }
  if (s != NATS_OK) {
    natsMsg_Destroy(*msg);
    *msg = nullptr;
  }
  return s;
}

}  // namespace natcd::nats
