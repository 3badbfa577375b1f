#include "adapters/grpc/health_watch.h"

#include <algorithm>
#include <utility>

#include "adapters/grpc/etcd_codec.h"
#include "adapters/grpc/live_calls.h"
#include "adapters/grpc/message_decoder.h"

namespace natcd::etcd_api {

void HealthWatchers::Add(const std::shared_ptr<HealthWatchCall>& call) {
  MutexLock lock(&mu_);
  std::erase_if(calls_, [](const std::weak_ptr<HealthWatchCall>& c) { return c.expired(); });
  // The open streams first, so that a new one never starts ahead of them.
  SendChange();
  call->Send(HealthWatchCall::Encode(sent_));
  calls_.push_back(call);
}

void HealthWatchers::Tick() {
  MutexLock lock(&mu_);
  SendChange();
}

void HealthWatchers::SendChange() {
  const ServingStatus now = member_->leader() != 0
                                ? NATCD__GRPC__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVING
                                : NATCD__GRPC__HEALTH_CHECK_RESPONSE__SERVING_STATUS__NOT_SERVING;
  if (now == sent_) return;
  sent_ = now;
  const std::string bytes = HealthWatchCall::Encode(now);
  for (const auto& weak : calls_) {
    if (auto call = weak.lock()) call->Send(bytes);
  }
}

grpc::ServerGenericBidiReactor* HealthWatchCall::Start(grpc::GenericCallbackServerContext* context,
                                                       const MethodInfo* method,
                                                       const CallContext* calls) {
  std::shared_ptr<HealthWatchCall> call(new HealthWatchCall(context, method, calls->health));
  call->Begin();
  // It never ends by itself: a stopping server ends it.
  TrackLongLived(*calls, call);
  return call.get();
}

std::string HealthWatchCall::Encode(ServingStatus status) {
  Natcd__Grpc__HealthCheckResponse out;
  natcd__grpc__health_check_response__init(&out);
  out.status = status;
  return Pack(out.base);
}

bool HealthWatchCall::OnMessage(std::string bytes) {
  received_ = true;
  grpc::Status error;
  Message message = DecodeMessage(method_->request, bytes, &error);
  if (message == nullptr) {
    End(error);
    return false;
  }
  auto* in = reinterpret_cast<const Natcd__Grpc__HealthCheckRequest*>(message.get());
  if (in->service != nullptr && in->service[0] != '\0') {
    Send(Encode(NATCD__GRPC__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVICE_UNKNOWN));
    return false;
  }
  watchers_->Add(std::static_pointer_cast<HealthWatchCall>(shared_from_this()));
  return false;  // the one message
}

void HealthWatchCall::OnReadsEnded() {
  if (!received_) End(grpc::Status(grpc::StatusCode::INTERNAL, "no request message"));
}

}  // namespace natcd::etcd_api
