#include "adapters/grpc/lease_keepalive_call.h"

#include "adapters/grpc/call_responder.h"
#include "adapters/grpc/etcd_error.h"
#include "adapters/grpc/live_calls.h"
#include "adapters/grpc/message_decoder.h"

namespace natcd::etcd_api {

grpc::ServerGenericBidiReactor* LeaseKeepAliveCall::Start(
    grpc::GenericCallbackServerContext* context, const MethodInfo* method,
    const CallContext* calls) {
  std::shared_ptr<LeaseKeepAliveCall> call(new LeaseKeepAliveCall(context, method, calls));
  call->Begin();
  TrackLongLived(*calls, call);
  return call.get();
}

bool LeaseKeepAliveCall::OnMessage(std::string bytes) {
  grpc::Status error;
  Message message = DecodeMessage(method_->request, bytes, &error);
  if (message == nullptr) {
    End(error);
    return false;
  }
  Result<server::RequestPayload> payload = DecodeRequest(Method::kLeaseKeepAlive, *message);
  if (!payload.ok()) {
    End(ToGrpcStatus(payload.status()));
    return false;
  }
  const ResponseInfo* info = &calls_->response;
  auto self = std::static_pointer_cast<LeaseKeepAliveCall>(shared_from_this());
  auto request = std::make_unique<server::Request>();
  request->payload = std::move(payload).value();
  request->received_ms = calls_->clock->MonotonicMs();
  request->responder = std::make_unique<CallResponder>(
      self,
      [info](const server::Response& r, uint64_t term) { return EncodeResponse(r, *info, term); },
      /*last=*/false, [self] { self->Answered(); });
  const int in_flight = ++in_flight_;
  calls_->member->Submit(std::move(request));
  return in_flight < kInFlightMax;
}

void LeaseKeepAliveCall::Answered() {
  if (in_flight_-- == kInFlightMax) ResumeReading();
}

}  // namespace natcd::etcd_api
