// A data directory written by natcd before the Raft log file (its log in
// the SQLite database) is migrated when natcd starts on it: the data and
// the lease are served as they were, the log moves to natcd.db.raftlog, and
// the member goes on writing from where it was, across a kill -9.
//
// tests/testdata/migration/natcd-before-log-file.db was written by natcd
// at commit 6d2fe81 (the log in raft_log_run): `natcd --data-dir D --name
// n1`, then with natcdctl: put /old/k1..k5 = v1..v5, put /old/k1 v1b, del
// /old/k5, lease grant 3600 (7e51a7a62c1e974e), then SIGTERM. Its log holds
// entries 2..11, its hard state commit 3 (written with the term only), its
// applied index 11, revision 7.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <string>

#include "natcd/natcd_helpers.h"
#include "support/natcd_process.h"
#include "support/nats_server.h"
#include "support/wire_client.h"
#include "testutil.h"

namespace natcd::testing {
namespace {

std::string Fixture() {
  const std::string here = __FILE__;
  return here.substr(0, here.rfind('/')) + "/../testdata/migration/natcd-before-log-file.db";
}

int64_t CountRows(const std::string& db_path, const char* sql) {
  sqlite3* db = nullptr;
  int64_t n = -1;
  if (sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr) == SQLITE_OK &&
        sqlite3_step(stmt) == SQLITE_ROW) {
      n = sqlite3_column_int64(stmt, 0);
    }
    sqlite3_finalize(stmt);
  }
  sqlite3_close(db);
  return n;
}

void ExpectOldData(WireClient* client) {
  auto all = client->Range("/old/", "/old0");
  ASSERT_TRUE(all);
  ASSERT_EQ(all->n_kvs, 4u);
  EXPECT_EQ(Str(all->kvs[0]->key), "/old/k1");
  EXPECT_EQ(Str(all->kvs[0]->value), "v1b");
  EXPECT_EQ(all->kvs[0]->version, 2);
  EXPECT_EQ(Str(all->kvs[3]->value), "v4");
  auto ttl = TimeToLive(client, 0x7e51a7a62c1e974e);
  ASSERT_TRUE(ttl);
  EXPECT_GT(ttl->ttl, 0) << "the lease did not survive the migration";
}

TEST(MigrationTest, ADataDirectoryFromBeforeTheLogFileIsMigrated) {
  ASSERT_TRUE(std::filesystem::exists(Fixture())) << Fixture();
  NatsServer server;
  ASSERT_TRUE(server.Start());
  TempDir dir;
  const std::string db = dir.path() + "/natcd.db";
  std::filesystem::copy_file(Fixture(), db);
  {
    NatcdProcess n1(server.url(), dir.path(), {"--name", "n1", "--log-level", "warn"});
    ASSERT_TRUE(n1.Start());
    EXPECT_NE(n1.Log().find("moved the Raft log out of"), std::string::npos) << n1.Log();
    WireClient client(server.url());
    ASSERT_TRUE(client.connected());
    ASSERT_NO_FATAL_FAILURE(ExpectOldData(&client));
    EXPECT_EQ(client.Put("/new/a", "x"), 8) << "revisions do not go on from the old ones";
    n1.Kill();
  }
  EXPECT_TRUE(std::filesystem::is_directory(db + ".raftlog"));
  EXPECT_EQ(CountRows(db, "SELECT count(*) FROM raft_log_run"), 0);
  EXPECT_EQ(CountRows(db,
                      "SELECT count(*) FROM raft_state WHERE name IN ('hard_state', "
                      "'log_start')"),
            0);
  // Once: the restarted member reads its log file, applies nothing twice.
  NatcdProcess again(server.url(), dir.path(), {"--name", "n1", "--log-level", "warn"});
  ASSERT_TRUE(again.Start());
  // (Its log file in the data directory holds the first run's lines too.)
  const std::string log = again.Log();
  const size_t moved = log.find("moved the Raft log");
  ASSERT_NE(moved, std::string::npos) << log;
  EXPECT_EQ(log.find("moved the Raft log", moved + 1), std::string::npos) << log;
  WireClient client(server.url());
  ASSERT_TRUE(client.connected());
  ASSERT_NO_FATAL_FAILURE(ExpectOldData(&client));
  auto added = client.Range("/new/a");
  ASSERT_TRUE(added);
  ASSERT_EQ(added->n_kvs, 1u);
  EXPECT_EQ(added->kvs[0]->mod_revision, 8);
  EXPECT_EQ(client.Put("/new/b", "y"), 9);
}

}  // namespace
}  // namespace natcd::testing
