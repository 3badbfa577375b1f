// Corruption checks in a cluster of three natcd processes (etcd's
// --experimental-initial-corrupt-check and --experimental-corrupt-check-time):
// a member whose database was altered while it was down refuses to start
// with the initial check and exits, starts without it, and is then found by
// the leader's periodic check (CORRUPT raised for it); a healthy member
// starts with the check, passing over a member that is down.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>

#include <cinttypes>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "natcd/natcd_helpers.h"
#include "server/member_identity.h"
#include "support/natcd_process.h"
#include "support/nats_server.h"
#include "support/wire_client.h"
#include "testutil.h"

namespace natcd::testing {
namespace {

const std::vector<std::string> kNames = {"n1", "n2", "n3"};

std::string Hex(uint64_t id) {
  char buf[17];
  snprintf(buf, sizeof buf, "%" PRIx64, id);
  return buf;
}
std::string Hex16(uint64_t id) {
  char buf[17];
  snprintf(buf, sizeof buf, "%016" PRIx64, id);
  return buf;
}

// Rewrites the stored value of `key` behind natcd's back (natcd is not
// running): what a disk or a bug could do. Whether one row changed.
bool AlterValue(const std::string& db_path, const std::string& key) {
  sqlite3* db = nullptr;
  if (sqlite3_open(db_path.c_str(), &db) != SQLITE_OK) return false;
  sqlite3_stmt* stmt = nullptr;
  bool changed = false;
  if (sqlite3_prepare_v2(db, "UPDATE kv SET value = CAST('tampered' AS BLOB) WHERE key = ?", -1,
                         &stmt, nullptr) == SQLITE_OK &&
      sqlite3_bind_blob(stmt, 1, key.data(), static_cast<int>(key.size()), SQLITE_TRANSIENT) ==
          SQLITE_OK &&
      sqlite3_step(stmt) == SQLITE_DONE) {
    changed = sqlite3_changes(db) == 1;
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return changed;
}

class CorruptCheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.Start());
    for (const std::string& name : kNames) {
      dirs_[name] = std::make_unique<TempDir>();
      ASSERT_TRUE(Restart(name, {}));
    }
    client_ = std::make_unique<WireClient>(server_.url());
    ASSERT_TRUE(client_->connected());
    ASSERT_TRUE(WaitFor([&] { return Leader() != 0; }, 10'000)) << "no leader elected";
  }
  void TearDown() override {
    if (!HasFailure()) return;
    for (auto& [name, m] : members_) std::cerr << "--- " << name << " log:\n" << m->Log() << "\n";
  }

  // (Re)starts `name` on its data directory with the cluster's flags and
  // `extra`: whether it serves.
  ::testing::AssertionResult Restart(const std::string& name,
                                     const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"--name",
                                     name,
                                     "--initial-cluster",
                                     "n1,n2,n3",
                                     "--heartbeat-interval",
                                     "50",
                                     "--election-timeout",
                                     "500",
                                     "--log-level",
                                     "warn",
                                     "--experimental-corrupt-check-time",
                                     "200ms"};
    args.insert(args.end(), extra.begin(), extra.end());
    members_[name] = std::make_unique<NatcdProcess>(server_.url(), dirs_[name]->path(), args);
    return members_[name]->Start();
  }

  uint64_t Leader() {
    Natcd__V1__StatusRequest req;
    natcd__v1__status_request__init(&req);
    WireReply reply = client_->Call("maint.status", &req.base);
    if (!reply.ok()) return 0;
    auto status = WireClient::Decode<Natcd__V1__StatusResponse>(
        &natcd__v1__status_response__descriptor, reply);
    return status ? status->leader : 0;
  }

  // Member `name`'s own HashKV at its current revision (P.fwd.<ID>.maint.
  // hashkv); hash -1 when it does not answer.
  std::pair<int64_t, int64_t> HashOf(const std::string& name) {
    Natcd__V1__HashKVRequest req;
    natcd__v1__hash_kvrequest__init(&req);
    std::string body(protobuf_c_message_get_packed_size(&req.base), '\0');
    protobuf_c_message_pack(&req.base, reinterpret_cast<uint8_t*>(body.data()));
    WireReply reply = client_->Raw("natcd.fwd." + Hex16(server::MemberIdOf(name)) + ".maint.hashkv",
                                   body, {}, 1'000);
    if (!reply.ok()) return {-1, -1};
    auto hash = WireClient::Decode<Natcd__V1__HashKVResponse>(
        &natcd__v1__hash_kvresponse__descriptor, reply);
    if (!hash) return {-1, -1};
    return {hash->hash, hash->hash_revision};
  }
  bool AllAgree() {
    const auto first = HashOf(kNames[0]);
    if (first.first < 0) return false;
    for (const std::string& name : kNames) {
      if (HashOf(name) != first) return false;
    }
    return true;
  }

  std::string DbPath(const std::string& name) { return dirs_[name]->File("natcd.db"); }

  NatsServer server_;
  std::map<std::string, std::unique_ptr<TempDir>> dirs_;
  std::map<std::string, std::unique_ptr<NatcdProcess>> members_;
  std::unique_ptr<WireClient> client_;
};

TEST_F(CorruptCheckTest, AnAlteredMemberRefusesToStartAndIsFoundByTheLeader) {
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(PutReply(client_.get(), "/cc/" + std::to_string(i), "v" + std::to_string(i)).ok());
  }
  ASSERT_TRUE(WaitFor([&] { return AllAgree(); }, 5'000)) << "the members never agreed";

  // A healthy member restarted with the check starts; a member that is
  // down (n3) is passed over.
  ASSERT_EQ(members_["n3"]->Stop(), 0);
  ASSERT_EQ(members_["n2"]->Stop(), 0);
  ASSERT_TRUE(Restart("n2", {"--experimental-initial-corrupt-check"}));
  const std::string n2_log = members_["n2"]->Log();
  EXPECT_NE(n2_log.find("natcd n2: failed hash kv request ("), std::string::npos) << n2_log;
  EXPECT_NE(n2_log.find("remote-peer-id " + Hex(server::MemberIdOf("n3"))), std::string::npos);
  EXPECT_NE(n2_log.find("natcd n2: initial corruption checking passed; no corruption"),
            std::string::npos)
      << n2_log;

  // n3's database altered while it was down: with the check it does not
  // start, and exits with an error.
  ASSERT_TRUE(AlterValue(DbPath("n3"), "/cc/3"));
  EXPECT_FALSE(Restart("n3", {"--experimental-initial-corrupt-check"}));
  EXPECT_FALSE(members_["n3"]->running());
  const int status = members_["n3"]->start_exit_status();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << status;
  const std::string n3_log = members_["n3"]->Log();
  EXPECT_NE(n3_log.find("natcd n3: found different hash values from remote peer ("),
            std::string::npos)
      << n3_log;
  EXPECT_NE(n3_log.find(Hex(server::MemberIdOf("n3")) + " found data inconsistency with peers"),
            std::string::npos)
      << n3_log;
  // (The log holds n3's first run too.)
  const size_t checked = n3_log.find("natcd n3: starting initial corruption check");
  ASSERT_NE(checked, std::string::npos) << n3_log;
  EXPECT_EQ(n3_log.find("serving", checked), std::string::npos) << n3_log;

  // Without the check it starts; the leader's periodic check then raises
  // CORRUPT for it, and the cluster refuses KV requests.
  ASSERT_TRUE(Restart("n3", {}));
  Natcd__V1__AlarmRequest list;
  natcd__v1__alarm_request__init(&list);
  Unpacked<Natcd__V1__AlarmResponse> alarms;
  EXPECT_TRUE(WaitFor(
      [&] {
        WireReply reply = client_->Call("maint.alarm", &list.base);
        if (!reply.ok()) return false;
        alarms = WireClient::Decode<Natcd__V1__AlarmResponse>(
            &natcd__v1__alarm_response__descriptor, reply);
        return alarms && alarms->n_alarms > 0;
      },
      5'000))
      << "no alarm raised";
  ASSERT_TRUE(alarms && alarms->n_alarms == 1);
  EXPECT_EQ(alarms->alarms[0]->memberid, server::MemberIdOf("n3"));
  EXPECT_EQ(alarms->alarms[0]->alarm, NATCD__V1__ALARM_TYPE__CORRUPT);
  WireReply refused = PutReply(client_.get(), "/cc/after", "x");
  EXPECT_EQ(refused.error, "ErrCorrupt: etcdserver: corrupt cluster");
}

}  // namespace
}  // namespace natcd::testing
