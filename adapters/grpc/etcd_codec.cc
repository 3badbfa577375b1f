#include "adapters/grpc/etcd_codec.h"

#include "adapters/grpc/etcd_rpc.pb-c.h"
#include "adapters/nats/natcd.pb-c.h"
#include "adapters/nats/raft_transport.h"
#include "adapters/nats/request_payload.h"

namespace natcd::etcd_api {
namespace {

using nats::ProtoArena;
using nats::ToProto;

// A string that lives as long as the arena.
char* Keep(ProtoArena* arena, const std::string& s) {
  auto* kept = arena->New<std::string>([](std::string*) {});
  *kept = s;
  return const_cast<char*>(kept->c_str());
}

char** KeepAll(ProtoArena* arena, const std::vector<std::string>& strings) {
  char** out = arena->Array<char>(strings.size());
  for (size_t i = 0; i < strings.size(); i++) out[i] = Keep(arena, strings[i]);
  return out;
}

Natcd__V1__Member** MembersProto(const std::vector<server::MemberInfo>& members,
                                 const ResponseInfo& info, size_t* n, ProtoArena* arena) {
  *n = members.size();
  Natcd__V1__Member** out = arena->Array<Natcd__V1__Member>(members.size());
  for (size_t i = 0; i < members.size(); i++) {
    Natcd__V1__Member* m = arena->New(natcd__v1__member__init);
    m->id = members[i].id;
    m->name = Keep(arena, members[i].name);
    m->peerurls = KeepAll(arena, {nats::RaftSubject(info.prefix, info.cluster_name, m->id)});
    m->n_peerurls = 1;
    m->clienturls = KeepAll(arena, members[i].client_urls);
    m->n_clienturls = members[i].client_urls.size();
    m->islearner = members[i].is_learner;
    out[i] = m;
  }
  return out;
}

// A member's name from its peer URL: etcdctl's `member add NAME
// --peer-urls=URL` sends only the URL, and a natcd member's ID is derived
// from its name, so the URL's host names it: http://NAME:2380 (etcdctl
// accepts only http, https, unix and unixs URLs; any scheme://NAME[:port]).
Result<std::string> NameFromPeerUrl(const char* url) {
  std::string s = url ? url : "";
  const size_t scheme = s.find("://");
  std::string host = scheme == std::string::npos ? s : s.substr(scheme + 3);
  host = host.substr(0, host.find_first_of(":/"));
  if (host.empty()) {
    return Status::InvalidArgument("ErrMemberBadURLs", "etcdserver: given member URLs are invalid");
  }
  return host;
}

}  // namespace

std::string Pack(const ProtobufCMessage& message) {
  std::string out(protobuf_c_message_get_packed_size(&message), '\0');
  protobuf_c_message_pack(&message, reinterpret_cast<uint8_t*>(out.data()));
  return out;
}

Result<server::RequestPayload> DecodeRequest(Method method, const ProtobufCMessage& message) {
  using K = nats::EndpointKind;
  // The NATS endpoint whose request message is this method's: decoded alike.
  K endpoint;
  switch (method) {
    case Method::kRange:
      endpoint = K::kRange;
      break;
    case Method::kPut:
      endpoint = K::kPut;
      break;
    case Method::kDeleteRange:
      endpoint = K::kDeleteRange;
      break;
    case Method::kTxn:
      endpoint = K::kTxn;
      break;
    case Method::kCompact:
      endpoint = K::kCompact;
      break;
    case Method::kLeaseGrant:
      endpoint = K::kLeaseGrant;
      break;
    case Method::kLeaseRevoke:
      endpoint = K::kLeaseRevoke;
      break;
    case Method::kLeaseKeepAlive:
      endpoint = K::kLeaseKeepAlive;
      break;
    case Method::kLeaseTimeToLive:
      endpoint = K::kLeaseTimeToLive;
      break;
    case Method::kLeaseLeases:
      endpoint = K::kLeaseLeases;
      break;
    case Method::kStatus:
      endpoint = K::kStatus;
      break;
    case Method::kHashKV:
      endpoint = K::kHashKV;
      break;
    case Method::kHash:
      endpoint = K::kHash;
      break;
    case Method::kDefragment:
      endpoint = K::kDefragment;
      break;
    case Method::kMoveLeader:
      endpoint = K::kMoveLeader;
      break;
    case Method::kMemberList:
      endpoint = K::kMemberList;
      break;
    case Method::kMemberRemove:
      endpoint = K::kMemberRemove;
      break;
    case Method::kMemberPromote:
      endpoint = K::kMemberPromote;
      break;
    case Method::kMemberAdd: {
      // etcdctl sends the peer URL, not the name.
      auto* in = reinterpret_cast<const Natcd__V1__MemberAddRequest*>(&message);
      std::string name = in->name ? in->name : "";
      if (name.empty()) {
        if (in->n_peerurls == 0) {
          return Status::InvalidArgument("ErrMemberBadURLs",
                                         "etcdserver: given member URLs are invalid");
        }
        Result<std::string> from_url = NameFromPeerUrl(in->peerurls[0]);
        if (!from_url.ok()) return from_url.status();
        name = std::move(from_url).value();
      }
      return server::RequestPayload(
          server::MemberAddRequest{std::move(name), static_cast<bool>(in->islearner)});
    }
    default:
      return Status::Internal("not a member request");
  }
  return nats::ToPayload(endpoint, &message, 0);
}

std::string EncodeResponse(const server::Response& response, const ResponseInfo& info,
                           uint64_t raft_term) {
  nats::HeaderInfo header = info.header;
  header.raft_term = raft_term;
  ProtoArena arena;
  const ProtobufCMessage* message = std::visit(
      [&](const auto& r) -> const ProtobufCMessage* {
        using T = std::decay_t<decltype(r)>;
        if constexpr (std::is_same_v<T, server::StatusResponse>) {
          auto* m = arena.New(natcd__v1__status_response__init);
          m->header = ToProto(r.header, header, &arena);
          m->version = const_cast<char*>(kEtcdApiVersion);
          m->dbsize = r.db_size;
          m->dbsizeinuse = r.db_size_in_use;
          m->leader = r.leader;
          m->raftindex = r.raft_index;
          m->raftappliedindex = r.raft_applied_index;
          m->raftterm = r.raft_term;
          m->islearner = r.is_learner;
          return &m->base;
        } else if constexpr (std::is_same_v<T, server::MemberListResponse>) {
          auto* m = arena.New(natcd__v1__member_list_response__init);
          m->header = ToProto(r.header, header, &arena);
          m->members = MembersProto(r.members, info, &m->n_members, &arena);
          return &m->base;
        } else if constexpr (std::is_same_v<T, server::MemberAddResponse>) {
          auto* m = arena.New(natcd__v1__member_add_response__init);
          m->header = ToProto(r.header, header, &arena);
          m->members = MembersProto(r.members, info, &m->n_members, &arena);
          for (size_t i = 0; i < m->n_members; i++) {
            if (m->members[i]->id == r.member.id) m->member = m->members[i];
          }
          return &m->base;
        } else if constexpr (std::is_same_v<T, server::MembershipResponse>) {
          // MemberRemove and MemberPromote answer alike (the same fields).
          auto* m = arena.New(natcd__v1__member_remove_response__init);
          m->header = ToProto(r.header, header, &arena);
          m->members = MembersProto(r.members, info, &m->n_members, &arena);
          return &m->base;
        } else if constexpr (std::is_same_v<T, HashKVResponse>) {
          auto* m = ToProto(r, header, &arena);
          // etcd's store starts with compact revision -1 (never compacted).
          if (r.compact_revision == 0) m->compact_revision = -1;
          return &m->base;
        } else if constexpr (std::is_same_v<T, server::MoveLeaderResponse>) {
          auto* m = arena.New(natcd__v1__move_leader_response__init);
          m->header = ToProto(r.header, header, &arena);
          return &m->base;
        } else {
          return &ToProto(r, header, &arena)->base;
        }
      },
      response);
  return Pack(*message);
}

}  // namespace natcd::etcd_api
