// etcd's Auth service on natcd's gRPC API: etcdctl 3.4 (Debian's
// etcd-client) end to end — users, roles, permissions on a prefix, enable
// and disable, wrong passwords, a user without a password — and a grpc++
// client at the wire for the codes and exact messages etcd's clients
// match, the checks of txn ops, watches and lease attachment, and the NATS
// front end's refusal while auth is enabled.
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <sqlite3.h>

#include <cstring>
#include <future>

#include "adapters/grpc/etcd_rpc.pb-c.h"
#include "adapters/nats/natcd.pb-c.h"
#include "grpc/etcdctl_fixture.h"

namespace natcd::testing {
namespace {

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// Every test of a suite shares its natcd, whose auth state the tests
// change in order: each suite gets its own natcd (SetUpTestSuite is per
// suite), so auth enabled here never reaches other suites.
class EtcdctlAuthTest : public EtcdctlTest {};

TEST_F(EtcdctlAuthTest, UsersRolesPermissionsEnableAndDisable) {
  auto run = [](const std::vector<std::string>& args) {
    CommandResult r = Run(args);
    return r.out + r.err;
  };
  EXPECT_TRUE(Contains(run({"put", "/app/a", "1"}), "OK"));
  // No root user yet: etcd's error.
  EXPECT_TRUE(Contains(run({"auth", "enable"}), "etcdserver: root user does not exist"));
  EXPECT_TRUE(Contains(run({"user", "add", "root:rootpw"}), "User root created"));
  EXPECT_TRUE(Contains(run({"user", "add", "root:again"}), "etcdserver: user name already exists"));
  // etcdctl adds the root role and grants it when enabling.
  EXPECT_TRUE(Contains(run({"auth", "enable"}), "Authentication Enabled"));
  // Without a user: refused as etcd refuses it.
  EXPECT_TRUE(Contains(run({"get", "/app/a"}), "etcdserver: user name is empty"));
  EXPECT_TRUE(Contains(run({"--user", "root:rootpw", "put", "/app/b", "2"}), "OK"));
  EXPECT_TRUE(Contains(run({"--user", "root:wrong", "get", "/app/a"}),
                       "etcdserver: authentication failed, invalid user ID or password"));
  // A reader of the prefix /app/.
  const std::vector<std::string> root = {"--user", "root:rootpw"};
  auto as_root = [&](std::vector<std::string> args) {
    args.insert(args.begin(), root.begin(), root.end());
    return run(args);
  };
  EXPECT_TRUE(Contains(as_root({"user", "add", "alice:alicepw"}), "User alice created"));
  EXPECT_TRUE(Contains(as_root({"role", "add", "reader"}), "Role reader created"));
  EXPECT_TRUE(
      Contains(as_root({"role", "grant-permission", "reader", "read", "/app/", "--prefix=true"}),
               "Role reader updated"));
  EXPECT_TRUE(Contains(as_root({"user", "grant-role", "alice", "reader"}),
                       "Role reader is granted to user alice"));
  const std::string roles = as_root({"role", "get", "reader"});
  EXPECT_TRUE(Contains(roles, "[/app/, /app0)")) << roles;
  const std::string users = as_root({"user", "list"});
  EXPECT_TRUE(Contains(users, "alice") && Contains(users, "root")) << users;
  EXPECT_TRUE(Contains(as_root({"user", "get", "alice"}), "reader"));
  const std::vector<std::string> alice = {"--user", "alice:alicepw"};
  auto as_alice = [&](std::vector<std::string> args) {
    args.insert(args.begin(), alice.begin(), alice.end());
    return run(args);
  };
  const std::string read = as_alice({"get", "/app/", "--prefix"});
  EXPECT_TRUE(Contains(read, "/app/a") && Contains(read, "/app/b")) << read;
  EXPECT_TRUE(Contains(as_alice({"put", "/app/c", "3"}), "etcdserver: permission denied"));
  EXPECT_TRUE(Contains(as_alice({"get", "/other"}), "etcdserver: permission denied"));
  // Only root manages auth.
  EXPECT_TRUE(Contains(as_alice({"user", "add", "mallory:x"}), "etcdserver: permission denied"));
  EXPECT_TRUE(Contains(as_alice({"auth", "disable"}), "etcdserver: permission denied"));
  // Revoked: the reader reads nothing more.
  EXPECT_TRUE(Contains(as_root({"role", "revoke-permission", "reader", "/app/", "--prefix=true"}),
                       "revoked"));
  EXPECT_TRUE(Contains(as_alice({"get", "/app/a"}), "etcdserver: permission denied"));
  // A new password (read from stdin): the old one fails.
  CommandResult passwd =
      Run({"--user", "root:rootpw", "user", "passwd", "alice", "--interactive=false"}, "newpw\n");
  EXPECT_TRUE(Contains(passwd.out, "Password updated")) << passwd.out << passwd.err;
  EXPECT_TRUE(Contains(as_alice({"get", "/app/a"}),
                       "etcdserver: authentication failed, invalid user ID or password"));
  EXPECT_TRUE(
      Contains(run({"--user", "alice:newpw", "get", "/app/a"}), "etcdserver: permission denied"));
  // A user without a password (etcdctl 3.4's --no-password, for CN-based
  // auth): it exists, and no password authenticates it, with etcd's words.
  EXPECT_TRUE(Contains(as_root({"user", "add", "svc", "--no-password"}), "User svc created"));
  EXPECT_TRUE(Contains(as_root({"user", "get", "svc"}), "User: svc"));
  EXPECT_TRUE(Contains(run({"--user", "svc:anything", "get", "/app/a"}),
                       "auth: authentication failed, password was given for no password user"));
  EXPECT_TRUE(Contains(as_root({"auth", "disable"}), "Authentication Disabled"));
  EXPECT_TRUE(Contains(run({"get", "/app/a"}), "/app/a"));
  EXPECT_TRUE(Contains(run({"put", "/app/c", "3"}), "OK"));
}

grpc::ByteBuffer Buffer(const std::string& bytes) {
  grpc::Slice slice(bytes);
  return grpc::ByteBuffer(&slice, 1);
}

std::string Bytes(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  std::string out;
  if (buffer.Dump(&slices).ok()) {
    for (const auto& s : slices) out.append(reinterpret_cast<const char*>(s.begin()), s.size());
  }
  return out;
}

std::string Pack(const ProtobufCMessage* m) {
  std::string out(protobuf_c_message_get_packed_size(m), '\0');
  protobuf_c_message_pack(m, reinterpret_cast<uint8_t*>(out.data()));
  return out;
}

ProtobufCBinaryData Data(const std::string& s) {
  return {s.size(), reinterpret_cast<uint8_t*>(const_cast<char*>(s.data()))};
}
// A literal's bytes (static: no temporary string to outlive).
ProtobufCBinaryData Data(const char* literal) {
  return {strlen(literal), reinterpret_cast<uint8_t*>(const_cast<char*>(literal))};
}

class GrpcAuthTest : public EtcdctlTest {
 protected:
  void SetUp() override {
    channel_ = grpc::CreateChannel(endpoint_, grpc::InsecureChannelCredentials());
    stub_ = std::make_unique<grpc::GenericStub>(channel_);
  }

  grpc::Status Unary(const std::string& method, const std::string& request, std::string* response,
                     const std::string& token = "") {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    if (!token.empty()) context.AddMetadata("token", token);
    grpc::ByteBuffer in = Buffer(request), out;
    std::promise<grpc::Status> done;
    stub_->UnaryCall(&context, method, grpc::StubOptions(), &in, &out,
                     [&](grpc::Status s) { done.set_value(std::move(s)); });
    grpc::Status s = done.get_future().get();
    if (response != nullptr) *response = Bytes(out);
    return s;
  }
  grpc::Status Auth(const std::string& method, const ProtobufCMessage* request,
                    const std::string& token = "", std::string* response = nullptr) {
    return Unary("/etcdserverpb.Auth/" + method, Pack(request), response, token);
  }
  grpc::Status UserAdd(const std::string& name, const std::string& password,
                       const std::string& token = "") {
    Natcd__Grpc__AuthUserAddRequest r;
    natcd__grpc__auth_user_add_request__init(&r);
    r.name = const_cast<char*>(name.c_str());
    r.password = const_cast<char*>(password.c_str());
    return Auth("UserAdd", &r.base, token);
  }
  grpc::Status Grant(const std::string& user, const std::string& role, const std::string& token) {
    Natcd__Grpc__AuthUserGrantRoleRequest r;
    natcd__grpc__auth_user_grant_role_request__init(&r);
    r.user = const_cast<char*>(user.c_str());
    r.role = const_cast<char*>(role.c_str());
    return Auth("UserGrantRole", &r.base, token);
  }
  grpc::Status GrantPermission(const std::string& role, Natcd__Grpc__Permission__Type type,
                               const std::string& key, const std::string& range_end,
                               const std::string& token) {
    Natcd__Grpc__Permission perm;
    natcd__grpc__permission__init(&perm);
    perm.permtype = type;
    perm.key = Data(key);
    perm.range_end = Data(range_end);
    Natcd__Grpc__AuthRoleGrantPermissionRequest r;
    natcd__grpc__auth_role_grant_permission_request__init(&r);
    r.name = const_cast<char*>(role.c_str());
    r.perm = &perm;
    return Auth("RoleGrantPermission", &r.base, token);
  }
  // The token, or empty with *status set.
  std::string Authenticate(const std::string& name, const std::string& password,
                           grpc::Status* status = nullptr) {
    Natcd__Grpc__AuthenticateRequest r;
    natcd__grpc__authenticate_request__init(&r);
    r.name = const_cast<char*>(name.c_str());
    r.password = const_cast<char*>(password.c_str());
    std::string out;
    grpc::Status s = Auth("Authenticate", &r.base, "", &out);
    if (status != nullptr) *status = s;
    if (!s.ok()) return "";
    auto* response = natcd__grpc__authenticate_response__unpack(
        nullptr, out.size(), reinterpret_cast<const uint8_t*>(out.data()));
    std::string token = response && response->token ? response->token : "";
    natcd__grpc__authenticate_response__free_unpacked(response, nullptr);
    return token;
  }
  grpc::Status Put(const std::string& key, const std::string& token, int64_t lease = 0) {
    Natcd__V1__PutRequest put;
    natcd__v1__put_request__init(&put);
    put.key = Data(key);
    put.value = Data("v");
    put.lease = lease;
    return Unary("/etcdserverpb.KV/Put", Pack(&put.base), nullptr, token);
  }
  grpc::Status Get(const std::string& key, const std::string& token) {
    Natcd__V1__RangeRequest range;
    natcd__v1__range_request__init(&range);
    range.key = Data(key);
    return Unary("/etcdserverpb.KV/Range", Pack(&range.base), nullptr, token);
  }

  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<grpc::GenericStub> stub_;
};

TEST_F(GrpcAuthTest, CodesMessagesAndEveryCheck) {
  Natcd__Grpc__AuthEnableRequest enable;
  natcd__grpc__auth_enable_request__init(&enable);
  grpc::Status s = Auth("AuthEnable", &enable.base);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(s.error_message(), "etcdserver: root user does not exist");
  ASSERT_TRUE(UserAdd("root", "pw").ok());
  s = Auth("AuthEnable", &enable.base);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(s.error_message(), "etcdserver: root user does not have root role");
  ASSERT_TRUE(Grant("root", "root", "").ok());
  Natcd__Grpc__UserAddOptions no_password;
  natcd__grpc__user_add_options__init(&no_password);
  no_password.no_password = true;
  Natcd__Grpc__AuthUserAddRequest nopass;
  natcd__grpc__auth_user_add_request__init(&nopass);
  nopass.name = const_cast<char*>("nopass");
  nopass.options = &no_password;
  ASSERT_TRUE(Auth("UserAdd", &nopass.base).ok());
  // Before auth is enabled, Authenticate is refused.
  Authenticate("root", "pw", &s);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(s.error_message(), "etcdserver: authentication is not enabled");
  ASSERT_TRUE(Auth("AuthEnable", &enable.base).ok());

  Authenticate("root", "nope", &s);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(), "etcdserver: authentication failed, invalid user ID or password");
  Authenticate("nobody", "pw", &s);
  EXPECT_EQ(s.error_message(), "etcdserver: authentication failed, invalid user ID or password");
  // etcd's auth store error as it is, not one of rpctypes': UNKNOWN.
  Authenticate("nopass", "pw", &s);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNKNOWN);
  EXPECT_EQ(s.error_message(),
            "auth: authentication failed, password was given for no password user");
  const std::string root = Authenticate("root", "pw");
  ASSERT_FALSE(root.empty());

  s = Get("/k", "");
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(), "etcdserver: user name is empty");
  s = Get("/k", "not-a-token.1");
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(s.error_message(), "etcdserver: invalid auth token");
  EXPECT_TRUE(Get("/k", root).ok());
  // Health and Status need no user, as etcd's.
  EXPECT_TRUE(Unary("/grpc.health.v1.Health/Check", "", nullptr).ok());
  EXPECT_TRUE(Unary("/etcdserverpb.Maintenance/Status", "", nullptr).ok());

  // bob: READWRITE on [/b/, /b0), READ on /r.
  ASSERT_TRUE(UserAdd("bob", "bobpw", root).ok());
  Natcd__Grpc__AuthRoleAddRequest role;
  natcd__grpc__auth_role_add_request__init(&role);
  role.name = const_cast<char*>("bobs");
  ASSERT_TRUE(Auth("RoleAdd", &role.base, root).ok());
  s = Auth("RoleAdd", &role.base, root);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(s.error_message(), "etcdserver: role name already exists");
  ASSERT_TRUE(
      GrantPermission("bobs", NATCD__GRPC__PERMISSION__TYPE__READWRITE, "/b/", "/b0", root).ok());
  ASSERT_TRUE(GrantPermission("bobs", NATCD__GRPC__PERMISSION__TYPE__READ, "/r", "", root).ok());
  s = Grant("bob", "nosuch", root);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(s.error_message(), "etcdserver: role name not found");
  s = Grant("nosuch", "bobs", root);
  EXPECT_EQ(s.error_message(), "etcdserver: user name not found");
  ASSERT_TRUE(Grant("bob", "bobs", root).ok());
  const std::string bob = Authenticate("bob", "bobpw");
  ASSERT_FALSE(bob.empty());
  EXPECT_TRUE(Put("/b/1", bob).ok());
  EXPECT_TRUE(Get("/r", bob).ok());
  s = Put("/r", bob);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(s.error_message(), "etcdserver: permission denied");
  // Only root manages auth; a user reads itself and its own roles.
  EXPECT_EQ(UserAdd("eve", "x", bob).error_code(), grpc::StatusCode::PERMISSION_DENIED);
  Natcd__Grpc__AuthUserGetRequest self;
  natcd__grpc__auth_user_get_request__init(&self);
  self.name = const_cast<char*>("bob");
  std::string out;
  ASSERT_TRUE(Auth("UserGet", &self.base, bob, &out).ok());
  auto* got = natcd__grpc__auth_user_get_response__unpack(
      nullptr, out.size(), reinterpret_cast<const uint8_t*>(out.data()));
  ASSERT_NE(got, nullptr);
  ASSERT_EQ(got->n_roles, 1u);
  EXPECT_STREQ(got->roles[0], "bobs");
  natcd__grpc__auth_user_get_response__free_unpacked(got, nullptr);
  self.name = const_cast<char*>("root");
  EXPECT_EQ(Auth("UserGet", &self.base, bob).error_code(), grpc::StatusCode::PERMISSION_DENIED);

  // Each op of a txn, both branches: a put outside bob's range in the
  // failure branch refuses the whole txn.
  Natcd__V1__PutRequest inside, outside;
  natcd__v1__put_request__init(&inside);
  natcd__v1__put_request__init(&outside);
  inside.key = Data("/b/2");
  outside.key = Data("/x");
  Natcd__V1__RequestOp op_in, op_out;
  natcd__v1__request_op__init(&op_in);
  natcd__v1__request_op__init(&op_out);
  op_in.request_case = NATCD__V1__REQUEST_OP__REQUEST_REQUEST_PUT;
  op_in.request_put = &inside;
  op_out.request_case = NATCD__V1__REQUEST_OP__REQUEST_REQUEST_PUT;
  op_out.request_put = &outside;
  Natcd__V1__RequestOp* success[] = {&op_in};
  Natcd__V1__RequestOp* failure[] = {&op_out};
  Natcd__V1__TxnRequest txn;
  natcd__v1__txn_request__init(&txn);
  txn.n_success = 1;
  txn.success = success;
  s = Unary("/etcdserverpb.KV/Txn", Pack(&txn.base), nullptr, bob);
  EXPECT_TRUE(s.ok()) << s.error_code() << " " << s.error_message();
  txn.n_failure = 1;
  txn.failure = failure;
  s = Unary("/etcdserverpb.KV/Txn", Pack(&txn.base), nullptr, bob);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_TRUE(Get("/x", root).ok());

  // Lease attachment: a put with a lease that holds a key bob may not
  // write is refused (etcd's checkLeasePuts).
  Natcd__V1__LeaseGrantRequest grant;
  natcd__v1__lease_grant_request__init(&grant);
  grant.ttl = 60;
  ASSERT_TRUE(Unary("/etcdserverpb.Lease/LeaseGrant", Pack(&grant.base), &out, root).ok());
  auto* granted = natcd__v1__lease_grant_response__unpack(
      nullptr, out.size(), reinterpret_cast<const uint8_t*>(out.data()));
  ASSERT_NE(granted, nullptr);
  const int64_t lease = granted->id;
  natcd__v1__lease_grant_response__free_unpacked(granted, nullptr);
  EXPECT_TRUE(Put("/b/leased", bob, lease).ok());
  ASSERT_TRUE(Put("/rootonly", root, lease).ok());
  EXPECT_EQ(Put("/b/leased2", bob, lease).error_code(), grpc::StatusCode::PERMISSION_DENIED);

  // A watch outside bob's READ: created and canceled at once, etcd's reason.
  {
    grpc::ClientContext context;
    context.AddMetadata("token", bob);
    grpc::CompletionQueue cq;
    auto call = stub_->PrepareCall(&context, "/etcdserverpb.Watch/Watch", &cq);
    void* tag;
    bool ok;
    call->StartCall(reinterpret_cast<void*>(1));
    ASSERT_TRUE(cq.Next(&tag, &ok) && ok);
    Natcd__V1__WatchCreateRequest create;
    natcd__v1__watch_create_request__init(&create);
    create.key = Data("/x");
    Natcd__Grpc__WatchRequest w;
    natcd__grpc__watch_request__init(&w);
    w.request_union_case = NATCD__GRPC__WATCH_REQUEST__REQUEST_UNION_CREATE_REQUEST;
    w.create_request = &create;
    grpc::ByteBuffer request = Buffer(Pack(&w.base)), reply;
    call->Write(request, reinterpret_cast<void*>(2));
    ASSERT_TRUE(cq.Next(&tag, &ok) && ok);
    call->Read(&reply, reinterpret_cast<void*>(3));
    ASSERT_TRUE(cq.Next(&tag, &ok) && ok);
    const std::string bytes = Bytes(reply);
    auto* response = natcd__v1__watch_response__unpack(
        nullptr, bytes.size(), reinterpret_cast<const uint8_t*>(bytes.data()));
    ASSERT_NE(response, nullptr);
    EXPECT_TRUE(response->created);
    EXPECT_TRUE(response->canceled);
    EXPECT_EQ(response->watch_id, -1);
    EXPECT_STREQ(response->cancel_reason, "etcdserver: permission denied");
    natcd__v1__watch_response__free_unpacked(response, nullptr);
    context.TryCancel();
    grpc::Status finished;
    call->Finish(&finished, reinterpret_cast<void*>(4));
    while (cq.Next(&tag, &ok) && tag != reinterpret_cast<void*>(4)) {
    }
    cq.Shutdown();
    while (cq.Next(&tag, &ok)) {
    }
  }

  // NATS requests carry no token: refused while auth is enabled, with a
  // clear error, never served unchecked.
  CommandResult nats = RunArgv({Natcdctl(), "--nats-url", server_->url(), "get", "/b/1"});
  EXPECT_NE(nats.code, 0);
  EXPECT_TRUE(Contains(nats.out + nats.err, "permission denied: authentication is enabled"))
      << nats.out << nats.err;
  nats = RunArgv({Natcdctl(), "--nats-url", server_->url(), "put", "/b/nats", "x"});
  EXPECT_TRUE(Contains(nats.out + nats.err, "permission denied")) << nats.out << nats.err;

  // A deleted user's token is gone; a changed password ends the old ones.
  Natcd__Grpc__AuthUserChangePasswordRequest change;
  natcd__grpc__auth_user_change_password_request__init(&change);
  change.name = const_cast<char*>("bob");
  change.password = const_cast<char*>("new");
  ASSERT_TRUE(Auth("UserChangePassword", &change.base, root).ok());
  EXPECT_EQ(Get("/r", bob).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  Authenticate("bob", "bobpw", &s);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_FALSE(Authenticate("bob", "new").empty());

  // Status reports enabled and the revision; disabling needs root.
  Natcd__Grpc__AuthStatusRequest status;
  natcd__grpc__auth_status_request__init(&status);
  ASSERT_TRUE(Auth("AuthStatus", &status.base, "", &out).ok());
  auto* st = natcd__grpc__auth_status_response__unpack(
      nullptr, out.size(), reinterpret_cast<const uint8_t*>(out.data()));
  ASSERT_NE(st, nullptr);
  EXPECT_TRUE(st->enabled);
  EXPECT_GT(st->authrevision, 5u);
  natcd__grpc__auth_status_response__free_unpacked(st, nullptr);
  Natcd__Grpc__AuthDisableRequest disable;
  natcd__grpc__auth_disable_request__init(&disable);
  EXPECT_EQ(Auth("AuthDisable", &disable.base, "").error_message(),
            "etcdserver: user name is empty");
  ASSERT_TRUE(Auth("AuthDisable", &disable.base, root).ok());
  EXPECT_TRUE(Get("/x", "").ok());
  nats = RunArgv({Natcdctl(), "--nats-url", server_->url(), "get", "/b/1"});
  EXPECT_EQ(nats.code, 0) << nats.out << nats.err;
}

// --bcrypt-cost: the hashes UserAdd makes are of that cost (read from the
// member's database once it has stopped); outside 4..31 etcd's default is
// used, with etcd's warning.
TEST(BcryptCostTest, HashesAreOfTheGivenCostAndAnInvalidCostIsTheDefault) {
  for (const auto& [cost, prefix] : {std::pair<std::string, std::string>{"4", "$2b$04$"},
                                     std::pair<std::string, std::string>{"99", "$2b$10$"}}) {
    SCOPED_TRACE("--bcrypt-cost " + cost);
    TempDir dir;
    NatsServer server;
    ASSERT_TRUE(server.Start());
    NatcdProcess natcd(server.url(), dir.path(),
                       {"--log-level", "warn", "--listen-client-urls", "http://127.0.0.1:0",
                        "--bcrypt-cost", cost});
    ASSERT_TRUE(natcd.Start());
    CommandResult added = RunEtcdctl(dir, 0,
                                     {EtcdctlTest::Etcdctl(), "--endpoints", EtcdEndpointOf(natcd),
                                      "user", "add", "alice:alicepw"});
    EXPECT_TRUE(Contains(added.out, "User alice created")) << added.out << added.err;
    const std::string log = natcd.Log();
    EXPECT_EQ(Contains(log, "use default bcrypt cost instead of the invalid given cost"),
              cost == "99")
        << log;
    ASSERT_EQ(natcd.Stop(), 0);
    sqlite3* db = nullptr;
    ASSERT_EQ(
        sqlite3_open_v2((dir.path() + "/natcd.db").c_str(), &db, SQLITE_OPEN_READONLY, nullptr),
        SQLITE_OK);
    sqlite3_stmt* query = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT password_hash FROM auth_user WHERE name = ?", -1,
                                 &query, nullptr),
              SQLITE_OK);
    sqlite3_bind_blob(query, 1, "alice", 5, SQLITE_STATIC);
    ASSERT_EQ(sqlite3_step(query), SQLITE_ROW);
    const std::string hash = reinterpret_cast<const char*>(sqlite3_column_text(query, 0));
    EXPECT_EQ(hash.rfind(prefix, 0), 0u) << hash;
    sqlite3_finalize(query);
    sqlite3_close(db);
  }
}

}  // namespace
}  // namespace natcd::testing
