#include "adapters/nats/front_end/nats_front_end.h"

#include <algorithm>
#include <cstring>

#include "adapters/nats/codec/convert.h"
#include "adapters/nats/codec/request_payload.h"
#include "adapters/nats/codec/subject.h"
#include "adapters/nats/codec/wire.h"
#include "adapters/nats/front_end/backup_replies.h"
#include "adapters/nats/front_end/reply.h"
#include "adapters/nats/front_end/subscription_drain.h"
#include "adapters/nats/peer/raft_transport.h"
#include "auth/password.h"

namespace natcd::nats {
namespace {

constexpr const char* kQueueGroup = "q";  // ADR-32's default queue group
// Pending messages a subscription may buffer before nats.c drops (and
// counts) them as a slow consumer.
constexpr int kSubscriptionPendingMsgs = 1'000'000;
constexpr int kSubscriptionPendingBytes = 1 << 30;

// Requests only the leader answers (server::LeaderOnly, by endpoint): they
// are also subscribed on P.fwd.<member>.<suffix>, where followers hand
// them over.
bool LeaderOnlyKind(EndpointKind kind) {
  switch (kind) {
    case EndpointKind::kPut:
    case EndpointKind::kDeleteRange:
    case EndpointKind::kTxn:
    case EndpointKind::kCompact:
    case EndpointKind::kLeaseGrant:
    case EndpointKind::kLeaseRevoke:
    case EndpointKind::kLeaseKeepAlive:
    case EndpointKind::kLeaseKeepAliveHex:
    case EndpointKind::kLeaseTimeToLive:
    case EndpointKind::kLeaseLeases:
    case EndpointKind::kMoveLeader:
    case EndpointKind::kAlarm:
    case EndpointKind::kMemberList:
    case EndpointKind::kMemberAdd:
    case EndpointKind::kMemberRemove:
    case EndpointKind::kMemberPromote:
    case EndpointKind::kMemberUpdate:
      return true;
    default:
      return false;
  }
}

// Requests about the member that receives them (served locally, never
// forwarded): each member also answers them on P.fwd.<its ID>.<suffix>, so
// that a client can ask every member in turn.
bool PerMemberKind(EndpointKind kind) {
  return kind == EndpointKind::kStatus || kind == EndpointKind::kHashKV ||
         kind == EndpointKind::kHash || kind == EndpointKind::kDefragment ||
         kind == EndpointKind::kSnapshot;
}

// Where the leader holds extra subscriptions (LeadershipChanged).
bool WeightedKind(EndpointKind kind) {
  switch (kind) {
    case EndpointKind::kPut:
    case EndpointKind::kDeleteRange:
    case EndpointKind::kTxn:
    case EndpointKind::kCompact:
    case EndpointKind::kLeaseGrant:
    case EndpointKind::kLeaseRevoke:
    case EndpointKind::kLeaseKeepAlive:
    case EndpointKind::kLeaseKeepAliveHex:
      return true;
    default:
      return false;
  }
}

// etcd's Authenticate: the password is checked here, on the NATS thread
// (a bcrypt would stall the member's turn for 0.1 s), against the user's
// hash as last applied, and the hash it matched is sent (empty: none); the
// member issues a token only while that is still the user's hash.
server::RequestPayload AuthenticatePayload(const server::Member& member,
                                           const Natcd__V1__AuthenticateRequest& in) {
  server::AuthRequest r;
  r.op = server::AuthOp::kAuthenticate;
  r.user = in.name != nullptr ? in.name : "";
  std::optional<std::string> hash = member.PasswordHash(r.user);
  if (hash && auth::CheckPassword(in.password != nullptr ? in.password : "", *hash)) {
    r.password_hash = *hash;
  }
  return server::RequestPayload(std::move(r));
}

// The Natcd-Auth-Token header's value ("" without one).
std::string AuthToken(natsMsg* msg) {
  const char* value = nullptr;
  if (natsMsgHeader_Get(msg, kAuthTokenHeader, &value) != NATS_OK || value == nullptr) return "";
  return value;
}

// A subject a client may publish to: non-empty tokens, no wildcards, no
// whitespace.
bool ValidPublishSubject(const std::string& s) {
  if (s.empty() || s.front() == '.' || s.back() == '.') return false;
  char prev = 0;
  for (char c : s) {
    if (c == '*' || c == '>' || c == ' ' || c == '\t' || c == '\r' || c == '\n') return false;
    if (c == '.' && prev == '.') return false;
    prev = c;
  }
  return true;
}

}  // namespace

NatsFrontEnd::NatsFrontEnd(natsConnection* nc, natsConnection* buffered_nc,
                           NatsFrontEndOptions options, server::Member* member,
                           NatsPeerTransport* transport, HeaderInfo header, Clock* clock)
    : nc_(nc),
      options_(std::move(options)),
      member_(member),
      transport_(transport),
      clock_(clock),
      rng_(options_.seed ^ 0x77617463ull) {
  reply_.nc = nc;
  reply_.buffered_nc = buffered_nc ? buffered_nc : nc;
  reply_.header = header;
  reply_.version = options_.version;
  reply_.prefix = options_.prefix;
  reply_.cluster_name = options_.cluster_name;

  using K = EndpointKind;
  AddEndpoint("kv_range", "kv.range", true, K::kRange, &natcd__v1__range_request__descriptor);
  AddEndpoint("kv_put", "kv.put", true, K::kPut, &natcd__v1__put_request__descriptor);
  AddEndpoint("kv_delete", "kv.delete", true, K::kDeleteRange,
              &natcd__v1__delete_range_request__descriptor);
  AddEndpoint("kv_txn", "kv.txn", true, K::kTxn, &natcd__v1__txn_request__descriptor);
  AddEndpoint("kv_compact", "kv.compact", true, K::kCompact,
              &natcd__v1__compaction_request__descriptor);
  AddEndpoint("lease_grant", "lease.grant", true, K::kLeaseGrant,
              &natcd__v1__lease_grant_request__descriptor);
  AddEndpoint("lease_revoke", "lease.revoke", true, K::kLeaseRevoke,
              &natcd__v1__lease_revoke_request__descriptor);
  AddEndpoint("lease_keepalive", "lease.keepalive", true, K::kLeaseKeepAlive,
              &natcd__v1__lease_keep_alive_request__descriptor);
  AddEndpoint("lease_keepalive_id", "lease.keepalive.*", true, K::kLeaseKeepAliveHex, nullptr);
  AddEndpoint("lease_timetolive", "lease.timetolive", true, K::kLeaseTimeToLive,
              &natcd__v1__lease_time_to_live_request__descriptor);
  AddEndpoint("lease_leases", "lease.leases", true, K::kLeaseLeases,
              &natcd__v1__lease_leases_request__descriptor);
  AddEndpoint("watch_create", "watch.create", true, K::kWatchCreate,
              &natcd__v1__watch_create_request__descriptor);
  // Watch control reaches every member; only the one holding the watch acts.
  AddEndpoint("watch_cancel", "watch.cancel", false, K::kWatchCancel,
              &natcd__v1__watch_cancel_request__descriptor);
  AddEndpoint("watch_progress", "watch.progress", false, K::kWatchProgress,
              &natcd__v1__watch_progress_request__descriptor);
  AddEndpoint("watch_ack", "watch.ack", false, K::kWatchAck,
              &natcd__v1__watch_ack_request__descriptor);
  AddEndpoint("maint_status", "maint.status", true, K::kStatus,
              &natcd__v1__status_request__descriptor);
  AddEndpoint("maint_hashkv", "maint.hashkv", true, K::kHashKV,
              &natcd__v1__hash_kvrequest__descriptor);
  AddEndpoint("maint_hash", "maint.hash", true, K::kHash, &natcd__v1__hash_request__descriptor);
  AddEndpoint("maint_defrag", "maint.defrag", true, K::kDefragment,
              &natcd__v1__defragment_request__descriptor);
  AddEndpoint("maint_alarm", "maint.alarm", true, K::kAlarm, &natcd__v1__alarm_request__descriptor);
  AddEndpoint("maint_moveleader", "maint.moveleader", true, K::kMoveLeader,
              &natcd__v1__move_leader_request__descriptor);
  AddEndpoint("member_list", "cluster.member.list", true, K::kMemberList,
              &natcd__v1__member_list_request__descriptor);
  AddEndpoint("member_add", "cluster.member.add", true, K::kMemberAdd,
              &natcd__v1__member_add_request__descriptor);
  AddEndpoint("member_remove", "cluster.member.remove", true, K::kMemberRemove,
              &natcd__v1__member_remove_request__descriptor);
  AddEndpoint("member_promote", "cluster.member.promote", true, K::kMemberPromote,
              &natcd__v1__member_promote_request__descriptor);
  AddEndpoint("member_update", "cluster.member.update", true, K::kMemberUpdate,
              &natcd__v1__member_update_request__descriptor);
  AddEndpoint("maint_snapshot", "maint.snapshot", true, K::kSnapshot,
              &natcd__v1__snapshot_request__descriptor);
  AddEndpoint("auth_authenticate", "auth.authenticate", true, K::kAuthenticate,
              &natcd__v1__authenticate_request__descriptor);
}

NatsFrontEnd::~NatsFrontEnd() {
  for (auto& subscription : subscriptions_) natsSubscription_Destroy(subscription->sub);
}

void NatsFrontEnd::AddEndpoint(const std::string& name, const std::string& suffix, bool queue,
                               EndpointKind kind, const ProtobufCMessageDescriptor* request) {
  endpoints_.push_back(std::make_unique<Endpoint>(name, options_.prefix + "." + suffix,
                                                  queue ? kQueueGroup : "", kind, request));
  if (options_.metrics != nullptr) {
    endpoints_.back()->SetLatencyHistogram(&options_.metrics->request_seconds.WithLabels({suffix}));
  }
}

Result<std::unique_ptr<NatsFrontEnd::Subscription>> NatsFrontEnd::SubscribeTo(
    const std::string& subject, const std::string& queue, Endpoint* endpoint) {
  auto subscription = std::make_unique<Subscription>(Subscription{this, endpoint});
  natsStatus s =
      queue.empty()
          ? natsConnection_Subscribe(&subscription->sub, nc_, subject.c_str(),
                                     &NatsFrontEnd::OnMessage, subscription.get())
          : natsConnection_QueueSubscribe(&subscription->sub, nc_, subject.c_str(), queue.c_str(),
                                          &NatsFrontEnd::OnMessage, subscription.get());
  if (s == NATS_OK) {
    s = natsSubscription_SetPendingLimits(subscription->sub, kSubscriptionPendingMsgs,
                                          kSubscriptionPendingBytes);
  }
  if (s != NATS_OK) {
    natsSubscription_Destroy(subscription->sub);
    return Status::Unavailable("ErrNats", "subscribe " + subject + ": " + natsStatus_GetText(s));
  }
  return subscription;
}

Status NatsFrontEnd::Subscribe() {
  auto subscribe = [this](const std::string& subject, const std::string& queue,
                          Endpoint* endpoint) -> Status {
    Result<std::unique_ptr<Subscription>> subscription = SubscribeTo(subject, queue, endpoint);
    if (!subscription.ok()) return subscription.status();
    subscriptions_.push_back(std::move(subscription).value());
    return Status::OK();
  };
  for (auto& endpoint : endpoints_) {
    NATCD_RETURN_IF_ERROR(subscribe(endpoint->subject(), endpoint->queue_group(), endpoint.get()));
    // Addressed to this member: on P.fwd.<it>, what other members hand to
    // it as their leader (or ask of it: a hash); on P.to.<it>, what clients
    // send to the leader they know (writes, linearizable reads) and ask of
    // this member by its ID (`endpoint status --cluster`, `endpoint hashkv
    // --cluster`, `defrag --cluster`). Two subjects so that only members'
    // forwards skip the entry check (Receive).
    if (LeaderOnlyKind(endpoint->kind()) || PerMemberKind(endpoint->kind()) ||
        endpoint->kind() == EndpointKind::kRange) {
      std::string suffix(RequestSuffix(endpoint->subject(), options_.prefix));
      for (const std::string& addressed :
           {ForwardPrefix(options_.prefix, reply_.header.member_id),
            DirectPrefix(options_.prefix, reply_.header.member_id)}) {
        NATCD_RETURN_IF_ERROR(subscribe(addressed + suffix, "", endpoint.get()));
      }
    }
  }
  for (const std::string& subject : DiscoverySubjects(options_.identity)) {
    NATCD_RETURN_IF_ERROR(subscribe(subject, "", nullptr));
  }
  return Status::OK();
}

void NatsFrontEnd::StopReceiving(bool connected, int64_t deadline_ms) {
  {
    MutexLock lock(&weight_mu_);
    weight_stopped_ = true;
    for (auto* weight : {&leader_weight_, &weight_draining_}) {
      for (auto& subscription : *weight) subscriptions_.push_back(std::move(subscription));
      weight->clear();
    }
  }
  // What already arrived is handed to the member, which answers it.
  // (Without a connection nothing can drain: just unsubscribe.)
  std::vector<natsSubscription*> subs;
  for (auto& subscription : subscriptions_) subs.push_back(subscription->sub);
  DrainSubscriptions(subs, connected, deadline_ms, clock_);
  accepting_ = false;
}

void NatsFrontEnd::OnMessage(natsConnection*, natsSubscription*, natsMsg* msg, void* closure) {
  auto* subscription = static_cast<Subscription*>(closure);
  subscription->front_end->Receive(subscription->endpoint, msg);
}

void NatsFrontEnd::Receive(Endpoint* endpoint, natsMsg* msg) {
  if (endpoint == nullptr) {  // discovery
    std::string json;
    std::vector<const Endpoint*> list;
    for (auto& e : endpoints_) list.push_back(e.get());
    if (DiscoveryResponse(natsMsg_GetSubject(msg), options_.identity, list, &json)) {
      (void)Respond(nc_, natsMsg_GetReply(msg), json, false);
    }
    natsMsg_Destroy(msg);
    return;
  }
  bool json = false;
  const char* value = nullptr;
  if (natsMsgHeader_Get(msg, kContentTypeHeader, &value) == NATS_OK && value != nullptr) {
    // "application/json", optionally with parameters ("; charset=utf-8").
    const size_t n = strlen(kJsonContentType);
    json = strncmp(value, kJsonContentType, n) == 0 &&
           (value[n] == '\0' || value[n] == ';' || value[n] == ' ');
  }
  auto responder = std::make_unique<NatsResponder>(&reply_, endpoint, msg, json, ForwardHops(msg));
  if (!accepting_.load()) {
    responder->RespondStatus(Status::Unavailable("ErrStopped", "etcdserver: server stopped"));
    return;
  }
  const int length = natsMsg_GetDataLength(msg);
  if (static_cast<size_t>(length) > options_.request_bytes_max) {
    responder->RespondStatus(Status::TooLarge(
        "ErrRequestTooLarge", "etcdserver: request is too large (" + std::to_string(length) +
                                  " bytes > " + std::to_string(options_.request_bytes_max) + ")"));
    return;
  }
  int64_t hex_lease_id = 0;
  UniqueMessage body;
  if (endpoint->kind() == EndpointKind::kLeaseKeepAliveHex) {
    const char* subject = natsMsg_GetSubject(msg);
    const char* dot = strrchr(subject, '.');
    if (dot == nullptr || !ParseLeaseIdHex(dot + 1, &hex_lease_id)) {
      responder->RespondStatus(Status::InvalidArgument(
          "ErrInvalidArgument", std::string("not a lease ID in hex: ") + (dot ? dot + 1 : "")));
      return;
    }
  } else if (endpoint->request() != nullptr) {
    Status s = DecodeMessage(endpoint->request(),
                             std::string_view(natsMsg_GetData(msg), static_cast<size_t>(length)),
                             json, &body);
    if (!s.ok()) {
      responder->RespondStatus(s);
      return;
    }
  }
  switch (endpoint->kind()) {
    case EndpointKind::kWatchCreate: {
      auto shared_body = std::make_shared<UniqueMessage>(std::move(body));
      std::shared_ptr<NatsResponder> r(responder.release());
      // Held while this member has not applied the token's Authenticate.
      const std::string token = AuthToken(msg);
      member_->RunOnMemberThreadWithToken(token,
                                          [this, r, shared_body, json, token](Engine& engine) {
                                            on_member_thread_.AssertHeld();
                                            CreateWatch(engine, *r, *shared_body, json, token);
                                          });
      return;
    }
    case EndpointKind::kWatchCancel: {
      const int64_t id =
          reinterpret_cast<const Natcd__V1__WatchCancelRequest*>(body.get())->watch_id;
      std::shared_ptr<NatsResponder> r(responder.release());
      member_->RunOnMemberThread([this, r, id](Engine& engine) {
        on_member_thread_.AssertHeld();
        CancelWatch(engine, *r, id);
      });
      return;
    }
    case EndpointKind::kWatchProgress: {
      const int64_t id =
          reinterpret_cast<const Natcd__V1__WatchProgressRequest*>(body.get())->watch_id;
      std::shared_ptr<NatsResponder> r(responder.release());
      member_->RunOnMemberThread([this, r, id](Engine& engine) {
        on_member_thread_.AssertHeld();
        RequestProgress(engine, *r, id);
      });
      return;
    }
    case EndpointKind::kWatchAck: {
      auto* in = reinterpret_cast<const Natcd__V1__WatchAckRequest*>(body.get());
      const int64_t id = in->watch_id;
      const uint64_t seq = in->seq;
      const bool group_subscribed = in->group_subscribed;
      const int64_t group_id = in->group_id;
      // Acks are published, not requested: no reply.
      member_->RunOnMemberThread([this, id, seq, group_subscribed, group_id](Engine&) {
        on_member_thread_.AssertHeld();
        if (streams_) streams_->Ack(id, seq, group_subscribed, group_id);
      });
      return;
    }
    case EndpointKind::kSnapshot: {
      // Served here, not by the member's turn: the copy runs on a thread
      // of its own and chunks are read from it (backup_replies.h).
      const bool reply_json = responder->json();
      ServeBackupRequest(*member_, *reinterpret_cast<const Natcd__V1__SnapshotRequest*>(body.get()),
                         std::move(responder), Header(),
                         BackupChunkBytes(natsConnection_GetMaxPayload(nc_), reply_json));
      return;
    }
    default:
      break;
  }
  Result<server::RequestPayload> payload =
      endpoint->kind() == EndpointKind::kAuthenticate
          ? AuthenticatePayload(
                *member_, *reinterpret_cast<const Natcd__V1__AuthenticateRequest*>(body.get()))
          : ToPayload(endpoint->kind(), body.get(), hex_lease_id);
  if (!payload.ok()) {
    responder->RespondStatus(payload.status());
    return;
  }
  auto request = std::make_unique<server::Request>();
  request->payload = std::move(payload).value();
  if (natsMsgHeader_Get(msg, kRequestIdHeader, &value) == NATS_OK && value != nullptr) {
    request->request_id = value;
  }
  request->received_ms = clock_->MonotonicMs();
  request->hops = responder->hops();
  // Forwarded by a member, which checked it: on P.fwd.<this member>.*
  // only (the Natcd-Forwarded header alone is anyone's to set; NATS
  // permissions keep P.fwd.* and P.raft.* to the members). What clients
  // address to this member (P.to.<it>.*) is checked as on P.<suffix>.
  const std::string forwarded_prefix = ForwardPrefix(options_.prefix, reply_.header.member_id);
  const bool forwarded =
      strncmp(natsMsg_GetSubject(msg), forwarded_prefix.c_str(), forwarded_prefix.size()) == 0;
  request->token = AuthToken(msg);
  request->auth_checked = options_.auth_trusted || forwarded;
  request->tokenless = !request->auth_checked && request->token.empty();
  if (forwarded && natsMsgHeader_Get(msg, kAuthRevisionHeader, &value) == NATS_OK &&
      value != nullptr) {
    request->auth_revision = strtoull(value, nullptr, 10);
  }
  request->responder = std::move(responder);
  member_->Submit(std::move(request));
}

HeaderInfo NatsFrontEnd::Header() const {
  HeaderInfo header = reply_.header;
  header.raft_term = member_->raft_term();
  return header;
}

void NatsFrontEnd::CreateWatch(Engine& engine, NatsResponder& responder, const UniqueMessage& body,
                               bool json, const std::string& token) {
  if (streams_ == nullptr) {
    responder.RespondStatus(Status::Unavailable("ErrStopped", "etcdserver: server stopped"));
    return;
  }
  auto* in = reinterpret_cast<const Natcd__V1__WatchCreateRequest*>(body.get());
  const std::string deliver = in->deliver_subject ? in->deliver_subject : "";
  WatchOptions watch;
  Status s = FromProto(*in, &watch);
  if (s.ok() && !ValidPublishSubject(deliver)) {
    s = Status::InvalidArgument("ErrInvalidArgument",
                                "deliver_subject must be a subject without wildcards");
  }
  if (s.ok()) {
    s = member_->AuthorizeWatch(token, options_.auth_trusted,
                                !options_.auth_trusted && token.empty(), watch.key,
                                watch.range_end);
  }
  if (!s.ok()) {
    responder.RespondStatus(s);
    return;
  }
  ProtoArena arena;
  Natcd__V1__WatchResponse response;
  natcd__v1__watch_response__init(&response);
  ResponseHeader committed;
  committed.revision = engine.CurrentRevision();
  response.header = ToProto(committed, Header(), &arena);
  if (watch.start_revision > 0 && watch.start_revision < engine.CompactRevision()) {
    // etcd answers the create itself with the cancellation.
    response.watch_id = in->watch_id;
    response.canceled = true;
    response.compact_revision = engine.CompactRevision();
    response.cancel_reason =
        const_cast<char*>("etcdserver: mvcc: required revision has been compacted");
    responder.RespondBody(EncodeMessage(&response.base, json));
    return;
  }
  WatchId id = in->watch_id;
  while (id == 0 || streams_->Has(id)) {
    if (id != 0) {
      // A member of a group has no hub watcher any more: its ID is still taken.
      responder.RespondStatus(Status::InvalidArgument(
          "ErrWatcherDuplicateID",
          "etcdserver: mvcc: duplicate watch ID provided on the WatchStream"));
      return;
    }
    id = static_cast<int64_t>(rng_() >> 1);
  }
  Result<WatchId> created = engine.watches().Create(watch, id);
  if (!created.ok()) {
    responder.RespondStatus(created.status());
    return;
  }
  streams_->Add(*created, deliver, json,
                watch.start_revision > 0 ? watch.start_revision - 1 : committed.revision,
                in->group ? &watch : nullptr);
  response.watch_id = *created;
  response.created = true;
  response.heartbeat_ms = options_.watch.heartbeat_ms;
  responder.RespondBody(EncodeMessage(&response.base, json));
}

void NatsFrontEnd::CancelWatch(Engine& engine, NatsResponder& responder, int64_t id) {
  if (streams_ == nullptr || !streams_->Has(id)) {
    responder.RespondStatus(Status::NotFound("ErrWatchNotFound", "no watch " + std::to_string(id)));
    return;
  }
  (void)engine.watches().Cancel(id);
  streams_->Remove(id);
  ProtoArena arena;
  Natcd__V1__WatchResponse response;
  natcd__v1__watch_response__init(&response);
  ResponseHeader now;
  now.revision = engine.revision();
  response.header = ToProto(now, Header(), &arena);
  response.watch_id = id;
  response.canceled = true;
  response.cancel_reason = const_cast<char*>("canceled by the client");
  responder.RespondBody(EncodeMessage(&response.base, responder.json()));
}

void NatsFrontEnd::RequestProgress(Engine& engine, NatsResponder& responder, int64_t id) {
  if (streams_ == nullptr || !streams_->Has(id)) {
    responder.RespondStatus(Status::NotFound("ErrWatchNotFound", "no watch " + std::to_string(id)));
    return;
  }
  Status s = streams_->RequestProgress(id);
  if (!s.ok()) {
    responder.RespondStatus(s);
    return;
  }
  ProtoArena arena;
  Natcd__V1__WatchResponse response;
  natcd__v1__watch_response__init(&response);
  ResponseHeader now;
  now.revision = engine.revision();
  response.header = ToProto(now, Header(), &arena);
  response.watch_id = id;
  responder.RespondBody(EncodeMessage(&response.base, responder.json()));
}

void NatsFrontEnd::Attach(Engine* engine) {
  on_member_thread_.AssertHeld();
  engine_ = engine;
  streams_ = std::make_unique<WatchStreams>(nc_, &engine->watches(), engine, clock_, options_.watch,
                                            reply_.header, options_.prefix);
}

void NatsFrontEnd::Detach() {
  on_member_thread_.AssertHeld();
  if (streams_)
    streams_->Deliver(/*ignore_window=*/true);  // the last message, even to a full window
  streams_.reset();
  engine_ = nullptr;
  transport_->ExpireForwards(/*stopping=*/!accepting_.load());
}

void NatsFrontEnd::AfterTurn() {
  on_member_thread_.AssertHeld();
  if (streams_) {
    streams_->Deliver();
    if (options_.metrics != nullptr) {
      options_.metrics->watch_groups.Set(static_cast<int64_t>(streams_->groups()));
      options_.metrics->watch_group_members.Set(static_cast<int64_t>(streams_->members()));
    }
  }
  transport_->ExpireForwards(/*stopping=*/false);
}

void NatsFrontEnd::Tick() {
  on_member_thread_.AssertHeld();
  const int64_t now = clock_->MonotonicMs();
  if (streams_ == nullptr || now < next_watch_tick_ms_) return;
  // Often enough for both the heartbeat and the ack timeout (either may be
  // the shorter).
  next_watch_tick_ms_ =
      now + std::max<int64_t>(
                1, std::min(options_.watch.heartbeat_ms, options_.watch.ack_timeout_ms) / 5);
  streams_->Tick();
}

// NATS hands a queue group's request to one of its subscriptions at random.
// The leader holds leader_request_weight subscriptions on each write and
// keepalive subject where a follower holds one, so most writes reach it
// directly: a forwarded write costs two more messages through the NATS
// server and a relay. Followers keep theirs, so every member still takes
// any request, also while no leader is known. Given up subscriptions are
// drained: what they already received is forwarded.
void NatsFrontEnd::LeadershipChanged(bool leading) {
  MutexLock lock(&weight_mu_);
  if (weight_stopped_) return;
  std::erase_if(weight_draining_, [](const std::unique_ptr<Subscription>& subscription) {
    if (natsSubscription_DrainCompletionStatus(subscription->sub) == NATS_ILLEGAL_STATE) {
      return false;  // still draining
    }
    natsSubscription_Destroy(subscription->sub);
    return true;
  });
  if (!leading) {
    for (auto& subscription : leader_weight_) {
      (void)natsSubscription_Drain(subscription->sub);
      weight_draining_.push_back(std::move(subscription));
    }
    leader_weight_.clear();
    return;
  }
  for (auto& endpoint : endpoints_) {
    if (endpoint->queue_group().empty() || !WeightedKind(endpoint->kind())) continue;
    for (int i = 1; i < options_.leader_request_weight; i++) {
      Result<std::unique_ptr<Subscription>> subscription =
          SubscribeTo(endpoint->subject(), endpoint->queue_group(), endpoint.get());
      if (!subscription.ok()) {
        // Only the share of requests this member gets directly suffers.
        fprintf(stderr, "natcd: %s\n", subscription.status().ToString().c_str());
        return;
      }
      leader_weight_.push_back(std::move(subscription).value());
    }
  }
}

}  // namespace natcd::nats
