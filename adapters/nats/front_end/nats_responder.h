// How a request that arrived over NATS is answered: the member's Responder
// for it, holding the NATS message until the reply (or the relay of the
// leader's reply, when a follower forwarded it) has gone out.
//
// Thread safety: built on the nats.c thread that received the request;
// then used by one thread at a time (the member thread, or the peer
// transport's thread relaying a forwarded answer).
#pragma once

#include <nats/nats.h>

#include <cstdint>
#include <string>

#include "adapters/nats/codec/convert.h"
#include "adapters/nats/codec/endpoint.h"
#include "server/request.h"

namespace natcd::nats {

// What every reply of this member needs, fixed at start.
struct ReplyContext {
  natsConnection* nc = nullptr;           // replies written at once
  natsConnection* buffered_nc = nullptr;  // replies of busy turns, written together
  HeaderInfo header;                      // cluster and member ID (the term comes per reply)
  std::string version;                    // StatusResponse.version
  std::string prefix;                     // P, for the members' peer URLs
  std::string cluster_name;
};

// Monotonic nanoseconds, for endpoint statistics.
int64_t StatsNowNs();

class NatsResponder final : public server::Responder {
 public:
  // Takes ownership of msg.
  NatsResponder(const ReplyContext* context, Endpoint* endpoint, natsMsg* msg, bool json, int hops)
      : context_(context),
        endpoint_(endpoint),
        msg_(msg),
        json_(json),
        hops_(hops),
        received_ns_(StatsNowNs()) {}
  ~NatsResponder() override { natsMsg_Destroy(msg_); }
  NatsResponder(const NatsResponder&) = delete;
  NatsResponder& operator=(const NatsResponder&) = delete;

  void Respond(Result<server::Response> response, const server::ResponseContext& context) override;
  // The leader's answer to this request, forwarded: sent to the client as
  // it is (counted here, where the client's request arrived).
  void Relay(natsMsg* answer);
  // Answers the front end gives itself (watches, refusals at the edge).
  void RespondBody(const std::string& body) { Send(context_->nc, &body, Status::OK()); }
  void RespondStatus(const Status& status) { Send(context_->nc, nullptr, status); }

  natsMsg* message() const { return msg_; }
  Endpoint* endpoint() const { return endpoint_; }
  int hops() const { return hops_; }
  bool json() const { return json_; }

 private:
  void Record(const std::string* error);
  // The body, or the error when status is not OK.
  void Send(natsConnection* via, const std::string* body, const Status& status);

  const ReplyContext* const context_;
  Endpoint* const endpoint_;
  natsMsg* const msg_;
  const bool json_;
  const int hops_;
  const int64_t received_ns_;
};

// The reply body of a member response, for the endpoint that asked.
std::string EncodeResponse(const server::Response& response, const ReplyContext& context,
                           uint64_t raft_term, bool json);

}  // namespace natcd::nats
