// natcd's gRPC API at the wire, with a grpc++ generic client: etcd's method
// paths and status codes, bad input (garbage bytes, unknown methods, a
// stream abandoned mid-call) answered with a clear error while the server
// keeps serving, and the Watch stream's protocol (per-stream watch IDs,
// created in order, cancel, broadcast progress, compaction).
#include "adapters/grpc/etcd_rpc.pb-c.h"
#include "adapters/nats/natcd.pb-c.h"
#include "grpc/etcdctl_fixture.h"
#include "grpc/grpc_client.h"

namespace natcd::testing {
namespace {

class GrpcWireTest : public EtcdctlTest {
 protected:
  void SetUp() override {
    channel_ = grpc::CreateChannel(endpoint_, grpc::InsecureChannelCredentials());
    stub_ = std::make_unique<grpc::GenericStub>(channel_);
  }

  grpc::Status Unary(const std::string& method, const std::string& request, std::string* response) {
    return UnaryCall(stub_.get(), method, request, response);
  }

  grpc::Status Put(const std::string& key, const std::string& value) {
    Natcd__V1__PutRequest put;
    natcd__v1__put_request__init(&put);
    put.key = {key.size(), reinterpret_cast<uint8_t*>(const_cast<char*>(key.data()))};
    put.value = {value.size(), reinterpret_cast<uint8_t*>(const_cast<char*>(value.data()))};
    return Unary("/etcdserverpb.KV/Put", Pack(&put.base), nullptr);
  }

  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<grpc::GenericStub> stub_;
};

using Response = std::unique_ptr<Natcd__V1__WatchResponse, void (*)(Natcd__V1__WatchResponse*)>;

Response DecodeWatch(const std::string& bytes) {
  return Response(natcd__v1__watch_response__unpack(nullptr, bytes.size(),
                                                    reinterpret_cast<const uint8_t*>(bytes.data())),
                  [](Natcd__V1__WatchResponse* r) {
                    if (r) natcd__v1__watch_response__free_unpacked(r, nullptr);
                  });
}

std::string WatchCreate(const std::string& key, int64_t watch_id, int64_t start_revision = 0) {
  Natcd__V1__WatchCreateRequest create;
  natcd__v1__watch_create_request__init(&create);
  create.key = {key.size(), reinterpret_cast<uint8_t*>(const_cast<char*>(key.data()))};
  create.watch_id = watch_id;
  create.start_revision = start_revision;
  Natcd__Grpc__WatchRequest request;
  natcd__grpc__watch_request__init(&request);
  request.request_union_case = NATCD__GRPC__WATCH_REQUEST__REQUEST_UNION_CREATE_REQUEST;
  request.create_request = &create;
  return Pack(&request.base);
}

TEST_F(GrpcWireTest, UnknownMethodsAreUnimplemented) {
  grpc::Status s = Unary("/etcdserverpb.KV/RangeStream", "", nullptr);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNIMPLEMENTED);
  EXPECT_EQ(s.error_message(), "unknown method RangeStream for service etcdserverpb.KV");
  s = Unary("/no.Such/Method", "", nullptr);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNIMPLEMENTED);
  s = Put("/wire/ok", "1");
  EXPECT_TRUE(s.ok()) << s.error_code() << " " << s.error_message();
}

TEST_F(GrpcWireTest, GarbageBytesAreRefusedAndNothingChanges) {
  grpc::Status s = Unary("/etcdserverpb.KV/Put", std::string("\xff\xff\xff\xff\x0f", 5), nullptr);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INTERNAL);
  EXPECT_NE(s.error_message().find("error unmarshalling request"), std::string::npos);
  // A field of the wrong wire type.
  s = Unary("/etcdserverpb.KV/Range", std::string("\x0d\x01\x02\x03\x04", 5), nullptr);
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(Put("/wire/after", "1").ok());
}

// A unary method called as a stream that sends no message: a clear error,
// and the server keeps serving.
TEST_F(GrpcWireTest, AUnaryCallWithoutARequestMessageIsRefused) {
  SyncStream stream(stub_.get(), "/etcdserverpb.KV/Put");
  ASSERT_TRUE(stream.ok());
  ASSERT_TRUE(stream.WritesDone());
  grpc::Status s = stream.Finish();
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INTERNAL);
  EXPECT_EQ(s.error_message(), "no request message");
  EXPECT_TRUE(Put("/wire/after-empty", "1").ok());
}

TEST_F(GrpcWireTest, EtcdsCodesAndMessages) {
  grpc::Status s = Put("", "v");
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(), "etcdserver: key is not provided");
  Natcd__V1__LeaseRevokeRequest revoke;
  natcd__v1__lease_revoke_request__init(&revoke);
  revoke.id = 0x7777;
  s = Unary("/etcdserverpb.Lease/LeaseRevoke", Pack(&revoke.base), nullptr);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(s.error_message(), "etcdserver: requested lease not found");
}

// etcd's Cluster/MemberUpdate: the header and every member in the reply,
// etcd's codes and messages for an unknown member and a URL in use.
TEST_F(GrpcWireTest, MemberUpdateAnswersAsEtcd) {
  auto update = [&](uint64_t id, std::vector<std::string> urls, std::string* out) {
    std::vector<char*> ptrs;
    for (std::string& url : urls) ptrs.push_back(url.data());
    Natcd__V1__MemberUpdateRequest r;
    natcd__v1__member_update_request__init(&r);
    r.id = id;
    r.n_peerurls = ptrs.size();
    r.peerurls = ptrs.data();
    return Unary("/etcdserverpb.Cluster/MemberUpdate", Pack(&r.base), out);
  };
  grpc::Status s = update(0x1234, {"http://x:2380"}, nullptr);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(s.error_message(), "etcdserver: member not found");
  // A learner beside this member (it commits without running).
  char url[] = "http://n9:2380";
  char* urls[] = {url};
  Natcd__V1__MemberAddRequest add;
  natcd__v1__member_add_request__init(&add);
  add.n_peerurls = 1;
  add.peerurls = urls;
  add.islearner = true;
  std::string out;
  ASSERT_TRUE(Unary("/etcdserverpb.Cluster/MemberAdd", Pack(&add.base), &out).ok());
  auto* added = natcd__v1__member_add_response__unpack(
      nullptr, out.size(), reinterpret_cast<const uint8_t*>(out.data()));
  ASSERT_NE(added, nullptr);
  const uint64_t n9 = added->member->id;
  natcd__v1__member_add_response__free_unpacked(added, nullptr);

  s = update(n9, {"http://10.0.0.9:2380", "http://n9:2380"}, &out);
  ASSERT_TRUE(s.ok()) << s.error_message();
  auto* updated = natcd__v1__member_update_response__unpack(
      nullptr, out.size(), reinterpret_cast<const uint8_t*>(out.data()));
  ASSERT_NE(updated, nullptr);
  ASSERT_NE(updated->header, nullptr);
  EXPECT_NE(updated->header->cluster_id, 0u);
  EXPECT_NE(updated->header->member_id, 0u);
  ASSERT_EQ(updated->n_members, 2u);
  const Natcd__V1__Member* m = updated->members[1];
  EXPECT_EQ(m->id, n9);
  ASSERT_EQ(m->n_peerurls, 2u);
  EXPECT_STREQ(m->peerurls[0], "http://10.0.0.9:2380");
  EXPECT_STREQ(m->peerurls[1], "http://n9:2380");
  const uint64_t self = updated->members[0]->id;
  natcd__v1__member_update_response__free_unpacked(updated, nullptr);

  s = update(self, {"http://n9:2380"}, nullptr);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(s.error_message(), "etcdserver: Peer URLs already exists");

  Natcd__V1__MemberRemoveRequest remove;
  natcd__v1__member_remove_request__init(&remove);
  remove.id = n9;
  EXPECT_TRUE(Unary("/etcdserverpb.Cluster/MemberRemove", Pack(&remove.base), nullptr).ok());
}

TEST_F(GrpcWireTest, HealthCheck) {
  std::string out;
  grpc::Status s = Unary("/grpc.health.v1.Health/Check", "", &out);
  ASSERT_TRUE(s.ok()) << s.error_message();
  auto* r = natcd__grpc__health_check_response__unpack(
      nullptr, out.size(), reinterpret_cast<const uint8_t*>(out.data()));
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->status, NATCD__GRPC__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVING);
  natcd__grpc__health_check_response__free_unpacked(r, nullptr);
}

TEST_F(GrpcWireTest, WatchIdsArePerStreamAndCreatedInOrder) {
  SyncStream stream(stub_.get(), "/etcdserverpb.Watch/Watch");
  ASSERT_TRUE(stream.ok());
  // Auto IDs from 0, a chosen one, and a duplicate of it.
  ASSERT_TRUE(stream.Write(WatchCreate("/ws/a", 0)));
  ASSERT_TRUE(stream.Write(WatchCreate("/ws/b", 7)));
  ASSERT_TRUE(stream.Write(WatchCreate("/ws/c", 0)));
  ASSERT_TRUE(stream.Write(WatchCreate("/ws/d", 7)));
  std::string bytes;
  std::vector<int64_t> ids;
  for (int i = 0; i < 4; i++) {
    ASSERT_TRUE(stream.Read(&bytes));
    Response r = DecodeWatch(bytes);
    ASSERT_TRUE(r && r->created);
    ids.push_back(r->watch_id);
    if (i == 3) {
      EXPECT_TRUE(r->canceled);
      EXPECT_STREQ(r->cancel_reason, "mvcc: duplicate watch ID provided on the WatchStream");
    }
  }
  EXPECT_EQ(ids, (std::vector<int64_t>{0, 7, 1, -1}));
  ASSERT_TRUE(Put("/ws/b", "x").ok());
  ASSERT_TRUE(stream.Read(&bytes));
  Response event = DecodeWatch(bytes);
  ASSERT_EQ(event->n_events, 1u);
  EXPECT_EQ(event->watch_id, 7);
  // A broadcast progress request: one answer, watch ID -1, at the revision.
  Natcd__V1__WatchProgressRequest progress;
  natcd__v1__watch_progress_request__init(&progress);
  Natcd__Grpc__WatchRequest request;
  natcd__grpc__watch_request__init(&request);
  request.request_union_case = NATCD__GRPC__WATCH_REQUEST__REQUEST_UNION_PROGRESS_REQUEST;
  request.progress_request = &progress;
  ASSERT_TRUE(stream.Write(Pack(&request.base)));
  ASSERT_TRUE(stream.Read(&bytes));
  Response p = DecodeWatch(bytes);
  EXPECT_EQ(p->watch_id, -1);
  EXPECT_EQ(p->header->revision, event->header->revision);
  EXPECT_EQ(p->n_events, 0u);
  EXPECT_FALSE(stream.Read(&bytes, std::chrono::milliseconds(300)));  // just one
  // Cancel: answered canceled; no more events for it.
  Natcd__V1__WatchCancelRequest cancel;
  natcd__v1__watch_cancel_request__init(&cancel);
  cancel.watch_id = 7;
  natcd__grpc__watch_request__init(&request);
  request.request_union_case = NATCD__GRPC__WATCH_REQUEST__REQUEST_UNION_CANCEL_REQUEST;
  request.cancel_request = &cancel;
  ASSERT_TRUE(stream.Write(Pack(&request.base)));
  ASSERT_TRUE(stream.Read(&bytes));
  Response canceled = DecodeWatch(bytes);
  EXPECT_EQ(canceled->watch_id, 7);
  EXPECT_TRUE(canceled->canceled);
  ASSERT_TRUE(Put("/ws/b", "y").ok());
  EXPECT_FALSE(stream.Read(&bytes, std::chrono::milliseconds(300)));
}

TEST_F(GrpcWireTest, AWatchFromACompactedRevisionIsCanceledWithTheCompactRevision) {
  ASSERT_TRUE(Put("/wc/k", "1").ok());
  ASSERT_TRUE(Put("/wc/k", "2").ok());
  std::string out;
  Natcd__V1__RangeRequest range;
  natcd__v1__range_request__init(&range);
  std::string key = "/wc/k";
  range.key = {key.size(), reinterpret_cast<uint8_t*>(key.data())};
  ASSERT_TRUE(Unary("/etcdserverpb.KV/Range", Pack(&range.base), &out).ok());
  auto* got = natcd__v1__range_response__unpack(nullptr, out.size(),
                                                reinterpret_cast<const uint8_t*>(out.data()));
  ASSERT_NE(got, nullptr);
  const int64_t revision = got->header->revision;
  natcd__v1__range_response__free_unpacked(got, nullptr);
  Natcd__V1__CompactionRequest compact;
  natcd__v1__compaction_request__init(&compact);
  compact.revision = revision;
  ASSERT_TRUE(Unary("/etcdserverpb.KV/Compact", Pack(&compact.base), nullptr).ok());

  SyncStream stream(stub_.get(), "/etcdserverpb.Watch/Watch");
  ASSERT_TRUE(stream.Write(WatchCreate("/wc/k", 0, revision - 1)));
  std::string bytes;
  ASSERT_TRUE(stream.Read(&bytes));
  EXPECT_TRUE(DecodeWatch(bytes)->created);
  ASSERT_TRUE(stream.Read(&bytes));
  Response r = DecodeWatch(bytes);
  EXPECT_TRUE(r->canceled);
  EXPECT_EQ(r->compact_revision, revision);
}

TEST_F(GrpcWireTest, AnAbandonedStreamLeavesTheServerServing) {
  for (int i = 0; i < 20; i++) {
    SyncStream stream(stub_.get(), "/etcdserverpb.Watch/Watch");
    ASSERT_TRUE(stream.Write(WatchCreate("/abandoned/", 0)));
    // Destroyed mid-call: canceled from the client's side.
  }
  {
    SyncStream keepalive(stub_.get(), "/etcdserverpb.Lease/LeaseKeepAlive");
    ASSERT_TRUE(keepalive.Write(std::string("\x08\x01", 2)));
  }
  EXPECT_TRUE(Put("/abandoned/after", "1").ok());
}

// clientv3's WithRequireLeader ("hasleader" metadata): a member that knows
// no leader (here one of three founders, alone) refuses the call; without
// the metadata a serializable read is still served.
TEST(GrpcRequireLeaderTest, ACallRequiringALeaderIsRefusedWithoutOne) {
  TempDir dir;
  NatsServer server;
  ASSERT_TRUE(server.Start());
  NatcdProcess natcd(server.url(), dir.path(),
                     {"--name", "n1", "--initial-cluster", "n1,n2,n3", "--log-level", "warn",
                      "--listen-client-urls", "http://127.0.0.1:0"});
  ASSERT_TRUE(natcd.Start());
  const std::string endpoint = EtcdEndpointOf(natcd);
  ASSERT_FALSE(endpoint.empty()) << natcd.Log();
  grpc::GenericStub stub(grpc::CreateChannel(endpoint, grpc::InsecureChannelCredentials()));
  Natcd__V1__RangeRequest range;
  natcd__v1__range_request__init(&range);
  std::string key = "/k";
  range.key = {key.size(), reinterpret_cast<uint8_t*>(key.data())};
  range.serializable = true;
  auto call = [&](bool require_leader) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    if (require_leader) context.AddMetadata("hasleader", "true");
    grpc::ByteBuffer in = Buffer(Pack(&range.base)), out;
    std::promise<grpc::Status> done;
    stub.UnaryCall(&context, "/etcdserverpb.KV/Range", grpc::StubOptions(), &in, &out,
                   [&](grpc::Status s) { done.set_value(std::move(s)); });
    return done.get_future().get();
  };
  grpc::Status refused = call(true);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(refused.error_message(), "etcdserver: no leader");
  grpc::Status served = call(false);
  EXPECT_TRUE(served.ok()) << served.error_message();
}

// A unary call the client gave up on while the member held it (a
// linearizable read waiting for a leader): the member's later answer, from
// its own thread at shutdown, finishes the canceled call without harm, and
// the server serves meanwhile.
TEST(GrpcRequireLeaderTest, AUnaryCallCanceledWhileTheMemberHoldsItIsAnsweredLater) {
  TempDir dir;
  NatsServer server;
  ASSERT_TRUE(server.Start());
  NatcdProcess natcd(server.url(), dir.path(),
                     {"--name", "n1", "--initial-cluster", "n1,n2,n3", "--log-level", "warn",
                      "--listen-client-urls", "http://127.0.0.1:0"});
  ASSERT_TRUE(natcd.Start());
  const std::string endpoint = EtcdEndpointOf(natcd);
  ASSERT_FALSE(endpoint.empty()) << natcd.Log();
  grpc::GenericStub stub(grpc::CreateChannel(endpoint, grpc::InsecureChannelCredentials()));
  Natcd__V1__RangeRequest range;
  natcd__v1__range_request__init(&range);
  std::string key = "/k";
  range.key = {key.size(), reinterpret_cast<uint8_t*>(key.data())};
  auto call = [&](bool serializable, std::chrono::milliseconds deadline) {
    range.serializable = serializable;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + deadline);
    grpc::ByteBuffer in = Buffer(Pack(&range.base)), out;
    std::promise<grpc::Status> done;
    stub.UnaryCall(&context, "/etcdserverpb.KV/Range", grpc::StubOptions(), &in, &out,
                   [&](grpc::Status s) { done.set_value(std::move(s)); });
    return done.get_future().get();
  };
  for (int i = 0; i < 3; i++) {
    EXPECT_EQ(call(false, std::chrono::milliseconds(300)).error_code(),
              grpc::StatusCode::DEADLINE_EXCEEDED);
  }
  grpc::Status served = call(true, std::chrono::seconds(10));
  EXPECT_TRUE(served.ok()) << served.error_message();
  EXPECT_EQ(natcd.Stop(), 0) << natcd.Log();
}

}  // namespace
}  // namespace natcd::testing
