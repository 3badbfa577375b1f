// grpc.health.v1.Health/Watch, as grpc-go's health server answers it (the
// server etcd registers): the serving status at once, then every change,
// until the client leaves. The status is Check's: SERVING while the member
// knows a leader, NOT_SERVING otherwise. A named service is SERVICE_UNKNOWN
// and its stream stays open, as grpc-go's does (natcd has no named
// services, so it never changes).
//
// Thread safety: HealthWatchers::Add from grpc++'s threads, Tick on the
// member thread; a status is read and sent under the one mutex, so a
// stream never sees an older status after a newer one.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "adapters/grpc/call_context.h"
#include "adapters/grpc/etcd_methods.h"
#include "adapters/grpc/etcd_rpc.pb-c.h"
#include "adapters/grpc/stream_call.h"
#include "natcd/mutex.h"
#include "server/member.h"

namespace natcd::etcd_api {

using ServingStatus = Natcd__Grpc__HealthCheckResponse__ServingStatus;

class HealthWatchCall;

class HealthWatchers {
 public:
  explicit HealthWatchers(server::Member* member) : member_(member) {}

  // Sends `call` the status now and every change after.
  void Add(const std::shared_ptr<HealthWatchCall>& call);
  // Sends a changed status to every open stream.
  void Tick();

 private:
  // Records the member's status and sends it to the open streams if it
  // changed.
  void SendChange() REQUIRES(mu_);

  server::Member* const member_;
  Mutex mu_;
  std::vector<std::weak_ptr<HealthWatchCall>> calls_ GUARDED_BY(mu_);
  // What the open streams were last sent (Tick sends only a change).
  ServingStatus sent_ GUARDED_BY(mu_) = NATCD__GRPC__HEALTH_CHECK_RESPONSE__SERVING_STATUS__UNKNOWN;
};

class HealthWatchCall final : public StreamCall {
 public:
  static grpc::ServerGenericBidiReactor* Start(grpc::GenericCallbackServerContext* context,
                                               const MethodInfo* method, const CallContext* calls);
  // The stream's response message for `status`.
  static std::string Encode(ServingStatus status);

 private:
  HealthWatchCall(grpc::GenericCallbackServerContext* context, const MethodInfo* method,
                  HealthWatchers* watchers)
      : StreamCall(context), method_(method), watchers_(watchers) {}
  bool OnMessage(std::string bytes) override;
  void OnReadsEnded() override;

  const MethodInfo* const method_;
  HealthWatchers* const watchers_;
  bool received_ = false;  // grpc++ thread only (one read at a time)
};

}  // namespace natcd::etcd_api
