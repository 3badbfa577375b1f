#include "server/request_outcome.h"

#include <charconv>

#include "server/proto_wire.h"
#include "server/write_response_codec.h"

namespace natcd::server {
namespace {

// DO NOT CHANGE: persisted. The first byte of each form.
constexpr char kOutcomeForm = 'O';
constexpr char kOldResponseForm = 'R';
constexpr char kOldErrorForm = 'E';

// DO NOT CHANGE: persisted. The 'O' form's field numbers.
enum : uint32_t {
  kKindField = 1,
  kResponseField = 2,
  kCodeField = 3,
  kNameField = 4,
  kMessageField = 5,
  kCompactRevisionField = 6,
};

constexpr uint8_t kLastCode = static_cast<uint8_t>(Status::Code::kNoSpace);

Status Undecodable(const std::string& why) {
  return Status::Internal("remembered outcome does not decode: " + why);
}

// Reads "<prefix><int64><suffix>" exactly.
bool ReadNumberBetween(std::string_view* s, std::string_view prefix, int64_t* out) {
  if (s->substr(0, prefix.size()) != prefix) return false;
  s->remove_prefix(prefix.size());
  auto [end, ec] = std::from_chars(s->data(), s->data() + s->size(), *out);
  if (ec != std::errc()) return false;
  s->remove_prefix(static_cast<size_t>(end - s->data()));
  return true;
}

// A Status of `code` with that name and message. Status can carry a compact
// revision only when Status::Compacted builds it, so an ErrCompacted is
// rebuilt through it: its message names the required revision, and the
// rebuilt Status is used when it says exactly what was stored (always, for
// the engine's; otherwise the compact revision cannot be kept).
Status Rebuild(Status::Code code, std::string_view name, std::string_view message,
               int64_t compact_revision) {
  if (code == Status::Code::kCompacted) {
    std::string_view rest = message;
    int64_t required = 0, compact = 0;
    if (ReadNumberBetween(&rest, "etcdserver: mvcc: required revision ", &required) &&
        ReadNumberBetween(&rest, " has been compacted; compact revision is ", &compact) &&
        rest.empty()) {
      Status s = Status::Compacted(required, compact_revision ? compact_revision : compact);
      if (s.name() == name && s.message() == message) return s;
    }
  }
  return Status(code, name, message);
}

// The engine's code for an old 'E' outcome (service_error.cc, backwards).
Status::Code CodeOfServiceError(int http, std::string_view name) {
  using Code = Status::Code;
  switch (http) {
    case 400:
      if (name == "ErrFutureRev") return Code::kFutureRevision;
      if (name == "ErrLeaseTTLTooLarge") return Code::kLeaseTTLTooLarge;
      if (name == "ErrKeyNotFound" || name == "ErrWatcherNotExist" ||
          name == "ErrRevisionNotFound" || name == "ErrNoSnapshot" || name == "ErrNoDatabase" ||
          name == "ErrStepPeerNotFound") {
        return Code::kNotFound;
      }
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
    case 503:
      if (name == "ErrNotLeader") return Code::kNotLeader;
      if (name == "ErrBusy") return Code::kBusy;
      return Code::kUnavailable;
    case 500:
      if (name == "ErrIO") return Code::kIOError;
      if (name == "ErrCorrupt") return Code::kCorruption;
      return Code::kInternal;
    default:
      return Code::kInternal;
  }
}

Result<WriteResponse> DecodeOldError(std::string_view rest) {
  int http = 0;
  if (rest.size() < 3) return Undecodable("short 'E' outcome");
  for (int i = 0; i < 3; i++) {
    if (rest[i] < '0' || rest[i] > '9') return Undecodable("'E' outcome without its code");
    http = http * 10 + (rest[i] - '0');
  }
  std::string_view text = rest.substr(3);  // Status::ToString: "ErrName: message"
  const size_t colon = text.find(": ");
  std::string_view name =
      colon == std::string_view::npos ? std::string_view() : text.substr(0, colon);
  std::string_view message = colon == std::string_view::npos ? text : text.substr(colon + 2);
  const Status::Code code = CodeOfServiceError(http, name);
  if (code == Status::Code::kOk) return Undecodable("'E' outcome with a success code");
  return Rebuild(code, name, message, 0);
}

Result<WriteResponse> DecodeNew(std::string_view rest, WriteKind expected) {
  uint64_t kind = 0, code = 0;
  int64_t compact_revision = 0;
  std::string_view response, name, message;
  bool has_response = false;
  wire::Reader reader(rest);
  wire::Field f;
  bool ok = true;
  while (ok && reader.Next(&f)) {
    switch (f.number) {
      case kKindField:
        ok = wire::AsUint64(f, &kind);
        break;
      case kResponseField:
        ok = wire::AsBytes(f, &response);
        has_response = true;
        break;
      case kCodeField:
        ok = wire::AsUint64(f, &code);
        break;
      case kNameField:
        ok = wire::AsBytes(f, &name);
        break;
      case kMessageField:
        ok = wire::AsBytes(f, &message);
        break;
      case kCompactRevisionField:
        ok = wire::AsInt64(f, &compact_revision);
        break;
      default:
        break;  // a later version's field
    }
  }
  if (!ok || !reader.ok()) return Undecodable("malformed 'O' outcome");
  if (code != 0) {
    // A code this version does not know is still an error, with its text.
    const auto c = code > kLastCode ? Status::Code::kInternal : static_cast<Status::Code>(code);
    return Rebuild(c, name, message, compact_revision);
  }
  if (kind < static_cast<uint64_t>(WriteKind::kPut) ||
      kind > static_cast<uint64_t>(WriteKind::kLeaseCheckpoint) || !has_response) {
    return Undecodable("'O' outcome with neither an error nor a response");
  }
  if (static_cast<WriteKind>(kind) != expected) {
    return Status::InvalidArgument("ErrInvalidArgument",
                                   std::string("request id already used by a ") +
                                       WriteKindName(static_cast<WriteKind>(kind)) + ", not a " +
                                       WriteKindName(expected));
  }
  WriteResponse out;
  Status s = DecodeWriteResponse(expected, response, &out);
  if (!s.ok()) return Undecodable(std::string(s.message()));
  return out;
}

}  // namespace

std::string EncodeOutcome(const Result<WriteResponse>& outcome) {
  wire::Writer w;
  w.out().push_back(kOutcomeForm);
  if (outcome.ok()) {
    w.Varint(kKindField, static_cast<uint64_t>(KindOf(outcome.value())));
    w.Bytes(kResponseField, EncodeWriteResponse(outcome.value()));
  } else {
    const Status& s = outcome.status();
    w.Varint(kCodeField, static_cast<uint64_t>(s.code()));
    w.BytesField(kNameField, s.name());
    w.BytesField(kMessageField, s.message());
    w.Int64Field(kCompactRevisionField, s.compact_revision());
  }
  return w.Take();
}

Result<WriteResponse> DecodeOutcome(std::string_view bytes, WriteKind expected) {
  if (bytes.empty()) return Undecodable("empty");
  const std::string_view rest = bytes.substr(1);
  switch (bytes[0]) {
    case kOutcomeForm:
      return DecodeNew(rest, expected);
    case kOldErrorForm:
      return DecodeOldError(rest);
    case kOldResponseForm: {
      WriteResponse out;
      Status s = DecodeWriteResponse(expected, rest, &out);
      if (!s.ok()) return Undecodable(std::string(s.message()));
      return out;
    }
    default:
      return Undecodable("unknown form");
  }
}

}  // namespace natcd::server
