// payload_codec.h: a member request encoded as a wire request is what the
// leader decodes back (its own path: DecodeMessage, then ToPayload), for
// every RequestPayload alternative; a response the leader encodes
// (EncodeResponse) decodes back to the same response, for every Response
// alternative. Values are compared field by field through a printed form,
// so a field dropped either way shows in the failure.
#include "adapters/nats/codec/payload_codec.h"

#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <variant>

#include "adapters/nats/codec/client_convert.h"
#include "adapters/nats/codec/request_payload.h"
#include "adapters/nats/codec/wire.h"
#include "adapters/nats/front_end/nats_responder.h"
#include "adapters/nats/peer/raft_transport.h"

namespace natcd::nats {
namespace {

// ---- printed forms (every field) ----

std::string P(const KeyValue& kv) {
  std::ostringstream o;
  o << "{" << kv.key << "," << kv.create_revision << "," << kv.mod_revision << "," << kv.version
    << "," << kv.value << "," << kv.lease << "}";
  return o.str();
}
std::string P(const std::vector<KeyValue>& kvs) {
  std::string out = "[";
  for (const KeyValue& kv : kvs) out += P(kv);
  return out + "]";
}
std::string P(const ResponseHeader& h) { return "h" + std::to_string(h.revision); }
std::string P(const RangeRequest& r) {
  std::ostringstream o;
  o << "Range{" << r.key << "," << r.range_end << "," << r.limit << "," << r.revision << ","
    << int(r.sort_order) << "," << int(r.sort_target) << "," << r.serializable << "," << r.keys_only
    << "," << r.count_only << "," << r.min_mod_revision << "," << r.max_mod_revision << ","
    << r.min_create_revision << "," << r.max_create_revision << "}";
  return o.str();
}
std::string P(const PutRequest& r) {
  std::ostringstream o;
  o << "Put{" << r.key << "," << r.value << "," << r.lease << "," << r.prev_kv << ","
    << r.ignore_value << "," << r.ignore_lease << "}";
  return o.str();
}
std::string P(const DeleteRangeRequest& r) {
  std::ostringstream o;
  o << "Delete{" << r.key << "," << r.range_end << "," << r.prev_kv << "}";
  return o.str();
}
std::string P(const TxnRequest& r);
std::string P(const RequestOp& op) {
  return std::visit(
      [](const auto& r) {
        if constexpr (std::is_same_v<std::decay_t<decltype(r)>, std::shared_ptr<TxnRequest>>) {
          return P(*r);
        } else {
          return P(r);
        }
      },
      op.op);
}
std::string P(const TxnRequest& r) {
  std::ostringstream o;
  o << "Txn{";
  for (const Compare& c : r.compare) {
    o << "cmp(" << int(c.result) << "," << int(c.target) << "," << c.key << "," << c.range_end
      << "," << c.version << "," << c.create_revision << "," << c.mod_revision << "," << c.value
      << "," << c.lease << ")";
  }
  o << "|";
  for (const RequestOp& op : r.success) o << P(op);
  o << "|";
  for (const RequestOp& op : r.failure) o << P(op);
  o << "}";
  return o.str();
}
std::string P(const CompactionRequest& r) {
  return "Compact{" + std::to_string(r.revision) + "," + std::to_string(r.physical) + "}";
}
std::string P(const LeaseGrantRequest& r) {
  return "Grant{" + std::to_string(r.ttl) + "," + std::to_string(r.id) + "}";
}
std::string P(const LeaseRevokeRequest& r) { return "Revoke{" + std::to_string(r.id) + "}"; }
std::string P(const LeaseKeepAliveRequest& r) { return "KeepAlive{" + std::to_string(r.id) + "}"; }
std::string P(const LeaseTimeToLiveRequest& r) {
  return "TimeToLive{" + std::to_string(r.id) + "," + std::to_string(r.keys) + "}";
}
std::string P(const server::LeaseLeasesRequest&) { return "Leases{}"; }
std::string P(const server::StatusRequest&) { return "Status{}"; }
std::string P(const server::MemberListRequest&) { return "MemberList{}"; }
std::string P(const server::MemberAddRequest& r) {
  return "MemberAdd{" + r.name + "," + std::to_string(r.is_learner) + "}";
}
std::string P(const server::MemberRemoveRequest& r) {
  return "MemberRemove{" + std::to_string(r.id) + "}";
}
std::string P(const server::MemberPromoteRequest& r) {
  return "MemberPromote{" + std::to_string(r.id) + "}";
}
std::string P(const server::MemberUpdateRequest& r) {
  std::string urls;
  for (const std::string& url : r.peer_urls) urls += url + ";";
  return "MemberUpdate{" + std::to_string(r.id) + "," + urls + "}";
}
std::string P(const server::MoveLeaderRequest& r) {
  return "MoveLeader{" + std::to_string(r.target) + "}";
}
std::string P(const HashKVRequest& r) { return "HashKV{" + std::to_string(r.revision) + "}"; }
std::string P(const HashRequest&) { return "Hash{}"; }
std::string P(const DefragmentRequest&) { return "Defragment{}"; }
std::string P(const server::AlarmRequest& r) {
  return "Alarm{" + std::to_string(static_cast<int>(r.action)) + "," + std::to_string(r.member_id) +
         "," + std::to_string(static_cast<int>(r.alarm)) + "}";
}
std::string P(const server::RequestPayload& p) {
  return std::visit([](const auto& r) { return P(r); }, p);
}

std::string P(const RangeResponse& r) {
  return "Range{" + P(r.header) + "," + P(r.kvs) + "," + std::to_string(r.more) + "," +
         std::to_string(r.count) + "}";
}
std::string P(const PutResponse& r) {
  return "Put{" + P(r.header) + "," + std::to_string(r.has_prev_kv) + "," + P(r.prev_kv) + "}";
}
std::string P(const DeleteRangeResponse& r) {
  return "Delete{" + P(r.header) + "," + std::to_string(r.deleted) + "," + P(r.prev_kvs) + "}";
}
std::string P(const TxnResponse& r);
std::string P(const ResponseOp& op) {
  return std::visit(
      [](const auto& r) {
        if constexpr (std::is_same_v<std::decay_t<decltype(r)>, std::shared_ptr<TxnResponse>>) {
          return P(*r);
        } else {
          return P(r);
        }
      },
      op.response);
}
std::string P(const TxnResponse& r) {
  std::string out = "Txn{" + P(r.header) + "," + std::to_string(r.succeeded) + ",";
  for (const ResponseOp& op : r.responses) out += P(op);
  return out + "}";
}
std::string P(const CompactionResponse& r) { return "Compact{" + P(r.header) + "}"; }
std::string P(const LeaseGrantResponse& r) {
  return "Grant{" + P(r.header) + "," + std::to_string(r.id) + "," + std::to_string(r.ttl) + "}";
}
std::string P(const LeaseRevokeResponse& r) { return "Revoke{" + P(r.header) + "}"; }
std::string P(const LeaseKeepAliveResponse& r) {
  return "KeepAlive{" + P(r.header) + "," + std::to_string(r.id) + "," + std::to_string(r.ttl) +
         "}";
}
std::string P(const LeaseTimeToLiveResponse& r) {
  std::string out = "TimeToLive{" + P(r.header) + "," + std::to_string(r.id) + "," +
                    std::to_string(r.ttl) + "," + std::to_string(r.granted_ttl) + ",";
  for (const std::string& k : r.keys) out += k + ";";
  return out + "}";
}
std::string P(const LeaseLeasesResponse& r) {
  std::string out = "Leases{" + P(r.header) + ",";
  for (int64_t id : r.ids) out += std::to_string(id) + ";";
  return out + "}";
}
std::string P(const server::StatusResponse& r) {
  std::ostringstream o;
  o << "Status{" << P(r.header) << "," << r.db_size << "," << r.db_size_in_use << "," << r.leader
    << "," << r.raft_index << "," << r.raft_applied_index << "," << r.raft_term << ","
    << r.is_learner << ",";
  for (const std::string& e : r.errors) o << e << ";";
  o << "}";
  return o.str();
}
std::string P(const server::MemberInfo& m) {
  std::string urls;
  for (const std::string& url : m.client_urls) urls += url + ";";
  urls += "|";
  for (const std::string& url : m.peer_urls) urls += url + ";";
  return "{" + std::to_string(m.id) + "," + m.name + "," + std::to_string(m.is_learner) + "," +
         urls + "}";
}
std::string P(const std::vector<server::MemberInfo>& members) {
  std::string out = "[";
  for (const server::MemberInfo& m : members) out += P(m);
  return out + "]";
}
std::string P(const server::MemberListResponse& r) {
  return "MemberList{" + P(r.header) + "," + P(r.members) + "}";
}
std::string P(const server::MemberAddResponse& r) {
  return "MemberAdd{" + P(r.header) + "," + P(r.member) + "," + P(r.members) + "}";
}
std::string P(const server::MembershipResponse& r) {
  return "Membership{" + P(r.header) + "," + P(r.members) + "}";
}
std::string P(const server::MoveLeaderResponse& r) { return "MoveLeader{" + P(r.header) + "}"; }
std::string P(const HashKVResponse& r) {
  return "HashKV{" + P(r.header) + "," + std::to_string(r.hash) + "," +
         std::to_string(r.compact_revision) + "," + std::to_string(r.hash_revision) + "}";
}
std::string P(const HashResponse& r) {
  return "Hash{" + P(r.header) + "," + std::to_string(r.hash) + "}";
}
std::string P(const DefragmentResponse& r) { return "Defragment{" + P(r.header) + "}"; }
std::string P(const server::AlarmResponse& r) {
  std::string out = "Alarm{" + P(r.header) + ",";
  for (const AlarmMember& a : r.alarms) out += AlarmText(a) + ";";
  return out + "}";
}
std::string P(const server::Response& r) {
  return std::visit([](const auto& v) { return P(v); }, r);
}

// ---- requests ----

// The request message of each endpoint, as the leader's front end decodes
// it (nats_front_end.cc's endpoint table), and its subject suffix as
// docs/PROTOCOL.md lists it.
struct EndpointOf {
  const char* suffix;
  const ProtobufCMessageDescriptor* request;
};
EndpointOf Endpoint(EndpointKind kind) {
  using K = EndpointKind;
  switch (kind) {
    case K::kRange:
      return {"kv.range", &natcd__v1__range_request__descriptor};
    case K::kPut:
      return {"kv.put", &natcd__v1__put_request__descriptor};
    case K::kDeleteRange:
      return {"kv.delete", &natcd__v1__delete_range_request__descriptor};
    case K::kTxn:
      return {"kv.txn", &natcd__v1__txn_request__descriptor};
    case K::kCompact:
      return {"kv.compact", &natcd__v1__compaction_request__descriptor};
    case K::kLeaseGrant:
      return {"lease.grant", &natcd__v1__lease_grant_request__descriptor};
    case K::kLeaseRevoke:
      return {"lease.revoke", &natcd__v1__lease_revoke_request__descriptor};
    case K::kLeaseKeepAlive:
      return {"lease.keepalive", &natcd__v1__lease_keep_alive_request__descriptor};
    case K::kLeaseTimeToLive:
      return {"lease.timetolive", &natcd__v1__lease_time_to_live_request__descriptor};
    case K::kLeaseLeases:
      return {"lease.leases", &natcd__v1__lease_leases_request__descriptor};
    case K::kStatus:
      return {"maint.status", &natcd__v1__status_request__descriptor};
    case K::kMoveLeader:
      return {"maint.moveleader", &natcd__v1__move_leader_request__descriptor};
    case K::kAlarm:
      return {"maint.alarm", &natcd__v1__alarm_request__descriptor};
    case K::kMemberList:
      return {"cluster.member.list", &natcd__v1__member_list_request__descriptor};
    case K::kMemberAdd:
      return {"cluster.member.add", &natcd__v1__member_add_request__descriptor};
    case K::kMemberRemove:
      return {"cluster.member.remove", &natcd__v1__member_remove_request__descriptor};
    case K::kMemberPromote:
      return {"cluster.member.promote", &natcd__v1__member_promote_request__descriptor};
    case K::kMemberUpdate:
      return {"cluster.member.update", &natcd__v1__member_update_request__descriptor};
    case K::kHashKV:
      return {"maint.hashkv", &natcd__v1__hash_kvrequest__descriptor};
    case K::kHash:
      return {"maint.hash", &natcd__v1__hash_request__descriptor};
    case K::kDefragment:
      return {"maint.defrag", &natcd__v1__defragment_request__descriptor};
    default:
      return {"", nullptr};
  }
}

RangeRequest SampleRange() {
  RangeRequest r;
  r.key = "/a";
  r.range_end = "/b";
  r.limit = 7;
  r.revision = 9;
  r.sort_order = SortOrder::kDescend;
  r.sort_target = SortTarget::kMod;
  r.serializable = true;
  r.keys_only = true;
  r.count_only = true;
  r.min_mod_revision = 2;
  r.max_mod_revision = 3;
  r.min_create_revision = 4;
  r.max_create_revision = 5;
  return r;
}

PutRequest SamplePut() {
  return PutRequest{"/k", std::string("v\0w", 3), 0x1234, true, true, true};
}

TxnRequest SampleTxn() {
  TxnRequest txn;
  // One compare per target, each with only its target's value (the one
  // the wire carries), and a zero one: sent as given.
  Compare c;
  c.result = Compare::Result::kNotEqual;
  c.target = Compare::Target::kVersion;
  c.key = "/v";
  c.range_end = "/w";
  c.version = 0;
  txn.compare.push_back(c);
  c = Compare{};
  c.result = Compare::Result::kGreater;
  c.target = Compare::Target::kCreate;
  c.key = "/c";
  c.create_revision = 11;
  txn.compare.push_back(c);
  c = Compare{};
  c.result = Compare::Result::kLess;
  c.target = Compare::Target::kMod;
  c.key = "/m";
  c.mod_revision = 12;
  txn.compare.push_back(c);
  c = Compare{};
  c.target = Compare::Target::kValue;
  c.key = "/x";
  c.value = "val";
  txn.compare.push_back(c);
  c = Compare{};
  c.target = Compare::Target::kLease;
  c.key = "/l";
  c.lease = 77;
  txn.compare.push_back(c);
  txn.success.push_back(RequestOp{SampleRange()});
  txn.success.push_back(RequestOp{SamplePut()});
  auto nested = std::make_shared<TxnRequest>();
  nested->success.push_back(RequestOp{DeleteRangeRequest{"/d", "/e", true}});
  txn.failure.push_back(RequestOp{nested});
  txn.failure.push_back(RequestOp{DeleteRangeRequest{"/f", "", false}});
  return txn;
}

std::vector<server::RequestPayload> EveryPayload() {
  return {SampleRange(),
          SamplePut(),
          DeleteRangeRequest{"/d", "/e", true},
          SampleTxn(),
          CompactionRequest{42, true},
          LeaseGrantRequest{60, 0x7eadbeef},
          LeaseRevokeRequest{-5},
          LeaseKeepAliveRequest{0x694d7a1a2b3c4d5e},
          LeaseTimeToLiveRequest{123, true},
          server::LeaseLeasesRequest{},
          server::StatusRequest{},
          server::MemberListRequest{},
          server::MemberAddRequest{"n4", true},
          server::MemberRemoveRequest{0xfeedface12345678},
          server::MemberPromoteRequest{0x0123456789abcdef},
          server::MemberUpdateRequest{0x0123456789abcdef, {"http://n2:2380", "https://n2:2381"}},
          server::MoveLeaderRequest{0x9bd11d00c67a72ff},
          HashKVRequest{77},
          HashRequest{},
          DefragmentRequest{},
          server::AlarmRequest{AlarmAction::kDeactivate, 0x8e9e05c52164694d, AlarmType::kNoSpace}};
}

TEST(PayloadCodec, EveryRequestIsWhatTheLeaderDecodes) {
  std::set<size_t> alternatives;
  for (const server::RequestPayload& payload : EveryPayload()) {
    SCOPED_TRACE(P(payload));
    alternatives.insert(payload.index());
    WireRequest wire = EncodeWireRequest(payload);
    EndpointOf endpoint = Endpoint(wire.kind);
    ASSERT_NE(endpoint.request, nullptr);
    EXPECT_EQ(wire.suffix, endpoint.suffix);
    UniqueMessage message;
    ASSERT_TRUE(DecodeMessage(endpoint.request, wire.body, /*json=*/false, &message).ok());
    Result<server::RequestPayload> back = ToPayload(wire.kind, message.get(), 0);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(P(back.value()), P(payload));
    EXPECT_EQ(back.value().index(), payload.index());
  }
  // All but AuthRequest: an Auth call is served (or proposed) by the member
  // that receives it, never forwarded.
  EXPECT_EQ(alternatives.size() + 1, std::variant_size_v<server::RequestPayload>);
}

TEST(PayloadCodec, DefaultRequestsAreEmptyBodies) {
  // proto3 leaves defaults out: a keepalive of lease 0 is an empty body, as
  // a client's would be.
  EXPECT_EQ(EncodeWireRequest(LeaseKeepAliveRequest{}).body, "");
  EXPECT_EQ(EncodeWireRequest(server::StatusRequest{}).body, "");
}

// ---- responses ----

ReplyContext Context() {
  ReplyContext context;
  context.header = HeaderInfo{0xc1, 0xa1, 0};
  context.version = "9.9.9";
  context.prefix = "natcd";
  context.cluster_name = "default";
  return context;
}

KeyValue Kv(const std::string& key) { return KeyValue{key, 3, 4, 2, "value of " + key, 0x55}; }

struct Exchange {
  server::RequestPayload asked;
  server::Response response;
};

std::vector<Exchange> EveryResponse() {
  std::vector<server::MemberInfo> members = {
      {0x11, "n1", false, {"http://10.0.0.1:2379", "https://n1:2379"}, {"http://n1:2380"}},
      {0x22, "n2", true, {}, {"http://n2:2380", "http://10.0.0.2:2380"}}};
  TxnResponse txn;
  txn.header.revision = 20;
  txn.succeeded = true;
  txn.responses.push_back(ResponseOp{RangeResponse{{20}, {Kv("/a"), Kv("/b")}, true, 5}});
  txn.responses.push_back(ResponseOp{PutResponse{{20}, true, Kv("/p")}});
  auto nested = std::make_shared<TxnResponse>();
  nested->header.revision = 20;
  nested->responses.push_back(ResponseOp{DeleteRangeResponse{{20}, 2, {Kv("/d")}}});
  txn.responses.push_back(ResponseOp{nested});
  return {
      {RangeRequest{}, RangeResponse{{8}, {Kv("/a"), Kv("/b")}, true, 10}},
      {PutRequest{}, PutResponse{{9}, true, Kv("/k")}},
      {PutRequest{}, PutResponse{{9}, false, {}}},
      {DeleteRangeRequest{}, DeleteRangeResponse{{10}, 2, {Kv("/x"), Kv("/y")}}},
      {TxnRequest{}, txn},
      {CompactionRequest{}, CompactionResponse{{11}}},
      {LeaseGrantRequest{}, LeaseGrantResponse{{12}, 0x694d7a1a2b3c4d5e, 60}},
      {LeaseRevokeRequest{}, LeaseRevokeResponse{{13}}},
      {LeaseKeepAliveRequest{}, LeaseKeepAliveResponse{{14}, 0x77, 30}},
      {LeaseTimeToLiveRequest{}, LeaseTimeToLiveResponse{{15}, 0x77, 29, 30, {"/k1", "/k2"}}},
      {LeaseTimeToLiveRequest{}, LeaseTimeToLiveResponse{{15}, 0x78, -1, 0, {}}},
      {server::LeaseLeasesRequest{}, LeaseLeasesResponse{{16}, {1, 2, 0x7fffffffffffffff}}},
      {server::StatusRequest{},
       server::StatusResponse{{17},
                              4096,
                              2048,
                              0x11,
                              30,
                              29,
                              4,
                              true,
                              {"memberID:17 alarm:NOSPACE ", "memberID:18 alarm:CORRUPT "}}},
      {server::MemberListRequest{}, server::MemberListResponse{{18}, members}},
      {server::MemberAddRequest{}, server::MemberAddResponse{{19}, members[1], members}},
      {server::MemberRemoveRequest{}, server::MembershipResponse{{20}, {members[0]}}},
      {server::MemberPromoteRequest{}, server::MembershipResponse{{21}, members}},
      {server::MemberUpdateRequest{}, server::MembershipResponse{{21}, members}},
      {server::MoveLeaderRequest{}, server::MoveLeaderResponse{{22}}},
      {HashKVRequest{}, HashKVResponse{{23}, 0xdeadbeef, 7, 23}},
      {HashRequest{}, HashResponse{{24}, 0xfeedf00d}},
      {DefragmentRequest{}, DefragmentResponse{{25}}},
      {server::AlarmRequest{},
       server::AlarmResponse{
           {26}, {{17, AlarmType::kNoSpace}, {0x8e9e05c52164694d, AlarmType::kCorrupt}}}},
  };
}

TEST(PayloadCodec, EveryResponseTheLeaderEncodesDecodesBack) {
  const ReplyContext context = Context();
  std::set<size_t> alternatives;
  for (const Exchange& exchange : EveryResponse()) {
    SCOPED_TRACE(P(exchange.response));
    alternatives.insert(exchange.response.index());
    const std::string body = EncodeResponse(exchange.response, context, 4, /*json=*/false);
    uint64_t raft_term = 0;
    Result<server::Response> back = DecodeWireResponse(exchange.asked, body, &raft_term);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(back.value().index(), exchange.response.index());
    EXPECT_EQ(P(back.value()), P(exchange.response));
    EXPECT_EQ(raft_term, 4u) << "the answering member's term";
  }
  // All but AuthResponse (never forwarded, as AuthRequest).
  EXPECT_EQ(alternatives.size() + 1, std::variant_size_v<server::Response>);
}

// A member no MemberUpdate gave peer URLs lists its Raft subject; a
// follower that forwarded the call lists that as it came.
TEST(PayloadCodec, AMemberWithoutPeerUrlsListsItsRaftSubject) {
  const server::MemberListResponse list{{18}, {{0x22, "n2", false, {}, {}}}};
  const std::string body = EncodeResponse(server::Response(list), Context(), 4, false);
  uint64_t raft_term = 0;
  Result<server::Response> back = DecodeWireResponse(server::MemberListRequest{}, body, &raft_term);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  const auto& members = std::get<server::MemberListResponse>(back.value()).members;
  ASSERT_EQ(members.size(), 1u);
  EXPECT_EQ(members[0].peer_urls, std::vector<std::string>{RaftSubject("natcd", "default", 0x22)});
}

TEST(PayloadCodec, AReplyThatIsNotTheResponseIsInternal) {
  uint64_t raft_term = 9;
  // A field 2 (kvs) that is a varint, not a message: no RangeResponse.
  Result<server::Response> r =
      DecodeWireResponse(RangeRequest{}, std::string("\x10\x01", 2), &raft_term);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kInternal);
  EXPECT_EQ(raft_term, 0u);
}

TEST(PayloadCodec, ATxnResponseOpWithoutAResponseIsRefused) {
  Natcd__V1__ResponseOp op;
  natcd__v1__response_op__init(&op);
  Natcd__V1__ResponseOp* ops[] = {&op};
  Natcd__V1__TxnResponse txn;
  natcd__v1__txn_response__init(&txn);
  txn.n_responses = 1;
  txn.responses = ops;
  uint64_t raft_term = 0;
  Result<server::Response> r =
      DecodeWireResponse(TxnRequest{}, EncodeMessage(&txn.base, false), &raft_term);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kInternal);
  EXPECT_NE(r.status().message().find("no response set"), std::string_view::npos)
      << r.status().ToString();
}

TEST(PayloadCodec, TxnResponsesNestedTooDeepAreRefused) {
  TxnResponse inner;
  for (int i = 0; i <= kTxnDepthMax; i++) {
    TxnResponse outer;
    outer.responses.push_back(ResponseOp{std::make_shared<TxnResponse>(inner)});
    inner = outer;
  }
  const std::string body = EncodeResponse(server::Response(inner), Context(), 1, false);
  uint64_t raft_term = 0;
  Result<server::Response> r = DecodeWireResponse(TxnRequest{}, body, &raft_term);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kInternal);
}

}  // namespace
}  // namespace natcd::nats
