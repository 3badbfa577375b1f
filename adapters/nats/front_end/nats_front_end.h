// The NATS front end (docs/PROTOCOL.md): subscribes the request subjects,
// decodes each request at this edge into a member request of engine values
// (or, for watches, an operation on the member thread), answers through a
// NatsResponder, delivers watches over NATS (watch_streams.h) and answers
// the micro-services discovery subjects.
//
// Threads. nats.c delivers each subscription's messages on its own thread;
// those callbacks only decode, validate and hand over. Everything that
// touches the engine or the watch streams runs on the member thread (the
// FrontEnd hooks and RunOnMemberThread tasks).
#pragma once

#include <nats/nats.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "adapters/nats/codec/endpoint.h"
#include "adapters/nats/codec/wire.h"
#include "adapters/nats/front_end/discovery.h"
#include "adapters/nats/front_end/nats_responder.h"
#include "adapters/nats/front_end/watch_streams.h"
#include "adapters/nats/peer/nats_peer_transport.h"
#include "natcd/mutex.h"
#include "server/front_end.h"
#include "server/member.h"

namespace natcd::nats {

struct NatsFrontEndOptions {
  std::string prefix = "natcd";
  std::string cluster_name = "default";
  std::string version = "0.1.0";
  size_t request_bytes_max = 1'572'864;  // etcd's --max-request-bytes
  // Subscriptions the leader holds on each write and keepalive subject where
  // a follower holds one: NATS then hands it most writes directly.
  int leader_request_weight = 48;
  WatchStreamOptions watch;
  ServiceIdentity identity;
  uint64_t seed = 0;  // for server-chosen watch IDs
  // With auth enabled (etcd's Auth service over gRPC): true serves NATS
  // requests unchecked, for deployments whose NATS account permissions
  // already guard the subjects (--nats-trusted); false refuses every NATS
  // request that needs a user (a NATS request carries no auth token).
  bool auth_trusted = false;
  // Request durations by endpoint; null: not recorded.
  metrics::MemberMetrics* metrics = nullptr;
};

class NatsFrontEnd final : public server::FrontEnd {
 public:
  // `transport` gets its forwarded requests timed out after each turn.
  NatsFrontEnd(natsConnection* nc, natsConnection* buffered_nc, NatsFrontEndOptions options,
               server::Member* member, NatsPeerTransport* transport, HeaderInfo header,
               Clock* clock);
  ~NatsFrontEnd() override;
  NatsFrontEnd(const NatsFrontEnd&) = delete;
  NatsFrontEnd& operator=(const NatsFrontEnd&) = delete;

  // Subscribes every request subject.
  Status Subscribe();
  // Stop taking requests: what already arrived is handed to the member
  // (drained, when connected, until the deadline); later ones are refused.
  void StopReceiving(bool connected, int64_t deadline_ms);

  // server::FrontEnd (member thread)
  void Attach(Engine* engine) override;
  void Detach() override;
  void AfterTurn() override;
  void Tick() override;
  void LeadershipChanged(bool leading) override;

 private:
  struct Subscription {
    NatsFrontEnd* front_end;
    Endpoint* endpoint;  // null: discovery
    natsSubscription* sub = nullptr;
  };
  void AddEndpoint(const std::string& name, const std::string& suffix, bool queue,
                   EndpointKind kind, const ProtobufCMessageDescriptor* request);
  Result<std::unique_ptr<Subscription>> SubscribeTo(const std::string& subject,
                                                    const std::string& queue, Endpoint* endpoint);
  static void OnMessage(natsConnection* nc, natsSubscription* sub, natsMsg* msg, void* closure);
  void Receive(Endpoint* endpoint, natsMsg* msg);
  // The response header now (the term moves).
  HeaderInfo Header() const;
  // Member thread: the watch operations.
  // token: the request's Natcd-Auth-Token ("" without one).
  void CreateWatch(Engine& engine, NatsResponder& responder, const UniqueMessage& body, bool json,
                   const std::string& token) REQUIRES(on_member_thread_);
  void CancelWatch(Engine& engine, NatsResponder& responder, int64_t id)
      REQUIRES(on_member_thread_);
  void RequestProgress(Engine& engine, NatsResponder& responder, int64_t id)
      REQUIRES(on_member_thread_);

  natsConnection* const nc_;
  const NatsFrontEndOptions options_;
  server::Member* const member_;
  NatsPeerTransport* const transport_;
  Clock* const clock_;
  ReplyContext reply_;
  std::vector<std::unique_ptr<Endpoint>> endpoints_;
  std::vector<std::unique_ptr<Subscription>> subscriptions_;
  std::atomic<bool> accepting_{true};

  // Member thread only: the hooks and the tasks run there and assert it.
  ThreadRole on_member_thread_;
  Engine* engine_ GUARDED_BY(on_member_thread_) = nullptr;
  std::unique_ptr<WatchStreams> streams_ GUARDED_BY(on_member_thread_);
  std::mt19937_64 rng_ GUARDED_BY(on_member_thread_);
  int64_t next_watch_tick_ms_ GUARDED_BY(on_member_thread_) = 0;

  // The leader's extra queue subscriptions on write subjects (see
  // LeadershipChanged), and those given up, until their drain completes.
  // StopReceiving takes them over.
  Mutex weight_mu_;
  bool weight_stopped_ GUARDED_BY(weight_mu_) = false;
  std::vector<std::unique_ptr<Subscription>> leader_weight_ GUARDED_BY(weight_mu_);
  std::vector<std::unique_ptr<Subscription>> weight_draining_ GUARDED_BY(weight_mu_);
};

}  // namespace natcd::nats
