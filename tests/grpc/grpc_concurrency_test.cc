// etcd's server-side lock and election services (v3lockpb.Lock,
// v3electionpb.Election) at the wire, with a grpc++ generic client: a lock
// is exclusive and passes to waiters in order, a waiter that goes away or
// whose lease ends gives up, a campaign waits for the leader to resign,
// proclamations and leaders are observed, and the recipes' errors carry
// etcd's texts.
#include "adapters/grpc/etcd_concurrency.pb-c.h"
#include "adapters/nats/natcd.pb-c.h"
#include "grpc/etcdctl_fixture.h"
#include "grpc/grpc_client.h"

namespace natcd::testing {
namespace {

using std::chrono::milliseconds;

template <typename T>
using Unpacked = std::unique_ptr<T, void (*)(T*)>;

template <typename T>
Unpacked<T> Unpack(const ProtobufCMessageDescriptor& descriptor, const std::string& bytes) {
  auto* m = protobuf_c_message_unpack(&descriptor, nullptr, bytes.size(),
                                      reinterpret_cast<const uint8_t*>(bytes.data()));
  return Unpacked<T>(reinterpret_cast<T*>(m), [](T* p) {
    if (p != nullptr) protobuf_c_message_free_unpacked(&p->base, nullptr);
  });
}

std::string Text(const ProtobufCBinaryData& data) {
  return std::string(reinterpret_cast<const char*>(data.data), data.len);
}

std::string LockRequest(const std::string& name, int64_t lease) {
  Natcd__Grpc__LockRequest r;
  natcd__grpc__lock_request__init(&r);
  r.name = BinaryOf(name);
  r.lease = lease;
  return Pack(&r.base);
}

std::string UnlockRequest(const std::string& key) {
  Natcd__Grpc__UnlockRequest r;
  natcd__grpc__unlock_request__init(&r);
  r.key = BinaryOf(key);
  return Pack(&r.base);
}

std::string CampaignRequest(const std::string& name, int64_t lease, const std::string& value) {
  Natcd__Grpc__CampaignRequest r;
  natcd__grpc__campaign_request__init(&r);
  r.name = BinaryOf(name);
  r.lease = lease;
  r.value = BinaryOf(value);
  return Pack(&r.base);
}

std::string LeaderRequest(const std::string& name) {
  Natcd__Grpc__LeaderRequest r;
  natcd__grpc__leader_request__init(&r);
  r.name = BinaryOf(name);
  return Pack(&r.base);
}

// The leader key a Campaign answered, as Proclaim and Resign take it.
struct LeaderKey {
  std::string name, key;
  int64_t rev = 0, lease = 0;
};

std::string WithLeader(const LeaderKey& k, bool proclaim, const std::string& value = "") {
  Natcd__Grpc__LeaderKey leader;
  natcd__grpc__leader_key__init(&leader);
  leader.name = BinaryOf(k.name);
  leader.key = BinaryOf(k.key);
  leader.rev = k.rev;
  leader.lease = k.lease;
  if (proclaim) {
    Natcd__Grpc__ProclaimRequest r;
    natcd__grpc__proclaim_request__init(&r);
    r.leader = &leader;
    r.value = BinaryOf(value);
    return Pack(&r.base);
  }
  Natcd__Grpc__ResignRequest r;
  natcd__grpc__resign_request__init(&r);
  r.leader = &leader;
  return Pack(&r.base);
}

class GrpcConcurrencyTest : public EtcdctlTest {
 protected:
  void SetUp() override {
    channel_ = grpc::CreateChannel(endpoint_, grpc::InsecureChannelCredentials());
    stub_ = std::make_unique<grpc::GenericStub>(channel_);
  }

  grpc::Status Call(const std::string& method, const std::string& request,
                    std::string* response = nullptr) {
    return UnaryCall(stub_.get(), method, request, response);
  }

  int64_t Grant(int64_t ttl) {
    Natcd__V1__LeaseGrantRequest r;
    natcd__v1__lease_grant_request__init(&r);
    r.ttl = ttl;
    std::string out;
    EXPECT_TRUE(Call("/etcdserverpb.Lease/LeaseGrant", Pack(&r.base), &out).ok());
    auto g =
        Unpack<Natcd__V1__LeaseGrantResponse>(natcd__v1__lease_grant_response__descriptor, out);
    return g ? g->id : 0;
  }

  void Revoke(int64_t lease) {
    Natcd__V1__LeaseRevokeRequest r;
    natcd__v1__lease_revoke_request__init(&r);
    r.id = lease;
    ASSERT_TRUE(Call("/etcdserverpb.Lease/LeaseRevoke", Pack(&r.base)).ok());
  }

  // The keys under prefix, in create order.
  std::vector<std::string> Keys(const std::string& prefix) {
    Natcd__V1__RangeRequest r;
    natcd__v1__range_request__init(&r);
    r.key = BinaryOf(prefix);
    std::string end = prefix;
    end.back()++;
    r.range_end = BinaryOf(end);
    r.sort_target = NATCD__V1__RANGE_REQUEST__SORT_TARGET__CREATE;
    r.sort_order = NATCD__V1__RANGE_REQUEST__SORT_ORDER__ASCEND;
    std::string out;
    EXPECT_TRUE(Call("/etcdserverpb.KV/Range", Pack(&r.base), &out).ok());
    std::vector<std::string> keys;
    auto range = Unpack<Natcd__V1__RangeResponse>(natcd__v1__range_response__descriptor, out);
    for (size_t i = 0; range && i < range->n_kvs; i++) keys.push_back(Text(range->kvs[i]->key));
    return keys;
  }

  std::string LockedKey(PendingCall& call) {
    EXPECT_TRUE(call.Wait(milliseconds(10'000)));
    grpc::Status s = call.status();
    EXPECT_TRUE(s.ok()) << s.error_message();
    auto r =
        Unpack<Natcd__Grpc__LockResponse>(natcd__grpc__lock_response__descriptor, call.response());
    EXPECT_NE(r, nullptr);
    return r ? Text(r->key) : "";
  }

  LeaderKey Elected(PendingCall& call) {
    EXPECT_TRUE(call.Wait(milliseconds(10'000)));
    grpc::Status s = call.status();
    EXPECT_TRUE(s.ok()) << s.error_message();
    auto r = Unpack<Natcd__Grpc__CampaignResponse>(natcd__grpc__campaign_response__descriptor,
                                                   call.response());
    LeaderKey k;
    if (r && r->leader) {
      k = {Text(r->leader->name), Text(r->leader->key), r->leader->rev, r->leader->lease};
    }
    return k;
  }

  std::string LeaderValue(const std::string& name, grpc::Status* status = nullptr) {
    std::string out;
    grpc::Status s = Call("/v3electionpb.Election/Leader", LeaderRequest(name), &out);
    if (status != nullptr) *status = s;
    auto r = Unpack<Natcd__Grpc__LeaderResponse>(natcd__grpc__leader_response__descriptor, out);
    return s.ok() && r && r->kv ? Text(r->kv->value) : "";
  }

  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<grpc::GenericStub> stub_;
};

std::string Hex(int64_t lease) {
  char buf[32];
  snprintf(buf, sizeof buf, "%llx", static_cast<unsigned long long>(lease));
  return buf;
}

TEST_F(GrpcConcurrencyTest, ALockIsExclusiveAndPassesToTheNextWaiterOnUnlock) {
  const int64_t a = Grant(30), b = Grant(30), c = Grant(30);
  PendingCall first(stub_.get(), "/v3lockpb.Lock/Lock", LockRequest("lk1", a));
  const std::string key_a = LockedKey(first);
  EXPECT_EQ(key_a, "lk1/" + Hex(a));

  PendingCall second(stub_.get(), "/v3lockpb.Lock/Lock", LockRequest("lk1", b));
  ASSERT_FALSE(second.Wait(milliseconds(300)));
  PendingCall third(stub_.get(), "/v3lockpb.Lock/Lock", LockRequest("lk1", c));
  ASSERT_FALSE(third.Wait(milliseconds(300)));
  EXPECT_EQ(Keys("lk1/"), (std::vector<std::string>{key_a, "lk1/" + Hex(b), "lk1/" + Hex(c)}));

  // The same lease again holds it already (its key is reused).
  PendingCall again(stub_.get(), "/v3lockpb.Lock/Lock", LockRequest("lk1", a));
  EXPECT_EQ(LockedKey(again), key_a);

  ASSERT_TRUE(Call("/v3lockpb.Lock/Unlock", UnlockRequest(key_a)).ok());
  EXPECT_EQ(LockedKey(second), "lk1/" + Hex(b));
  EXPECT_FALSE(third.Wait(milliseconds(300)));
  ASSERT_TRUE(Call("/v3lockpb.Lock/Unlock", UnlockRequest("lk1/" + Hex(b))).ok());
  EXPECT_EQ(LockedKey(third), "lk1/" + Hex(c));
}

TEST_F(GrpcConcurrencyTest, AWaiterThatGoesAwayGivesUpItsKey) {
  const int64_t a = Grant(30), b = Grant(30);
  PendingCall holder(stub_.get(), "/v3lockpb.Lock/Lock", LockRequest("lk2", a));
  const std::string key_a = LockedKey(holder);
  PendingCall waiter(stub_.get(), "/v3lockpb.Lock/Lock", LockRequest("lk2", b), milliseconds(500));
  ASSERT_TRUE(waiter.Wait(milliseconds(5'000)));
  EXPECT_EQ(waiter.status().error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  std::vector<std::string> keys;
  for (int i = 0; i < 50; i++) {
    keys = Keys("lk2/");
    if (keys.size() == 1) break;
    std::this_thread::sleep_for(milliseconds(50));
  }
  EXPECT_EQ(keys, std::vector<std::string>{key_a});
}

TEST_F(GrpcConcurrencyTest, AWaiterWhoseLeaseEndsIsToldItsSessionExpired) {
  const int64_t a = Grant(30), b = Grant(30);
  PendingCall holder(stub_.get(), "/v3lockpb.Lock/Lock", LockRequest("lk3", a));
  const std::string key_a = LockedKey(holder);
  PendingCall waiter(stub_.get(), "/v3lockpb.Lock/Lock", LockRequest("lk3", b));
  ASSERT_FALSE(waiter.Wait(milliseconds(300)));
  Revoke(b);
  ASSERT_TRUE(Call("/v3lockpb.Lock/Unlock", UnlockRequest(key_a)).ok());
  ASSERT_TRUE(waiter.Wait(milliseconds(10'000)));
  grpc::Status s = waiter.status();
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNKNOWN);
  EXPECT_EQ(s.error_message(), "session expired");
}

TEST_F(GrpcConcurrencyTest, LockErrorsAndALockWithoutALeaseGetsASession) {
  grpc::Status s = Call("/v3lockpb.Lock/Lock", LockRequest("lk4", 0x7fff0001));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(s.error_message(), "etcdserver: requested lease not found");
  EXPECT_TRUE(Keys("lk4/").empty());

  // As etcd's server: a session lease of 60 s, not kept alive.
  PendingCall lock(stub_.get(), "/v3lockpb.Lock/Lock", LockRequest("lk4", 0));
  const std::string key = LockedKey(lock);
  ASSERT_EQ(key.rfind("lk4/", 0), 0u) << key;
  Natcd__V1__LeaseTimeToLiveRequest ttl;
  natcd__v1__lease_time_to_live_request__init(&ttl);
  ttl.id = static_cast<int64_t>(std::stoull(key.substr(4), nullptr, 16));
  std::string out;
  ASSERT_TRUE(Call("/etcdserverpb.Lease/LeaseTimeToLive", Pack(&ttl.base), &out).ok());
  auto r = Unpack<Natcd__V1__LeaseTimeToLiveResponse>(
      natcd__v1__lease_time_to_live_response__descriptor, out);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->grantedttl, 60);
  EXPECT_GT(r->ttl, 0);
}

TEST_F(GrpcConcurrencyTest, ACampaignWaitsForTheLeaderAndObserversSeeEveryLeader) {
  const int64_t a = Grant(30), b = Grant(30);
  grpc::Status s;
  EXPECT_EQ(LeaderValue("el1", &s), "");
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNKNOWN);
  EXPECT_EQ(s.error_message(), "election: no leader");

  SyncStream observe(stub_.get(), "/v3electionpb.Election/Observe");
  ASSERT_TRUE(observe.ok());
  ASSERT_TRUE(observe.Write(LeaderRequest("el1")));
  ASSERT_TRUE(observe.WritesDone());

  PendingCall first(stub_.get(), "/v3electionpb.Election/Campaign", CampaignRequest("el1", a, "a"));
  const LeaderKey leader_a = Elected(first);
  EXPECT_EQ(leader_a.key, "el1/" + Hex(a));
  EXPECT_EQ(leader_a.name, "el1");
  EXPECT_EQ(leader_a.lease, a);
  EXPECT_GT(leader_a.rev, 0);
  EXPECT_EQ(LeaderValue("el1"), "a");

  ASSERT_TRUE(Call("/v3electionpb.Election/Proclaim", WithLeader(leader_a, true, "a2")).ok());
  EXPECT_EQ(LeaderValue("el1"), "a2");

  PendingCall second(stub_.get(), "/v3electionpb.Election/Campaign",
                     CampaignRequest("el1", b, "b"));
  ASSERT_FALSE(second.Wait(milliseconds(300)));
  ASSERT_TRUE(Call("/v3electionpb.Election/Resign", WithLeader(leader_a, false)).ok());
  const LeaderKey leader_b = Elected(second);
  EXPECT_EQ(leader_b.key, "el1/" + Hex(b));
  EXPECT_EQ(LeaderValue("el1"), "b");

  // The resigned leader can no longer proclaim.
  s = Call("/v3electionpb.Election/Proclaim", WithLeader(leader_a, true, "late"));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNKNOWN);
  EXPECT_EQ(s.error_message(), "election: not leader");
  EXPECT_EQ(LeaderValue("el1"), "b");

  std::vector<std::string> seen;
  for (std::string bytes; seen.size() < 3 && observe.Read(&bytes, milliseconds(5'000));) {
    auto r = Unpack<Natcd__Grpc__LeaderResponse>(natcd__grpc__leader_response__descriptor, bytes);
    ASSERT_NE(r, nullptr);
    ASSERT_NE(r->kv, nullptr);
    seen.push_back(Text(r->kv->value));
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"a", "a2", "b"}));
}

TEST_F(GrpcConcurrencyTest, ACampaignOnItsOwnLeaseProclaimsTheNewValueAndMissingLeaderKeys) {
  const int64_t a = Grant(30);
  PendingCall first(stub_.get(), "/v3electionpb.Election/Campaign", CampaignRequest("el2", a, "x"));
  const LeaderKey k = Elected(first);
  PendingCall again(stub_.get(), "/v3electionpb.Election/Campaign", CampaignRequest("el2", a, "y"));
  const LeaderKey k2 = Elected(again);
  EXPECT_EQ(k2.key, k.key);
  EXPECT_EQ(k2.rev, k.rev);
  EXPECT_EQ(LeaderValue("el2"), "y");

  Natcd__Grpc__ProclaimRequest empty;
  natcd__grpc__proclaim_request__init(&empty);
  grpc::Status s = Call("/v3electionpb.Election/Proclaim", Pack(&empty.base));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNKNOWN);
  EXPECT_EQ(s.error_message(), "\"leader\" field must be provided");

  // A campaign that goes away while it waits resigns.
  const int64_t b = Grant(30);
  PendingCall waiter(stub_.get(), "/v3electionpb.Election/Campaign", CampaignRequest("el2", b, "z"),
                     milliseconds(500));
  ASSERT_TRUE(waiter.Wait(milliseconds(5'000)));
  EXPECT_EQ(waiter.status().error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  std::vector<std::string> keys;
  for (int i = 0; i < 50; i++) {
    keys = Keys("el2/");
    if (keys.size() == 1) break;
    std::this_thread::sleep_for(milliseconds(50));
  }
  EXPECT_EQ(keys, std::vector<std::string>{k.key});
}

}  // namespace
}  // namespace natcd::testing
