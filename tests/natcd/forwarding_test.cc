// Forwarding a second front end's requests (docs/PROTOCOL.md "Clusters"):
// three in-process members (nats::Node) on one nats-server; requests are
// submitted to a follower's member with a Responder that is not the NATS
// front end's, as etcd's gRPC front end submits them. The follower asks the
// leader over the wire contract (P.fwd.<leader>.<suffix>, protobuf, the
// request id and hop count headers) and hands the leader's answer, or its
// error with code, name and message, to that responder.
#include <gtest/gtest.h>
#include <nats/nats.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "adapters/nats/node.h"
#include "adapters/nats/peer/raft_transport.h"
#include "natcd/clock.h"
#include "natcd/natcd_helpers.h"
#include "server/member.h"
#include "support/nats_server.h"
#include "support/wire_client.h"
#include "testutil.h"

namespace natcd::testing {
namespace {

const std::vector<std::string> kNames = {"n1", "n2", "n3"};
constexpr int kAnswerTimeoutMs = 10'000;

// What a responder was called with, for the test thread to wait on.
struct Recorded {
  std::mutex mu;
  std::condition_variable cv;
  int calls = 0;
  std::optional<Result<server::Response>> result;
  server::ResponseContext context;
};

// A front end's responder other than NATS's: records its one answer.
class RecordingResponder final : public server::Responder {
 public:
  explicit RecordingResponder(std::shared_ptr<Recorded> recorded)
      : recorded_(std::move(recorded)) {}
  void Respond(Result<server::Response> response, const server::ResponseContext& context) override {
    std::lock_guard<std::mutex> lock(recorded_->mu);
    recorded_->calls++;
    recorded_->result = std::move(response);
    recorded_->context = context;
    recorded_->cv.notify_all();
  }

 private:
  std::shared_ptr<Recorded> recorded_;
};

// One member in this process, on its own connection (as natcd runs it).
struct InProcessMember {
  natsConnection* nc = nullptr;
  std::unique_ptr<TempDir> dir;
  std::unique_ptr<nats::Node> node;
  ~InProcessMember() {
    node.reset();
    natsConnection_Destroy(nc);
  }
};

class ForwardingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.Start());
    for (const std::string& name : kNames) {
      auto member = std::make_unique<InProcessMember>();
      natsOptions* opts = nullptr;
      ASSERT_EQ(natsOptions_Create(&opts), NATS_OK);
      natsOptions_SetURL(opts, server_.url().c_str());
      natsOptions_SetSendAsap(opts, true);
      natsStatus s = natsConnection_Connect(&member->nc, opts);
      natsOptions_Destroy(opts);
      ASSERT_EQ(s, NATS_OK) << natsStatus_GetText(s);
      member->dir = std::make_unique<TempDir>();
      nats::NodeOptions options;
      options.name = name;
      options.engine.db_path = member->dir->File("natcd.db");
      options.engine.clock = &clock_;
      options.engine.sync = false;
      options.engine.lease_ttl_s_min = 1;
      options.raft_log_segment_bytes = 64 << 10;  // zero-filled when made
      options.initial_cluster = kNames;
      options.heartbeat_interval_ms = 50;
      options.election_timeout_ms = 500;
      Result<std::unique_ptr<nats::Node>> node = nats::Node::Start(member->nc, options);
      ASSERT_TRUE(node.ok()) << node.status().ToString();
      member->node = std::move(node).value();
      members_.push_back(std::move(member));
    }
    ASSERT_TRUE(WaitFor([&] { return Settled(); }, 10'000)) << "no leader every member knows";
    client_ = std::make_unique<WireClient>(server_.url());
    ASSERT_TRUE(client_->connected());
  }
  void TearDown() override {
    client_.reset();
    members_.clear();
  }

  server::Member& MemberAt(size_t i) { return members_[i]->node->member(); }
  // A leader that every running member follows.
  bool Settled() {
    uint64_t leader = 0;
    for (auto& m : members_) {
      if (m->node == nullptr) continue;
      const uint64_t known = m->node->member().leader();
      if (known == 0 || (leader != 0 && known != leader)) return false;
      leader = known;
    }
    return true;
  }
  size_t LeaderIndex() {
    for (size_t i = 0; i < members_.size(); i++) {
      if (members_[i]->node != nullptr && MemberAt(i).is_leader()) return i;
    }
    return members_.size();
  }
  size_t FollowerIndex() {
    const size_t leader = LeaderIndex();
    for (size_t i = 0; i < members_.size(); i++) {
      if (i != leader && members_[i]->node != nullptr) return i;
    }
    return members_.size();
  }

  // Submits payload to members_[at] as a second front end would and waits
  // for its answer (which must come exactly once).
  Result<server::Response> Ask(size_t at, server::RequestPayload payload,
                               const std::string& request_id = "",
                               server::ResponseContext* context = nullptr) {
    auto recorded = std::make_shared<Recorded>();
    auto request = std::make_unique<server::Request>();
    request->payload = std::move(payload);
    request->request_id = request_id;
    request->received_ms = clock_.MonotonicMs();
    request->responder = std::make_unique<RecordingResponder>(recorded);
    MemberAt(at).Submit(std::move(request));
    std::unique_lock<std::mutex> lock(recorded->mu);
    if (!recorded->cv.wait_for(lock, std::chrono::milliseconds(kAnswerTimeoutMs),
                               [&] { return recorded->calls > 0; })) {
      return Status::Internal("test: no answer");
    }
    EXPECT_EQ(recorded->calls, 1);
    if (context != nullptr) *context = recorded->context;
    return std::move(*recorded->result);
  }
  template <typename T>
  T AskOk(size_t at, server::RequestPayload payload, const std::string& request_id = "") {
    Result<server::Response> r = Ask(at, std::move(payload), request_id);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok()) return T{};
    const T* value = std::get_if<T>(&r.value());
    EXPECT_NE(value, nullptr) << "response of another type: index " << r.value().index();
    return value != nullptr ? *value : T{};
  }

  SystemClock clock_;
  NatsServer server_;
  std::vector<std::unique_ptr<InProcessMember>> members_;
  std::unique_ptr<WireClient> client_;
};

TEST_F(ForwardingTest, AFollowerHandsAnyFrontEndsRequestToTheLeader) {
  const size_t leader = LeaderIndex();
  const size_t follower = FollowerIndex();
  ASSERT_LT(leader, members_.size());
  ASSERT_LT(follower, members_.size());
  const uint64_t leader_id = MemberAt(leader).id();

  // A put, on the wire as a client's: P.fwd.<leader>.kv.put, protobuf, the
  // request id and the hop count.
  Sub forwarded(client_->nc(), "natcd.fwd.>");
  PutRequest put;
  put.key = "/fwd/a";
  put.value = "1";
  server::ResponseContext context;
  Result<server::Response> r = Ask(follower, put, "fwd-put-a", &context);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(std::holds_alternative<PutResponse>(r.value()));
  const int64_t put_revision = std::get<PutResponse>(r.value()).header.revision;
  EXPECT_GE(put_revision, 1);
  EXPECT_EQ(context.raft_term, MemberAt(leader).raft_term()) << "the leader's term";
  std::optional<Received> seen = forwarded.Next();
  ASSERT_TRUE(seen);
  EXPECT_EQ(seen->subject, nats::ForwardPrefix("natcd", leader_id) + "kv.put");
  EXPECT_EQ(seen->Header("Natcd-Request-Id"), "fwd-put-a");
  EXPECT_EQ(seen->Header(nats::kForwardedHeader), "1");
  EXPECT_FALSE(seen->HasHeader("Content-Type")) << "protobuf, not JSON";
  Unpacked<Natcd__V1__PutRequest> body(reinterpret_cast<Natcd__V1__PutRequest*>(
      protobuf_c_message_unpack(&natcd__v1__put_request__descriptor, nullptr, seen->data.size(),
                                reinterpret_cast<const uint8_t*>(seen->data.data()))));
  ASSERT_TRUE(body);
  EXPECT_EQ(Str(body->key), "/fwd/a");
  EXPECT_EQ(Str(body->value), "1");

  // The request id reached the leader: a retry is answered with the first
  // outcome, not applied again.
  EXPECT_EQ(AskOk<PutResponse>(follower, put, "fwd-put-a").header.revision, put_revision);

  // A txn: a compare, a put and a range of what it wrote.
  TxnRequest txn;
  Compare version;
  version.result = Compare::Result::kGreater;
  version.target = Compare::Target::kVersion;
  version.key = "/fwd/a";
  version.version = 0;
  txn.compare.push_back(version);
  txn.success.push_back(RequestOp{PutRequest{"/fwd/b", "2", 0, false, false, false}});
  RangeRequest range;
  range.key = "/fwd/";
  range.range_end = "/fwd0";
  txn.success.push_back(RequestOp{range});
  TxnResponse t = AskOk<TxnResponse>(follower, txn);
  EXPECT_TRUE(t.succeeded);
  EXPECT_EQ(t.header.revision, put_revision + 1);
  ASSERT_EQ(t.responses.size(), 2u);
  ASSERT_TRUE(std::holds_alternative<RangeResponse>(t.responses[1].response));
  const RangeResponse& read = std::get<RangeResponse>(t.responses[1].response);
  ASSERT_EQ(read.kvs.size(), 2u);
  EXPECT_EQ(read.kvs[0].key, "/fwd/a");
  EXPECT_EQ(read.kvs[1].key, "/fwd/b");
  EXPECT_EQ(read.kvs[1].value, "2");

  // A lease granted and kept alive: the keepalive is answered by the
  // leader, which holds the lease's deadline.
  LeaseGrantResponse grant = AskOk<LeaseGrantResponse>(follower, LeaseGrantRequest{30, 0});
  EXPECT_NE(grant.id, 0);
  EXPECT_EQ(grant.ttl, 30);
  LeaseKeepAliveResponse kept =
      AskOk<LeaseKeepAliveResponse>(follower, LeaseKeepAliveRequest{grant.id});
  EXPECT_EQ(kept.id, grant.id);
  EXPECT_EQ(kept.ttl, 30);

  // The member list, from the leader.
  server::MemberListResponse list =
      AskOk<server::MemberListResponse>(follower, server::MemberListRequest{});
  std::set<std::string> names;
  for (const server::MemberInfo& m : list.members) {
    names.insert(m.name);
    EXPECT_FALSE(m.is_learner);
  }
  EXPECT_EQ(names, std::set<std::string>(kNames.begin(), kNames.end()));

  // Every one of them went to the leader, one hop each.
  std::vector<Received> rest = forwarded.Drain(300);
  std::vector<std::string> suffixes;
  for (const Received& m : rest) {
    suffixes.push_back(m.subject.substr(nats::ForwardPrefix("natcd", leader_id).size()));
    EXPECT_EQ(m.Header(nats::kForwardedHeader), "1") << m.subject;
  }
  EXPECT_EQ(suffixes, (std::vector<std::string>{"kv.put", "kv.txn", "lease.grant",
                                                "lease.keepalive", "cluster.member.list"}));
}

TEST_F(ForwardingTest, TheLeadersErrorKeepsItsCodeNameAndMessage) {
  const size_t leader = LeaderIndex();
  const size_t follower = FollowerIndex();
  ASSERT_LT(follower, members_.size());
  const uint64_t leader_id = MemberAt(leader).id();

  // A revoke of a lease nobody granted: what the leader answers a NATS
  // client, the follower's front end gets as a Status.
  Natcd__V1__LeaseRevokeRequest revoke;
  natcd__v1__lease_revoke_request__init(&revoke);
  revoke.id = 0x12345;
  std::string body(protobuf_c_message_get_packed_size(&revoke.base), '\0');
  protobuf_c_message_pack(&revoke.base, reinterpret_cast<uint8_t*>(body.data()));
  WireReply direct = client_->Raw(nats::ForwardPrefix("natcd", leader_id) + "lease.revoke", body);
  ASSERT_EQ(direct.code, 404) << direct.error;
  Result<server::Response> r = Ask(follower, LeaseRevokeRequest{0x12345});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kLeaseNotFound);
  EXPECT_EQ(r.status().name(), "ErrLeaseNotFound");
  EXPECT_EQ(r.status().ToString(), direct.error);

  // A compacted revision keeps its compact revision.
  for (int i = 0; i < 3; i++) {
    AskOk<PutResponse>(follower, PutRequest{"/c", std::to_string(i), 0, false, false, false});
  }
  const CompactionResponse compacted =
      AskOk<CompactionResponse>(follower, CompactionRequest{4, false});
  EXPECT_EQ(compacted.header.revision, 4);
  TxnRequest old_read;
  RangeRequest at_three;
  at_three.key = "/c";
  at_three.revision = 3;
  old_read.success.push_back(RequestOp{at_three});
  r = Ask(follower, old_read);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kCompacted) << r.status().ToString();
  EXPECT_EQ(r.status().compact_revision(), 4);
  EXPECT_EQ(r.status().ToString(), Status::Compacted(3, 4).ToString());
}

TEST_F(ForwardingTest, ARequestWhoseLeaderIsGoneWaitsForTheNext) {
  const size_t leader = LeaderIndex();
  const size_t follower = FollowerIndex();
  ASSERT_LT(leader, members_.size());
  const uint64_t old_leader = MemberAt(leader).id();
  // Stopped, the old leader answers nothing on P.fwd.<it> (no responders),
  // while its followers still count it the leader until they elect another:
  // the put is handed to it, comes back and waits for the next leader.
  // (Nothing may subscribe P.fwd.<old leader>.kv.put to watch it go there:
  // a subscriber is a responder.)
  members_[leader]->node->Stop();
  ASSERT_EQ(MemberAt(follower).leader(), old_leader) << "the election came first";
  PutRequest put;
  put.key = "/after";
  put.value = "failover";
  PutResponse answered = AskOk<PutResponse>(follower, put, "fwd-after");
  EXPECT_GE(answered.header.revision, 1);
  EXPECT_NE(MemberAt(follower).leader(), old_leader);
}

}  // namespace
}  // namespace natcd::testing
