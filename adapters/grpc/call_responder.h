// How the member's answer reaches a gRPC call: the Responder of a request
// that came over gRPC. A response is encoded as the method's response
// message and sent on the call (as its last message for a unary call); an
// error ends the call with etcd's gRPC status.
//
// Thread safety: Respond runs on the member thread (or the peer transport's,
// for a forwarded request); StreamCall is thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "adapters/grpc/stream_call.h"
#include "server/request.h"

namespace natcd::etcd_api {

// The response message's bytes for a member response.
using ResponseEncoder = std::function<std::string(const server::Response&, uint64_t raft_term)>;

class CallResponder final : public server::Responder {
 public:
  // last: the response is the call's last message (a unary call).
  // on_answered: runs after the answer went to the call (may be empty).
  CallResponder(std::shared_ptr<StreamCall> call, ResponseEncoder encode, bool last,
                std::function<void()> on_answered = {})
      : call_(std::move(call)),
        encode_(std::move(encode)),
        last_(last),
        on_answered_(std::move(on_answered)) {}

  void Respond(Result<server::Response> response, const server::ResponseContext& context) override;

 private:
  const std::shared_ptr<StreamCall> call_;
  const ResponseEncoder encode_;
  const bool last_;
  const std::function<void()> on_answered_;
};

}  // namespace natcd::etcd_api
