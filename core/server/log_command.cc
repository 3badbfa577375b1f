#include "server/log_command.h"

#include "server/proto_wire.h"
#include "server/write_kind.h"
#include "server/write_request_codec.h"

namespace natcd::server {
namespace {

// DO NOT CHANGE: persisted. natcd.v1.LogCommand's field numbers.
constexpr uint32_t kKindField = 1;
constexpr uint32_t kRequestField = 2;
constexpr uint32_t kOriginMemberField = 3;
constexpr uint32_t kOriginSeqField = 4;
constexpr uint32_t kRequestIdField = 5;
constexpr uint32_t kRequestExpiresMsField = 6;
constexpr uint32_t kEventsPublishedField = 7;
constexpr uint32_t kAuthRevisionField = 8;
// LogCommand.Kind EVENTS_PUBLISHED and MEMBER_ATTRIBUTES; the others are
// WriteKind's numbers.
constexpr int32_t kEventsPublishedKind = 9;
constexpr int32_t kMemberAttributesKind = 10;
constexpr int32_t kAlarmKind = 11;
constexpr int32_t kAuthChangeKind = 12;
// natcd.v1.MemberAttributesCommand's.
constexpr uint32_t kAttributesMemberField = 1;
constexpr uint32_t kAttributesClientUrlsField = 2;
constexpr uint32_t kAttributesPeerUrlsField = 3;
constexpr uint32_t kAttributesSetsField = 4;

// natcd.v1.AuthChangeCommand's.
constexpr uint32_t kAuthOpField = 1;
constexpr uint32_t kAuthUserField = 2;
constexpr uint32_t kAuthRoleField = 3;
constexpr uint32_t kAuthPasswordHashField = 4;
constexpr uint32_t kAuthNoPasswordField = 5;
constexpr uint32_t kAuthPermissionTypeField = 6;
constexpr uint32_t kAuthKeyField = 7;
constexpr uint32_t kAuthRangeEndField = 8;
constexpr uint32_t kAuthTokenPrefixField = 9;

// natcd.v1.AlarmCommand's.
constexpr uint32_t kAlarmActionField = 1;
constexpr uint32_t kAlarmMemberField = 2;
constexpr uint32_t kAlarmTypeField = 3;

constexpr wire::MessageShape kLogCommandShape{"natcd.v1.LogCommand", nullptr, 0};

Status Invalid(const std::string& what) {
  return Status::InvalidArgument("ErrInvalidArgument", what);
}

// protobuf-c keeps strings as C strings: it writes and reads a string up to
// its first NUL.
std::string_view CString(std::string_view s) { return s.substr(0, s.find('\0')); }

std::string EncodeAuthChange(const AuthChange& c) {
  wire::Writer w;
  w.VarintField(kAuthOpField, static_cast<uint64_t>(c.kind));
  w.BytesField(kAuthUserField, c.user);
  w.BytesField(kAuthRoleField, c.role);
  w.BytesField(kAuthPasswordHashField, CString(c.password_hash));
  w.BoolField(kAuthNoPasswordField, c.no_password);
  w.VarintField(kAuthPermissionTypeField, static_cast<uint64_t>(c.permission.type));
  w.BytesField(kAuthKeyField, c.permission.key);
  w.BytesField(kAuthRangeEndField, c.permission.range_end);
  w.BytesField(kAuthTokenPrefixField, CString(c.token_prefix));
  return w.Take();
}

Status DecodeAuthChange(std::string_view bytes, AuthChange* out) {
  AuthChange c;
  int32_t op = 0;
  uint32_t type = 0;
  std::string_view user, role, hash, key, range_end, token_prefix;
  wire::Reader reader(bytes);
  wire::Field f;
  bool ok = true;
  while (ok && reader.Next(&f)) {
    switch (f.number) {
      case kAuthOpField:
        ok = wire::AsInt32(f, &op);
        break;
      case kAuthUserField:
        ok = wire::AsBytes(f, &user);
        break;
      case kAuthRoleField:
        ok = wire::AsBytes(f, &role);
        break;
      case kAuthPasswordHashField:
        ok = wire::AsBytes(f, &hash);
        break;
      case kAuthNoPasswordField:
        c.no_password = wire::AsBool(f);
        break;
      case kAuthPermissionTypeField:
        ok = wire::AsUint32(f, &type);
        break;
      case kAuthKeyField:
        ok = wire::AsBytes(f, &key);
        break;
      case kAuthRangeEndField:
        ok = wire::AsBytes(f, &range_end);
        break;
      case kAuthTokenPrefixField:
        ok = wire::AsBytes(f, &token_prefix);
        break;
      default:
        break;
    }
  }
  if (!ok || !reader.ok()) return Invalid("malformed natcd.v1.AuthChangeCommand");
  if (op < 1 || op > kAuthChangeKindMax)
    return Invalid("unknown auth change " + std::to_string(op));
  if (type > static_cast<uint32_t>(PermissionType::kReadWrite)) {
    return Invalid("unknown permission type " + std::to_string(type));
  }
  c.kind = static_cast<AuthChangeKind>(op);
  c.user.assign(user);
  c.role.assign(role);
  c.password_hash.assign(CString(hash));
  c.token_prefix.assign(CString(token_prefix));
  c.permission =
      Permission{static_cast<PermissionType>(type), std::string(key), std::string(range_end)};
  *out = std::move(c);
  return Status::OK();
}

std::string EncodeAlarm(const AlarmChange& c) {
  wire::Writer w;
  w.VarintField(kAlarmActionField, static_cast<uint64_t>(c.action));
  w.VarintField(kAlarmMemberField, c.member_id);
  w.VarintField(kAlarmTypeField, static_cast<uint64_t>(c.alarm));
  return w.Take();
}

// Only the values etcd defines: an entry with another is refused here, as
// it would be by every member alike.
Status DecodeAlarm(std::string_view bytes, AlarmChange* out) {
  int32_t action = 0, type = 0;
  uint64_t member = 0;
  wire::Reader reader(bytes);
  wire::Field f;
  bool ok = true;
  while (ok && reader.Next(&f)) {
    switch (f.number) {
      case kAlarmActionField:
        ok = wire::AsInt32(f, &action);
        break;
      case kAlarmMemberField:
        ok = wire::AsUint64(f, &member);
        break;
      case kAlarmTypeField:
        ok = wire::AsInt32(f, &type);
        break;
      default:
        break;
    }
  }
  if (!ok || !reader.ok()) return Invalid("malformed natcd.v1.AlarmCommand");
  if (action < 0 || action > kAlarmActionMax) {
    return Invalid("unknown alarm action " + std::to_string(action));
  }
  if (type < 0 || type > kAlarmTypeMax)
    return Invalid("unknown alarm type " + std::to_string(type));
  *out = AlarmChange{static_cast<AlarmAction>(action), member, static_cast<AlarmType>(type)};
  return Status::OK();
}

}  // namespace

std::string EncodeLogCommand(const LogCommand& command) {
  wire::Writer w;
  if (command.events_published) {
    w.VarintField(kKindField, kEventsPublishedKind);
  } else if (command.member_attributes) {
    w.VarintField(kKindField, kMemberAttributesKind);
    wire::Writer attributes;
    attributes.VarintField(kAttributesMemberField, command.member_attributes->member_id);
    for (const std::string& url : command.member_attributes->client_urls) {
      attributes.BytesField(kAttributesClientUrlsField, CString(url));
    }
    for (const std::string& url : command.member_attributes->peer_urls) {
      attributes.BytesField(kAttributesPeerUrlsField, CString(url));
    }
    attributes.VarintField(kAttributesSetsField,
                           static_cast<uint64_t>(command.member_attributes->sets));
    w.BytesField(kRequestField, attributes.Take());
  } else if (command.alarm) {
    w.VarintField(kKindField, kAlarmKind);
    w.BytesField(kRequestField, EncodeAlarm(*command.alarm));
  } else if (command.auth_change) {
    w.VarintField(kKindField, kAuthChangeKind);
    w.BytesField(kRequestField, EncodeAuthChange(*command.auth_change));
  } else {
    w.VarintField(kKindField, static_cast<uint64_t>(KindOf(command.request)));
    w.BytesField(kRequestField, EncodeWriteRequest(command.request));
  }
  w.VarintField(kOriginMemberField, command.origin_member);
  w.VarintField(kOriginSeqField, command.origin_seq);
  w.BytesField(kRequestIdField, CString(command.request_id));
  w.Int64Field(kRequestExpiresMsField, command.request_expires_ms);
  if (command.events_published) w.Int64Field(kEventsPublishedField, *command.events_published);
  w.VarintField(kAuthRevisionField, command.auth_revision);
  return w.Take();
}

Status DecodeLogCommand(std::string_view bytes, LogCommand* out) {
  if (!wire::WellFormed(bytes, kLogCommandShape)) {
    return Invalid("malformed or too deeply nested protobuf: not a natcd.v1.LogCommand");
  }
  int32_t kind = 0;
  std::string_view request;
  std::string_view request_id;
  uint64_t origin_member = 0, origin_seq = 0, auth_revision = 0;
  int64_t request_expires_ms = 0, events_published = 0;
  wire::Reader reader(bytes);
  wire::Field f;
  bool ok = true;
  while (ok && reader.Next(&f)) {
    switch (f.number) {
      case kKindField:
        ok = wire::AsInt32(f, &kind);
        break;
      case kRequestField:
        ok = wire::AsBytes(f, &request);
        break;
      case kOriginMemberField:
        ok = wire::AsUint64(f, &origin_member);
        break;
      case kOriginSeqField:
        ok = wire::AsUint64(f, &origin_seq);
        break;
      case kRequestIdField:
        ok = wire::AsBytes(f, &request_id);
        break;
      case kRequestExpiresMsField:
        ok = wire::AsInt64(f, &request_expires_ms);
        break;
      case kEventsPublishedField:
        ok = wire::AsInt64(f, &events_published);
        break;
      case kAuthRevisionField:
        ok = wire::AsUint64(f, &auth_revision);
        break;
      default:
        break;  // unknown: skipped
    }
  }
  if (!ok || !reader.ok()) return Invalid("malformed protobuf: not a natcd.v1.LogCommand");
  out->origin_member = origin_member;
  out->origin_seq = origin_seq;
  out->request_id.assign(CString(request_id));
  out->request_expires_ms = request_expires_ms;
  out->auth_revision = auth_revision;
  out->events_published.reset();
  out->member_attributes.reset();
  out->auth_change.reset();
  out->alarm.reset();
  if (kind == kAlarmKind) {
    AlarmChange change;
    NATCD_RETURN_IF_ERROR(DecodeAlarm(request, &change));
    out->alarm = change;
    return Status::OK();
  }
  if (kind == kAuthChangeKind) {
    AuthChange change;
    NATCD_RETURN_IF_ERROR(DecodeAuthChange(request, &change));
    out->auth_change = std::move(change);
    return Status::OK();
  }
  if (kind == kMemberAttributesKind) {
    MemberAttributes attributes;
    wire::Reader fields(request);
    wire::Field a;
    bool good = true;
    int32_t sets = 0;
    while (good && fields.Next(&a)) {
      std::string_view url;
      switch (a.number) {
        case kAttributesMemberField:
          good = wire::AsUint64(a, &attributes.member_id);
          break;
        case kAttributesClientUrlsField:
          good = wire::AsBytes(a, &url);
          attributes.client_urls.emplace_back(CString(url));
          break;
        case kAttributesPeerUrlsField:
          good = wire::AsBytes(a, &url);
          attributes.peer_urls.emplace_back(CString(url));
          break;
        case kAttributesSetsField:
          good = wire::AsInt32(a, &sets);
          break;
        default:
          break;
      }
    }
    if (!good || !fields.ok()) return Invalid("malformed natcd.v1.MemberAttributesCommand");
    if (sets < 0 || sets > static_cast<int32_t>(MemberAttribute::kPeerUrls)) {
      return Invalid("unknown member attribute " + std::to_string(sets));
    }
    attributes.sets = static_cast<MemberAttribute>(sets);
    out->member_attributes = std::move(attributes);
    return Status::OK();
  }
  if (kind == kEventsPublishedKind) {
    if (events_published < 0) return Invalid("negative events_published");
    out->events_published = events_published;
    return Status::OK();
  }
  if (kind < static_cast<int32_t>(WriteKind::kPut) ||
      kind > static_cast<int32_t>(WriteKind::kLeaseCheckpoint)) {
    return Invalid("unknown log command kind " + std::to_string(kind));
  }
  return DecodeWriteRequest(static_cast<WriteKind>(kind), request, &out->request);
}

}  // namespace natcd::server
