#include "adapters/grpc/call_responder.h"

#include "adapters/grpc/etcd_error.h"

namespace natcd::etcd_api {

void CallResponder::Respond(Result<server::Response> response,
                            const server::ResponseContext& context) {
  if (!response.ok()) {
    call_->End(ToGrpcStatus(response.status()));
  } else if (last_) {
    call_->SendLast(encode_(response.value(), context.raft_term));
  } else {
    call_->Send(encode_(response.value(), context.raft_term));
  }
  if (on_answered_) on_answered_();
}

}  // namespace natcd::etcd_api
