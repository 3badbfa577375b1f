// Authentication and authorization, as etcd's (server/auth/store.go and
// api/authpb/auth.proto): users with a password hash and roles, roles with
// permissions (READ, WRITE or READWRITE on a key or a range [key,
// range_end), "\0" as range_end meaning every key from key on), the `root`
// user and role, an enabled flag and a revision that counts the changes.
//
// An AuthChange is one replicated change of that state: a log entry
// (server/log_command.h) applied on every member by the engine. Passwords
// travel in it only as salted hashes (auth/password.h), made by the member
// that received the request, before proposing, as etcd does.
//
// Thread safety: plain values.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace natcd {

// DO NOT CHANGE: persisted (the auth_permission table and the log) and
// etcd's authpb.Permission.Type values.
enum class PermissionType : uint8_t {
  kRead = 0,
  kWrite = 1,
  kReadWrite = 2,
};

// A permission on a key (range_end empty) or on [key, range_end).
struct Permission {
  PermissionType type = PermissionType::kRead;
  std::string key;
  std::string range_end;
  bool operator==(const Permission&) const = default;
};

// etcd's names: the user and role that always have every permission.
inline constexpr const char* kRootUser = "root";
inline constexpr const char* kRootRole = "root";

struct AuthUser {
  std::string name;
  // crypt(3)'s "$2b$..." (bcrypt), or empty for a user added with
  // no_password (it cannot Authenticate).
  std::string password_hash;
  std::vector<std::string> roles;  // sorted, unique
};

struct AuthRole {
  std::string name;
  std::vector<Permission> permissions;  // sorted by (key, range_end)
};

// DO NOT CHANGE: persisted (AuthChangeCommand.op in the log).
enum class AuthChangeKind : uint8_t {
  kEnable = 1,
  kDisable = 2,
  kUserAdd = 3,
  kUserDelete = 4,
  kUserChangePassword = 5,
  kUserGrantRole = 6,
  kUserRevokeRole = 7,
  kRoleAdd = 8,
  kRoleDelete = 9,
  kRoleGrantPermission = 10,
  kRoleRevokePermission = 11,
  // Not a change of the auth state: a token for user (etcd's
  // InternalAuthenticateRequest), assigned by every member at apply.
  kAuthenticate = 12,
};
inline constexpr uint8_t kAuthChangeKindMax = 12;

// One change of the auth state. Which fields matter depends on kind:
// user (user_*), role (role_*, user_grant/revoke_role), password_hash
// (user_add, user_change_password), permission (role_grant_permission:
// all of it; role_revoke_permission: key and range_end), token_prefix
// (authenticate: the token's random part, "<prefix>.<entry index>" the
// token; the password never enters the log, as etcd's).
struct AuthChange {
  AuthChangeKind kind = AuthChangeKind::kEnable;
  std::string user;
  std::string role;
  std::string password_hash;
  bool no_password = false;  // user_add: etcd 3.5's UserAddOptions.no_password
  Permission permission;
  std::string token_prefix;
  bool operator==(const AuthChange&) const = default;
};

}  // namespace natcd
