#include "adapters/grpc/member_call.h"

#include <memory>
#include <utility>

namespace natcd::etcd_api {
namespace {

class ContinuationResponder final : public server::Responder {
 public:
  ContinuationResponder(server::Member* member, MemberAnswer then)
      : member_(member), then_(std::move(then)) {}

  void Respond(Result<server::Response> response, const server::ResponseContext& context) override {
    auto answer = std::make_shared<Result<server::Response>>(std::move(response));
    const uint64_t term = context.raft_term;
    member_->RunOnMemberThread(
        [then = std::move(then_), answer, term](Engine&) { then(*answer, term); });
  }

 private:
  server::Member* const member_;
  MemberAnswer then_;
};

}  // namespace

void AskMember(const CallContext* calls, server::RequestPayload payload, MemberAnswer then) {
  auto request = std::make_unique<server::Request>();
  request->payload = std::move(payload);
  request->received_ms = calls->clock->MonotonicMs();
  request->responder = std::make_unique<ContinuationResponder>(calls->member, std::move(then));
  calls->member->Submit(std::move(request));
}

}  // namespace natcd::etcd_api
