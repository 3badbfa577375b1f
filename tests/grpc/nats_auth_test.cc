// Auth on the NATS front end while the NATS side is not declared trusted:
// no subject a client may use serves a request that needs a user
// unchecked — neither P.<suffix> nor P.to.<member>.<suffix>, where the C
// client sends writes and linearizable reads to the leader it knows (it
// once sent them on P.fwd.<leader>.*, the members' own subject, which is
// not checked on entry, and so was served unchecked). What etcd does not
// check is served. With --nats-trusted the NATS side is served unchecked.
// Auth is enabled through etcd's gRPC API (etcdctl).
#include <cstring>

#include "adapters/nats/natcd.pb-c.h"
#include "grpc/etcdctl_fixture.h"
#include "natcd/client.h"
#include "support/wire_client.h"

namespace natcd::testing {
namespace {

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

std::string Pack(const ProtobufCMessage* m) {
  std::string out(protobuf_c_message_get_packed_size(m), '\0');
  protobuf_c_message_pack(m, reinterpret_cast<uint8_t*>(out.data()));
  return out;
}

// The member ID of the member that answers P.maint.status (0: none).
uint64_t MemberId(WireClient& client) {
  Natcd__V1__StatusRequest status;
  natcd__v1__status_request__init(&status);
  WireReply reply = client.Call("maint.status", &status.base);
  auto response =
      WireClient::Decode<Natcd__V1__StatusResponse>(&natcd__v1__status_response__descriptor, reply);
  return response != nullptr && response->header != nullptr ? response->header->member_id : 0;
}

std::string Hex16(uint64_t id) {
  char out[17];
  snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(id));
  return out;
}

// A request of every kind that needs a user, by endpoint suffix, and
// whether the member also takes it addressed to it (P.to.<member>.<suffix>).
struct CheckedRequest {
  std::string suffix;
  std::string body;
  bool addressed;
};

std::vector<CheckedRequest> RequestsThatNeedAUser(uint64_t member_id) {
  std::vector<CheckedRequest> out;
  Natcd__V1__RangeRequest range;
  natcd__v1__range_request__init(&range);
  range.key = Bytes("/na/a");
  out.push_back({"kv.range", Pack(&range.base), true});
  Natcd__V1__PutRequest put;
  natcd__v1__put_request__init(&put);
  put.key = Bytes("/na/unchecked");
  put.value = Bytes("x");
  out.push_back({"kv.put", Pack(&put.base), true});
  Natcd__V1__DeleteRangeRequest del;
  natcd__v1__delete_range_request__init(&del);
  del.key = Bytes("/na/a");
  out.push_back({"kv.delete", Pack(&del.base), true});
  Natcd__V1__RequestOp op;
  natcd__v1__request_op__init(&op);
  op.request_case = NATCD__V1__REQUEST_OP__REQUEST_REQUEST_PUT;
  op.request_put = &put;
  Natcd__V1__RequestOp* ops[] = {&op};
  Natcd__V1__TxnRequest txn;
  natcd__v1__txn_request__init(&txn);
  txn.n_success = 1;
  txn.success = ops;
  out.push_back({"kv.txn", Pack(&txn.base), true});
  Natcd__V1__WatchCreateRequest watch;
  natcd__v1__watch_create_request__init(&watch);
  watch.key = Bytes("/na/a");
  watch.deliver_subject = const_cast<char*>("_INBOX.na.watch");
  out.push_back({"watch.create", Pack(&watch.base), false});
  Natcd__V1__HashKVRequest hashkv;
  natcd__v1__hash_kvrequest__init(&hashkv);
  out.push_back({"maint.hashkv", Pack(&hashkv.base), true});
  Natcd__V1__HashRequest hash;
  natcd__v1__hash_request__init(&hash);
  out.push_back({"maint.hash", Pack(&hash.base), true});
  Natcd__V1__DefragmentRequest defrag;
  natcd__v1__defragment_request__init(&defrag);
  out.push_back({"maint.defrag", Pack(&defrag.base), true});
  Natcd__V1__MoveLeaderRequest move;
  natcd__v1__move_leader_request__init(&move);
  move.targetid = member_id;
  out.push_back({"maint.moveleader", Pack(&move.base), true});
  char* urls[] = {const_cast<char*>("http://127.0.0.1:1")};
  Natcd__V1__MemberAddRequest add;
  natcd__v1__member_add_request__init(&add);
  add.n_peerurls = 1;
  add.peerurls = urls;
  add.name = const_cast<char*>("intruder");
  out.push_back({"cluster.member.add", Pack(&add.base), true});
  Natcd__V1__MemberRemoveRequest remove;
  natcd__v1__member_remove_request__init(&remove);
  remove.id = member_id;
  out.push_back({"cluster.member.remove", Pack(&remove.base), true});
  Natcd__V1__MemberPromoteRequest promote;
  natcd__v1__member_promote_request__init(&promote);
  promote.id = member_id;
  out.push_back({"cluster.member.promote", Pack(&promote.base), true});
  return out;
}

constexpr const char* kRefused = "permission denied: authentication is enabled";

// Tokens live 2 s since their last use here, so that one expires within
// the test.
class NatsAuthTest : public EtcdctlTest {
 public:
  static void SetUpTestSuite() { StartSuite({"--auth-token-ttl", "2"}); }
};

TEST_F(NatsAuthTest, NoClientSubjectServesARequestThatNeedsAUserUnchecked) {
  WireClient wire(server_->url());
  ASSERT_TRUE(wire.connected());
  const uint64_t id = MemberId(wire);
  ASSERT_NE(id, 0u);
  // A C client that wrote before auth was enabled knows the leader: its
  // writes and linearizable reads go to P.to.<leader>.
  natcdClient* c = nullptr;
  ASSERT_EQ(natcdClient_Connect(&c, server_->url().c_str(), nullptr), natcdStatus_OK);
  natcdPutResponse* put = nullptr;
  ASSERT_EQ(natcdKV_Put(&put, c, "/na/a", 5, "1", 1, nullptr), natcdStatus_OK);
  EXPECT_EQ(put->header.member_id, id);
  natcdPutResponse_Destroy(put);

  ASSERT_TRUE(Contains(Run({"user", "add", "root:rootpw"}).out, "User root created"));
  ASSERT_TRUE(Contains(Run({"auth", "enable"}).out, "Authentication Enabled"));

  // The C client: refused, by the leader it addresses.
  natcdError error;
  EXPECT_EQ(natcdKV_Put(&put, c, "/na/c", 5, "2", 1, nullptr), natcdStatus_BadRequest);
  natcd_GetLastError(&error);
  EXPECT_TRUE(Contains(error.text, kRefused)) << error.text;
  natcdRangeResponse* range = nullptr;
  EXPECT_EQ(natcdKV_Get(&range, c, "/na/a", 5, nullptr), natcdStatus_BadRequest);
  natcd_GetLastError(&error);
  EXPECT_TRUE(Contains(error.text, kRefused)) << error.text;
  natcdClient_Destroy(c);

  // A raw request of every kind that needs a user, on every subject a
  // client may send it to.
  for (const CheckedRequest& request : RequestsThatNeedAUser(id)) {
    std::vector<std::string> subjects = {wire.Subject(request.suffix)};
    if (request.addressed)
      subjects.push_back(wire.Subject("to." + Hex16(id) + "." + request.suffix));
    for (const std::string& subject : subjects) {
      WireReply reply = wire.Raw(subject, request.body, {}, 3000);
      EXPECT_EQ(reply.code, 400) << subject << ": " << reply.error;
      EXPECT_TRUE(Contains(reply.error, kRefused)) << subject << ": " << reply.error;
    }
  }
  // What etcd does not check is served.
  Natcd__V1__LeaseGrantRequest grant;
  natcd__v1__lease_grant_request__init(&grant);
  grant.ttl = 5;
  EXPECT_TRUE(wire.Call("lease.grant", &grant.base).ok());
  Natcd__V1__StatusRequest status;
  natcd__v1__status_request__init(&status);
  EXPECT_TRUE(wire.Raw(wire.Subject("to." + Hex16(id) + ".maint.status"), Pack(&status.base)).ok());
  Natcd__V1__MemberListRequest list;
  natcd__v1__member_list_request__init(&list);
  EXPECT_TRUE(
      wire.Raw(wire.Subject("to." + Hex16(id) + ".cluster.member.list"), Pack(&list.base)).ok());

  // Nothing was changed: one key, one member.
  const std::string keys =
      Run({"--user", "root:rootpw", "get", "/na/", "--prefix", "--keys-only"}).out;
  EXPECT_TRUE(Contains(keys, "/na/a")) << keys;
  EXPECT_FALSE(Contains(keys, "/na/c")) << keys;
  EXPECT_FALSE(Contains(keys, "/na/unchecked")) << keys;
  EXPECT_FALSE(Contains(Run({"--user", "root:rootpw", "member", "list"}).out, "intruder"));
  EXPECT_TRUE(
      Contains(Run({"--user", "root:rootpw", "auth", "disable"}).out, "Authentication Disabled"));
}

// P.auth.authenticate's token, in the Natcd-Auth-Token header, is checked
// as the gRPC API's: the user's permissions apply; the C client
// authenticates with its options' user and authenticates again when its
// token has expired.
TEST_F(NatsAuthTest, ATokenFromPAuthAuthenticateIsCheckedAsOnGrpc) {
  const std::vector<std::string> root = {"--user", "root:rootpw"};
  auto as_root = [&](std::vector<std::string> args) {
    args.insert(args.begin(), root.begin(), root.end());
    return Run(args).out;
  };
  (void)Run({"user", "add", "root:rootpw"});  // the first test added it already
  ASSERT_TRUE(Contains(Run({"user", "add", "alice:alicepw"}).out, "User alice created"));
  ASSERT_TRUE(Contains(Run({"role", "add", "tok"}).out, "Role tok created"));
  ASSERT_TRUE(
      Contains(Run({"role", "grant-permission", "tok", "readwrite", "/tok/", "--prefix=true"}).out,
               "Role tok updated"));
  ASSERT_TRUE(Contains(Run({"user", "grant-role", "alice", "tok"}).out, "is granted"));
  ASSERT_TRUE(Contains(Run({"auth", "enable"}).out, "Authentication Enabled"));

  WireClient wire(server_->url());
  ASSERT_TRUE(wire.connected());
  auto authenticate = [&](const char* name, const char* password) {
    Natcd__V1__AuthenticateRequest in;
    natcd__v1__authenticate_request__init(&in);
    in.name = const_cast<char*>(name);
    in.password = const_cast<char*>(password);
    return wire.Call("auth.authenticate", &in.base);
  };
  WireReply wrong = authenticate("alice", "nope");
  EXPECT_EQ(wrong.code, 400);
  EXPECT_TRUE(
      Contains(wrong.error, "etcdserver: authentication failed, invalid user ID or password"))
      << wrong.error;
  WireReply ok = authenticate("alice", "alicepw");
  ASSERT_TRUE(ok.ok()) << ok.error;
  auto answered = WireClient::Decode<Natcd__V1__AuthenticateResponse>(
      &natcd__v1__authenticate_response__descriptor, ok);
  ASSERT_NE(answered, nullptr);
  const std::string token = answered->token;
  EXPECT_EQ(token.find('.'), 16u) << token;  // etcd's "<16 letters>.<index>"

  auto put = [&](const char* key, const std::string& with_token) {
    Natcd__V1__PutRequest in;
    natcd__v1__put_request__init(&in);
    in.key = Bytes(key);
    in.value = Bytes("v");
    std::vector<std::pair<std::string, std::string>> headers;
    if (!with_token.empty()) headers.push_back({"Natcd-Auth-Token", with_token});
    return wire.Raw(wire.Subject("kv.put"), Pack(&in.base), headers);
  };
  EXPECT_TRUE(put("/tok/a", token).ok());
  EXPECT_TRUE(Contains(put("/other", token).error, "etcdserver: permission denied"));
  EXPECT_TRUE(Contains(put("/tok/a", "").error, kRefused));
  EXPECT_TRUE(
      Contains(put("/tok/a", "abcdefghijklmnop.1").error, "etcdserver: invalid auth token"));
  // A watch is checked too.
  Natcd__V1__WatchCreateRequest watch;
  natcd__v1__watch_create_request__init(&watch);
  watch.key = Bytes("/tok/a");
  watch.deliver_subject = const_cast<char*>("_INBOX.tok.watch");
  WireReply created =
      wire.Raw(wire.Subject("watch.create"), Pack(&watch.base), {{"Natcd-Auth-Token", token}});
  EXPECT_TRUE(created.ok()) << created.error;
  watch.key = Bytes("/other");
  EXPECT_TRUE(Contains(
      wire.Raw(wire.Subject("watch.create"), Pack(&watch.base), {{"Natcd-Auth-Token", token}})
          .error,
      "etcdserver: permission denied"));

  // The C client, as alice.
  natcdClientOptions opts;
  natcdClientOptions_Init(&opts);
  opts.user = "alice";
  opts.password = "nope";
  natcdClient* c = nullptr;
  natcdError error;
  EXPECT_NE(natcdClient_Connect(&c, server_->url().c_str(), &opts), natcdStatus_OK);
  natcd_GetLastError(&error);
  EXPECT_TRUE(Contains(error.text, "authentication failed")) << error.text;
  opts.password = "alicepw";
  ASSERT_EQ(natcdClient_Connect(&c, server_->url().c_str(), &opts), natcdStatus_OK);
  natcdPutResponse* written = nullptr;
  ASSERT_EQ(natcdKV_Put(&written, c, "/tok/c", 6, "1", 1, nullptr), natcdStatus_OK);
  natcdPutResponse_Destroy(written);
  natcdRangeResponse* range = nullptr;
  ASSERT_EQ(natcdKV_Get(&range, c, "/tok/c", 6, nullptr), natcdStatus_OK);  // to the leader
  EXPECT_EQ(range->count, 1);
  natcdRangeResponse_Destroy(range);
  EXPECT_EQ(natcdKV_Put(&written, c, "/other", 6, "1", 1, nullptr), natcdStatus_BadRequest);
  // Unused for longer than the TTL (2 s), the tokens expire: the raw one is
  // refused, and the C client authenticates again by itself.
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  EXPECT_TRUE(Contains(put("/tok/a", token).error, "etcdserver: invalid auth token"));
  ASSERT_EQ(natcdKV_Put(&written, c, "/tok/d", 6, "1", 1, nullptr), natcdStatus_OK);
  natcdPutResponse_Destroy(written);
  natcdClient_Destroy(c);

  const std::string keys = as_root({"get", "/", "--prefix", "--keys-only"});
  EXPECT_FALSE(Contains(keys, "/other")) << keys;
  EXPECT_TRUE(Contains(as_root({"auth", "disable"}), "Authentication Disabled"));
}

// --nats-trusted: the NATS account's permissions guard the subjects, so
// NATS requests are served unchecked while auth is enabled.
class TrustedNatsAuthTest : public EtcdctlTest {
 public:
  static void SetUpTestSuite() { StartSuite({"--nats-trusted"}); }
};

TEST_F(TrustedNatsAuthTest, NatsRequestsAreServedWhileAuthIsEnabled) {
  WireClient wire(server_->url());
  ASSERT_TRUE(wire.connected());
  const uint64_t id = MemberId(wire);
  ASSERT_NE(id, 0u);
  ASSERT_TRUE(Contains(Run({"user", "add", "root:rootpw"}).out, "User root created"));
  ASSERT_TRUE(Contains(Run({"auth", "enable"}).out, "Authentication Enabled"));
  // gRPC is still checked.
  EXPECT_TRUE(Contains(Run({"get", "/t/a"}).err, "etcdserver: user name is empty"));

  natcdClient* c = nullptr;
  ASSERT_EQ(natcdClient_Connect(&c, server_->url().c_str(), nullptr), natcdStatus_OK);
  natcdPutResponse* put = nullptr;
  ASSERT_EQ(natcdKV_Put(&put, c, "/t/a", 4, "1", 1, nullptr), natcdStatus_OK);
  natcdPutResponse_Destroy(put);
  // Now addressed to the leader (P.to.<leader>.kv.put).
  natsSubscription* spy = nullptr;
  ASSERT_EQ(natsConnection_SubscribeSync(&spy, wire.nc(), "natcd.to.>"), NATS_OK);
  ASSERT_EQ(natsConnection_Flush(wire.nc()), NATS_OK);
  ASSERT_EQ(natcdKV_Put(&put, c, "/t/b", 4, "2", 1, nullptr), natcdStatus_OK);
  natcdPutResponse_Destroy(put);
  natsMsg* seen = nullptr;
  ASSERT_EQ(natsSubscription_NextMsg(&seen, spy, 2000), NATS_OK);
  EXPECT_EQ(std::string(natsMsg_GetSubject(seen)), "natcd.to." + Hex16(id) + ".kv.put");
  natsMsg_Destroy(seen);
  natsSubscription_Destroy(spy);
  natcdRangeResponse* range = nullptr;
  ASSERT_EQ(natcdKV_Get(&range, c, "/t/b", 4, nullptr), natcdStatus_OK);
  EXPECT_EQ(range->count, 1);
  natcdRangeResponse_Destroy(range);
  natcdClient_Destroy(c);
  Natcd__V1__RangeRequest get;
  natcd__v1__range_request__init(&get);
  get.key = Bytes("/t/a");
  EXPECT_TRUE(wire.Call("kv.range", &get.base).ok());
  EXPECT_TRUE(wire.Raw(wire.Subject("to." + Hex16(id) + ".kv.range"), Pack(&get.base)).ok());
  EXPECT_TRUE(
      Contains(Run({"--user", "root:rootpw", "auth", "disable"}).out, "Authentication Disabled"));
}

}  // namespace
}  // namespace natcd::testing
