// SqliteAuthTables: the auth state (natcd/auth.h) in the engine's SQLite
// database, beside the keys, so that a change is durable exactly when the
// log entry that made it is applied (the engine's batch), and a snapshot
// (the database shipped whole) carries it.
//
// Persisted format (DO NOT CHANGE: persisted; tests/core/auth/
// auth_store_test.cc pins it). The tables are created when missing, so a
// data directory from before auth opens unchanged (auth disabled, no users):
//   auth_user(name BLOB PRIMARY KEY, password_hash TEXT NOT NULL)
//   auth_user_role(user BLOB, role BLOB, PRIMARY KEY (user, role))
//   auth_role(name BLOB PRIMARY KEY)
//   auth_permission(role BLOB, key BLOB, range_end BLOB, type INTEGER,
//                   PRIMARY KEY (role, key, range_end))
//      type: PermissionType (0 READ, 1 WRITE, 2 READWRITE)
//   meta rows "auth_enabled" (0/1) and "auth_revision" (SqliteBackend's meta).
//
// Thread safety: none; the engine's thread, like the backend it writes to.
#pragma once

#include <functional>
#include <string>

#include "natcd/auth.h"
#include "natcd/status.h"

namespace natcd {

class SqliteBackend;

class SqliteAuthTables {
 public:
  // DO NOT CHANGE: persisted meta names.
  static constexpr std::string_view kMetaEnabled = "auth_enabled";
  static constexpr std::string_view kMetaRevision = "auth_revision";

  // Creates the tables when missing (outside a batch: at open).
  static Status Create(SqliteBackend* backend);

  explicit SqliteAuthTables(SqliteBackend* backend) : backend_(backend) {}

  // Writes, inside the backend's open batch. Put replaces the user (its
  // roles included) or the role (its permissions included).
  Status PutUser(const AuthUser& user);
  Status DeleteUser(const std::string& name);
  Status PutRole(const AuthRole& role);
  Status DeleteRole(const std::string& name);

  // Every user (roles sorted) and role (permissions sorted by key, then
  // range_end), by name.
  Status ScanUsers(const std::function<void(AuthUser&&)>& visit);
  Status ScanRoles(const std::function<void(AuthRole&&)>& visit);

 private:
  SqliteBackend* backend_;
};

}  // namespace natcd
