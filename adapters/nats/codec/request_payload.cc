#include "adapters/nats/codec/request_payload.h"

#include <string>
#include <utility>

#include "adapters/nats/codec/convert.h"
#include "adapters/nats/natcd.pb-c.h"

namespace natcd::nats {

Result<server::RequestPayload> ToPayload(EndpointKind kind, const ProtobufCMessage* body,
                                         int64_t hex_lease_id) {
  switch (kind) {
    case EndpointKind::kRange: {
      RangeRequest r;
      NATCD_RETURN_IF_ERROR(FromProto(*reinterpret_cast<const Natcd__V1__RangeRequest*>(body), &r));
      return server::RequestPayload(std::move(r));
    }
    case EndpointKind::kPut: {
      PutRequest r;
      NATCD_RETURN_IF_ERROR(FromProto(*reinterpret_cast<const Natcd__V1__PutRequest*>(body), &r));
      return server::RequestPayload(std::move(r));
    }
    case EndpointKind::kDeleteRange: {
      DeleteRangeRequest r;
      NATCD_RETURN_IF_ERROR(
          FromProto(*reinterpret_cast<const Natcd__V1__DeleteRangeRequest*>(body), &r));
      return server::RequestPayload(std::move(r));
    }
    case EndpointKind::kTxn: {
      TxnRequest r;
      NATCD_RETURN_IF_ERROR(FromProto(*reinterpret_cast<const Natcd__V1__TxnRequest*>(body), &r));
      return server::RequestPayload(std::move(r));
    }
    case EndpointKind::kCompact: {
      CompactionRequest r;
      NATCD_RETURN_IF_ERROR(
          FromProto(*reinterpret_cast<const Natcd__V1__CompactionRequest*>(body), &r));
      return server::RequestPayload(r);
    }
    case EndpointKind::kLeaseGrant: {
      auto* in = reinterpret_cast<const Natcd__V1__LeaseGrantRequest*>(body);
      if (in->id < 0) {
        return Status::InvalidArgument("ErrInvalidArgument", "lease ID must not be negative");
      }
      return server::RequestPayload(LeaseGrantRequest{in->ttl, in->id});
    }
    case EndpointKind::kLeaseRevoke:
      return server::RequestPayload(
          LeaseRevokeRequest{reinterpret_cast<const Natcd__V1__LeaseRevokeRequest*>(body)->id});
    case EndpointKind::kLeaseKeepAlive:
      return server::RequestPayload(LeaseKeepAliveRequest{
          reinterpret_cast<const Natcd__V1__LeaseKeepAliveRequest*>(body)->id});
    case EndpointKind::kLeaseKeepAliveHex:
      return server::RequestPayload(LeaseKeepAliveRequest{hex_lease_id});
    case EndpointKind::kLeaseTimeToLive: {
      auto* in = reinterpret_cast<const Natcd__V1__LeaseTimeToLiveRequest*>(body);
      return server::RequestPayload(LeaseTimeToLiveRequest{in->id, static_cast<bool>(in->keys)});
    }
    case EndpointKind::kLeaseLeases:
      return server::RequestPayload(server::LeaseLeasesRequest{});
    case EndpointKind::kStatus:
      return server::RequestPayload(server::StatusRequest{});
    case EndpointKind::kHashKV:
      return server::RequestPayload(
          HashKVRequest{reinterpret_cast<const Natcd__V1__HashKVRequest*>(body)->revision});
    case EndpointKind::kHash:
      return server::RequestPayload(HashRequest{});
    case EndpointKind::kDefragment:
      return server::RequestPayload(DefragmentRequest{});
    case EndpointKind::kAlarm: {
      auto* in = reinterpret_cast<const Natcd__V1__AlarmRequest*>(body);
      // Values past etcd's are refused here with the member's own words
      // (they would not fit the member's enums).
      const int action = static_cast<int>(in->action);
      const int alarm = static_cast<int>(in->alarm);
      if (action < 0 || action > kAlarmActionMax) {
        return Status::InvalidArgument(
            "ErrInvalidArgument", "etcdserver: unknown alarm action " + std::to_string(action));
      }
      if (alarm < 0 || alarm > kAlarmTypeMax) {
        return Status::InvalidArgument(
            "ErrInvalidArgument",
            "etcdserver: unknown alarm type " + std::to_string(alarm) + " (NOSPACE or CORRUPT)");
      }
      return server::RequestPayload(server::AlarmRequest{
          static_cast<AlarmAction>(action), in->memberid, static_cast<AlarmType>(alarm)});
    }
    case EndpointKind::kMoveLeader:
      return server::RequestPayload(server::MoveLeaderRequest{
          reinterpret_cast<const Natcd__V1__MoveLeaderRequest*>(body)->targetid});
    case EndpointKind::kMemberList:
      return server::RequestPayload(server::MemberListRequest{});
    case EndpointKind::kMemberAdd: {
      auto* in = reinterpret_cast<const Natcd__V1__MemberAddRequest*>(body);
      server::MemberAddRequest add{in->name ? in->name : "", static_cast<bool>(in->islearner), {}};
      for (size_t i = 0; i < in->n_peerurls; i++) add.peer_urls.emplace_back(in->peerurls[i]);
      return server::RequestPayload(std::move(add));
    }
    case EndpointKind::kMemberRemove:
      return server::RequestPayload(server::MemberRemoveRequest{
          reinterpret_cast<const Natcd__V1__MemberRemoveRequest*>(body)->id});
    case EndpointKind::kMemberPromote:
      return server::RequestPayload(server::MemberPromoteRequest{
          reinterpret_cast<const Natcd__V1__MemberPromoteRequest*>(body)->id});
    case EndpointKind::kMemberUpdate: {
      auto* in = reinterpret_cast<const Natcd__V1__MemberUpdateRequest*>(body);
      server::MemberUpdateRequest update{in->id, {}};
      for (size_t i = 0; i < in->n_peerurls; i++) update.peer_urls.emplace_back(in->peerurls[i]);
      return server::RequestPayload(std::move(update));
    }
    default:
      return Status::Internal("not a member request");
  }
}

}  // namespace natcd::nats
