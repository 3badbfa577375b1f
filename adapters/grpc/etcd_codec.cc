#include "adapters/grpc/etcd_codec.h"

#include "adapters/grpc/etcd_rpc.pb-c.h"
#include "adapters/nats/codec/request_payload.h"
#include "adapters/nats/front_end/nats_responder.h"
#include "adapters/nats/natcd.pb-c.h"

namespace natcd::etcd_api {
namespace {

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
    case Method::kAlarm:
      endpoint = K::kAlarm;
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
    case Method::kMemberUpdate:
      endpoint = K::kMemberUpdate;
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
      server::MemberAddRequest add{std::move(name), static_cast<bool>(in->islearner), {}};
      for (size_t i = 0; i < in->n_peerurls; i++) add.peer_urls.emplace_back(in->peerurls[i]);
      return server::RequestPayload(std::move(add));
    }
    default:
      return Status::Internal("not a member request");
  }
  return nats::ToPayload(endpoint, &message, 0);
}

std::string EncodeResponse(const server::Response& response, const ResponseInfo& info,
                           uint64_t raft_term) {
  // etcd's store starts with compact revision -1 (never compacted).
  if (const auto* hash = std::get_if<HashKVResponse>(&response);
      hash != nullptr && hash->compact_revision == 0) {
    HashKVResponse etcd = *hash;
    etcd.compact_revision = -1;
    return nats::EncodeResponse(server::Response(std::move(etcd)), info, raft_term, false);
  }
  return nats::EncodeResponse(response, info, raft_term, /*json=*/false);
}

}  // namespace natcd::etcd_api
