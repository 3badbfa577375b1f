// The one seam where SQLite result codes become natcd Statuses.
#include <sqlite3.h>

#include <string>

#include "storage/sqlite_backend.h"

namespace natcd {

Status SqliteStatus(sqlite3* db, int rc, const char* what) {
  int extended = db ? sqlite3_extended_errcode(db) : rc;
  std::string text = std::string(what) + ": " + (db ? sqlite3_errmsg(db) : sqlite3_errstr(rc)) +
                     " (sqlite code " + std::to_string(extended) + ")";
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return Status::Busy(text);
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return Status::Corruption(text);
    default:
      return Status::IOError(text);
  }
}

}  // namespace natcd
