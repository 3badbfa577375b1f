// Member: auth (see member_impl.h). As etcd's: every request is checked
// against the permissions of its token's user while auth is enabled; the
// Auth service's changes are log entries (proposed by the member that
// received them, leader or not: Raft hands a follower's proposal to the
// leader) applied on every member; reads of the auth state are served by
// the member that received them. Authenticate is a log entry too (etcd's
// InternalAuthenticateRequest): the member that checked the password
// proposes the user and a token's random part, and every member assigns
// the token at apply, so a token works on every member.
#include <algorithm>
#include <cstdio>

#include "auth/auth_errors.h"
#include "auth/auth_store.h"
#include "server/member_impl.h"
#include "server/request_permissions.h"

namespace natcd::server {
namespace {

AuthChangeKind ChangeKindOf(AuthOp op) {
  switch (op) {
    case AuthOp::kEnable:
      return AuthChangeKind::kEnable;
    case AuthOp::kDisable:
      return AuthChangeKind::kDisable;
    case AuthOp::kUserAdd:
      return AuthChangeKind::kUserAdd;
    case AuthOp::kUserDelete:
      return AuthChangeKind::kUserDelete;
    case AuthOp::kUserChangePassword:
      return AuthChangeKind::kUserChangePassword;
    case AuthOp::kUserGrantRole:
      return AuthChangeKind::kUserGrantRole;
    case AuthOp::kUserRevokeRole:
      return AuthChangeKind::kUserRevokeRole;
    case AuthOp::kRoleAdd:
      return AuthChangeKind::kRoleAdd;
    case AuthOp::kRoleDelete:
      return AuthChangeKind::kRoleDelete;
    case AuthOp::kRoleGrantPermission:
      return AuthChangeKind::kRoleGrantPermission;
    case AuthOp::kAuthenticate:
      return AuthChangeKind::kAuthenticate;
    case AuthOp::kRoleRevokePermission:
    default:
      return AuthChangeKind::kRoleRevokePermission;
  }
}

// The calls answered from this member's state, without a log entry.
bool IsAuthRead(AuthOp op) {
  return op == AuthOp::kStatus || op == AuthOp::kUserGet || op == AuthOp::kUserList ||
         op == AuthOp::kRoleGet || op == AuthOp::kRoleList;
}

}  // namespace

Result<std::string> Member::Impl::UserOfToken(const std::string& token) {
  if (token.empty()) return auth::ErrUserEmpty();
  std::optional<std::string> user = tokens.UserOf(token);
  if (!user) return auth::ErrInvalidAuthToken();
  return std::move(*user);
}

Status Member::Impl::Authorize(Request* request) {
  if (request->auth_checked) return Status::OK();
  const AuthStore& store = engine->auth();
  if (!store.enabled()) return Status::OK();
  if (const auto* a = std::get_if<AuthRequest>(&request->payload)) {
    // etcd: anyone may ask the status or authenticate.
    if (a->op == AuthOp::kStatus || a->op == AuthOp::kAuthenticate) return Status::OK();
    if (request->tokenless) return auth::ErrTokenlessFrontEnd();
    Result<std::string> user = UserOfToken(request->token);
    if (!user.ok()) return user.status();
    // A user may read itself and the roles it has (etcd 3.5).
    const bool own = (a->op == AuthOp::kUserGet && a->user == *user) ||
                     (a->op == AuthOp::kRoleGet && store.HasRole(*user, a->role));
    if (!own && !store.IsAdmin(*user)) return auth::ErrPermissionDenied();
  } else if (RequiresUser(request->payload)) {
    if (request->tokenless) return auth::ErrTokenlessFrontEnd();
    Result<std::string> user = UserOfToken(request->token);
    if (!user.ok()) return user.status();
    NATCD_RETURN_IF_ERROR(CheckRequestPermissions(*engine, *user, request->payload));
  }
  request->auth_checked = true;
  request->auth_revision = store.revision();
  return Status::OK();
}

Status Member::AuthorizeWatch(const std::string& token, bool auth_checked, bool tokenless,
                              const std::string& key, const std::string& range_end) {
  Impl& m = *impl_;
  m.member_thread.AssertHeld();
  if (auth_checked || !m.engine->auth().enabled()) return Status::OK();
  if (tokenless) return auth::ErrTokenlessFrontEnd();
  Result<std::string> user = m.UserOfToken(token);
  if (!user.ok()) return user.status();
  if (!m.engine->auth().Permitted(*user, PermissionType::kRead, key, range_end)) {
    return auth::ErrPermissionDenied();
  }
  return Status::OK();
}

void Member::RunOnMemberThreadWithToken(std::string token, std::function<void(Engine&)> task) {
  Impl* impl = impl_.get();
  RunOnMemberThread([impl, token = std::move(token), task = std::move(task)](Engine& engine) {
    impl->member_thread.AssertHeld();
    const bool after_held =
        std::any_of(impl->tasks_waiting_for_token.begin(), impl->tasks_waiting_for_token.end(),
                    [&](const Impl::TokenTask& t) { return t.token == token; });
    if (engine.auth().enabled() && (after_held || impl->TokenAhead(token))) {
      impl->tasks_waiting_for_token.push_back({token, impl->clock->MonotonicMs(), task});
    } else {
      task(engine);
    }
  });
}

std::optional<std::string> Member::PasswordHash(const std::string& user) const {
  MutexLock lock(&impl_->credentials_mu);
  auto it = impl_->password_hashes.find(user);
  if (it == impl_->password_hashes.end()) return std::nullopt;
  return it->second;
}

void Member::Impl::RefreshCredentials() {
  const AuthStore& store = engine->auth();
  std::map<std::string, std::string> hashes;
  for (const std::string& name : store.UserNames()) {
    hashes[name] = store.FindUser(name)->password_hash;
  }
  MutexLock lock(&credentials_mu);
  password_hashes = std::move(hashes);
}

void Member::Impl::HandleAuth(std::unique_ptr<Request> request, Answers* answers) {
  const AuthRequest& r = std::get<AuthRequest>(request->payload);
  const AuthStore& store = engine->auth();
  if (IsAuthRead(r.op)) {
    AuthResponse out;
    out.header = Now();
    out.op = r.op;
    Status s;
    switch (r.op) {
      case AuthOp::kStatus:
        out.enabled = store.enabled();
        out.auth_revision = store.revision();
        break;
      case AuthOp::kUserGet: {
        const AuthUser* user = store.FindUser(r.user);
        if (user == nullptr) {
          s = auth::ErrUserNotFound();
        } else {
          out.names = user->roles;
        }
        break;
      }
      case AuthOp::kUserList:
        out.names = store.UserNames();
        break;
      case AuthOp::kRoleGet: {
        const AuthRole* role = store.FindRole(r.role);
        if (role == nullptr) {
          s = auth::ErrRoleNotFound();
        } else {
          out.permissions = role->permissions;
        }
        break;
      }
      case AuthOp::kRoleList:
        out.names = store.RoleNames();
        break;
      default:
        break;
    }
    if (s.ok()) {
      Answer_(answers, std::move(request), Response(std::move(out)));
    } else {
      Answer_(answers, std::move(request), std::move(s));
    }
    return;
  }
  // A change: one log entry, proposed here; answered when applied here.
  LogCommand command;
  AuthChange change;
  change.kind = ChangeKindOf(r.op);
  change.user = r.user;
  if (r.op == AuthOp::kAuthenticate) {
    // The front end checked the password against the hash it sent; a
    // token only while that is still the user's, which the entry's auth
    // revision makes sure of at apply (the password never enters the log).
    const AuthUser* user = store.FindUser(r.user);
    Status s;
    if (!store.enabled()) {
      s = auth::ErrAuthNotEnabled();
    } else if (user != nullptr && user->password_hash.empty()) {
      s = auth::ErrNoPasswordUser();  // added with --no-password: no hash
    } else if (user == nullptr || r.password_hash.empty() ||
               user->password_hash != r.password_hash) {
      s = auth::ErrAuthFailed();
    }
    if (!s.ok()) {
      Answer_(answers, std::move(request), std::move(s));
      return;
    }
    change.token_prefix = auth::SimpleTokens::NewPrefix();
    request->auth_revision = store.revision();
  } else {
    change.role = r.role;
    change.password_hash = r.password_hash;
    change.no_password = r.no_password;
    change.permission = r.permission;
  }
  command.auth_change = std::move(change);
  command.auth_revision = request->auth_revision;
  ProposeFor(std::move(command), std::move(request));
}

void Member::Impl::ApplyAuthChange(const AuthChange& change, uint64_t index,
                                   std::unique_ptr<Request> request, Answers* answers) {
  if (change.kind == AuthChangeKind::kAuthenticate) {
    // Every member alike: the user's token, from this entry's index. (Its
    // auth revision was checked before: the user and its password are
    // still those the proposer checked.)
    AuthResponse out;
    out.header = Now();
    out.op = AuthOp::kAuthenticate;
    Status s;
    if (!engine->auth().enabled()) {
      s = auth::ErrAuthNotEnabled();
    } else if (engine->auth().FindUser(change.user) == nullptr) {
      s = auth::ErrAuthFailed();
    } else {
      out.token = tokens.Assign(change.user, change.token_prefix, index);
    }
    if (request == nullptr) return;
    if (s.ok()) {
      Answer_(answers, std::move(request), Response(std::move(out)), true);
    } else {
      Answer_(answers, std::move(request), std::move(s), true);
    }
    return;
  }
  const bool was_enabled = engine->auth().enabled();
  Status s = engine->ApplyAuth(change, index);
  if (s.ok()) {
    // This member's tokens follow the change (etcd invalidates a user's
    // tokens when it is deleted or its password changes, and every token
    // when auth is disabled).
    if (change.kind == AuthChangeKind::kUserDelete ||
        change.kind == AuthChangeKind::kUserChangePassword) {
      tokens.RevokeUser(change.user);
    }
    if (was_enabled && !engine->auth().enabled()) tokens.Clear();
    RefreshCredentials();
  }
  if (request == nullptr) return;
  AuthResponse out;
  out.header = Now();
  if (const auto* asked = std::get_if<AuthRequest>(&request->payload)) out.op = asked->op;
  if (s.ok()) {
    Answer_(answers, std::move(request), Response(std::move(out)), true);
  } else {
    Answer_(answers, std::move(request), std::move(s), true);
  }
}

}  // namespace natcd::server
