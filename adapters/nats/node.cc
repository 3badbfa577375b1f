#include "adapters/nats/node.h"

#include <filesystem>
#include <random>

#include "adapters/nats/front_end/discovery.h"
#include "adapters/nats/front_end/nats_event_sink.h"
#include "adapters/nats/front_end/nats_front_end.h"
#include "adapters/nats/peer/initial_hash_asks.h"
#include "adapters/nats/peer/nats_peer_transport.h"
#include "server/member.h"
#include "server/member_identity.h"

namespace natcd::nats {
namespace {

// One deadline for draining every subscription at shutdown: a stuck drain
// must not hold it for long.
constexpr int64_t kDrainTimeoutMs = 2'000;

server::MemberOptions MemberOptionsOf(const NodeOptions& o, const HeaderInfo& header) {
  server::MemberOptions m;
  m.name = o.name;
  m.member_id = header.member_id;
  m.cluster_id = header.cluster_id;
  m.engine = o.engine;
  m.request_id_window_ms = o.request_id_window_ms;
  m.auto_compaction_mode = o.auto_compaction_mode;
  m.auto_compaction_retention = o.auto_compaction_retention;
  m.lease_check_interval_ms = o.lease_check_interval_ms;
  m.lease_checkpoint_interval_ms = o.lease_checkpoint_interval_ms;
  m.watch_progress_interval_ms = o.watch_progress_interval_ms;
  m.initial_cluster = o.initial_cluster;
  m.new_cluster = o.new_cluster;
  m.heartbeat_interval_ms = o.heartbeat_interval_ms;
  m.election_timeout_ms = o.election_timeout_ms;
  m.request_timeout_ms = o.request_timeout_ms;
  m.auth_token_ttl_ms = o.auth_token_ttl_ms;
  m.snapshot_entries = o.snapshot_entries;
  m.raft_log_segment_bytes = o.raft_log_segment_bytes;
  m.snapshot_catchup_entries = o.snapshot_catchup_entries;
  m.metrics = o.metrics;
  m.quota_backend_bytes = o.quota_backend_bytes;
  m.corrupt_check_interval_ms = o.corrupt_check_interval_ms;
  return m;
}

}  // namespace

struct Node::Parts {
  natsConnection* nc = nullptr;
  NodeOptions options;
  std::unique_ptr<server::Member> member;
  std::unique_ptr<NatsEventSink> events;
  std::unique_ptr<NatsPeerTransport> transport;
  std::unique_ptr<NatsFrontEnd> front_end;
  std::vector<std::unique_ptr<AdditionalFrontEnd>> additional;
  bool stopped = false;
};

Result<std::unique_ptr<Node>> Node::Start(natsConnection* nc, const NodeOptions& options,
                                          natsConnection* events_nc) {
  auto parts = std::make_unique<Parts>();
  parts->nc = nc;
  parts->options = options;
  if (options.engine.clock == nullptr) {
    return Status::InvalidArgument("ErrConfig", "node needs a clock");
  }
  std::mt19937_64 rng(options.engine.seed ^ 0x6e6f6465ull);
  HeaderInfo header;
  header.member_id = options.member_id ? options.member_id : server::MemberIdOf(options.name);
  header.cluster_id = options.cluster_id
                          ? options.cluster_id
                          : server::ClusterIdOf(options.prefix, options.cluster_name);

  // etcd checks only a member that was initialized before this start: a
  // new one has nothing to compare yet.
  std::error_code exists_error;
  const bool initialized = std::filesystem::exists(options.engine.db_path, exists_error);
  Result<std::unique_ptr<server::Member>> member =
      server::Member::Open(MemberOptionsOf(options, header));
  if (!member.ok()) return member.status();
  parts->member = std::move(member).value();
  if (options.initial_corrupt_check && initialized) {
    Status checked = InitialCorruptCheck(nc, options.prefix, options.name, *parts->member,
                                         options.request_timeout_ms);
    if (!checked.ok()) {
      parts->member->Stop();
      return checked;
    }
  }

  natsConnection* buffered_nc = events_nc ? events_nc : nc;
  parts->events = std::make_unique<NatsEventSink>(
      buffered_nc, options.prefix, options.cluster_name,
      options.metrics ? &options.metrics->events_published : nullptr);
  parts->transport = std::make_unique<NatsPeerTransport>(nc, options.prefix, options.cluster_name,
                                                         header.member_id, options.engine.clock,
                                                         options.request_timeout_ms, rng());

  NatsFrontEndOptions front;
  front.prefix = options.prefix;
  front.cluster_name = options.cluster_name;
  front.version = options.version;
  front.request_bytes_max = options.request_bytes_max;
  front.leader_request_weight = options.leader_request_weight;
  front.auth_trusted = options.nats_auth_trusted;
  front.watch.window_messages = options.watch_window_messages;
  front.watch.message_events_max = options.watch_message_events_max;
  front.watch.heartbeat_ms = options.watch_heartbeat_ms;
  front.watch.ack_timeout_ms = options.watch_ack_timeout_ms;
  front.watch.coalesce_ms = options.watch_coalesce_ms;
  front.watch.coalesce_ready_min = options.watch_coalesce_ready_min;
  front.seed = rng();
  front.metrics = options.metrics;
  ServiceIdentity& identity = front.identity;
  identity.id = options.instance_id;
  if (identity.id.empty()) {
    static constexpr char kAlphabet[] =
        "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    for (int i = 0; i < 22; ++i) identity.id += kAlphabet[rng() % 62];
  }
  identity.version = options.version;
  identity.started = Iso8601Now();
  identity.metadata = {{"member", options.name}, {"prefix", options.prefix}};
  parts->front_end =
      std::make_unique<NatsFrontEnd>(nc, buffered_nc, std::move(front), parts->member.get(),
                                     parts->transport.get(), header, options.engine.clock);

  parts->member->SetPeerTransport(parts->transport.get());
  parts->member->SetEventSink(parts->events.get());
  parts->member->AddFrontEnd(parts->front_end.get());
  for (const FrontEndFactory& factory : options.front_ends) {
    Result<std::unique_ptr<AdditionalFrontEnd>> built =
        factory(parts->member.get(), header.cluster_id, header.member_id);
    if (!built.ok()) {
      // Nothing runs yet: stop what was built, then the member.
      for (auto& front_end : parts->additional) {
        front_end->StopReceiving(options.engine.clock->MonotonicMs());
      }
      parts->additional.clear();
      parts->member->Stop();
      return built.status();
    }
    parts->member->AddFrontEnd((*built)->front_end());
    parts->additional.push_back(std::move(built).value());
  }
  parts->member->Start();

  std::unique_ptr<Node> node(new Node(std::move(parts)));
  Parts& p = *node->parts_;
  Status s = p.events->Subscribe(nc);
  if (s.ok()) s = p.transport->Subscribe(p.member.get());
  if (s.ok()) s = p.front_end->Subscribe();
  // Subscriptions are in place once the server has seen them.
  if (s.ok()) {
    natsStatus flushed = natsConnection_FlushTimeout(nc, 5'000);
    if (flushed != NATS_OK) {
      s = Status::Unavailable("ErrNats", std::string("flush: ") + natsStatus_GetText(flushed));
    }
  }
  if (!s.ok()) {
    node->Stop();
    return s;
  }
  return node;
}

Node::Node(std::unique_ptr<Parts> parts) : parts_(std::move(parts)) {}

Node::~Node() { Stop(); }

void Node::Stop() {
  Parts& p = *parts_;
  if (p.stopped) return;
  p.stopped = true;
  // Stop taking requests: no new messages arrive, and those already
  // received are handed to the member, which answers them.
  const bool connected = natsConnection_Status(p.nc) == NATS_CONN_STATUS_CONNECTED;
  const int64_t deadline = p.options.engine.clock->MonotonicMs() + kDrainTimeoutMs;
  for (auto& front_end : p.additional) front_end->StopReceiving(deadline);
  p.front_end->StopReceiving(connected, deadline);
  p.transport->Unsubscribe(connected, deadline);
  p.events->Unsubscribe();
  p.member->Stop();
  if (connected) natsConnection_FlushTimeout(p.nc, 1'000);
  // The member stays (stopped) until the Node goes: nats.c's connection
  // callbacks may still call OnDisconnected/OnReconnected.
}

void Node::OnDisconnected() {
  if (parts_->member) parts_->member->OnDisconnected();
}

void Node::OnReconnected() {
  if (parts_->member) parts_->member->OnReconnected();
}

const NodeOptions& Node::options() const { return parts_->options; }

server::Member& Node::member() { return *parts_->member; }

}  // namespace natcd::nats
