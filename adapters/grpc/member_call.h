// A request the gRPC front end makes of the member on its own behalf: the
// lock and election services are recipes of KV requests (as etcd's v3lock
// and v3election run its Go client inside the server), each step taken
// when the member has answered the one before.
//
// Thread safety: AskMember may be called on any thread; `then` runs on the
// member thread, once, with the answer and the term it was given in (a
// forwarded request is answered on the peer transport's thread, so the
// answer is handed over to the member thread).
#pragma once

#include <cstdint>
#include <functional>

#include "adapters/grpc/call_context.h"
#include "server/request.h"

namespace natcd::etcd_api {

using MemberAnswer =
    std::function<void(const Result<server::Response>& response, uint64_t raft_term)>;

void AskMember(const CallContext* calls, server::RequestPayload payload, MemberAnswer then);

}  // namespace natcd::etcd_api
