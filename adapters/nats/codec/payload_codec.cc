#include "adapters/nats/codec/payload_codec.h"

#include <type_traits>
#include <utility>
#include <variant>

#include "adapters/nats/codec/client_convert.h"
#include "adapters/nats/codec/wire.h"
#include "adapters/nats/natcd.pb-c.h"

namespace natcd::nats {
namespace {

WireRequest Packed(EndpointKind kind, const char* suffix, const ProtobufCMessage* message) {
  return WireRequest{kind, suffix, EncodeMessage(message, /*json=*/false)};
}

std::vector<server::MemberInfo> MembersFromProto(size_t n, Natcd__V1__Member* const* members) {
  std::vector<server::MemberInfo> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    server::MemberInfo m{members[i]->id,
                         members[i]->name ? members[i]->name : "",
                         static_cast<bool>(members[i]->islearner),
                         {},
                         {}};
    for (size_t k = 0; k < members[i]->n_clienturls; ++k) {
      m.client_urls.emplace_back(members[i]->clienturls[k]);
    }
    // The forwarding member lists them as they came (the leader's Raft
    // subject for a member without URLs of its own is the same there).
    for (size_t k = 0; k < members[i]->n_peerurls; ++k) {
      m.peer_urls.emplace_back(members[i]->peerurls[k]);
    }
    out.push_back(std::move(m));
  }
  return out;
}

uint64_t TermOf(const Natcd__V1__ResponseHeader* header) {
  return header != nullptr ? header->raft_term : 0;
}

// Unpacks body as a `Proto` and converts it with `convert(const Proto&,
// Engine*) -> Status`.
template <typename Engine, typename Proto, typename Convert>
Result<server::Response> Decode(const ProtobufCMessageDescriptor* descriptor, std::string_view body,
                                uint64_t* raft_term, Convert convert) {
  UniqueMessage message;
  Status s = DecodeMessage(descriptor, body, /*json=*/false, &message);
  const auto* in = reinterpret_cast<const Proto*>(message.get());
  Engine out;
  if (s.ok()) s = convert(*in, &out);
  if (!s.ok()) {
    return Status::Internal("undecodable reply: " + std::string(s.message()));
  }
  *raft_term = TermOf(in->header);
  return server::Response(std::move(out));
}

// For the messages client_convert.h converts.
template <typename Engine, typename Proto>
Result<server::Response> DecodeEngine(const ProtobufCMessageDescriptor* descriptor,
                                      std::string_view body, uint64_t* raft_term) {
  return Decode<Engine, Proto>(descriptor, body, raft_term,
                               [](const Proto& in, Engine* out) { return FromProto(in, out); });
}

// Member remove, promote and update answer the same fields.
template <typename Proto>
Result<server::Response> DecodeMembership(const ProtobufCMessageDescriptor* descriptor,
                                          std::string_view body, uint64_t* raft_term) {
  return Decode<server::MembershipResponse, Proto>(
      descriptor, body, raft_term, [](const Proto& in, server::MembershipResponse* out) {
        out->header = FromProto(in.header);
        out->members = MembersFromProto(in.n_members, in.members);
        return Status::OK();
      });
}

}  // namespace

WireRequest EncodeWireRequest(const server::RequestPayload& payload) {
  using K = EndpointKind;
  ProtoArena arena;
  return std::visit(
      [&](const auto& r) -> WireRequest {
        using T = std::decay_t<decltype(r)>;
        if constexpr (std::is_same_v<T, RangeRequest>) {
          return Packed(K::kRange, "kv.range", &ToProto(r, &arena)->base);
        } else if constexpr (std::is_same_v<T, PutRequest>) {
          return Packed(K::kPut, "kv.put", &ToProto(r, &arena)->base);
        } else if constexpr (std::is_same_v<T, DeleteRangeRequest>) {
          return Packed(K::kDeleteRange, "kv.delete", &ToProto(r, &arena)->base);
        } else if constexpr (std::is_same_v<T, TxnRequest>) {
          return Packed(K::kTxn, "kv.txn", &ToProto(r, &arena)->base);
        } else if constexpr (std::is_same_v<T, CompactionRequest>) {
          return Packed(K::kCompact, "kv.compact", &ToProto(r, &arena)->base);
        } else if constexpr (std::is_same_v<T, LeaseGrantRequest>) {
          Natcd__V1__LeaseGrantRequest m;
          natcd__v1__lease_grant_request__init(&m);
          m.ttl = r.ttl;
          m.id = r.id;
          return Packed(K::kLeaseGrant, "lease.grant", &m.base);
        } else if constexpr (std::is_same_v<T, LeaseRevokeRequest>) {
          Natcd__V1__LeaseRevokeRequest m;
          natcd__v1__lease_revoke_request__init(&m);
          m.id = r.id;
          return Packed(K::kLeaseRevoke, "lease.revoke", &m.base);
        } else if constexpr (std::is_same_v<T, LeaseKeepAliveRequest>) {
          Natcd__V1__LeaseKeepAliveRequest m;
          natcd__v1__lease_keep_alive_request__init(&m);
          m.id = r.id;
          return Packed(K::kLeaseKeepAlive, "lease.keepalive", &m.base);
        } else if constexpr (std::is_same_v<T, LeaseTimeToLiveRequest>) {
          Natcd__V1__LeaseTimeToLiveRequest m;
          natcd__v1__lease_time_to_live_request__init(&m);
          m.id = r.id;
          m.keys = r.keys;
          return Packed(K::kLeaseTimeToLive, "lease.timetolive", &m.base);
        } else if constexpr (std::is_same_v<T, server::LeaseLeasesRequest>) {
          Natcd__V1__LeaseLeasesRequest m;
          natcd__v1__lease_leases_request__init(&m);
          return Packed(K::kLeaseLeases, "lease.leases", &m.base);
        } else if constexpr (std::is_same_v<T, server::StatusRequest>) {
          Natcd__V1__StatusRequest m;
          natcd__v1__status_request__init(&m);
          return Packed(K::kStatus, "maint.status", &m.base);
        } else if constexpr (std::is_same_v<T, server::MemberListRequest>) {
          Natcd__V1__MemberListRequest m;
          natcd__v1__member_list_request__init(&m);
          return Packed(K::kMemberList, "cluster.member.list", &m.base);
        } else if constexpr (std::is_same_v<T, server::MemberAddRequest>) {
          Natcd__V1__MemberAddRequest m;
          natcd__v1__member_add_request__init(&m);
          m.name = const_cast<char*>(r.name.c_str());
          m.islearner = r.is_learner;
          std::vector<char*> urls;
          for (const std::string& url : r.peer_urls) urls.push_back(const_cast<char*>(url.c_str()));
          m.n_peerurls = urls.size();
          m.peerurls = urls.data();
          return Packed(K::kMemberAdd, "cluster.member.add", &m.base);
        } else if constexpr (std::is_same_v<T, server::MemberRemoveRequest>) {
          Natcd__V1__MemberRemoveRequest m;
          natcd__v1__member_remove_request__init(&m);
          m.id = r.id;
          return Packed(K::kMemberRemove, "cluster.member.remove", &m.base);
        } else if constexpr (std::is_same_v<T, server::MemberPromoteRequest>) {
          Natcd__V1__MemberPromoteRequest m;
          natcd__v1__member_promote_request__init(&m);
          m.id = r.id;
          return Packed(K::kMemberPromote, "cluster.member.promote", &m.base);
        } else if constexpr (std::is_same_v<T, server::MemberUpdateRequest>) {
          Natcd__V1__MemberUpdateRequest m;
          natcd__v1__member_update_request__init(&m);
          m.id = r.id;
          std::vector<char*> urls;
          for (const std::string& url : r.peer_urls) urls.push_back(const_cast<char*>(url.c_str()));
          m.n_peerurls = urls.size();
          m.peerurls = urls.data();
          return Packed(K::kMemberUpdate, "cluster.member.update", &m.base);
        } else if constexpr (std::is_same_v<T, HashKVRequest>) {
          Natcd__V1__HashKVRequest m;
          natcd__v1__hash_kvrequest__init(&m);
          m.revision = r.revision;
          return Packed(K::kHashKV, "maint.hashkv", &m.base);
        } else if constexpr (std::is_same_v<T, HashRequest>) {
          Natcd__V1__HashRequest m;
          natcd__v1__hash_request__init(&m);
          return Packed(K::kHash, "maint.hash", &m.base);
        } else if constexpr (std::is_same_v<T, DefragmentRequest>) {
          Natcd__V1__DefragmentRequest m;
          natcd__v1__defragment_request__init(&m);
          return Packed(K::kDefragment, "maint.defrag", &m.base);
        } else if constexpr (std::is_same_v<T, server::AlarmRequest>) {
          Natcd__V1__AlarmRequest m;
          natcd__v1__alarm_request__init(&m);
          m.action = static_cast<Natcd__V1__AlarmRequest__AlarmAction>(r.action);
          m.memberid = r.member_id;
          m.alarm = static_cast<Natcd__V1__AlarmType>(r.alarm);
          return Packed(K::kAlarm, "maint.alarm", &m.base);
        } else if constexpr (std::is_same_v<T, server::AuthRequest>) {
          // Never forwarded: the member that receives an auth call serves
          // it (a change is proposed there). No endpoint takes one.
          return WireRequest{K::kStatus, "", ""};
        } else {
          static_assert(std::is_same_v<T, server::MoveLeaderRequest>, "every payload");
          Natcd__V1__MoveLeaderRequest m;
          natcd__v1__move_leader_request__init(&m);
          m.targetid = r.target;
          return Packed(K::kMoveLeader, "maint.moveleader", &m.base);
        }
      },
      payload);
}

Result<server::Response> DecodeWireResponse(const server::RequestPayload& asked,
                                            std::string_view body, uint64_t* raft_term) {
  *raft_term = 0;
  return std::visit(
      [&](const auto& r) -> Result<server::Response> {
        using T = std::decay_t<decltype(r)>;
        if constexpr (std::is_same_v<T, RangeRequest>) {
          return DecodeEngine<RangeResponse, Natcd__V1__RangeResponse>(
              &natcd__v1__range_response__descriptor, body, raft_term);
        } else if constexpr (std::is_same_v<T, PutRequest>) {
          return DecodeEngine<PutResponse, Natcd__V1__PutResponse>(
              &natcd__v1__put_response__descriptor, body, raft_term);
        } else if constexpr (std::is_same_v<T, DeleteRangeRequest>) {
          return DecodeEngine<DeleteRangeResponse, Natcd__V1__DeleteRangeResponse>(
              &natcd__v1__delete_range_response__descriptor, body, raft_term);
        } else if constexpr (std::is_same_v<T, TxnRequest>) {
          return DecodeEngine<TxnResponse, Natcd__V1__TxnResponse>(
              &natcd__v1__txn_response__descriptor, body, raft_term);
        } else if constexpr (std::is_same_v<T, CompactionRequest>) {
          return DecodeEngine<CompactionResponse, Natcd__V1__CompactionResponse>(
              &natcd__v1__compaction_response__descriptor, body, raft_term);
        } else if constexpr (std::is_same_v<T, LeaseGrantRequest>) {
          return DecodeEngine<LeaseGrantResponse, Natcd__V1__LeaseGrantResponse>(
              &natcd__v1__lease_grant_response__descriptor, body, raft_term);
        } else if constexpr (std::is_same_v<T, LeaseRevokeRequest>) {
          return DecodeEngine<LeaseRevokeResponse, Natcd__V1__LeaseRevokeResponse>(
              &natcd__v1__lease_revoke_response__descriptor, body, raft_term);
        } else if constexpr (std::is_same_v<T, LeaseKeepAliveRequest>) {
          return DecodeEngine<LeaseKeepAliveResponse, Natcd__V1__LeaseKeepAliveResponse>(
              &natcd__v1__lease_keep_alive_response__descriptor, body, raft_term);
        } else if constexpr (std::is_same_v<T, LeaseTimeToLiveRequest>) {
          return DecodeEngine<LeaseTimeToLiveResponse, Natcd__V1__LeaseTimeToLiveResponse>(
              &natcd__v1__lease_time_to_live_response__descriptor, body, raft_term);
        } else if constexpr (std::is_same_v<T, server::LeaseLeasesRequest>) {
          return DecodeEngine<LeaseLeasesResponse, Natcd__V1__LeaseLeasesResponse>(
              &natcd__v1__lease_leases_response__descriptor, body, raft_term);
        } else if constexpr (std::is_same_v<T, server::StatusRequest>) {
          return Decode<server::StatusResponse, Natcd__V1__StatusResponse>(
              &natcd__v1__status_response__descriptor, body, raft_term,
              [](const Natcd__V1__StatusResponse& in, server::StatusResponse* out) {
                out->header = FromProto(in.header);
                out->db_size = in.dbsize;
                out->db_size_in_use = in.dbsizeinuse;
                out->leader = in.leader;
                out->raft_index = in.raftindex;
                out->raft_applied_index = in.raftappliedindex;
                out->raft_term = in.raftterm;
                out->is_learner = in.islearner;
                for (size_t i = 0; i < in.n_errors; i++) out->errors.emplace_back(in.errors[i]);
                return Status::OK();
              });
        } else if constexpr (std::is_same_v<T, server::MemberListRequest>) {
          return Decode<server::MemberListResponse, Natcd__V1__MemberListResponse>(
              &natcd__v1__member_list_response__descriptor, body, raft_term,
              [](const Natcd__V1__MemberListResponse& in, server::MemberListResponse* out) {
                out->header = FromProto(in.header);
                out->members = MembersFromProto(in.n_members, in.members);
                return Status::OK();
              });
        } else if constexpr (std::is_same_v<T, server::MemberAddRequest>) {
          return Decode<server::MemberAddResponse, Natcd__V1__MemberAddResponse>(
              &natcd__v1__member_add_response__descriptor, body, raft_term,
              [](const Natcd__V1__MemberAddResponse& in, server::MemberAddResponse* out) {
                out->header = FromProto(in.header);
                // (Always set by natcd; without it the change still happened.)
                if (in.member != nullptr) out->member = MembersFromProto(1, &in.member).front();
                out->members = MembersFromProto(in.n_members, in.members);
                return Status::OK();
              });
        } else if constexpr (std::is_same_v<T, server::MemberRemoveRequest>) {
          return DecodeMembership<Natcd__V1__MemberRemoveResponse>(
              &natcd__v1__member_remove_response__descriptor, body, raft_term);
        } else if constexpr (std::is_same_v<T, server::MemberPromoteRequest>) {
          return DecodeMembership<Natcd__V1__MemberPromoteResponse>(
              &natcd__v1__member_promote_response__descriptor, body, raft_term);
        } else if constexpr (std::is_same_v<T, server::MemberUpdateRequest>) {
          return DecodeMembership<Natcd__V1__MemberUpdateResponse>(
              &natcd__v1__member_update_response__descriptor, body, raft_term);
        } else if constexpr (std::is_same_v<T, HashKVRequest>) {
          return Decode<HashKVResponse, Natcd__V1__HashKVResponse>(
              &natcd__v1__hash_kvresponse__descriptor, body, raft_term,
              [](const Natcd__V1__HashKVResponse& in, HashKVResponse* out) {
                out->header = FromProto(in.header);
                out->hash = in.hash;
                out->compact_revision = in.compact_revision;
                out->hash_revision = in.hash_revision;
                return Status::OK();
              });
        } else if constexpr (std::is_same_v<T, HashRequest>) {
          return Decode<HashResponse, Natcd__V1__HashResponse>(
              &natcd__v1__hash_response__descriptor, body, raft_term,
              [](const Natcd__V1__HashResponse& in, HashResponse* out) {
                out->header = FromProto(in.header);
                out->hash = in.hash;
                return Status::OK();
              });
        } else if constexpr (std::is_same_v<T, DefragmentRequest>) {
          return Decode<DefragmentResponse, Natcd__V1__DefragmentResponse>(
              &natcd__v1__defragment_response__descriptor, body, raft_term,
              [](const Natcd__V1__DefragmentResponse& in, DefragmentResponse* out) {
                out->header = FromProto(in.header);
                return Status::OK();
              });
        } else if constexpr (std::is_same_v<T, server::AlarmRequest>) {
          return Decode<server::AlarmResponse, Natcd__V1__AlarmResponse>(
              &natcd__v1__alarm_response__descriptor, body, raft_term,
              [](const Natcd__V1__AlarmResponse& in, server::AlarmResponse* out) {
                out->header = FromProto(in.header);
                for (size_t i = 0; i < in.n_alarms; i++) {
                  const int type = static_cast<int>(in.alarms[i]->alarm);
                  if (type < 0 || type > kAlarmTypeMax) {
                    return Status::InvalidArgument("ErrInvalidArgument",
                                                   "unknown alarm type " + std::to_string(type));
                  }
                  out->alarms.push_back(
                      AlarmMember{in.alarms[i]->memberid, static_cast<AlarmType>(type)});
                }
                return Status::OK();
              });
        } else if constexpr (std::is_same_v<T, server::AuthRequest>) {
          return Status::Internal("an auth call is never forwarded");
        } else {
          static_assert(std::is_same_v<T, server::MoveLeaderRequest>, "every payload");
          return Decode<server::MoveLeaderResponse, Natcd__V1__MoveLeaderResponse>(
              &natcd__v1__move_leader_response__descriptor, body, raft_term,
              [](const Natcd__V1__MoveLeaderResponse& in, server::MoveLeaderResponse* out) {
                out->header = FromProto(in.header);
                return Status::OK();
              });
        }
      },
      asked);
}

}  // namespace natcd::nats
