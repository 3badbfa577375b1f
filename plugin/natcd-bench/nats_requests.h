// Pipelined request-reply over one NATS connection, for the targets that
// speak NATS (natcd, JetStream KV, the echo floor): one subscription on a
// private inbox wildcard, slot s replying to "<inbox>.<s>", so a load of
// any size costs one subscription and no per-request state in nats.c.
// natsConnection_Request would block a thread per request in flight.
//
// Thread safety: Send from any thread; Begin and End from one.
#pragma once

#include <nats/nats.h>

#include <functional>
#include <string>
#include <vector>

#include "plugin/natcd-bench/target.h"

namespace natcd::bench {

class NatsRequests {
 public:
  // Decides whether a reply is a success.
  using Judge = std::function<bool(int slot, natsMsg* reply)>;

  bool Begin(natsConnection* nc, int slots, ReplySink* sink, Judge judge);
  // Publishes a request whose reply goes to slot's inbox.
  void Send(int slot, const char* subject, const void* data, int len);
  // Unsubscribes after draining what has arrived; no callback after.
  void End();

 private:
  static void OnReply(natsConnection*, natsSubscription*, natsMsg* msg, void* closure);

  natsConnection* nc_ = nullptr;
  natsSubscription* sub_ = nullptr;
  ReplySink* sink_ = nullptr;
  Judge judge_;
  std::string inbox_;  // "<inbox>."
  std::vector<std::string> reply_subjects_;
};

// Whether a reply is an answer: a Nats-Service-Error-Code header marks a
// micro-service error, a "Status: 503" header the server's no responders.
bool NoServiceError(natsMsg* reply);

// Connects to url with the options every NATS target uses (send at once,
// no pending limits on delivery); nullptr on failure, with a message.
natsConnection* ConnectNats(const std::string& url, bool global_delivery = false);

}  // namespace natcd::bench
