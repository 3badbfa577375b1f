// natcdctl end to end: lease grant, revoke, timetolive, list, keep-alive.
#include "natcdctl/natcdctl_fixture.h"

namespace natcd::testing {
namespace {

// "lease 694d7a1a2b3c4d5e granted with TTL(10s)\n" -> the ID.
std::string Grant(int ttl) {
  CtlResult r = NatcdctlTest::Ctl({"lease", "grant", std::to_string(ttl)});
  std::smatch m;
  std::regex want("lease ([0-9a-f]{16}) granted with TTL\\(" + std::to_string(ttl) + "s\\)\n");
  EXPECT_TRUE(std::regex_match(r.out, m, want)) << r.out << r.err;
  return m.size() > 1 ? m[1].str() : "";
}

TEST_F(NatcdctlTest, LeaseGrantTimeToLiveListRevoke) {
  std::string id = Grant(100);
  ASSERT_FALSE(id.empty());
  ASSERT_EQ(Ctl({"put", "/ls1/a", "1", "--lease", id}).code, 0);
  ASSERT_EQ(Ctl({"put", "/ls1/b", "2", "--lease=" + id}).code, 0);

  CtlResult ttl = Ctl({"lease", "timetolive", id});
  EXPECT_TRUE(std::regex_match(
      ttl.out,
      std::regex("lease " + id + " granted with TTL\\(100s\\), remaining\\((99|100)s\\)\n")))
      << ttl.out;
  CtlResult keys = Ctl({"lease", "timetolive", id, "--keys"});
  EXPECT_TRUE(
      std::regex_match(keys.out, std::regex("lease " + id +
                                            " granted with TTL\\(100s\\), remaining\\([0-9]+s\\), "
                                            "attached keys\\(\\[/ls1/a /ls1/b\\]\\)\n")))
      << keys.out;

  CtlResult list = Ctl({"lease", "list"});
  EXPECT_EQ(list.code, 0);
  EXPECT_TRUE(std::regex_search(list.out, std::regex("^found [0-9]+ leases\n"))) << list.out;
  EXPECT_NE(list.out.find("\n" + id + "\n"), std::string::npos) << list.out;

  CtlResult revoke = Ctl({"lease", "revoke", id});
  EXPECT_EQ(revoke.code, 0) << revoke.err;
  EXPECT_EQ(revoke.out, "lease " + id + " revoked\n");
  // Its keys went with it.
  EXPECT_EQ(Ctl({"get", "/ls1/", "--prefix", "--count-only"}).out, "0\n");
  EXPECT_EQ(Ctl({"lease", "timetolive", id}).out, "lease " + id + " already expired\n");
  CtlResult again = Ctl({"lease", "revoke", id});
  EXPECT_EQ(again.code, 1);
  // etcdctl 3.4's words (tests/grpc/etcdctl_watch_lease_test.cc).
  EXPECT_EQ(again.err, "Error: failed to revoke lease (etcdserver: requested lease not found)\n");
  EXPECT_NE(Ctl({"lease", "revoke", "not-hex"}).code, 0);
}

TEST_F(NatcdctlTest, LeaseJsonAndFields) {
  CtlResult json = Ctl({"lease", "grant", "50", "-w", "json"});
  EXPECT_TRUE(std::regex_match(
      json.out, std::regex("\\{\"cluster_id\":[0-9]+,\"member_id\":[0-9]+,"
                           "(\"revision\":[0-9]+,)?\"raft_term\":[0-9]+,\"ID\":[0-9]+,"
                           "\"TTL\":50\\}\n")))
      << json.out;
  CtlResult fields = Ctl({"lease", "grant", "50", "-w", "fields"});
  EXPECT_TRUE(std::regex_search(fields.out, std::regex("\"ID\" : [0-9]+\n\"TTL\" : 50\n$")))
      << fields.out;
}

TEST_F(NatcdctlTest, LeaseKeepAliveOnceAndContinuous) {
  std::string id = Grant(3);
  ASSERT_FALSE(id.empty());
  CtlResult once = Ctl({"lease", "keep-alive", "--once", id});
  EXPECT_EQ(once.code, 0) << once.err;
  EXPECT_EQ(once.out, "lease " + id + " keepalived with TTL(3)\n");

  // Renews every TTL/3: two renewals within ~1.5 s.
  auto ka = Start({"lease", "keep-alive", id});
  std::string line = "lease " + id + " keepalived with TTL(3)\n";
  EXPECT_TRUE(ka->WaitFor(line + line, std::chrono::seconds(5))) << ka->Output();
  // Revoked under it: etcdctl's message, and it ends.
  ASSERT_EQ(Ctl({"lease", "revoke", id}).code, 0);
  EXPECT_TRUE(ka->WaitFor("lease " + id + " expired or revoked.\n", std::chrono::seconds(5)))
      << ka->Output();
  EXPECT_EQ(ka->Stop(), 0);

  CtlResult gone = Ctl({"lease", "keep-alive", "--once", id});
  EXPECT_NE(gone.code, 0);
  EXPECT_EQ(gone.err, "Error: etcdserver: requested lease not found\n");
}

}  // namespace
}  // namespace natcd::testing

namespace natcd::testing {
namespace {

// natcd restarts under a running keep-alive: renewals resume (natcd keeps
// leases across a restart).
TEST_F(NatcdctlTest, LeaseKeepAliveSurvivesANatcdRestart) {
  CtlResult grant = Ctl({"lease", "grant", "6"});
  ASSERT_EQ(grant.code, 0) << grant.err;
  std::string id = grant.out.substr(6, 16);
  std::string line = "lease " + id + " keepalived with TTL(6)\n";
  auto ka = Start({"--command-timeout", "500ms", "lease", "keep-alive", id});
  ASSERT_TRUE(ka->WaitFor(line));
  ASSERT_EQ(natcd_->Stop(), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));  // a renewal fails
  ASSERT_TRUE(natcd_->Start());
  EXPECT_TRUE(ka->WaitFor("keepalive failed")) << ka->Output();
  std::string before = ka->Output();
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (ka->Output().size() == before.size() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(ka->Output().substr(before.size()), line) << ka->Output();
  EXPECT_EQ(ka->Stop(), 0);
  EXPECT_EQ(Ctl({"lease", "revoke", id}).code, 0);
}

}  // namespace
}  // namespace natcd::testing
