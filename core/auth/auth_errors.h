// etcd's auth errors (server/auth/store.go, api/v3rpc/rpctypes): each a
// Status carrying etcd's error name and exact message, which front ends
// map to etcd's gRPC code (adapters/grpc/etcd_error.cc) or NATS service
// error. Clients match the messages by substring.
//
// Thread safety: pure functions.
#pragma once

#include "natcd/status.h"

namespace natcd::auth {

inline Status AuthError(const char* name, const char* message) {
  return Status::InvalidArgument(name, message);
}

inline Status ErrRootUserNotExist() {
  return AuthError("ErrRootUserNotExist", "etcdserver: root user does not exist");
}
inline Status ErrRootRoleNotExist() {
  return AuthError("ErrRootRoleNotExist", "etcdserver: root user does not have root role");
}
inline Status ErrUserAlreadyExist() {
  return AuthError("ErrUserAlreadyExist", "etcdserver: user name already exists");
}
inline Status ErrUserEmpty() { return AuthError("ErrUserEmpty", "etcdserver: user name is empty"); }
inline Status ErrUserNotFound() {
  return AuthError("ErrUserNotFound", "etcdserver: user name not found");
}
inline Status ErrRoleAlreadyExist() {
  return AuthError("ErrRoleAlreadyExist", "etcdserver: role name already exists");
}
inline Status ErrRoleNotFound() {
  return AuthError("ErrRoleNotFound", "etcdserver: role name not found");
}
inline Status ErrRoleEmpty() { return AuthError("ErrRoleEmpty", "etcdserver: role name is empty"); }
inline Status ErrAuthFailed() {
  return AuthError("ErrAuthFailed",
                   "etcdserver: authentication failed, invalid user ID or password");
}
inline Status ErrPermissionDenied() {
  return AuthError("ErrPermissionDenied", "etcdserver: permission denied");
}
inline Status ErrRoleNotGranted() {
  return AuthError("ErrRoleNotGranted", "etcdserver: role is not granted to the user");
}
inline Status ErrPermissionNotGranted() {
  return AuthError("ErrPermissionNotGranted", "etcdserver: permission is not granted to the role");
}
inline Status ErrAuthNotEnabled() {
  return AuthError("ErrAuthNotEnabled", "etcdserver: authentication is not enabled");
}
inline Status ErrInvalidAuthToken() {
  return AuthError("ErrInvalidAuthToken", "etcdserver: invalid auth token");
}
// A write checked at an auth revision the store has since moved past;
// etcd's clients get a new token and retry.
inline Status ErrAuthOldRevision() {
  return AuthError("ErrAuthOldRevision", "etcdserver: revision of auth store is old");
}
inline Status ErrInvalidAuthMgmt() {
  return AuthError("ErrInvalidAuthMgmt", "etcdserver: invalid auth management");
}
// etcd's server returns this one as the auth store's error, not as one of
// rpctypes' (gRPC UNKNOWN, "auth: ..."): so does natcd.
inline Status ErrNoPasswordUser() {
  return AuthError("ErrNoPasswordUser",
                   "auth: authentication failed, password was given for no password user");
}

// natcd's: auth is enabled and the request came through a front end that
// carries no token (NATS not declared trusted). Named as etcd's permission
// error, which clients match.
inline Status ErrTokenlessFrontEnd() {
  return AuthError("ErrPermissionDenied",
                   "etcdserver: permission denied: authentication is enabled and this NATS "
                   "request carries no auth token (authenticate on P.auth.authenticate and send "
                   "the token in the Natcd-Auth-Token header, or declare the NATS side trusted: "
                   "--nats-trusted)");
}

}  // namespace natcd::auth
