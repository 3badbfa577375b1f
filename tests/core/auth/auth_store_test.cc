// The auth store (core/auth/auth_store.h) through the engine that applies
// it: etcd's rules, permission checks, persistence across a reopen, the
// pinned SQLite format, and password hashes (core/auth/password.h).
#include "auth/auth_store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include "auth/password.h"
#include "auth/simple_tokens.h"
#include "core/engine_fixture.h"
#include "server/request_permissions.h"

namespace natcd {
namespace {

class AuthStoreTest : public testing::EngineTest {
 protected:
  Status Change(AuthChangeKind kind, std::string user = "", std::string role = "",
                Permission permission = {}) {
    AuthChange c;
    c.kind = kind;
    c.user = std::move(user);
    c.role = std::move(role);
    c.password_hash = "$2b$04$hash-of-" + c.user;
    c.permission = std::move(permission);
    Status s = engine_->ApplyAuth(c, ++index_);
    EXPECT_OK(engine_->Commit());
    return s;
  }
  std::string Name(const Status& s) { return s.ok() ? "OK" : std::string(s.name()); }
  const AuthStore& store() { return engine_->auth(); }

  // root with the root role, and auth enabled.
  void EnableWithRoot() {
    ASSERT_OK(Change(AuthChangeKind::kUserAdd, "root"));
    ASSERT_OK(Change(AuthChangeKind::kUserGrantRole, "root", "root"));
    ASSERT_OK(Change(AuthChangeKind::kEnable));
  }

  uint64_t index_ = 0;
};

TEST_F(AuthStoreTest, EnableNeedsARootUserWithTheRootRole) {
  EXPECT_EQ(Name(Change(AuthChangeKind::kEnable)), "ErrRootUserNotExist");
  ASSERT_OK(Change(AuthChangeKind::kUserAdd, "root"));
  EXPECT_EQ(Name(Change(AuthChangeKind::kEnable)), "ErrRootRoleNotExist");
  EXPECT_FALSE(store().enabled());
  // The root role may be granted before it exists (etcdctl's auth enable).
  ASSERT_OK(Change(AuthChangeKind::kUserGrantRole, "root", "root"));
  ASSERT_OK(Change(AuthChangeKind::kEnable));
  EXPECT_TRUE(store().enabled());
  ASSERT_OK(Change(AuthChangeKind::kEnable));  // twice: no error, as etcd
}

TEST_F(AuthStoreTest, RootCannotLoseItsPowersWhileEnabled) {
  EnableWithRoot();
  ASSERT_OK(Change(AuthChangeKind::kRoleAdd, "", "root"));
  EXPECT_EQ(Name(Change(AuthChangeKind::kUserDelete, "root")), "ErrInvalidAuthMgmt");
  EXPECT_EQ(Name(Change(AuthChangeKind::kUserRevokeRole, "root", "root")), "ErrInvalidAuthMgmt");
  EXPECT_EQ(Name(Change(AuthChangeKind::kRoleDelete, "", "root")), "ErrInvalidAuthMgmt");
  ASSERT_OK(Change(AuthChangeKind::kDisable));
  EXPECT_OK(Change(AuthChangeKind::kUserRevokeRole, "root", "root"));
  EXPECT_OK(Change(AuthChangeKind::kUserDelete, "root"));
}

TEST_F(AuthStoreTest, UserAndRoleErrorsAreEtcds) {
  EXPECT_EQ(Name(Change(AuthChangeKind::kUserAdd, "")), "ErrUserEmpty");
  ASSERT_OK(Change(AuthChangeKind::kUserAdd, "u"));
  EXPECT_EQ(Name(Change(AuthChangeKind::kUserAdd, "u")), "ErrUserAlreadyExist");
  EXPECT_EQ(Name(Change(AuthChangeKind::kUserDelete, "x")), "ErrUserNotFound");
  EXPECT_EQ(Name(Change(AuthChangeKind::kUserChangePassword, "x")), "ErrUserNotFound");
  EXPECT_EQ(Name(Change(AuthChangeKind::kUserGrantRole, "u", "nope")), "ErrRoleNotFound");
  EXPECT_EQ(Name(Change(AuthChangeKind::kUserRevokeRole, "u", "nope")), "ErrRoleNotGranted");
  EXPECT_EQ(Name(Change(AuthChangeKind::kRoleAdd, "", "")), "ErrRoleEmpty");
  ASSERT_OK(Change(AuthChangeKind::kRoleAdd, "", "r"));
  EXPECT_EQ(Name(Change(AuthChangeKind::kRoleAdd, "", "r")), "ErrRoleAlreadyExist");
  EXPECT_EQ(Name(Change(AuthChangeKind::kRoleDelete, "", "x")), "ErrRoleNotFound");
  EXPECT_EQ(Name(Change(AuthChangeKind::kRoleGrantPermission, "", "x")), "ErrRoleNotFound");
  EXPECT_EQ(Name(Change(AuthChangeKind::kRoleRevokePermission, "", "r", {{}, "k", ""})),
            "ErrPermissionNotGranted");
  // A refused change changes nothing, not even the revision.
  const uint64_t revision = store().revision();
  EXPECT_EQ(Name(Change(AuthChangeKind::kUserAdd, "u")), "ErrUserAlreadyExist");
  EXPECT_EQ(store().revision(), revision);
}

TEST_F(AuthStoreTest, RolesAndPermissionsAreKeptSortedAndMerged) {
  ASSERT_OK(Change(AuthChangeKind::kUserAdd, "u"));
  for (const char* r : {"b", "a", "c"}) {
    ASSERT_OK(Change(AuthChangeKind::kRoleAdd, "", r));
    ASSERT_OK(Change(AuthChangeKind::kUserGrantRole, "u", r));
  }
  ASSERT_OK(Change(AuthChangeKind::kUserGrantRole, "u", "a"));  // again: no error
  EXPECT_EQ(store().FindUser("u")->roles, (std::vector<std::string>{"a", "b", "c"}));
  ASSERT_OK(
      Change(AuthChangeKind::kRoleGrantPermission, "", "a", {PermissionType::kRead, "z", ""}));
  ASSERT_OK(
      Change(AuthChangeKind::kRoleGrantPermission, "", "a", {PermissionType::kRead, "m", "n"}));
  // The same key and range again: its type is replaced.
  ASSERT_OK(
      Change(AuthChangeKind::kRoleGrantPermission, "", "a", {PermissionType::kWrite, "z", ""}));
  const std::vector<Permission> expected = {{PermissionType::kRead, "m", "n"},
                                            {PermissionType::kWrite, "z", ""}};
  EXPECT_EQ(store().FindRole("a")->permissions, expected);
  // Deleting a role revokes it from its users.
  ASSERT_OK(Change(AuthChangeKind::kRoleDelete, "", "b"));
  EXPECT_EQ(store().FindUser("u")->roles, (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(store().RoleNames(), (std::vector<std::string>{"a", "c"}));
}

TEST_F(AuthStoreTest, PermissionsCoverKeysRangesAndPrefixesAsEtcds) {
  EnableWithRoot();
  ASSERT_OK(Change(AuthChangeKind::kUserAdd, "u"));
  ASSERT_OK(Change(AuthChangeKind::kRoleAdd, "", "p"));
  ASSERT_OK(Change(AuthChangeKind::kUserGrantRole, "u", "p"));
  // READ on the prefix /app/ ([/app/, /app0)), WRITE on the key /w,
  // READWRITE on [/x, /y) and on [/y, /z) (together: [/x, /z)).
  ASSERT_OK(Change(AuthChangeKind::kRoleGrantPermission, "", "p",
                   {PermissionType::kRead, "/app/", "/app0"}));
  ASSERT_OK(
      Change(AuthChangeKind::kRoleGrantPermission, "", "p", {PermissionType::kWrite, "/w", ""}));
  ASSERT_OK(Change(AuthChangeKind::kRoleGrantPermission, "", "p",
                   {PermissionType::kReadWrite, "/x", "/y"}));
  ASSERT_OK(Change(AuthChangeKind::kRoleGrantPermission, "", "p",
                   {PermissionType::kReadWrite, "/y", "/z"}));
  using T = PermissionType;
  EXPECT_TRUE(store().Permitted("u", T::kRead, "/app/a", ""));
  EXPECT_TRUE(store().Permitted("u", T::kRead, "/app/", "/app0"));
  EXPECT_FALSE(store().Permitted("u", T::kWrite, "/app/a", ""));
  EXPECT_FALSE(store().Permitted("u", T::kRead, "/app", ""));
  EXPECT_FALSE(store().Permitted("u", T::kRead, "/app/", std::string(1, '\0')));  // all from
  EXPECT_TRUE(store().Permitted("u", T::kWrite, "/w", ""));
  EXPECT_FALSE(store().Permitted("u", T::kRead, "/w", ""));
  EXPECT_FALSE(store().Permitted("u", T::kWrite, "/w", "/w0"));  // a key is not its range
  EXPECT_TRUE(store().Permitted("u", T::kWrite, "/x", "/z"));    // two ranges join
  EXPECT_TRUE(store().Permitted("u", T::kRead, "/xa", "/yb"));
  EXPECT_FALSE(store().Permitted("u", T::kRead, "/x", "/za"));
  EXPECT_FALSE(store().Permitted("u", T::kRead, "/app/a", "/x"));  // a gap
  EXPECT_FALSE(store().Permitted("nobody", T::kRead, "/app/a", ""));
  // root has everything; and disabled auth checks nothing.
  EXPECT_TRUE(store().Permitted("root", T::kWrite, "", std::string(1, '\0')));
  ASSERT_OK(Change(AuthChangeKind::kDisable));
  EXPECT_TRUE(store().Permitted("nobody", T::kWrite, "/anything", ""));
}

TEST_F(AuthStoreTest, StateSurvivesAReopen) {
  EnableWithRoot();
  ASSERT_OK(Change(AuthChangeKind::kRoleAdd, "", "p"));
  ASSERT_OK(Change(AuthChangeKind::kRoleGrantPermission, "", "p",
                   {PermissionType::kReadWrite, "k", std::string(1, '\0')}));
  ASSERT_OK(Change(AuthChangeKind::kUserAdd, std::string("n\0ul", 4)));
  ASSERT_OK(Change(AuthChangeKind::kUserGrantRole, std::string("n\0ul", 4), "p"));
  const uint64_t revision = store().revision();
  Reopen();
  EXPECT_TRUE(store().enabled());
  EXPECT_EQ(store().revision(), revision);
  EXPECT_EQ(store().UserNames(), (std::vector<std::string>{std::string("n\0ul", 4), "root"}));
  EXPECT_EQ(store().FindUser("root")->password_hash, "$2b$04$hash-of-root");
  EXPECT_EQ(store().FindUser(std::string("n\0ul", 4))->roles, std::vector<std::string>{"p"});
  const std::vector<Permission> perms = {{PermissionType::kReadWrite, "k", std::string(1, '\0')}};
  EXPECT_EQ(store().FindRole("p")->permissions, perms);
  EXPECT_EQ(engine_->applied_index(), index_);
}

// DO NOT CHANGE: persisted. The rows an auth state leaves in SQLite.
TEST_F(AuthStoreTest, TablesHoldThePinnedFormat) {
  EnableWithRoot();
  ASSERT_OK(Change(AuthChangeKind::kRoleAdd, "", "p"));
  ASSERT_OK(
      Change(AuthChangeKind::kRoleGrantPermission, "", "p", {PermissionType::kWrite, "a", "b"}));
  engine_.reset();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(dir_.File("natcd.db").c_str(), &db), SQLITE_OK);
  auto rows = [&](const char* sql) {
    std::string out;
    sqlite3_stmt* stmt = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr), SQLITE_OK) << sql;
    while (sqlite3_step(stmt) == SQLITE_ROW) {
      for (int i = 0; i < sqlite3_column_count(stmt); ++i) {
        out +=
            std::string(sqlite3_column_decltype(stmt, i) ? sqlite3_column_decltype(stmt, i) : "?") +
            "=" + reinterpret_cast<const char*>(sqlite3_column_text(stmt, i)) + " ";
      }
      out += "|";
    }
    sqlite3_finalize(stmt);
    return out;
  };
  EXPECT_EQ(rows("SELECT name, password_hash FROM auth_user"),
            "BLOB=root TEXT=$2b$04$hash-of-root |");
  EXPECT_EQ(rows("SELECT user, role FROM auth_user_role"), "BLOB=root BLOB=root |");
  EXPECT_EQ(rows("SELECT name FROM auth_role"), "BLOB=p |");
  EXPECT_EQ(rows("SELECT role, key, range_end, type, typeof(type) FROM auth_permission"),
            "BLOB=p BLOB=a BLOB=b INTEGER=1 ?=integer |");
  EXPECT_EQ(rows("SELECT name, value FROM meta WHERE name LIKE 'auth_%' ORDER BY name"),
            "TEXT=auth_enabled INTEGER=1 |TEXT=auth_revision INTEGER=5 |");
  sqlite3_close(db);
}

TEST(AuthStoreOpen, ADatabaseFromBeforeAuthOpensWithAuthDisabled) {
  testing::TempDir dir;
  ManualClock clock;
  // A database with only the tables of before (no auth_* table at all).
  {
    EngineOptions options;
    options.db_path = dir.File("natcd.db");
    options.sync = false;
    options.clock = &clock;
    auto engine = Engine::Open(options);
    ASSERT_TRUE(engine.ok());
    ASSERT_OK((*engine)->Put(PutRequest{"k", "v"}).status());
    ASSERT_OK((*engine)->Commit());
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(dir.File("natcd.db").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "DROP TABLE auth_user; DROP TABLE auth_user_role; DROP TABLE auth_role; "
                         "DROP TABLE auth_permission;",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  EngineOptions options;
  options.db_path = dir.File("natcd.db");
  options.sync = false;
  options.clock = &clock;
  auto engine = Engine::Open(options);
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  EXPECT_FALSE((*engine)->auth().enabled());
  EXPECT_EQ((*engine)->auth().revision(), 0u);
  EXPECT_TRUE((*engine)->auth().UserNames().empty());
  EXPECT_EQ((*engine)->revision(), 2);
}

TEST(Password, HashesAreSaltedBcryptAndCheckOnlyTheirPassword) {
  Result<std::string> a = auth::HashPassword("secret", 4);
  Result<std::string> b = auth::HashPassword("secret", 4);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->substr(0, 7), "$2b$04$");
  EXPECT_NE(*a, *b);  // salted
  EXPECT_TRUE(auth::CheckPassword("secret", *a));
  EXPECT_TRUE(auth::CheckPassword("secret", *b));
  EXPECT_FALSE(auth::CheckPassword("secreT", *a));
  EXPECT_FALSE(auth::CheckPassword("", *a));
  EXPECT_FALSE(auth::CheckPassword("secret", ""));
  EXPECT_FALSE(auth::CheckPassword("secret", "$2b$04$garbage"));
  EXPECT_FALSE(auth::HashPassword(std::string("a\0b", 3), 4).ok());
}

TEST(SimpleTokens, LiveForTheirTtlSinceLastUse) {
  ManualClock clock;
  auth::SimpleTokens tokens(&clock, 1'000);
  const std::string prefix = auth::SimpleTokens::NewPrefix();
  EXPECT_EQ(prefix.size(), 16u);
  EXPECT_NE(auth::SimpleTokens::NewPrefix(), prefix);
  const std::string t = tokens.Assign("alice", prefix, 42);
  EXPECT_EQ(t, prefix + ".42");
  clock.AdvanceMs(900);
  EXPECT_EQ(tokens.UserOf(t), "alice");  // renews
  clock.AdvanceMs(900);
  EXPECT_EQ(tokens.UserOf(t), "alice");
  clock.AdvanceMs(1'000);
  EXPECT_EQ(tokens.UserOf(t), std::nullopt);
  EXPECT_EQ(tokens.UserOf("nope"), std::nullopt);
  const std::string bob = tokens.Assign("bob", auth::SimpleTokens::NewPrefix(), 1);
  tokens.RevokeUser("alice");
  EXPECT_EQ(tokens.UserOf(bob), "bob");
  clock.AdvanceMs(5'000);
  tokens.Prune();
  EXPECT_EQ(tokens.size(), 0u);
}

}  // namespace
}  // namespace natcd

namespace natcd::server {
namespace {

// What each request needs (core/server/request_permissions.h).
class RequestPermissionsTest : public natcd::testing::EngineTest {
 protected:
  void SetUp() override {
    EngineTest::SetUp();
    uint64_t index = 0;
    auto change = [&](AuthChangeKind kind, std::string user, std::string role, Permission p = {}) {
      AuthChange c{kind, std::move(user), std::move(role), "$2b$04$h", false, std::move(p), ""};
      ASSERT_OK(engine_->ApplyAuth(c, ++index));
    };
    change(AuthChangeKind::kUserAdd, "root", "");
    change(AuthChangeKind::kUserGrantRole, "root", "root");
    change(AuthChangeKind::kUserAdd, "bob", "");
    change(AuthChangeKind::kRoleAdd, "", "b");
    change(AuthChangeKind::kUserGrantRole, "bob", "b");
    change(AuthChangeKind::kRoleGrantPermission, "", "b",
           {PermissionType::kReadWrite, "/b/", "/b0"});
    change(AuthChangeKind::kRoleGrantPermission, "", "b", {PermissionType::kRead, "/r", ""});
    change(AuthChangeKind::kEnable, "", "");
    ASSERT_OK(engine_->Commit());
  }
  bool Allowed(const RequestPayload& p, const std::string& user = "bob") {
    return CheckRequestPermissions(*engine_, user, p).ok();
  }
  static RequestOp PutOp(const std::string& key) {
    PutRequest put;
    put.key = key;
    return RequestOp{put};
  }
};

TEST_F(RequestPermissionsTest, KvRequestsTxnOpsAndLeases) {
  EXPECT_TRUE(Allowed(PutRequest{"/b/1", "v"}));
  EXPECT_FALSE(Allowed(PutRequest{"/r", "v"}));
  PutRequest with_prev{"/b/1", "v"};
  with_prev.prev_kv = true;
  EXPECT_TRUE(Allowed(with_prev));
  RangeRequest range;
  range.key = "/r";
  EXPECT_TRUE(Allowed(range));
  range.range_end = "/s";
  EXPECT_FALSE(Allowed(range));
  EXPECT_TRUE(Allowed(DeleteRangeRequest{"/b/", "/b0"}));
  EXPECT_FALSE(Allowed(DeleteRangeRequest{"/r", ""}));
  TxnRequest txn;
  txn.success.push_back(PutOp("/b/2"));
  EXPECT_TRUE(Allowed(txn));
  txn.failure.push_back(PutOp("/x"));  // the branch not taken counts too
  EXPECT_FALSE(Allowed(txn));
  TxnRequest compares;
  Compare c;
  c.key = "/x";
  compares.compare.push_back(c);
  EXPECT_FALSE(Allowed(compares));
  auto nested = std::make_shared<TxnRequest>();
  nested->success.push_back(PutOp("/x"));
  TxnRequest outer;
  outer.success.push_back(RequestOp{nested});
  EXPECT_FALSE(Allowed(outer));
  EXPECT_TRUE(Allowed(outer, "root"));
  // Lease attachment: a lease holding a key bob may not write.
  Result<LeaseGrantResponse> lease = engine_->LeaseGrant(LeaseGrantRequest{60, 0});
  ASSERT_TRUE(lease.ok());
  ASSERT_OK(engine_->Commit());
  EXPECT_TRUE(Allowed(PutRequest{"/b/l", "v", lease->id}));
  EXPECT_TRUE(Allowed(LeaseRevokeRequest{lease->id}));
  ASSERT_TRUE(engine_->Put(PutRequest{"/root", "v", lease->id}).ok());
  ASSERT_OK(engine_->Commit());
  EXPECT_FALSE(Allowed(PutRequest{"/b/l", "v", lease->id}));
  EXPECT_FALSE(Allowed(LeaseRevokeRequest{lease->id}));
  // Admin-only requests, and those nobody checks.
  EXPECT_FALSE(Allowed(DefragmentRequest{}));
  EXPECT_TRUE(Allowed(DefragmentRequest{}, "root"));
  EXPECT_FALSE(Allowed(MemberAddRequest{"n4", false}));
  EXPECT_TRUE(Allowed(CompactionRequest{}));
  EXPECT_FALSE(RequiresUser(LeaseGrantRequest{}));
  EXPECT_FALSE(RequiresUser(StatusRequest{}));
  EXPECT_TRUE(RequiresUser(RangeRequest{}));
}

}  // namespace
}  // namespace natcd::server
