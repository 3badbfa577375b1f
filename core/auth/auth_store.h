// AuthStore: the replicated auth state (natcd/auth.h) and the rules etcd's
// auth store keeps (server/auth/store.go): enabling needs a `root` user
// that has the `root` role; while enabled, the root user cannot be deleted
// nor lose the root role and the root role cannot be deleted; the root
// role has every permission; a permission check asks whether the roles of
// a user together cover the whole key or range.
//
// Apply() is the state machine: deterministic, so every member that
// applies the same changes holds the same state, and a change refused
// (ErrUserNotFound, ...) changes nothing. Each accepted change increments
// revision() (etcd's auth revision). The state lives in memory and, written
// through in the engine's open batch, in SQLite (storage/
// sqlite_auth_tables.h); Load() reads it back.
//
// Thread safety: none; owned by the engine, on the member thread.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "natcd/auth.h"
#include "natcd/status.h"
#include "storage/sqlite_auth_tables.h"

namespace natcd {

class SqliteBackend;

class AuthStore {
 public:
  explicit AuthStore(SqliteBackend* backend);

  // Reads the state from the database (creating the tables when missing).
  Status Load();

  // One replicated change (the backend's batch must be open). etcd's
  // errors for a change its rules refuse; a storage error otherwise.
  Status Apply(const AuthChange& change);

  bool enabled() const { return enabled_; }
  uint64_t revision() const { return revision_; }

  // Null when there is none.
  const AuthUser* FindUser(const std::string& name) const;
  const AuthRole* FindRole(const std::string& name) const;
  // Sorted.
  std::vector<std::string> UserNames() const;
  std::vector<std::string> RoleNames() const;

  bool HasRole(const std::string& user, const std::string& role) const;
  // Holds the root role (etcd's IsAdminPermitted).
  bool IsAdmin(const std::string& user) const;
  // Whether user may `need` (kRead or kWrite) every key of [key, range_end)
  // (range_end empty: the key alone; "\0": every key from key on). Always
  // true while auth is disabled; false for a user that does not exist.
  bool Permitted(const std::string& user, PermissionType need, const std::string& key,
                 const std::string& range_end) const;

 private:
  Status PutUser(const AuthUser& user);
  Status PutRole(const AuthRole& role);
  Status Bump();

  SqliteBackend* backend_;
  SqliteAuthTables tables_;
  bool enabled_ = false;
  uint64_t revision_ = 0;
  std::map<std::string, AuthUser> users_;
  std::map<std::string, AuthRole> roles_;
};

}  // namespace natcd
