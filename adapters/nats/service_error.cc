#include "adapters/nats/service_error.h"

namespace natcd::nats {

ServiceError ToServiceError(const Status& status) {
  using Code = Status::Code;
  ServiceError out;
  out.text = status.ToString();
  switch (status.code()) {
    case Code::kOk:
      out.code = 200;
      break;
    case Code::kInvalidArgument:
    case Code::kNotFound:
    case Code::kFutureRevision:
      out.code = 400;
      break;
    case Code::kLeaseNotFound:
      out.code = 404;
      break;
    case Code::kTimeout:
      out.code = 408;
      break;
    case Code::kLeaseExists:
      out.code = 409;
      break;
    case Code::kCompacted:
      out.code = 410;
      out.compact_revision = status.compact_revision();
      break;
    case Code::kTooLarge:
      out.code = 413;
      break;
    case Code::kLeaseTTLTooLarge:
      out.code = 400;  // a bad argument, not an oversized request
      break;
    case Code::kTooManyRequests:
      out.code = 429;
      break;
    case Code::kUnavailable:
    case Code::kNotLeader:
    case Code::kBusy:
      out.code = 503;
      break;
    case Code::kIOError:
    case Code::kCorruption:
    case Code::kInternal:
    case Code::kLogCompacted:  // Raft's own: never a client's answer
      out.code = 500;
      break;
  }
  return out;
}

}  // namespace natcd::nats
