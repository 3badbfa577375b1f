#include "adapters/nats/codec/service_error.h"

#include <charconv>
#include <string_view>

namespace natcd::nats {
namespace {

// The names the tree gives Status::NotFound, which shares 400 with
// kInvalidArgument.
bool NotFoundName(std::string_view name) {
  for (std::string_view n :
       {"ErrKeyNotFound", "ErrMemberNotFound", "ErrWatchNotFound", "ErrWatcherNotExist",
        "ErrRevisionNotFound", "ErrNoSnapshot", "ErrNoDatabase", "ErrStepPeerNotFound"}) {
    if (name == n) return true;
  }
  return false;
}

Status::Code CodeOf(int http, std::string_view name) {
  using Code = Status::Code;
  switch (http) {
    case 400:
      if (name == "ErrFutureRev") return Code::kFutureRevision;
      if (name == "ErrLeaseTTLTooLarge") return Code::kLeaseTTLTooLarge;
      if (NotFoundName(name)) return Code::kNotFound;
      return Code::kInvalidArgument;
    case 404:
      return Code::kLeaseNotFound;
    case 408:
      return Code::kTimeout;
    case 409:
      return Code::kLeaseExists;
    case 410:
      return Code::kCompacted;
    case 413:
      return Code::kTooLarge;
    case 429:
      return Code::kTooManyRequests;
    case 507:
      return Code::kNoSpace;
    case 503:
      if (name == "ErrNotLeader") return Code::kNotLeader;
      if (name == "ErrBusy") return Code::kBusy;
      return Code::kUnavailable;
    case 500:
      if (name == "ErrIO") return Code::kIOError;
      if (name == "ErrCorrupt") return Code::kCorruption;
      return Code::kInternal;
    default:  // 200 included: an error reply is never a success
      return Code::kInternal;
  }
}

// Reads "<prefix><int64>" off the front of *s.
bool ReadNumberAfter(std::string_view* s, std::string_view prefix, int64_t* out) {
  if (s->substr(0, prefix.size()) != prefix) return false;
  s->remove_prefix(prefix.size());
  auto [end, ec] = std::from_chars(s->data(), s->data() + s->size(), *out);
  if (ec != std::errc()) return false;
  s->remove_prefix(static_cast<size_t>(end - s->data()));
  return true;
}

}  // namespace

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
    case Code::kNoSpace:  // HTTP's Insufficient Storage
      out.code = 507;
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

Status FromServiceError(const ServiceError& error) {
  const std::string_view text = error.text;
  const size_t colon = text.find(": ");
  const std::string_view name = colon == std::string_view::npos ? "" : text.substr(0, colon);
  const std::string_view message = colon == std::string_view::npos ? text : text.substr(colon + 2);
  const Status::Code code = CodeOf(error.code, name);
  if (code == Status::Code::kCompacted) {
    // Only Status::Compacted carries a compact revision: rebuilt through it
    // when that gives back the very message.
    std::string_view rest = message;
    int64_t required = 0, compact = 0;
    if (ReadNumberAfter(&rest, "etcdserver: mvcc: required revision ", &required) &&
        ReadNumberAfter(&rest, " has been compacted; compact revision is ", &compact) &&
        rest.empty()) {
      Status s =
          Status::Compacted(required, error.compact_revision ? error.compact_revision : compact);
      if (s.name() == name && s.message() == message) return s;
    }
  }
  return Status(code, name, message);
}

}  // namespace natcd::nats
