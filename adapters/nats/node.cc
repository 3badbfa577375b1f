#include "adapters/nats/node.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "adapters/nats/convert.h"
#include "adapters/nats/discovery.h"
#include "adapters/nats/endpoint.h"
#include "adapters/nats/event_publisher.h"
#include "adapters/nats/reply.h"
#include "adapters/nats/service_error.h"
#include "adapters/nats/subject.h"
#include "adapters/nats/watch_streams.h"
#include "adapters/nats/wire.h"

namespace natcd::nats {
namespace {

constexpr const char* kRequestIdHeader = "Natcd-Request-Id";
constexpr const char* kQueueGroup = "q";  // ADR-32's default queue group
// Unsynced watchers caught up per engine-loop turn, and the longest the
// loop sleeps when idle (it also wakes for every queued request).
constexpr size_t kWatchersSyncedPerTurn = 64;
constexpr int64_t kIdleWaitMs = 10;
// Pending messages a subscription may buffer before nats.c drops (and
// counts) them as a slow consumer.
constexpr int kSubscriptionPendingMsgs = 1'000'000;
constexpr int kSubscriptionPendingBytes = 1 << 30;
constexpr int64_t kDrainTimeoutMs = 2'000;

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

uint64_t Fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h == 0 ? 1 : h;
}

// A queued request, decoded on the NATS thread that received it.
struct Work {
  Endpoint* endpoint = nullptr;  // null for internal notices
  natsMsg* msg = nullptr;        // owned; destroyed after the reply
  bool json = false;
  std::string request_id;
  int64_t received_ns = 0;
  UniqueMessage body;
  int64_t lease_id = 0;  // P.lease.keepalive.<hex id>
  enum class Notice { kNone, kDisconnected, kReconnected } notice = Notice::kNone;

  ~Work() { natsMsg_Destroy(msg); }
  const char* reply() const { return msg ? natsMsg_GetReply(msg) : nullptr; }
};

// A reply held until the batch that produced it is durable.
struct PendingReply {
  std::unique_ptr<Work> work;
  bool is_write = false;
  bool is_error = false;
  std::string body;
  ServiceError error;
};

// Outcome of a write remembered under its request id: 'R' + the binary
// response, or 'E' + the three-digit code + the error text.
std::string OutcomeOfResponse(const std::string& binary) { return "R" + binary; }
std::string OutcomeOfError(const ServiceError& e) {
  std::string code = std::to_string(e.code % 1000);
  code.insert(0, 3 - code.size(), '0');
  return "E" + code + e.text;
}

const ProtobufCMessageDescriptor* ResponseDescriptor(EndpointKind kind) {
  switch (kind) {
    case EndpointKind::kPut:
      return &natcd__v1__put_response__descriptor;
    case EndpointKind::kDeleteRange:
      return &natcd__v1__delete_range_response__descriptor;
    case EndpointKind::kTxn:
      return &natcd__v1__txn_response__descriptor;
    case EndpointKind::kCompact:
      return &natcd__v1__compaction_response__descriptor;
    case EndpointKind::kLeaseGrant:
      return &natcd__v1__lease_grant_response__descriptor;
    case EndpointKind::kLeaseRevoke:
      return &natcd__v1__lease_revoke_response__descriptor;
    default:
      return nullptr;
  }
}

bool IsWrite(EndpointKind kind) { return ResponseDescriptor(kind) != nullptr; }

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

struct Node::Impl {
  struct Subscription {
    Impl* impl;
    Endpoint* endpoint;  // null: discovery
    natsSubscription* sub = nullptr;
  };

  natsConnection* nc = nullptr;
  NodeOptions options;
  std::unique_ptr<Engine> engine;
  HeaderInfo header;
  ServiceIdentity identity;
  std::vector<std::unique_ptr<Endpoint>> endpoints;
  std::vector<std::unique_ptr<Subscription>> subscriptions;
  std::unique_ptr<WatchStreams> streams;
  std::unique_ptr<EventPublisher> publisher;
  std::mt19937_64 rng;

  std::mutex mu;
  std::condition_variable wake;
  std::vector<std::unique_ptr<Work>> queue;  // guarded by mu
  bool stopping = false;                     // guarded by mu
  std::atomic<bool> accepting{true};
  std::thread thread;
  bool stopped = false;

  // Engine thread only.
  std::unique_ptr<AutoCompactor> compactor;
  bool leases_paused = false;
  int64_t next_lease_check_ms = 0;
  int64_t next_checkpoint_ms = 0;
  int64_t next_watch_tick_ms = 0;
  int64_t next_progress_ms = 0;

  Status Init(natsConnection* connection, const NodeOptions& opts, natsConnection* events_nc);
  Status Subscribe();
  void AddEndpoint(const std::string& name, const std::string& suffix, bool queue,
                   EndpointKind kind, const ProtobufCMessageDescriptor* request);
  static void OnMessage(natsConnection* nc, natsSubscription* sub, natsMsg* msg, void* closure);
  void Receive(Endpoint* endpoint, natsMsg* msg);
  void Enqueue(std::unique_ptr<Work> work);
  void Loop();
  void Handle(std::unique_ptr<Work> work, std::vector<PendingReply>* replies);
  void HandleWrite(std::unique_ptr<Work> work, std::vector<PendingReply>* replies);
  Result<WriteRequest> DecodeWrite(const Work& work);
  void Timers();
  void Finish(PendingReply& reply);
};

Status Node::Impl::Init(natsConnection* connection, const NodeOptions& opts,
                        natsConnection* events_nc) {
  nc = connection;
  options = opts;
  options.engine.retain_committed_events = true;
  if (options.engine.clock == nullptr) {
    return Status::InvalidArgument("ErrConfig", "node needs a clock");
  }
  rng.seed(options.engine.seed ^ 0x6e617463ull);
  header.member_id = options.member_id ? options.member_id : Fnv1a(options.name);
  header.cluster_id =
      options.cluster_id ? options.cluster_id : Fnv1a(options.prefix + "/" + options.name);
  header.raft_term = 1;
  identity.id = options.instance_id;
  if (identity.id.empty()) {
    static constexpr char kAlphabet[] =
        "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    for (int i = 0; i < 22; ++i) identity.id += kAlphabet[rng() % 62];
  }
  identity.version = options.version;
  identity.started = Iso8601Now();
  identity.metadata = {{"member", options.name}, {"prefix", options.prefix}};

  Result<std::unique_ptr<Engine>> opened = Engine::Open(options.engine);
  if (!opened.ok()) return opened.status();
  engine = std::move(opened).value();
  // The only member decides lease expiry. Every lease gets its remaining
  // TTL again: its holder could not renew it while natcd was down.
  engine->PromoteLeases(0);

  WatchStreamOptions stream_options;
  stream_options.window_messages = options.watch_window_messages;
  stream_options.message_events_max = options.watch_message_events_max;
  stream_options.heartbeat_ms = options.watch_heartbeat_ms;
  stream_options.ack_timeout_ms = options.watch_ack_timeout_ms;
  streams = std::make_unique<WatchStreams>(nc, &engine->watches(), engine.get(),
                                           options.engine.clock, stream_options, header);
  publisher = std::make_unique<EventPublisher>(events_nc ? events_nc : nc, options.prefix);
  compactor = std::make_unique<AutoCompactor>(
      options.auto_compaction_mode, options.auto_compaction_mode == AutoCompactor::Mode::kPeriodic
                                        ? options.auto_compaction_retention * 1000
                                        : options.auto_compaction_retention);

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
  AddEndpoint("member_list", "cluster.member.list", true, K::kMemberList,
              &natcd__v1__member_list_request__descriptor);
  AddEndpoint("member_add", "cluster.member.add", true, K::kMemberAdd,
              &natcd__v1__member_add_request__descriptor);
  AddEndpoint("member_remove", "cluster.member.remove", true, K::kMemberRemove,
              &natcd__v1__member_remove_request__descriptor);
  AddEndpoint("member_promote", "cluster.member.promote", true, K::kMemberPromote,
              &natcd__v1__member_promote_request__descriptor);

  thread = std::thread([this] { Loop(); });
  return Subscribe();
}

void Node::Impl::AddEndpoint(const std::string& name, const std::string& suffix, bool queue,
                             EndpointKind kind, const ProtobufCMessageDescriptor* request) {
  endpoints.push_back(std::make_unique<Endpoint>(name, options.prefix + "." + suffix,
                                                 queue ? kQueueGroup : "", kind, request));
}

Status Node::Impl::Subscribe() {
  auto subscribe = [this](const std::string& subject, const std::string& queue,
                          Endpoint* endpoint) -> Status {
    auto subscription = std::make_unique<Subscription>(Subscription{this, endpoint});
    natsStatus s = queue.empty() ? natsConnection_Subscribe(&subscription->sub, nc, subject.c_str(),
                                                            &Impl::OnMessage, subscription.get())
                                 : natsConnection_QueueSubscribe(
                                       &subscription->sub, nc, subject.c_str(), queue.c_str(),
                                       &Impl::OnMessage, subscription.get());
    if (s == NATS_OK) {
      s = natsSubscription_SetPendingLimits(subscription->sub, kSubscriptionPendingMsgs,
                                            kSubscriptionPendingBytes);
    }
    if (s != NATS_OK) {
      return Status::Unavailable("ErrNats", "subscribe " + subject + ": " + natsStatus_GetText(s));
    }
    subscriptions.push_back(std::move(subscription));
    return Status::OK();
  };
  for (auto& endpoint : endpoints) {
    NATCD_RETURN_IF_ERROR(subscribe(endpoint->subject(), endpoint->queue_group(), endpoint.get()));
  }
  for (const std::string& subject : DiscoverySubjects(identity)) {
    NATCD_RETURN_IF_ERROR(subscribe(subject, "", nullptr));
  }
  // Subscriptions are in place once the server has seen them.
  natsStatus s = natsConnection_FlushTimeout(nc, 5'000);
  if (s != NATS_OK) {
    return Status::Unavailable("ErrNats", std::string("flush: ") + natsStatus_GetText(s));
  }
  return Status::OK();
}

void Node::Impl::OnMessage(natsConnection*, natsSubscription*, natsMsg* msg, void* closure) {
  auto* subscription = static_cast<Subscription*>(closure);
  subscription->impl->Receive(subscription->endpoint, msg);
}

void Node::Impl::Receive(Endpoint* endpoint, natsMsg* msg) {
  const char* reply = natsMsg_GetReply(msg);
  if (endpoint == nullptr) {  // discovery
    std::string json;
    std::vector<const Endpoint*> list;
    for (auto& e : endpoints) list.push_back(e.get());
    if (DiscoveryResponse(natsMsg_GetSubject(msg), identity, list, &json)) {
      (void)Respond(nc, reply, json, false);
    }
    natsMsg_Destroy(msg);
    return;
  }
  auto work = std::make_unique<Work>();
  work->endpoint = endpoint;
  work->msg = msg;
  work->received_ns = NowNs();
  const char* value = nullptr;
  if (natsMsgHeader_Get(msg, kContentTypeHeader, &value) == NATS_OK && value != nullptr) {
    // "application/json", optionally with parameters ("; charset=utf-8").
    const size_t n = strlen(kJsonContentType);
    work->json = strncmp(value, kJsonContentType, n) == 0 &&
                 (value[n] == '\0' || value[n] == ';' || value[n] == ' ');
  }
  if (natsMsgHeader_Get(msg, kRequestIdHeader, &value) == NATS_OK && value != nullptr) {
    work->request_id = value;
  }

  auto fail = [&](const Status& status) {
    ServiceError error = ToServiceError(status);
    // Counted before the reply: a client that reads $SRV.STATS after its
    // reply sees its request.
    endpoint->Record(NowNs() - work->received_ns, &error.text);
    (void)RespondError(nc, reply, error);
  };
  if (!accepting.load()) {
    fail(Status::Unavailable("ErrStopped", "etcdserver: server stopped"));
    return;
  }
  const int length = natsMsg_GetDataLength(msg);
  if (static_cast<size_t>(length) > options.request_bytes_max) {
    fail(Status::TooLarge("ErrRequestTooLarge",
                          "etcdserver: request is too large (" + std::to_string(length) +
                              " bytes > " + std::to_string(options.request_bytes_max) + ")"));
    return;
  }
  if (endpoint->kind() == EndpointKind::kLeaseKeepAliveHex) {
    const char* subject = natsMsg_GetSubject(msg);
    const char* dot = strrchr(subject, '.');
    if (dot == nullptr || !ParseLeaseIdHex(dot + 1, &work->lease_id)) {
      fail(Status::InvalidArgument("ErrInvalidArgument",
                                   std::string("not a lease ID in hex: ") + (dot ? dot + 1 : "")));
      return;
    }
  } else if (endpoint->request() != nullptr) {
    Status s = DecodeMessage(endpoint->request(),
                             std::string_view(natsMsg_GetData(msg), static_cast<size_t>(length)),
                             work->json, &work->body);
    if (!s.ok()) {
      fail(s);
      return;
    }
  }
  Enqueue(std::move(work));
}

void Node::Impl::Enqueue(std::unique_ptr<Work> work) {
  {
    std::lock_guard<std::mutex> lock(mu);
    queue.push_back(std::move(work));
  }
  wake.notify_one();
}

Result<WriteRequest> Node::Impl::DecodeWrite(const Work& work) {
  const ProtobufCMessage* body = work.body.get();
  switch (work.endpoint->kind()) {
    case EndpointKind::kPut: {
      PutRequest r;
      NATCD_RETURN_IF_ERROR(FromProto(*reinterpret_cast<const Natcd__V1__PutRequest*>(body), &r));
      return WriteRequest(std::move(r));
    }
    case EndpointKind::kDeleteRange: {
      DeleteRangeRequest r;
      NATCD_RETURN_IF_ERROR(
          FromProto(*reinterpret_cast<const Natcd__V1__DeleteRangeRequest*>(body), &r));
      return WriteRequest(std::move(r));
    }
    case EndpointKind::kTxn: {
      TxnRequest r;
      NATCD_RETURN_IF_ERROR(FromProto(*reinterpret_cast<const Natcd__V1__TxnRequest*>(body), &r));
      return WriteRequest(std::move(r));
    }
    case EndpointKind::kCompact: {
      CompactionRequest r;
      NATCD_RETURN_IF_ERROR(
          FromProto(*reinterpret_cast<const Natcd__V1__CompactionRequest*>(body), &r));
      return WriteRequest(r);
    }
    case EndpointKind::kLeaseGrant: {
      auto* in = reinterpret_cast<const Natcd__V1__LeaseGrantRequest*>(body);
      if (in->id < 0) {
        return Status::InvalidArgument("ErrInvalidArgument", "lease ID must not be negative");
      }
      return WriteRequest(LeaseGrantRequest{in->ttl, in->id});
    }
    case EndpointKind::kLeaseRevoke: {
      auto* in = reinterpret_cast<const Natcd__V1__LeaseRevokeRequest*>(body);
      return WriteRequest(LeaseRevokeRequest{in->id});
    }
    default:
      return Status::Internal("not a write endpoint");
  }
}

void Node::Impl::HandleWrite(std::unique_ptr<Work> work, std::vector<PendingReply>* replies) {
  PendingReply reply;
  reply.is_write = true;
  const EndpointKind kind = work->endpoint->kind();
  if (!work->request_id.empty()) {
    if (const std::string* outcome = engine->FindRequest(work->request_id)) {
      // A retry: answer what the first attempt got, apply nothing.
      if ((*outcome)[0] == 'E') {
        reply.is_error = true;
        reply.error.code = std::stoi(outcome->substr(1, 3));
        reply.error.text = outcome->substr(4);
      } else if (work->json) {
        UniqueMessage message;
        Status s = DecodeMessage(ResponseDescriptor(kind), std::string_view(*outcome).substr(1),
                                 false, &message);
        if (s.ok()) {
          reply.body = MessageToJson(message.get());
        } else {
          reply.is_error = true;
          reply.error = ToServiceError(Status::Internal("remembered response does not decode"));
        }
      } else {
        reply.body = outcome->substr(1);
      }
      reply.work = std::move(work);
      replies->push_back(std::move(reply));
      return;
    }
  }
  Result<WriteRequest> request = DecodeWrite(*work);
  Status status = request.status();
  std::string binary;
  if (status.ok()) {
    engine->Prepare(&request.value());
    Result<WriteResponse> response = engine->Apply(request.value());
    status = response.status();
    if (status.ok()) {
      ProtoArena arena;
      const ProtobufCMessage* message = ToProto(response.value(), header, &arena);
      binary = EncodeMessage(message, false);
      reply.body = work->json ? EncodeMessage(message, true) : binary;
    }
  }
  if (!status.ok()) {
    reply.is_error = true;
    reply.error = ToServiceError(status);
  }
  // Remember the outcome of what was applied (a deterministic error
  // included), never that of a request the engine could not process.
  bool engine_failed = !engine->health().ok();
  if (!work->request_id.empty() && !engine_failed) {
    int64_t expires = options.engine.clock->RealtimeMs() + options.request_id_window_ms;
    Status s = engine->RememberRequest(
        work->request_id, expires,
        reply.is_error ? OutcomeOfError(reply.error) : OutcomeOfResponse(binary));
    if (!s.ok()) {
      reply.is_error = true;
      reply.error = ToServiceError(s);
    }
  }
  reply.work = std::move(work);
  replies->push_back(std::move(reply));
}

void Node::Impl::Handle(std::unique_ptr<Work> work, std::vector<PendingReply>* replies) {
  if (work->notice == Work::Notice::kDisconnected) {
    engine->DemoteLeases();
    leases_paused = true;
    return;
  }
  if (work->notice == Work::Notice::kReconnected) {
    engine->PromoteLeases(0);
    leases_paused = false;
    return;
  }
  const EndpointKind kind = work->endpoint->kind();
  if (IsWrite(kind)) {
    HandleWrite(std::move(work), replies);
    return;
  }
  PendingReply reply;
  const bool json = work->json;
  ProtoArena arena;
  auto ok = [&](const ProtobufCMessage* message) { reply.body = EncodeMessage(message, json); };
  auto fail = [&](const Status& status) {
    reply.is_error = true;
    reply.error = ToServiceError(status);
  };
  const ProtobufCMessage* body = work->body.get();
  ResponseHeader now;
  now.revision = engine->revision();

  switch (kind) {
    case EndpointKind::kRange: {
      RangeRequest request;
      Status s = FromProto(*reinterpret_cast<const Natcd__V1__RangeRequest*>(body), &request);
      if (!s.ok()) {
        fail(s);
        break;
      }
      Result<RangeResponse> response = engine->Range(request);
      if (response.ok()) {
        ok(&ToProto(response.value(), header, &arena)->base);
      } else {
        fail(response.status());
      }
      break;
    }
    case EndpointKind::kLeaseKeepAlive:
    case EndpointKind::kLeaseKeepAliveHex: {
      int64_t id = kind == EndpointKind::kLeaseKeepAlive
                       ? reinterpret_cast<const Natcd__V1__LeaseKeepAliveRequest*>(body)->id
                       : work->lease_id;
      LeaseKeepAliveResponse response = engine->LeaseKeepAlive({id});
      // The hex subject takes any body; its reply is always protobuf unless
      // the request said JSON.
      ok(&ToProto(response, header, &arena)->base);
      break;
    }
    case EndpointKind::kLeaseTimeToLive: {
      auto* in = reinterpret_cast<const Natcd__V1__LeaseTimeToLiveRequest*>(body);
      ok(&ToProto(engine->LeaseTimeToLive({in->id, static_cast<bool>(in->keys)}), header, &arena)
              ->base);
      break;
    }
    case EndpointKind::kLeaseLeases:
      ok(&ToProto(engine->LeaseLeases(), header, &arena)->base);
      break;
    case EndpointKind::kWatchCreate: {
      auto* in = reinterpret_cast<const Natcd__V1__WatchCreateRequest*>(body);
      std::string deliver = in->deliver_subject ? in->deliver_subject : "";
      WatchOptions watch;
      Status s = FromProto(*in, &watch);
      if (s.ok() && !ValidPublishSubject(deliver)) {
        s = Status::InvalidArgument("ErrInvalidArgument",
                                    "deliver_subject must be a subject without wildcards");
      }
      if (!s.ok()) {
        fail(s);
        break;
      }
      Natcd__V1__WatchResponse response;
      natcd__v1__watch_response__init(&response);
      ResponseHeader committed;
      committed.revision = engine->CurrentRevision();
      response.header = ToProto(committed, header, &arena);
      if (watch.start_revision > 0 && watch.start_revision < engine->CompactRevision()) {
        // etcd answers the create itself with the cancellation.
        response.watch_id = in->watch_id;
        response.canceled = true;
        response.compact_revision = engine->CompactRevision();
        response.cancel_reason =
            const_cast<char*>("etcdserver: mvcc: required revision has been compacted");
        ok(&response.base);
        break;
      }
      WatchId id = in->watch_id;
      while (id == 0) id = static_cast<int64_t>(rng() >> 1);
      Result<WatchId> created = engine->watches().Create(watch, id);
      if (!created.ok()) {
        fail(created.status());
        break;
      }
      streams->Add(*created, deliver, json,
                   watch.start_revision > 0 ? watch.start_revision - 1 : committed.revision);
      response.watch_id = *created;
      response.created = true;
      response.heartbeat_ms = options.watch_heartbeat_ms;
      ok(&response.base);
      break;
    }
    case EndpointKind::kWatchCancel: {
      int64_t id = reinterpret_cast<const Natcd__V1__WatchCancelRequest*>(body)->watch_id;
      if (!streams->Has(id)) {
        fail(Status::NotFound("ErrWatchNotFound", "no watch " + std::to_string(id)));
        break;
      }
      (void)engine->watches().Cancel(id);
      streams->Remove(id);
      Natcd__V1__WatchResponse response;
      natcd__v1__watch_response__init(&response);
      response.header = ToProto(now, header, &arena);
      response.watch_id = id;
      response.canceled = true;
      response.cancel_reason = const_cast<char*>("canceled by the client");
      ok(&response.base);
      break;
    }
    case EndpointKind::kWatchProgress: {
      auto* in = reinterpret_cast<const Natcd__V1__WatchProgressRequest*>(body);
      if (!streams->Has(in->watch_id)) {
        fail(Status::NotFound("ErrWatchNotFound", "no watch " + std::to_string(in->watch_id)));
        break;
      }
      Status s = engine->watches().RequestProgress(in->watch_id);
      if (!s.ok()) {
        fail(s);
        break;
      }
      Natcd__V1__WatchResponse response;
      natcd__v1__watch_response__init(&response);
      response.header = ToProto(now, header, &arena);
      response.watch_id = in->watch_id;
      ok(&response.base);
      break;
    }
    case EndpointKind::kWatchAck: {
      auto* in = reinterpret_cast<const Natcd__V1__WatchAckRequest*>(body);
      streams->Ack(in->watch_id, in->seq);
      return;  // acks are published, not requested: no reply
    }
    case EndpointKind::kStatus: {
      Natcd__V1__StatusResponse response;
      natcd__v1__status_response__init(&response);
      response.header = ToProto(now, header, &arena);
      response.version = const_cast<char*>(options.version.c_str());
      Result<int64_t> size = engine->DatabaseSizeBytes();
      response.dbsize = size.ok() ? *size : 0;
      response.dbsizeinuse = response.dbsize;
      response.leader = header.member_id;
      response.raftindex = engine->applied_index();
      response.raftappliedindex = engine->applied_index();
      response.raftterm = header.raft_term;
      ok(&response.base);
      break;
    }
    case EndpointKind::kMemberList: {
      Natcd__V1__MemberListResponse response;
      natcd__v1__member_list_response__init(&response);
      response.header = ToProto(now, header, &arena);
      Natcd__V1__Member member;
      natcd__v1__member__init(&member);
      member.id = header.member_id;
      member.name = const_cast<char*>(options.name.c_str());
      Natcd__V1__Member* members[] = {&member};
      response.n_members = 1;
      response.members = members;
      ok(&response.base);
      break;
    }
    case EndpointKind::kMemberAdd:
    case EndpointKind::kMemberRemove:
    case EndpointKind::kMemberPromote:
      fail(Status::Unavailable("ErrUnsupported",
                               "membership changes need a replicated cluster; this natcd is a "
                               "single member"));
      break;
    default:
      fail(Status::Internal("unhandled endpoint " + work->endpoint->name()));
  }
  reply.work = std::move(work);
  replies->push_back(std::move(reply));
}

void Node::Impl::Finish(PendingReply& reply) {
  Work& work = *reply.work;
  // Counted before the reply: a client that reads $SRV.STATS after its
  // reply sees its request.
  work.endpoint->Record(NowNs() - work.received_ns, reply.is_error ? &reply.error.text : nullptr);
  if (reply.is_error) {
    (void)RespondError(nc, work.reply(), reply.error);
  } else {
    (void)Respond(nc, work.reply(), reply.body, work.json);
  }
}

void Node::Impl::Timers() {
  const int64_t now = options.engine.clock->MonotonicMs();
  if (!leases_paused && now >= next_lease_check_ms) {
    next_lease_check_ms = now + options.lease_check_interval_ms;
    if (std::optional<LeaseExpireRequest> due = engine->ExpiredLeases()) {
      (void)engine->Apply(*due);  // a failure stops the engine; health() says why
    }
  }
  if (!leases_paused && now >= next_checkpoint_ms) {
    next_checkpoint_ms = now + options.lease_checkpoint_interval_ms;
    if (std::optional<LeaseCheckpointRequest> due = engine->LeaseCheckpoints()) {
      (void)engine->Apply(*due);
    }
  }
  if (std::optional<int64_t> due =
          compactor->Due(now, engine->revision(), engine->CompactRevision())) {
    (void)engine->Apply(CompactionRequest{*due, false});
  }
  if (now >= next_watch_tick_ms) {
    // Often enough for both the heartbeat and the ack timeout (either may be
    // the shorter).
    next_watch_tick_ms =
        now + std::max<int64_t>(
                  1, std::min(options.watch_heartbeat_ms, options.watch_ack_timeout_ms) / 5);
    streams->Tick();
  }
  if (now >= next_progress_ms) {
    if (next_progress_ms != 0) engine->watches().NotifyProgressAll();
    next_progress_ms = now + options.watch_progress_interval_ms;
  }
}

void Node::Impl::Loop() {
  std::vector<PendingReply> replies;
  for (;;) {
    std::vector<std::unique_ptr<Work>> batch;
    bool more_sync = engine->watches().unsynced_size() > 0;
    {
      std::unique_lock<std::mutex> lock(mu);
      if (queue.empty() && !stopping) {
        wake.wait_for(lock, std::chrono::milliseconds(more_sync ? 0 : kIdleWaitMs));
      }
      batch.swap(queue);
      if (stopping && batch.empty()) break;
    }
    for (auto& work : batch) Handle(std::move(work), &replies);
    Timers();
    Status committed = engine->Commit();
    for (PendingReply& reply : replies) {
      if (!committed.ok() && reply.is_write && !reply.is_error) {
        reply.is_error = true;
        reply.error = ToServiceError(committed);
      }
      Finish(reply);
    }
    replies.clear();
    for (auto& events : engine->TakeCommittedEvents()) publisher->Enqueue(std::move(events));
    engine->watches().SyncUnsynced(kWatchersSyncedPerTurn);
    streams->Deliver();
  }
  // Shutdown: every watch ends with a reason the client can act on.
  engine->watches().CancelAll("server shutting down");
  streams->Deliver(/*ignore_window=*/true);  // the last message, even to a full window
  (void)engine->Commit();
  for (auto& events : engine->TakeCommittedEvents()) publisher->Enqueue(std::move(events));
  publisher->Flush();
  natsConnection_FlushTimeout(nc, 1'000);
}

Result<std::unique_ptr<Node>> Node::Start(natsConnection* nc, const NodeOptions& options,
                                          natsConnection* events_nc) {
  auto impl = std::make_unique<Impl>();
  Status s = impl->Init(nc, options, events_nc);
  std::unique_ptr<Node> node(new Node(std::move(impl)));
  if (!s.ok()) {
    node->Stop();
    return s;
  }
  return node;
}

Node::Node(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Node::~Node() { Stop(); }

void Node::Stop() {
  Impl& impl = *impl_;
  if (impl.stopped) return;
  impl.stopped = true;
  // Stop taking requests: no new messages arrive, and those already
  // received are handed to the engine loop, which answers them.
  // (Without a connection nothing can drain: just unsubscribe.) One
  // deadline for all: a stuck drain must not hold shutdown for long.
  const bool connected = natsConnection_Status(impl.nc) == NATS_CONN_STATUS_CONNECTED;
  for (auto& subscription : impl.subscriptions) {
    if (connected) {
      (void)natsSubscription_Drain(subscription->sub);
    } else {
      (void)natsSubscription_Unsubscribe(subscription->sub);
    }
  }
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(kDrainTimeoutMs);
  for (auto& subscription : impl.subscriptions) {
    if (!connected) break;
    int64_t left_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    if (left_ms <= 0) break;
    (void)natsSubscription_WaitForDrainCompletion(subscription->sub, left_ms);
  }
  impl.accepting = false;
  for (auto& subscription : impl.subscriptions) natsSubscription_Destroy(subscription->sub);
  {
    std::lock_guard<std::mutex> lock(impl.mu);
    impl.stopping = true;
  }
  impl.wake.notify_one();
  if (impl.thread.joinable()) impl.thread.join();
  impl.subscriptions.clear();
  impl.streams.reset();
  impl.engine.reset();
}

void Node::OnDisconnected() {
  auto work = std::make_unique<Work>();
  work->notice = Work::Notice::kDisconnected;
  impl_->Enqueue(std::move(work));
}

void Node::OnReconnected() {
  auto work = std::make_unique<Work>();
  work->notice = Work::Notice::kReconnected;
  impl_->Enqueue(std::move(work));
}

const NodeOptions& Node::options() const { return impl_->options; }

}  // namespace natcd::nats
