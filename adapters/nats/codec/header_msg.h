// NATS messages with headers, built from header bytes encoded here.
//
// nats.c's public way to give a message headers (natsMsgHeader_Set) keeps
// them in a hash map: per header a copy of the name, a value record and a
// copy of the value, and a map that grows past four entries, all freed again
// on nats.c's garbage-collector thread after the publish. For the live event
// stream (one message with five or six headers per committed write) that was
// a quarter of natcd's CPU under write load: more than applying the write.
//
// HeaderMsgBuilder encodes the header block itself ("NATS/1.0\r\n",
// "Name: value\r\n" lines, "\r\n") and hands it with the body to nats.c's
// message constructor, the one nats.c uses for the messages it receives:
// one allocation, and nats.c publishes the bytes as they are (HPUB). That
// constructor is not in nats.c's public headers, so it is used only when the
// nats.c this was compiled against is the one loaded at run time and is a
// 3.x release (its signature has been the same since headers came in 3.0),
// and after a self-check at construction (a message built this way must read
// back the same headers and body through the public API). Otherwise every
// message is built with natsMsgHeader_Set: the same bytes on the wire.
//
// Values must not hold CR or LF (nats.c would turn them into spaces); the
// callers' values (numbers, hex, escaped keys) never do.
#pragma once

#include <nats/nats.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace natcd::nats {

class HeaderMsgBuilder {
 public:
  // Runs the self-check; force_public_api skips the fast path (tests).
  explicit HeaderMsgBuilder(bool force_public_api = false);

  // Whether messages are built from encoded bytes (the fast path).
  bool encodes_headers() const { return encodes_headers_; }

  // Starts a message; then Add its headers; then Build it.
  void Reset();
  void Add(std::string_view name, std::string_view value);
  // A message on `subject` with the headers added since Reset and `body`.
  // The caller destroys it (natsMsg_Destroy).
  natsStatus Build(natsMsg** msg, const std::string& subject, std::string_view body);

 private:
  bool encodes_headers_ = false;
  // Fast path: the header block, then (while building) the body after it.
  std::string encoded_;
  // Public path: the headers as pairs.
  std::vector<std::pair<std::string, std::string>> pairs_;
};

}  // namespace natcd::nats
