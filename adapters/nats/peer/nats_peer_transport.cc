#include "adapters/nats/peer/nats_peer_transport.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "adapters/nats/codec/payload_codec.h"
#include "adapters/nats/codec/service_error.h"
#include "adapters/nats/front_end/nats_responder.h"
#include "adapters/nats/front_end/reply.h"
#include "adapters/nats/front_end/subscription_drain.h"
#include "adapters/nats/peer/raft_transport.h"
#include "server/raft_message_codec.h"

namespace natcd::nats {
namespace {

// Pending messages a subscription may buffer before nats.c drops (and
// counts) them as a slow consumer.
constexpr int kSubscriptionPendingMsgs = 1'000'000;
constexpr int kSubscriptionPendingBytes = 1 << 30;

std::string ForwardInbox(server::NodeId member_id, uint64_t nonce) {
  char n[17];
  snprintf(n, sizeof n, "%016llx", static_cast<unsigned long long>(nonce));
  return "_INBOX.natcd." + MemberHex(member_id) + "." + n + ".";
}

Status Stopped() { return Status::Unavailable("ErrStopped", "etcdserver: server stopped"); }

}  // namespace

NatsPeerTransport::NatsPeerTransport(natsConnection* nc, std::string prefix,
                                     std::string cluster_name, server::NodeId member_id,
                                     Clock* clock, int64_t request_timeout_ms, uint64_t nonce)
    : nc_(nc),
      prefix_(std::move(prefix)),
      cluster_name_(std::move(cluster_name)),
      member_id_(member_id),
      clock_(clock),
      request_timeout_ms_(request_timeout_ms),
      forward_inbox_(ForwardInbox(member_id, nonce)) {}

NatsPeerTransport::~NatsPeerTransport() {
  for (auto& subscription : subscriptions_) natsSubscription_Destroy(subscription->sub);
}

Status NatsPeerTransport::SubscribeTo(const std::string& subject, Kind kind) {
  auto subscription = std::make_unique<Subscription>(Subscription{this, kind});
  natsStatus s = natsConnection_Subscribe(&subscription->sub, nc_, subject.c_str(),
                                          &NatsPeerTransport::OnMessage, subscription.get());
  if (s == NATS_OK) {
    s = natsSubscription_SetPendingLimits(subscription->sub, kSubscriptionPendingMsgs,
                                          kSubscriptionPendingBytes);
  }
  if (s != NATS_OK) {
    natsSubscription_Destroy(subscription->sub);
    return Status::Unavailable("ErrNats", "subscribe " + subject + ": " + natsStatus_GetText(s));
  }
  subscriptions_.push_back(std::move(subscription));
  return Status::OK();
}

Status NatsPeerTransport::Subscribe(server::Member* member) {
  member_ = member;
  const std::string raft = RaftSubject(prefix_, cluster_name_, member_id_);
  NATCD_RETURN_IF_ERROR(SubscribeTo(raft, Kind::kRaft));
  NATCD_RETURN_IF_ERROR(SubscribeTo(raft + ".snap", Kind::kSnapshotChunk));
  NATCD_RETURN_IF_ERROR(SubscribeTo(raft + ".snapack", Kind::kSnapshotAck));
  return SubscribeTo(forward_inbox_ + "*", Kind::kForwardReply);
}

void NatsPeerTransport::Unsubscribe(bool connected, int64_t deadline_ms) {
  std::vector<natsSubscription*> subs;
  for (auto& subscription : subscriptions_) subs.push_back(subscription->sub);
  DrainSubscriptions(subs, connected, deadline_ms, clock_);
}

void NatsPeerTransport::OnMessage(natsConnection*, natsSubscription*, natsMsg* msg, void* closure) {
  auto* subscription = static_cast<Subscription*>(closure);
  NatsPeerTransport* self = subscription->transport;
  const std::string_view data(natsMsg_GetData(msg),
                              static_cast<size_t>(natsMsg_GetDataLength(msg)));
  switch (subscription->kind) {
    case Kind::kRaft: {
      raft::Message m;
      // Garbage on the Raft subject is dropped: Raft recovers from lost
      // messages.
      if (server::DecodeRaftMessage(data, &m).ok()) self->member_->ReceiveRaft(std::move(m));
      break;
    }
    case Kind::kSnapshotChunk:
      self->member_->ReceiveSnapshotChunk(std::string(data));
      break;
    case Kind::kSnapshotAck:
      self->member_->ReceiveSnapshotAck(std::string(data));
      break;
    case Kind::kForwardReply:
      self->ReceiveForwardReply(msg);
      return;  // it keeps or destroys msg
  }
  natsMsg_Destroy(msg);
}

bool NatsPeerTransport::SendRaft(const raft::Message& m) {
  const std::string bytes = server::EncodeRaftMessage(m);
  const std::string subject = RaftSubject(prefix_, cluster_name_, m.to);
  return natsConnection_Publish(nc_, subject.c_str(), bytes.data(),
                                static_cast<int>(bytes.size())) == NATS_OK;
}

void NatsPeerTransport::SendSnapshotChunk(server::NodeId to, const std::string& bytes) {
  const std::string subject = RaftSubject(prefix_, cluster_name_, to) + ".snap";
  (void)natsConnection_Publish(nc_, subject.c_str(), bytes.data(), static_cast<int>(bytes.size()));
}

void NatsPeerTransport::SendSnapshotAck(server::NodeId leader, const std::string& bytes) {
  const std::string subject = RaftSubject(prefix_, cluster_name_, leader) + ".snapack";
  (void)natsConnection_Publish(nc_, subject.c_str(), bytes.data(), static_cast<int>(bytes.size()));
}

void NatsPeerTransport::Forward(server::NodeId leader, std::unique_ptr<server::Request> request) {
  Send(leader, std::move(request), false);
}

void NatsPeerTransport::Ask(server::NodeId to, std::unique_ptr<server::Request> request) {
  Send(to, std::move(request), true);
}

void NatsPeerTransport::Send(server::NodeId leader, std::unique_ptr<server::Request> request,
                             bool ask) {
  // A request that came over NATS travels as it came (body and headers
  // copied, no decode or encode), and its answer goes back the same way.
  // Any other (a second front end's) is asked anew in protobuf.
  auto* responder = dynamic_cast<NatsResponder*>(request->responder.get());
  natsMsg* msg = responder != nullptr ? responder->message() : nullptr;
  WireRequest encoded;
  std::string subject = ForwardPrefix(prefix_, leader);
  if (msg != nullptr) {
    subject += RequestSuffix(natsMsg_GetSubject(msg), prefix_);
  } else {
    encoded = EncodeWireRequest(request->payload);
    subject += encoded.suffix;
  }
  const std::string request_id = request->request_id;
  const ForwardedBy by{request->hops + 1, request->auth_revision};
  uint64_t seq;
  {
    MutexLock lock(&forward_mu_);
    seq = ++forward_seq_;
    forwarded_[seq] = Forwarded{std::move(request), leader,
                                clock_->MonotonicMs() + request_timeout_ms_, msg != nullptr, ask};
  }
  // The request stays owned by forwarded_: its answer may come back (on a
  // nats.c thread) before this call returns.
  const std::string reply = forward_inbox_ + std::to_string(seq);
  natsStatus s = msg != nullptr ? ForwardRequest(nc_, msg, subject, reply, by)
                                : ForwardEncoded(nc_, subject, reply, encoded.body, request_id, by);
  if (s == NATS_OK) return;
  std::unique_ptr<server::Request> back;
  {
    MutexLock lock(&forward_mu_);
    auto it = forwarded_.find(seq);
    if (it != forwarded_.end()) {
      back = std::move(it->second.request);
      forwarded_.erase(it);
    }
  }
  if (back != nullptr) {
    server::ResponseContext context;
    back->responder->Respond(
        Status::Unavailable("ErrNats", std::string("forward: ") + natsStatus_GetText(s)), context);
  }
}

void NatsPeerTransport::ReceiveForwardReply(natsMsg* msg) {
  const uint64_t seq = std::strtoull(natsMsg_GetSubject(msg) + forward_inbox_.size(), nullptr, 10);
  Forwarded forward;
  {
    MutexLock lock(&forward_mu_);
    auto it = forwarded_.find(seq);
    if (it != forwarded_.end()) {
      forward = std::move(it->second);
      forwarded_.erase(it);
    }
  }
  if (forward.request == nullptr) {  // answered or timed out already
    natsMsg_Destroy(msg);
    return;
  }
  const char* status = nullptr;
  const bool no_responders = natsMsg_GetDataLength(msg) == 0 &&
                             natsMsgHeader_Get(msg, "Status", &status) == NATS_OK &&
                             status != nullptr && strcmp(status, "503") == 0;
  if (no_responders && forward.ask) {
    // Nobody answers for that member: its answer is unknown, and no other
    // member may stand in for it.
    natsMsg_Destroy(msg);
    server::ResponseContext context;
    forward.request->responder->Respond(
        Status::Unavailable("ErrUnavailable", "etcdserver: member " +
                                                  std::to_string(forward.leader) +
                                                  " did not answer (no responders)"),
        context);
    return;
  }
  if (no_responders) {
    // The leader this member knew is gone: the member holds the request
    // until another is known.
    natsMsg_Destroy(msg);
    member_->Resubmit(std::move(forward.request), forward.leader);
    return;
  }
  if (forward.relay) {
    static_cast<NatsResponder*>(forward.request->responder.get())->Relay(msg);
    natsMsg_Destroy(msg);
    return;
  }
  // The leader's answer, read back into what its own member answered.
  // An error reply carries no term: this member's stands in.
  server::ResponseContext context;
  ServiceError error;
  const bool failed = ReadErrorReply(msg, &error);
  if (failed) context.raft_term = member_->raft_term();
  Result<server::Response> response =
      failed ? Result<server::Response>(FromServiceError(error))
             : DecodeWireResponse(forward.request->payload,
                                  std::string_view(natsMsg_GetData(msg),
                                                   static_cast<size_t>(natsMsg_GetDataLength(msg))),
                                  &context.raft_term);
  natsMsg_Destroy(msg);
  forward.request->responder->Respond(std::move(response), context);
}

void NatsPeerTransport::ExpireForwards(bool stopping) {
  const int64_t now = clock_->MonotonicMs();
  std::vector<std::unique_ptr<server::Request>> expired;
  {
    MutexLock lock(&forward_mu_);
    for (auto it = forwarded_.begin(); it != forwarded_.end();) {
      if (stopping || now >= it->second.deadline_ms) {
        expired.push_back(std::move(it->second.request));
        it = forwarded_.erase(it);
      } else {
        ++it;
      }
    }
  }
  server::ResponseContext context;
  for (auto& request : expired) {
    request->responder->Respond(
        stopping ? Stopped()
                 : Status(Status::Code::kTimeout, "ErrTimeout", "etcdserver: request timed out"),
        context);
  }
}

}  // namespace natcd::nats
