// A minimal natcd client for integration tests: nats.c requests carrying
// protobuf (or JSON) bodies, with the reply's service-error headers parsed.
// It speaks the wire contract directly, as a client in any language would.
#pragma once

#include <nats/nats.h>
#include <protobuf-c/protobuf-c.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "adapters/nats/natcd.pb-c.h"

namespace natcd::testing {

struct WireReply {
  int code = 0;       // Nats-Service-Error-Code; 0: success; -1: no reply (timeout...)
  std::string error;  // Nats-Service-Error
  std::string body;
  std::string content_type;
  int64_t compact_revision = 0;  // Natcd-Compact-Revision (410 only)
  bool ok() const { return code == 0; }
};

template <typename T>
struct MessageFree {
  void operator()(T* m) const { protobuf_c_message_free_unpacked(&m->base, nullptr); }
};
template <typename T>
using Unpacked = std::unique_ptr<T, MessageFree<T>>;

class WireClient {
 public:
  // url: one server, or several comma-separated.
  explicit WireClient(const std::string& url, std::string prefix = "natcd");
  ~WireClient();
  WireClient(const WireClient&) = delete;
  WireClient& operator=(const WireClient&) = delete;
  bool connected() const { return nc_ != nullptr; }
  natsConnection* nc() const { return nc_; }
  // prefix + "." + suffix
  std::string Subject(const std::string& suffix) const { return prefix_ + "." + suffix; }

  WireReply Raw(const std::string& subject, const std::string& body,
                const std::vector<std::pair<std::string, std::string>>& headers = {},
                int timeout_ms = 5000);
  // Packs the message (or writes its JSON when json) and sends it to P.suffix.
  WireReply Call(const std::string& suffix, const ProtobufCMessage* message,
                 const std::string& request_id = "", bool json = false);

  template <typename T>
  static Unpacked<T> Decode(const ProtobufCMessageDescriptor* descriptor, const WireReply& reply) {
    auto* m = protobuf_c_message_unpack(descriptor, nullptr, reply.body.size(),
                                        reinterpret_cast<const uint8_t*>(reply.body.data()));
    return Unpacked<T>(reinterpret_cast<T*>(m));
  }

  // Conveniences; each fails the current test on an unexpected reply.
  int64_t Put(const std::string& key, const std::string& value, int64_t lease = 0);
  Unpacked<Natcd__V1__RangeResponse> Range(const std::string& key,
                                           const std::string& range_end = "", int64_t revision = 0);
  int64_t Delete(const std::string& key, const std::string& range_end = "");
  int64_t Grant(int64_t ttl_s);

 private:
  std::string prefix_;
  natsConnection* nc_ = nullptr;
};

// Points at s's bytes: s must outlive the use (never a temporary).
ProtobufCBinaryData Bytes(const std::string& s);
// Points at a string literal (or any NUL-terminated string that outlives the
// use); chosen over the std::string overload for literals, which would
// otherwise bind to a temporary.
ProtobufCBinaryData Bytes(const char* s);

}  // namespace natcd::testing
