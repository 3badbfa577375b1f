// Auth on a 3-member cluster over etcd's gRPC API: a change made through
// any member (a follower proposes it too) is applied on every member, so
// each member authenticates the users and checks the permissions; a token
// is assigned by every member (Authenticate is a log entry, as etcd's), so
// it works wherever a request lands. The NATS server
// runs with the accounts and permissions natcd ships
// (config/nats-server-accounts.conf): members' forwards on P.fwd.* work,
// and an application may not publish there.
#include <filesystem>
#include <map>

#include "adapters/nats/natcd.pb-c.h"
#include "grpc/etcdctl_fixture.h"
#include "support/wire_client.h"

namespace natcd::testing {
namespace {

constexpr const char* kNames[] = {"n1", "n2", "n3"};

// server's URL with the config's credentials of `user`.
std::string UrlAs(const NatsServer& server, const std::string& user) {
  return "nats://" + user + "@127.0.0.1:" + std::to_string(server.port());
}

class GrpcAuthClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.Start());
    for (const std::string name : kNames) {
      dirs_[name] = std::make_unique<TempDir>();
      members_[name] = std::make_unique<NatcdProcess>(
          UrlAs(server_, "natcd:natcd-secret"), dirs_[name]->path(),
          std::vector<std::string>{"--name", name, "--initial-cluster", "n1,n2,n3",
                                   "--heartbeat-interval", "50", "--election-timeout", "500",
                                   "--log-level", "warn", "--listen-client-urls",
                                   "http://127.0.0.1:0"});
      ASSERT_TRUE(members_[name]->Start());
      endpoints_[name] = EtcdEndpointOf(*members_[name]);
      ASSERT_FALSE(endpoints_[name].empty()) << members_[name]->Log();
    }
    ASSERT_TRUE(Eventually([&] {
      return Run({"put", "/ready", "1"}, "n1").code == 0;
    })) << "no leader";
  }
  void TearDown() override {
    if (!HasFailure()) return;
    for (auto& [name, m] : members_) std::cerr << "--- " << name << " log:\n" << m->Log() << "\n";
  }

  CommandResult Run(const std::vector<std::string>& args, const std::string& member) {
    std::vector<std::string> argv = {
        "/usr/bin/etcdctl",  "--endpoints", endpoints_[member], "--dial-timeout", "2s",
        "--command-timeout", "5s"};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunEtcdctl(scratch_, counter_++, argv);
  }
  std::string Output(const std::vector<std::string>& args, const std::string& member) {
    CommandResult r = Run(args, member);
    return r.out + r.err;
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

  NatsServer server_{NatsServerOptions{
      .extra_args = {"-c", std::filesystem::absolute("config/nats-server-accounts.conf")}}};
  TempDir scratch_;
  std::map<std::string, std::unique_ptr<TempDir>> dirs_;
  std::map<std::string, std::unique_ptr<NatcdProcess>> members_;
  std::map<std::string, std::string> endpoints_;
  int counter_ = 0;
};

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST_F(GrpcAuthClusterTest, ChangesThroughAnyMemberHoldOnEveryMember) {
  // Each change through a different member: at least one is a follower.
  EXPECT_TRUE(Contains(Output({"user", "add", "root:pw"}, "n2"), "User root created"));
  EXPECT_TRUE(Contains(Output({"user", "add", "carol:cpw"}, "n3"), "User carol created"));
  EXPECT_TRUE(Contains(Output({"role", "add", "cfg"}, "n1"), "Role cfg created"));
  EXPECT_TRUE(Contains(
      Output({"role", "grant-permission", "cfg", "readwrite", "/cfg/", "--prefix=true"}, "n2"),
      "Role cfg updated"));
  EXPECT_TRUE(Contains(Output({"user", "grant-role", "carol", "cfg"}, "n3"), "is granted"));
  EXPECT_TRUE(Contains(Output({"auth", "enable"}, "n3"), "Authentication Enabled"));
  for (const std::string name : kNames) {
    // Enabled everywhere (applied on every member), a token for carol
    // through each member, the same permissions.
    EXPECT_TRUE(Eventually([&] {
      return Contains(Output({"get", "/cfg/x"}, name), "etcdserver: user name is empty");
    })) << name;
    EXPECT_TRUE(Contains(Output({"--user", "carol:cpw", "put", "/cfg/" + name, "v"}, name), "OK"))
        << name;
    EXPECT_TRUE(Contains(Output({"--user", "carol:cpw", "put", "/other", "v"}, name),
                         "etcdserver: permission denied"))
        << name;
    EXPECT_TRUE(Contains(Output({"--user", "carol:bad", "get", "/cfg/x"}, name),
                         "etcdserver: authentication failed, invalid user ID or password"))
        << name;
  }
  // An application, as the accounts config lets it: the members' own
  // subject is not its to publish on (no answer), and what it addresses to
  // the leader (P.to.<leader>.*) is checked as any request.
  WireClient app(UrlAs(server_, "app:app-secret"));
  ASSERT_TRUE(app.connected());
  Natcd__V1__StatusRequest status;
  natcd__v1__status_request__init(&status);
  auto answered = WireClient::Decode<Natcd__V1__StatusResponse>(
      &natcd__v1__status_response__descriptor, app.Call("maint.status", &status.base));
  ASSERT_NE(answered, nullptr);
  char leader[17];
  snprintf(leader, sizeof leader, "%016llx", static_cast<unsigned long long>(answered->leader));
  Natcd__V1__PutRequest put;
  natcd__v1__put_request__init(&put);
  put.key = Bytes("/cfg/app");
  std::string body(protobuf_c_message_get_packed_size(&put.base), '\0');
  protobuf_c_message_pack(&put.base, reinterpret_cast<uint8_t*>(body.data()));
  EXPECT_EQ(app.Raw(std::string("natcd.fwd.") + leader + ".kv.put", body, {}, 1000).code, -1);
  WireReply direct = app.Raw(std::string("natcd.to.") + leader + ".kv.put", body);
  EXPECT_EQ(direct.code, 400) << direct.error;
  EXPECT_TRUE(Contains(direct.error, "permission denied: authentication is enabled"))
      << direct.error;
  // A token from P.auth.authenticate (issued through whichever member the
  // queue group picked, assigned by every member at apply) works on every
  // member: a put addressed to each, the followers forwarding it.
  Natcd__V1__AuthenticateRequest login;
  natcd__v1__authenticate_request__init(&login);
  login.name = const_cast<char*>("carol");
  login.password = const_cast<char*>("cpw");
  auto token = WireClient::Decode<Natcd__V1__AuthenticateResponse>(
      &natcd__v1__authenticate_response__descriptor, app.Call("auth.authenticate", &login.base));
  ASSERT_NE(token, nullptr);
  ASSERT_NE(std::string(token->token), "");
  Natcd__V1__MemberListRequest list;
  natcd__v1__member_list_request__init(&list);
  auto members = WireClient::Decode<Natcd__V1__MemberListResponse>(
      &natcd__v1__member_list_response__descriptor, app.Call("cluster.member.list", &list.base));
  ASSERT_NE(members, nullptr);
  ASSERT_EQ(members->n_members, 3u);
  std::vector<std::string> written;
  for (size_t i = 0; i < members->n_members; i++) {
    char id[17];
    snprintf(id, sizeof id, "%016llx", static_cast<unsigned long long>(members->members[i]->id));
    const std::string key = std::string("/cfg/token-") + id;
    put.key = Bytes(key);
    std::string signed_body(protobuf_c_message_get_packed_size(&put.base), '\0');
    protobuf_c_message_pack(&put.base, reinterpret_cast<uint8_t*>(signed_body.data()));
    WireReply at = app.Raw(std::string("natcd.to.") + id + ".kv.put", signed_body,
                           {{"Natcd-Auth-Token", token->token}});
    EXPECT_TRUE(at.ok()) << id << ": " << at.error;
    written.push_back(key);
  }
  const std::string all =
      Output({"--user", "root:pw", "get", "/cfg/", "--prefix", "--keys-only"}, "n1");
  EXPECT_FALSE(Contains(all, "/cfg/app")) << all;
  for (const std::string& key : written) EXPECT_TRUE(Contains(all, key)) << all;
  for (const std::string name : kNames) EXPECT_TRUE(Contains(all, "/cfg/" + name)) << all;
  EXPECT_TRUE(
      Contains(Output({"--user", "root:pw", "auth", "disable"}, "n1"), "Authentication Disabled"));
  EXPECT_TRUE(Eventually([&] { return Contains(Output({"put", "/other", "v"}, "n3"), "OK"); }));
}

}  // namespace
}  // namespace natcd::testing
