#include "adapters/grpc/watch_call.h"

#include "adapters/grpc/auth_token.h"
#include "adapters/grpc/etcd_rpc.pb-c.h"
#include "adapters/grpc/live_calls.h"
#include "adapters/grpc/message_decoder.h"
#include "adapters/grpc/watch_registry.h"

namespace natcd::etcd_api {

grpc::ServerGenericBidiReactor* WatchCall::Start(grpc::GenericCallbackServerContext* context,
                                                 const MethodInfo* method,
                                                 const CallContext* calls) {
  std::shared_ptr<WatchCall> call(new WatchCall(context, method, calls));
  call->Begin();
  TrackLongLived(*calls, call);
  return call.get();
}

bool WatchCall::OnMessage(std::string bytes) {
  grpc::Status error;
  Message message = DecodeMessage(method_->request, bytes, &error);
  if (message == nullptr) {
    End(error);
    return false;
  }
  auto shared = std::make_shared<Message>(std::move(message));
  auto self = shared_from_this();
  WatchRegistry* registry = calls_->watches;
  std::string token = AuthTokenOf(*context());
  // Held while this member has not applied the token's Authenticate (the
  // stream's requests in order).
  calls_->member->RunOnMemberThreadWithToken(token, [registry, self, shared, token](Engine&) {
    const auto* request = reinterpret_cast<const Natcd__Grpc__WatchRequest*>(shared->get());
    switch (request->request_union_case) {
      case NATCD__GRPC__WATCH_REQUEST__REQUEST_UNION_CREATE_REQUEST:
        registry->Create(self, *request->create_request, token);
        break;
      case NATCD__GRPC__WATCH_REQUEST__REQUEST_UNION_CANCEL_REQUEST:
        registry->Cancel(self.get(), request->cancel_request->watch_id);
        break;
      case NATCD__GRPC__WATCH_REQUEST__REQUEST_UNION_PROGRESS_REQUEST:
        registry->RequestProgress(self.get());
        break;
      default:
        break;  // an empty request: etcd ignores it too
    }
  });
  return true;
}

void WatchCall::OnCallEnded() {
  WatchRegistry* registry = calls_->watches;
  auto self = shared_from_this();
  calls_->member->RunOnMemberThread(
      [registry, self](Engine&) { registry->StreamEnded(self.get()); });
}

}  // namespace natcd::etcd_api
