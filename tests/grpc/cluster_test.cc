// A 3-member natcd cluster over etcd's gRPC API: every member's endpoint
// serves (followers forward writes and lease calls to the leader, reads are
// linearizable on every member), a watch on one member sees writes made
// through another, and etcdctl given every endpoint keeps working when the
// leader is killed; the server-side lock waits on a follower for an unlock
// made through another member, and a stream requiring a leader ends on a
// member left without one.
#include <map>
#include <regex>

#include "adapters/grpc/etcd_concurrency.pb-c.h"
#include "adapters/grpc/etcd_rpc.pb-c.h"
#include "adapters/nats/natcd.pb-c.h"
#include "grpc/etcdctl_fixture.h"
#include "grpc/grpc_client.h"

namespace natcd::testing {
namespace {

constexpr const char* kNames[] = {"n1", "n2", "n3"};

class GrpcClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.Start());
    for (const std::string name : kNames) {
      dirs_[name] = std::make_unique<TempDir>();
      members_[name] = std::make_unique<NatcdProcess>(
          server_.url(), dirs_[name]->path(),
          std::vector<std::string>{"--name", name, "--initial-cluster", "n1,n2,n3",
                                   "--heartbeat-interval", "50", "--election-timeout", "500",
                                   "--log-level", "warn", "--listen-client-urls",
                                   "http://127.0.0.1:0"});
      ASSERT_TRUE(members_[name]->Start());
      endpoints_[name] = EtcdEndpointOf(*members_[name]);
      ASSERT_FALSE(endpoints_[name].empty()) << members_[name]->Log();
    }
    ASSERT_TRUE(Eventually([&] {
      return Run({"put", "/ready", "1"}, endpoints_["n1"]).code == 0;
    })) << "no leader";
  }
  void TearDown() override {
    if (!HasFailure()) return;
    for (auto& [name, m] : members_) std::cerr << "--- " << name << " log:\n" << m->Log() << "\n";
  }

  std::string AllEndpoints() const {
    std::string all;
    for (const auto& [name, endpoint] : endpoints_) all += (all.empty() ? "" : ",") + endpoint;
    return all;
  }

  CommandResult Run(const std::vector<std::string>& args, const std::string& endpoints,
                    const std::string& input = "") {
    std::vector<std::string> argv = {
        "/usr/bin/etcdctl",  "--endpoints", endpoints, "--dial-timeout", "2s",
        "--command-timeout", "5s"};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunEtcdctl(scratch_, counter_++, argv, input);
  }

  std::unique_ptr<BackgroundProcess> StartEtcdctl(const std::vector<std::string>& args,
                                                  const std::string& endpoint) {
    std::vector<std::string> argv = {"/usr/bin/etcdctl", "--endpoints", endpoint};
    argv.insert(argv.end(), args.begin(), args.end());
    const int n = counter_++;
    const std::string out = scratch_.File("bg-" + std::to_string(n));
    const std::string in = scratch_.File("bgin-" + std::to_string(n));
    { std::ofstream f(in); }
    return std::make_unique<BackgroundProcess>(
        SpawnProcess(argv, in, out, out, {{"ETCDCTL_API", "3"}}), out);
  }

  template <typename F>
  static bool Eventually(F ok, int timeout_ms = 15'000) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (std::chrono::steady_clock::now() < deadline) {
      if (ok()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  }

  // The member that says it is the leader (endpoint status), or "".
  std::string Leader() {
    for (const auto& [name, endpoint] : endpoints_) {
      if (!members_[name]->running()) continue;
      CommandResult r = Run({"endpoint", "status"}, endpoint);
      if (r.code == 0 && r.out.find(", true, false,") != std::string::npos) return name;
    }
    return "";
  }
  // A member that is not the leader; empty while there is none.
  std::string AFollower() {
    const std::string leader = Leader();
    if (leader.empty()) return "";
    for (const std::string name : kNames) {
      if (name != leader) return name;
    }
    return "";
  }

  NatsServer server_;
  TempDir scratch_;
  std::map<std::string, std::unique_ptr<TempDir>> dirs_;
  std::map<std::string, std::unique_ptr<NatcdProcess>> members_;
  std::map<std::string, std::string> endpoints_;
  int counter_ = 0;
};

TEST_F(GrpcClusterTest, EveryMemberServesWritesAndLinearizableReads) {
  for (const auto& [name, endpoint] : endpoints_) {
    CommandResult r = Run({"put", "/c/" + name, "by-" + name}, endpoint);
    ASSERT_EQ(r.code, 0) << name << ": " << r.err;
    // Read back at once on every member: linearizable reads see it.
    for (const auto& [other, other_endpoint] : endpoints_) {
      EXPECT_EQ(Run({"get", "/c/" + name, "--print-value-only"}, other_endpoint).out,
                "by-" + name + "\n")
          << "written on " << name << ", read on " << other;
    }
  }
  // A txn through a follower.
  const std::string leader = Leader();
  ASSERT_FALSE(leader.empty());
  const std::string follower = leader == "n1" ? "n2" : "n1";
  CommandResult r =
      Run({"txn"}, endpoints_[follower], "value(\"/c/n1\") = \"by-n1\"\n\nput /c/txn ok\n\n\n");
  EXPECT_EQ(r.out, "SUCCESS\n\nOK\n") << r.err;
}

TEST_F(GrpcClusterTest, MemberListReportsEveryMembersClientUrl) {
  // Each member publishes its URLs through the log; every member lists all.
  for (const auto& [name, endpoint] : endpoints_) {
    CommandResult r;
    const bool all = Eventually([&] {
      r = Run({"member", "list"}, endpoint);
      for (const auto& [other, other_endpoint] : endpoints_) {
        if (r.out.find(", " + other + ", ") == std::string::npos ||
            r.out.find("http://" + other_endpoint + ", false") == std::string::npos) {
          return false;
        }
      }
      return true;
    });
    EXPECT_TRUE(all) << name << " lists:\n" << r.out;
  }
  // And etcdctl --cluster reaches every member through them.
  CommandResult r = Run({"endpoint", "status", "--cluster"}, endpoints_["n1"]);
  ASSERT_EQ(r.code, 0) << r.err;
  for (const auto& [name, endpoint] : endpoints_) {
    EXPECT_NE(r.out.find("http://" + endpoint + ", "), std::string::npos) << r.out;
  }
}

TEST_F(GrpcClusterTest, LeasesAndWatchesAcrossMembers) {
  const std::string leader = Leader();
  ASSERT_FALSE(leader.empty());
  std::vector<std::string> followers;
  for (const std::string name : kNames) {
    if (name != leader) followers.push_back(name);
  }
  const int64_t now = HeaderRevision(Run({"get", "/lw/", "-w", "json"}, endpoints_[leader]).out);
  auto watch = StartEtcdctl({"watch", "/lw/", "--prefix", "--rev", std::to_string(now + 1)},
                            endpoints_[followers[0]]);
  CommandResult granted = Run({"lease", "grant", "30"}, endpoints_[followers[0]]);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(granted.out, m, std::regex("lease ([0-9a-f]+) granted")))
      << granted.out << granted.err;
  const std::string id = m[1];
  ASSERT_EQ(Run({"put", "/lw/k", "v", "--lease", id}, endpoints_[followers[1]]).code, 0);
  EXPECT_EQ(Run({"lease", "keep-alive", "--once", id}, endpoints_[followers[1]]).out,
            "lease " + id + " keepalived with TTL(30)\n");
  ASSERT_TRUE(watch->WaitFor("PUT\n/lw/k\nv\n")) << watch->Output();
  EXPECT_EQ(Run({"lease", "revoke", id}, endpoints_[leader]).out, "lease " + id + " revoked\n");
  ASSERT_TRUE(watch->WaitFor("DELETE\n/lw/k\n")) << watch->Output();
}

TEST_F(GrpcClusterTest, ALockWaitedForOnAFollowerPassesOnWhenUnlockedThroughTheLeader) {
  const std::string leader = Leader();
  ASSERT_FALSE(leader.empty());
  std::vector<std::unique_ptr<grpc::GenericStub>> followers;
  for (const std::string name : kNames) {
    if (name == leader) continue;
    followers.push_back(std::make_unique<grpc::GenericStub>(
        grpc::CreateChannel(endpoints_[name], grpc::InsecureChannelCredentials())));
  }
  auto grant = [](grpc::GenericStub* stub) {
    Natcd__V1__LeaseGrantRequest r;
    natcd__v1__lease_grant_request__init(&r);
    r.ttl = 30;
    std::string out;
    EXPECT_TRUE(UnaryCall(stub, "/etcdserverpb.Lease/LeaseGrant", Pack(&r.base), &out).ok());
    auto* g = natcd__v1__lease_grant_response__unpack(nullptr, out.size(),
                                                      reinterpret_cast<const uint8_t*>(out.data()));
    const int64_t id = g != nullptr ? g->id : 0;
    if (g != nullptr) natcd__v1__lease_grant_response__free_unpacked(g, nullptr);
    return id;
  };
  auto lock = [](int64_t lease) {
    Natcd__Grpc__LockRequest r;
    natcd__grpc__lock_request__init(&r);
    static const std::string name = "cl-lock";
    r.name = BinaryOf(name);
    r.lease = lease;
    return Pack(&r.base);
  };
  auto key_of = [](PendingCall& call) {
    EXPECT_TRUE(call.Wait(std::chrono::seconds(10)));
    EXPECT_TRUE(call.status().ok()) << call.status().error_message();
    const std::string bytes = call.response();
    auto* r = natcd__grpc__lock_response__unpack(nullptr, bytes.size(),
                                                 reinterpret_cast<const uint8_t*>(bytes.data()));
    std::string key =
        r != nullptr ? std::string(reinterpret_cast<char*>(r->key.data), r->key.len) : "";
    if (r != nullptr) natcd__grpc__lock_response__free_unpacked(r, nullptr);
    return key;
  };
  PendingCall holder(followers[0].get(), "/v3lockpb.Lock/Lock", lock(grant(followers[0].get())));
  const std::string held = key_of(holder);
  ASSERT_FALSE(held.empty());
  PendingCall waiter(followers[1].get(), "/v3lockpb.Lock/Lock", lock(grant(followers[1].get())));
  ASSERT_FALSE(waiter.Wait(std::chrono::milliseconds(500)));
  ASSERT_EQ(Run({"del", held}, endpoints_[leader]).out, "1\n");
  const std::string next = key_of(waiter);
  EXPECT_NE(next, held);
  EXPECT_EQ(next.rfind("cl-lock/", 0), 0u);
}

TEST_F(GrpcClusterTest, AStreamRequiringALeaderEndsOnAMemberThatLostItsLeader) {
  const std::string follower = AFollower();
  ASSERT_FALSE(follower.empty());
  grpc::GenericStub stub(
      grpc::CreateChannel(endpoints_[follower], grpc::InsecureChannelCredentials()));
  Natcd__V1__WatchCreateRequest create;
  natcd__v1__watch_create_request__init(&create);
  const std::string key = "/hl/";
  create.key = BinaryOf(key);
  Natcd__Grpc__WatchRequest request;
  natcd__grpc__watch_request__init(&request);
  request.request_union_case = NATCD__GRPC__WATCH_REQUEST__REQUEST_UNION_CREATE_REQUEST;
  request.create_request = &create;
  SyncStream requiring(&stub, "/etcdserverpb.Watch/Watch", {{"hasleader", "true"}});
  SyncStream plain(&stub, "/etcdserverpb.Watch/Watch");
  std::string created;
  for (SyncStream* s : {&requiring, &plain}) {
    ASSERT_TRUE(s->Write(Pack(&request.base)));
    ASSERT_TRUE(s->Read(&created));
  }
  // Alone, the follower knows no leader after an election timeout (500 ms)
  // and ends the stream three checks later, as etcd's monitor does.
  for (const std::string name : kNames) {
    if (name != follower) members_[name]->Kill();
  }
  const auto killed = std::chrono::steady_clock::now();
  std::string message;
  EXPECT_FALSE(requiring.Read(&message, std::chrono::seconds(10)));
  const auto ended = std::chrono::steady_clock::now() - killed;
  grpc::Status status = requiring.Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(status.error_message(), "etcdserver: no leader");
  EXPECT_LT(ended, std::chrono::seconds(5));
  EXPECT_GE(ended, std::chrono::milliseconds(1'000));
  // A stream that did not ask for a leader stays: it still answers.
  Natcd__V1__WatchProgressRequest progress;
  natcd__v1__watch_progress_request__init(&progress);
  request.request_union_case = NATCD__GRPC__WATCH_REQUEST__REQUEST_UNION_PROGRESS_REQUEST;
  request.progress_request = &progress;
  ASSERT_TRUE(plain.Write(Pack(&request.base)));
  EXPECT_TRUE(plain.Read(&message, std::chrono::seconds(5)));
}

// grpc.health.v1.Health/Watch: SERVING at once, NOT_SERVING when the
// member loses its leader, on the same stream.
TEST_F(GrpcClusterTest, AHealthWatchSaysNotServingWhenTheMemberLosesItsLeader) {
  const std::string follower = AFollower();
  ASSERT_FALSE(follower.empty());
  grpc::GenericStub stub(
      grpc::CreateChannel(endpoints_[follower], grpc::InsecureChannelCredentials()));
  auto status_of = [](const std::string& bytes) {
    auto* r = natcd__grpc__health_check_response__unpack(
        nullptr, bytes.size(), reinterpret_cast<const uint8_t*>(bytes.data()));
    EXPECT_NE(r, nullptr);
    const int status = r != nullptr ? r->status : -1;
    natcd__grpc__health_check_response__free_unpacked(r, nullptr);
    return status;
  };
  Natcd__Grpc__HealthCheckRequest request;
  natcd__grpc__health_check_request__init(&request);
  SyncStream watch(&stub, "/grpc.health.v1.Health/Watch");
  ASSERT_TRUE(watch.Write(Pack(&request.base)));
  ASSERT_TRUE(watch.WritesDone());
  std::string message;
  ASSERT_TRUE(watch.Read(&message));
  EXPECT_EQ(status_of(message), NATCD__GRPC__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVING);
  // A named service: SERVICE_UNKNOWN, and the stream stays open (grpc-go's).
  std::string named_service = "etcdserverpb.KV";
  request.service = named_service.data();
  SyncStream unknown(&stub, "/grpc.health.v1.Health/Watch");
  ASSERT_TRUE(unknown.Write(Pack(&request.base)));
  ASSERT_TRUE(unknown.Read(&message));
  EXPECT_EQ(status_of(message),
            NATCD__GRPC__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVICE_UNKNOWN);
  for (const std::string name : kNames) {
    if (name != follower) members_[name]->Kill();
  }
  // Alone, the follower knows no leader after an election timeout (500 ms).
  ASSERT_TRUE(watch.Read(&message, std::chrono::seconds(10)));
  EXPECT_EQ(status_of(message), NATCD__GRPC__HEALTH_CHECK_RESPONSE__SERVING_STATUS__NOT_SERVING);
  EXPECT_FALSE(unknown.Read(&message, std::chrono::milliseconds(200)));
}

TEST_F(GrpcClusterTest, AClientWithEveryEndpointSurvivesTheLeadersDeath) {
  const std::string leader = Leader();
  ASSERT_FALSE(leader.empty());
  members_[leader]->Kill();
  // A few election timeouts: a new leader, and etcdctl fails over to a
  // live endpoint.
  const auto killed = std::chrono::steady_clock::now();
  ASSERT_TRUE(Eventually([&] {
    return Run({"put", "/after", "1"}, AllEndpoints()).code == 0;
  })) << "no write after the leader was killed";
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - killed)
                      .count();
  EXPECT_LT(ms, 10'000);
  EXPECT_EQ(Run({"get", "/after", "--print-value-only"}, AllEndpoints()).out, "1\n");
}

TEST_F(GrpcClusterTest, MemberAddPromoteRemove) {
  // The peer URL names the member (a natcd member's ID derives from its name).
  CommandResult r =
      Run({"member", "add", "n4", "--learner", "--peer-urls", "http://n4:2380"}, endpoints_["n2"]);
  ASSERT_EQ(r.code, 0) << r.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex("Member ([0-9a-f]+) added to cluster")))
      << r.out;
  const std::string id = m[1];
  EXPECT_NE(r.out.find("ETCD_NAME=\"n4\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("n4=http://n4:2380"), std::string::npos) << r.out;
  // Its peer URL is recorded on every member, as etcd's MemberAdd records it.
  for (const char* member : {"n1", "n2", "n3"}) {
    EXPECT_TRUE(Eventually([&] {
      return Run({"member", "list"}, endpoints_[member])
                 .out.find(id + ", started, n4, http://n4:2380, , true\n") != std::string::npos;
    })) << member;
  }
  // (etcdctl names no member: natcd takes the name from the first URL.)
  r = Run({"member", "add", "n5", "--peer-urls", "http://n5:2380,http://n4:2380"},
          endpoints_["n1"]);
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("etcdserver: Peer URLs already exists"), std::string::npos) << r.err;
  // A learner that never started is not in sync: etcd's refusal.
  r = Run({"member", "promote", id}, endpoints_["n3"]);
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("can only promote a learner member which is in sync with leader"),
            std::string::npos)
      << r.err;
  r = Run({"member", "remove", id}, endpoints_["n3"]);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("Member " + id + " removed from cluster"), std::string::npos) << r.out;
  EXPECT_EQ(Run({"member", "list"}, endpoints_["n1"]).out.find(id), std::string::npos);
}

// etcd's MemberUpdate through a follower, kept over a restart of the whole
// cluster and listed by two members in turn; etcd's refusal of a URL in use.
TEST_F(GrpcClusterTest, MemberUpdateReachesEveryMemberAndSurvivesRestarts) {
  CommandResult r = Run({"member", "list"}, endpoints_["n1"]);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex("([0-9a-f]+), started, n2, "))) << r.out;
  const std::string n2 = m[1];
  const std::string follower = AFollower();
  ASSERT_FALSE(follower.empty());
  r = Run({"member", "update", n2, "--peer-urls=http://10.0.0.2:2380,http://n2:2380"},
          endpoints_[follower]);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(
      std::regex_match(r.out, std::regex("Member +" + n2 + " updated in cluster +[0-9a-f]+\n")))
      << r.out;
  const std::string listed = ", started, n2, http://10.0.0.2:2380,http://n2:2380, ";
  EXPECT_NE(Run({"member", "list"}, endpoints_["n3"]).out.find(n2 + listed), std::string::npos);
  r = Run({"member", "list"}, endpoints_["n1"]);
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex("([0-9a-f]+), started, n3, "))) << r.out;
  r = Run({"member", "update", m[1], "--peer-urls=http://n2:2380"}, endpoints_["n3"]);
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("etcdserver: Peer URLs already exists"), std::string::npos) << r.err;

  // The whole cluster restarts (ports change: the newest in each log).
  for (const std::string name : kNames) members_[name]->Stop();
  for (const std::string name : kNames) {
    ASSERT_TRUE(members_[name]->Start());
    const std::string log = members_[name]->Log();
    const std::regex api("etcd API on https?://([0-9.:]+)");
    for (auto it = std::sregex_iterator(log.begin(), log.end(), api); it != std::sregex_iterator();
         ++it) {
      endpoints_[name] = (*it)[1];
    }
  }
  // MemberList is the leader's answer: listed by the leader (its own
  // state), then by the next once the first is killed (a second member's).
  for (int round = 0; round < 2; round++) {
    std::string leader;
    ASSERT_TRUE(Eventually([&] { return !(leader = Leader()).empty(); })) << "no leader";
    EXPECT_TRUE(Eventually([&] {
      return Run({"member", "list"}, endpoints_[leader]).out.find(n2 + listed) != std::string::npos;
    })) << leader
        << " lists:\n"
        << Run({"member", "list"}, endpoints_[leader]).out;
    if (round == 0) {
      members_[leader]->Kill();
      ASSERT_TRUE(Eventually([&] {
        const std::string next = Leader();
        return !next.empty() && next != leader;
      })) << "no new leader";
    }
  }
}

}  // namespace
}  // namespace natcd::testing
