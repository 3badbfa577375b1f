#include "auth/auth_store.h"

#include <algorithm>
#include <optional>
#include <tuple>
#include <utility>

#include "auth/auth_errors.h"
#include "storage/sqlite_backend.h"

namespace natcd {
namespace {

using auth::ErrInvalidAuthMgmt;
using auth::ErrPermissionNotGranted;
using auth::ErrRoleAlreadyExist;
using auth::ErrRoleEmpty;
using auth::ErrRoleNotFound;
using auth::ErrRoleNotGranted;
using auth::ErrRootRoleNotExist;
using auth::ErrRootUserNotExist;
using auth::ErrUserAlreadyExist;
using auth::ErrUserEmpty;
using auth::ErrUserNotFound;

// A half-open interval of keys; no end: up to every key.
struct Interval {
  std::string begin;
  std::optional<std::string> end;
};

// etcd's reading of (key, range_end): a key alone is [key, key + "\0"); a
// range_end of "\0" is "every key from key on".
Interval IntervalOf(const std::string& key, const std::string& range_end) {
  if (range_end.empty()) return Interval{key, key + std::string(1, '\0')};
  if (range_end == std::string(1, '\0')) return Interval{key, std::nullopt};
  return Interval{key, range_end};
}

bool Grants(PermissionType have, PermissionType need) {
  return have == PermissionType::kReadWrite || have == need;
}

// Whether the union of `have` covers all of `want`.
bool Covers(std::vector<Interval> have, const Interval& want) {
  if (want.end && *want.end <= want.begin) return true;  // an empty range
  std::sort(have.begin(), have.end(),
            [](const Interval& a, const Interval& b) { return a.begin < b.begin; });
  std::string covered_to = want.begin;  // every key below it is covered
  for (const Interval& i : have) {
    if (i.begin > covered_to) break;  // a gap at covered_to
    if (!i.end) return true;          // covered to the end of the key space
    if (*i.end > covered_to) covered_to = *i.end;
    if (want.end && covered_to >= *want.end) return true;
  }
  return false;
}

}  // namespace

AuthStore::AuthStore(SqliteBackend* backend) : backend_(backend), tables_(backend) {}

Status AuthStore::Load() {
  NATCD_RETURN_IF_ERROR(SqliteAuthTables::Create(backend_));
  users_.clear();
  roles_.clear();
  NATCD_RETURN_IF_ERROR(
      tables_.ScanUsers([this](AuthUser&& u) { users_.emplace(u.name, std::move(u)); }));
  NATCD_RETURN_IF_ERROR(
      tables_.ScanRoles([this](AuthRole&& r) { roles_.emplace(r.name, std::move(r)); }));
  Result<int64_t> enabled = backend_->GetMeta(SqliteAuthTables::kMetaEnabled, 0);
  if (!enabled.ok()) return enabled.status();
  Result<int64_t> revision = backend_->GetMeta(SqliteAuthTables::kMetaRevision, 0);
  if (!revision.ok()) return revision.status();
  enabled_ = *enabled != 0;
  revision_ = static_cast<uint64_t>(*revision);
  return Status::OK();
}

const AuthUser* AuthStore::FindUser(const std::string& name) const {
  auto it = users_.find(name);
  return it == users_.end() ? nullptr : &it->second;
}

const AuthRole* AuthStore::FindRole(const std::string& name) const {
  auto it = roles_.find(name);
  return it == roles_.end() ? nullptr : &it->second;
}

std::vector<std::string> AuthStore::UserNames() const {
  std::vector<std::string> names;
  for (const auto& [name, user] : users_) names.push_back(name);
  return names;
}

std::vector<std::string> AuthStore::RoleNames() const {
  std::vector<std::string> names;
  for (const auto& [name, role] : roles_) names.push_back(name);
  return names;
}

bool AuthStore::HasRole(const std::string& user, const std::string& role) const {
  const AuthUser* u = FindUser(user);
  return u != nullptr && std::binary_search(u->roles.begin(), u->roles.end(), role);
}

bool AuthStore::IsAdmin(const std::string& user) const { return HasRole(user, kRootRole); }

bool AuthStore::Permitted(const std::string& user, PermissionType need, const std::string& key,
                          const std::string& range_end) const {
  if (!enabled_) return true;
  const AuthUser* u = FindUser(user);
  if (u == nullptr) return false;
  if (IsAdmin(user)) return true;
  std::vector<Interval> have;
  for (const std::string& role_name : u->roles) {
    const AuthRole* role = FindRole(role_name);
    if (role == nullptr) continue;
    for (const Permission& p : role->permissions) {
      if (Grants(p.type, need)) have.push_back(IntervalOf(p.key, p.range_end));
    }
  }
  return Covers(std::move(have), IntervalOf(key, range_end));
}

Status AuthStore::PutUser(const AuthUser& user) {
  NATCD_RETURN_IF_ERROR(tables_.PutUser(user));
  users_[user.name] = user;
  return Status::OK();
}

Status AuthStore::PutRole(const AuthRole& role) {
  NATCD_RETURN_IF_ERROR(tables_.PutRole(role));
  roles_[role.name] = role;
  return Status::OK();
}

Status AuthStore::Bump() {
  NATCD_RETURN_IF_ERROR(
      backend_->SetMeta(SqliteAuthTables::kMetaRevision, static_cast<int64_t>(revision_ + 1)));
  ++revision_;
  return Status::OK();
}

Status AuthStore::Apply(const AuthChange& c) {
  using K = AuthChangeKind;
  switch (c.kind) {
    case K::kEnable: {
      if (enabled_) return Status::OK();  // etcd: enabling twice is no error
      const AuthUser* root = FindUser(kRootUser);
      if (root == nullptr) return ErrRootUserNotExist();
      if (!IsAdmin(kRootUser)) return ErrRootRoleNotExist();
      NATCD_RETURN_IF_ERROR(backend_->SetMeta(SqliteAuthTables::kMetaEnabled, 1));
      enabled_ = true;
      return Bump();
    }
    case K::kDisable: {
      if (!enabled_) return Status::OK();
      NATCD_RETURN_IF_ERROR(backend_->SetMeta(SqliteAuthTables::kMetaEnabled, 0));
      enabled_ = false;
      return Bump();
    }
    case K::kUserAdd: {
      if (c.user.empty()) return ErrUserEmpty();
      if (FindUser(c.user) != nullptr) return ErrUserAlreadyExist();
      NATCD_RETURN_IF_ERROR(PutUser(AuthUser{c.user, c.no_password ? "" : c.password_hash, {}}));
      return Bump();
    }
    case K::kUserDelete: {
      if (enabled_ && c.user == kRootUser) return ErrInvalidAuthMgmt();
      if (FindUser(c.user) == nullptr) return ErrUserNotFound();
      NATCD_RETURN_IF_ERROR(tables_.DeleteUser(c.user));
      users_.erase(c.user);
      return Bump();
    }
    case K::kUserChangePassword: {
      const AuthUser* u = FindUser(c.user);
      if (u == nullptr) return ErrUserNotFound();
      AuthUser changed = *u;
      changed.password_hash = c.password_hash;
      NATCD_RETURN_IF_ERROR(PutUser(changed));
      return Bump();
    }
    case K::kUserGrantRole: {
      const AuthUser* u = FindUser(c.user);
      if (u == nullptr) return ErrUserNotFound();
      // The root role may be granted before it is created (etcdctl's
      // `auth enable` does so); any other must exist.
      if (c.role != kRootRole && FindRole(c.role) == nullptr) return ErrRoleNotFound();
      auto at = std::lower_bound(u->roles.begin(), u->roles.end(), c.role);
      if (at != u->roles.end() && *at == c.role) return Status::OK();  // etcd: no error
      AuthUser changed = *u;
      changed.roles.insert(changed.roles.begin() + (at - u->roles.begin()), c.role);
      NATCD_RETURN_IF_ERROR(PutUser(changed));
      return Bump();
    }
    case K::kUserRevokeRole: {
      if (enabled_ && c.user == kRootUser && c.role == kRootRole) return ErrInvalidAuthMgmt();
      const AuthUser* u = FindUser(c.user);
      if (u == nullptr) return ErrUserNotFound();
      auto at = std::lower_bound(u->roles.begin(), u->roles.end(), c.role);
      if (at == u->roles.end() || *at != c.role) return ErrRoleNotGranted();
      AuthUser changed = *u;
      changed.roles.erase(changed.roles.begin() + (at - u->roles.begin()));
      NATCD_RETURN_IF_ERROR(PutUser(changed));
      return Bump();
    }
    case K::kRoleAdd: {
      if (c.role.empty()) return ErrRoleEmpty();
      if (FindRole(c.role) != nullptr) return ErrRoleAlreadyExist();
      NATCD_RETURN_IF_ERROR(PutRole(AuthRole{c.role, {}}));
      return Bump();
    }
    case K::kRoleDelete: {
      if (enabled_ && c.role == kRootRole) return ErrInvalidAuthMgmt();
      if (FindRole(c.role) == nullptr) return ErrRoleNotFound();
      NATCD_RETURN_IF_ERROR(tables_.DeleteRole(c.role));
      roles_.erase(c.role);
      // etcd revokes the role from every user that had it.
      std::vector<AuthUser> holders;
      for (const auto& [name, user] : users_) {
        if (std::binary_search(user.roles.begin(), user.roles.end(), c.role)) {
          holders.push_back(user);
        }
      }
      for (AuthUser& user : holders) {
        user.roles.erase(std::lower_bound(user.roles.begin(), user.roles.end(), c.role));
        NATCD_RETURN_IF_ERROR(PutUser(user));
      }
      return Bump();
    }
    case K::kRoleGrantPermission: {
      const AuthRole* r = FindRole(c.role);
      if (r == nullptr) return ErrRoleNotFound();
      AuthRole changed = *r;
      auto less = [](const Permission& a, const Permission& b) {
        return std::tie(a.key, a.range_end) < std::tie(b.key, b.range_end);
      };
      auto at = std::lower_bound(changed.permissions.begin(), changed.permissions.end(),
                                 c.permission, less);
      if (at != changed.permissions.end() && at->key == c.permission.key &&
          at->range_end == c.permission.range_end) {
        at->type = c.permission.type;  // etcd: the same key or range gets the new type
      } else {
        changed.permissions.insert(at, c.permission);
      }
      NATCD_RETURN_IF_ERROR(PutRole(changed));
      return Bump();
    }
    case K::kRoleRevokePermission: {
      const AuthRole* r = FindRole(c.role);
      if (r == nullptr) return ErrRoleNotFound();
      AuthRole changed = *r;
      auto it = std::find_if(
          changed.permissions.begin(), changed.permissions.end(), [&](const Permission& p) {
            return p.key == c.permission.key && p.range_end == c.permission.range_end;
          });
      if (it == changed.permissions.end()) return ErrPermissionNotGranted();
      changed.permissions.erase(it);
      NATCD_RETURN_IF_ERROR(PutRole(changed));
      return Bump();
    }
    case K::kAuthenticate:
      break;  // the member's tokens, not the store's state
  }
  return Status::InvalidArgument("ErrInvalidArgument", "unknown auth change");
}

}  // namespace natcd
