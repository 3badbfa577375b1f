#include "storage/sqlite_auth_tables.h"

#include <sqlite3.h>

#include <initializer_list>
#include <string_view>

#include "storage/sqlite_backend.h"

namespace natcd {
namespace {

// DO NOT CHANGE: persisted.
constexpr const char* kAuthSchema = R"sql(
CREATE TABLE IF NOT EXISTS auth_user (
  name BLOB PRIMARY KEY,
  password_hash TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS auth_user_role (
  user BLOB NOT NULL,
  role BLOB NOT NULL,
  PRIMARY KEY (user, role)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS auth_role (name BLOB PRIMARY KEY) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS auth_permission (
  role BLOB NOT NULL,
  key BLOB NOT NULL,
  range_end BLOB NOT NULL,
  type INTEGER NOT NULL,
  PRIMARY KEY (role, key, range_end)
) WITHOUT ROWID;
)sql";

// A statement prepared for one call (auth changes are rare), finalized on
// every path.
class Statement {
 public:
  Statement(sqlite3* db, const char* sql) : db_(db), sql_(sql) {
    rc_ = sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr);
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  bool ok() const { return rc_ == SQLITE_OK; }
  Status status() const { return SqliteStatus(db_, rc_, sql_); }
  // Binds the blobs (SQLITE_TRANSIENT: copied) and runs it to completion.
  Status Run(std::initializer_list<std::string_view> blobs) {
    if (!ok()) return status();
    sqlite3_reset(stmt_);
    int i = 1;
    for (std::string_view b : blobs) {
      sqlite3_bind_blob64(stmt_, i++, b.data(), b.size(), SQLITE_TRANSIENT);
    }
    rc_ = sqlite3_step(stmt_);
    if (rc_ != SQLITE_DONE) return status();
    rc_ = SQLITE_OK;
    return Status::OK();
  }
  sqlite3_stmt* get() { return stmt_; }

 private:
  sqlite3* db_;
  const char* sql_;
  sqlite3_stmt* stmt_ = nullptr;
  int rc_;
};

std::string ColumnText(sqlite3_stmt* stmt, int column) {
  const void* data = sqlite3_column_blob(stmt, column);
  const int size = sqlite3_column_bytes(stmt, column);
  return data ? std::string(static_cast<const char*>(data), size) : std::string();
}

Status Exec(sqlite3* db, const char* sql) {
  char* err = nullptr;
  const int rc = sqlite3_exec(db, sql, nullptr, nullptr, &err);
  sqlite3_free(err);
  return rc == SQLITE_OK ? Status::OK() : SqliteStatus(db, rc, "create auth tables");
}

}  // namespace

Status SqliteAuthTables::Create(SqliteBackend* backend) {
  return Exec(backend->handle(), kAuthSchema);
}

Status SqliteAuthTables::PutUser(const AuthUser& user) {
  sqlite3* db = backend_->handle();
  NATCD_RETURN_IF_ERROR(DeleteUser(user.name));
  Statement put(db, "INSERT INTO auth_user (name, password_hash) VALUES (?, CAST(? AS TEXT))");
  NATCD_RETURN_IF_ERROR(put.Run({user.name, user.password_hash}));
  Statement role(db, "INSERT OR IGNORE INTO auth_user_role (user, role) VALUES (?, ?)");
  for (const std::string& r : user.roles) NATCD_RETURN_IF_ERROR(role.Run({user.name, r}));
  return Status::OK();
}

Status SqliteAuthTables::DeleteUser(const std::string& name) {
  sqlite3* db = backend_->handle();
  Statement user(db, "DELETE FROM auth_user WHERE name = ?");
  NATCD_RETURN_IF_ERROR(user.Run({name}));
  Statement roles(db, "DELETE FROM auth_user_role WHERE user = ?");
  return roles.Run({name});
}

Status SqliteAuthTables::PutRole(const AuthRole& role) {
  sqlite3* db = backend_->handle();
  NATCD_RETURN_IF_ERROR(DeleteRole(role.name));
  Statement put(db, "INSERT INTO auth_role (name) VALUES (?)");
  NATCD_RETURN_IF_ERROR(put.Run({role.name}));
  Statement perm(db,
                 "INSERT OR REPLACE INTO auth_permission (role, key, range_end, type) "
                 "VALUES (?, ?, ?, CAST(? AS INTEGER))");
  for (const Permission& p : role.permissions) {
    const std::string type = std::to_string(static_cast<int>(p.type));
    NATCD_RETURN_IF_ERROR(perm.Run({role.name, p.key, p.range_end, type}));
  }
  return Status::OK();
}

Status SqliteAuthTables::DeleteRole(const std::string& name) {
  sqlite3* db = backend_->handle();
  Statement role(db, "DELETE FROM auth_role WHERE name = ?");
  NATCD_RETURN_IF_ERROR(role.Run({name}));
  Statement perms(db, "DELETE FROM auth_permission WHERE role = ?");
  return perms.Run({name});
}

Status SqliteAuthTables::ScanUsers(const std::function<void(AuthUser&&)>& visit) {
  sqlite3* db = backend_->handle();
  Statement users(db, "SELECT name, password_hash FROM auth_user ORDER BY name");
  if (!users.ok()) return users.status();
  Statement roles(db, "SELECT role FROM auth_user_role WHERE user = ? ORDER BY role");
  if (!roles.ok()) return roles.status();
  int rc;
  while ((rc = sqlite3_step(users.get())) == SQLITE_ROW) {
    AuthUser user{ColumnText(users.get(), 0), ColumnText(users.get(), 1), {}};
    sqlite3_bind_blob64(roles.get(), 1, user.name.data(), user.name.size(), SQLITE_TRANSIENT);
    int role_rc;
    while ((role_rc = sqlite3_step(roles.get())) == SQLITE_ROW) {
      user.roles.push_back(ColumnText(roles.get(), 0));
    }
    sqlite3_reset(roles.get());
    if (role_rc != SQLITE_DONE) return SqliteStatus(db, role_rc, "scan auth_user_role");
    visit(std::move(user));
  }
  return rc == SQLITE_DONE ? Status::OK() : SqliteStatus(db, rc, "scan auth_user");
}

Status SqliteAuthTables::ScanRoles(const std::function<void(AuthRole&&)>& visit) {
  sqlite3* db = backend_->handle();
  Statement roles(db, "SELECT name FROM auth_role ORDER BY name");
  if (!roles.ok()) return roles.status();
  Statement perms(db,
                  "SELECT key, range_end, type FROM auth_permission WHERE role = ? "
                  "ORDER BY key, range_end");
  if (!perms.ok()) return perms.status();
  int rc;
  while ((rc = sqlite3_step(roles.get())) == SQLITE_ROW) {
    AuthRole role{ColumnText(roles.get(), 0), {}};
    sqlite3_bind_blob64(perms.get(), 1, role.name.data(), role.name.size(), SQLITE_TRANSIENT);
    int perm_rc;
    while ((perm_rc = sqlite3_step(perms.get())) == SQLITE_ROW) {
      const int64_t type = sqlite3_column_int64(perms.get(), 2);
      if (type < 0 || type > static_cast<int64_t>(PermissionType::kReadWrite)) {
        sqlite3_reset(perms.get());
        return Status::Corruption("auth_permission of role " + role.name + " has type " +
                                  std::to_string(type));
      }
      role.permissions.push_back(Permission{static_cast<PermissionType>(type),
                                            ColumnText(perms.get(), 0),
                                            ColumnText(perms.get(), 1)});
    }
    sqlite3_reset(perms.get());
    if (perm_rc != SQLITE_DONE) return SqliteStatus(db, perm_rc, "scan auth_permission");
    visit(std::move(role));
  }
  return rc == SQLITE_DONE ? Status::OK() : SqliteStatus(db, rc, "scan auth_role");
}

}  // namespace natcd
