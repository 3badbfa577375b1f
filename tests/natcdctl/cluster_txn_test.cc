// natcdctl end to end: endpoint status, member list, move-leader, txn, lock,
// elect.
#include "natcdctl/natcdctl_fixture.h"

namespace natcd::testing {
namespace {

TEST_F(NatcdctlTest, MemberAddPromoteRemove) {
  // A learner added to a single member commits at once (it need not be
  // running); promoting it is refused until it has caught up.
  CtlResult added = Ctl({"member", "add", "n9", "--learner"});
  ASSERT_EQ(added.code, 0) << added.err;
  EXPECT_TRUE(
      std::regex_search(added.out, std::regex("^Member [0-9a-f]+ added to cluster [0-9a-f]+\n")))
      << added.out;
  EXPECT_NE(added.out.find("NATCD_INITIAL_CLUSTER_STATE=\"existing\""), std::string::npos);
  CtlResult members = Ctl({"member", "list"});
  std::smatch m;
  ASSERT_TRUE(
      std::regex_search(members.out, m, std::regex("([0-9a-f]+), started, n9, [^,]*, [^,]*, true")))
      << members.out;
  std::string id = m[1];
  CtlResult promoted = Ctl({"member", "promote", id});
  EXPECT_NE(promoted.code, 0);
  EXPECT_NE(promoted.err.find("in sync with leader"), std::string::npos) << promoted.err;
  CtlResult removed = Ctl({"member", "remove", id});
  ASSERT_EQ(removed.code, 0) << removed.err;
  EXPECT_EQ(removed.out.rfind("Member " + id + " removed from cluster ", 0), 0u) << removed.out;
  EXPECT_EQ(Ctl({"member", "list"}).out.find("n9"), std::string::npos);
  EXPECT_NE(Ctl({"member", "remove", "zz"}).code, 0) << "not a hex ID";
}

TEST_F(NatcdctlTest, MemberUpdateSetsPeerUrlsAsEtcdctl) {
  CtlResult added = Ctl({"member", "add", "n9", "--learner"});
  ASSERT_EQ(added.code, 0) << added.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(added.out, m, std::regex("^Member ([0-9a-f]+) added")));
  const std::string id = m[1];
  CtlResult updated =
      Ctl({"member", "update", id, "--peer-urls=http://n9:2380,http://10.0.0.9:2380"});
  ASSERT_EQ(updated.code, 0) << updated.err;
  EXPECT_TRUE(
      std::regex_match(updated.out, std::regex("Member " + id + " updated in cluster [0-9a-f]+\n")))
      << updated.out;
  CtlResult listed = Ctl({"member", "list"});
  EXPECT_NE(listed.out.find(id + ", started, n9, http://n9:2380,http://10.0.0.9:2380, , true\n"),
            std::string::npos)
      << listed.out;
  // etcd's refusals and etcdctl's argument checks.
  const std::string list = Ctl({"member", "list"}).out;
  const std::string self = list.substr(0, list.find(','));
  CtlResult taken = Ctl({"member", "update", self, "--peer-urls", "http://10.0.0.9:2380"});
  EXPECT_NE(taken.code, 0);
  EXPECT_NE(taken.err.find("etcdserver: Peer URLs already exists"), std::string::npos) << taken.err;
  CtlResult unknown = Ctl({"member", "update", "1234", "--peer-urls", "http://x:2380"});
  EXPECT_NE(unknown.code, 0);
  EXPECT_NE(unknown.err.find("etcdserver: member not found"), std::string::npos) << unknown.err;
  CtlResult none = Ctl({"member", "update", id});
  EXPECT_NE(none.code, 0);
  EXPECT_NE(none.err.find("member peer urls not provided"), std::string::npos) << none.err;
  // The suite's member is shared: the learner goes again.
  EXPECT_EQ(Ctl({"member", "remove", id}).code, 0);
}

TEST_F(NatcdctlTest, EndpointStatusAndMemberList) {
  CtlResult status = Ctl({"endpoint", "status"});
  EXPECT_EQ(status.code, 0) << status.err;
  // endpoint, ID, version, DB size, is leader, is learner, raft term, raft index,
  // raft applied index, errors.
  EXPECT_TRUE(std::regex_match(
      status.out, std::regex(Url() + ", [0-9a-f]+, [^,]+, [0-9.]+ [kMG]?B, true, false, [0-9]+, "
                                     "[0-9]+, [0-9]+, \n")))
      << status.out;
  CtlResult table = Ctl({"endpoint", "status", "-w", "table"});
  EXPECT_NE(table.out.find(" ENDPOINT "), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("| RAFT TERM |"), std::string::npos) << table.out;
  CtlResult json = Ctl({"endpoint", "status", "-w", "json"});
  EXPECT_EQ(json.out.rfind("[{\"Endpoint\":\"" + Url() + "\",\"Status\":{\"header\":", 0), 0u)
      << json.out;

  CtlResult members = Ctl({"member", "list"});
  EXPECT_EQ(members.code, 0) << members.err;
  EXPECT_TRUE(std::regex_match(members.out,
                               std::regex("[0-9a-f]+, started, natcd-1, [^,]*, [^,]*, false\n")))
      << members.out;
  // The member ID is the status's.
  std::string id = members.out.substr(0, members.out.find(','));
  EXPECT_NE(status.out.find(", " + id + ", "), std::string::npos);
  EXPECT_NE(Ctl({"member", "list", "-w", "fields"}).out.find("\"Name\" : \"natcd-1\""),
            std::string::npos);
}

TEST_F(NatcdctlTest, MoveLeaderToItselfAndToAStranger) {
  // A single member leads already: moving leadership to it is a no-op; a
  // learner or an unknown member cannot lead.
  CtlResult members = Ctl({"member", "list"});
  std::string id = members.out.substr(0, members.out.find(','));
  CtlResult moved = Ctl({"move-leader", id});
  ASSERT_EQ(moved.code, 0) << moved.err;
  EXPECT_EQ(moved.out, "Leadership transferred from " + id + " to " + id + "\n");
  CtlResult stranger = Ctl({"move-leader", "1234"});
  EXPECT_NE(stranger.code, 0);
  EXPECT_NE(stranger.err.find("bad leader transferee"), std::string::npos) << stranger.err;
  EXPECT_NE(Ctl({"move-leader", "zz"}).code, 0) << "not a hex ID";
}

TEST_F(NatcdctlTest, TxnFromStdinLikeEtcdctl) {
  ASSERT_EQ(Ctl({"put", "/tx/k", "5"}).code, 0);
  std::string input =
      "value(\"/tx/k\") = \"5\"\n"
      "mod(\"/tx/k\") > \"0\"\n"
      "\n"
      "put /tx/k 6\n"
      "put \"/tx/with space\" \"a b\"\n"
      "get /tx/k\n"
      "\n"
      "put /tx/failed yes\n";
  CtlResult ok = Ctl({"txn"}, input);
  EXPECT_EQ(ok.code, 0) << ok.err;
  EXPECT_EQ(ok.out, "SUCCESS\n\nOK\n\nOK\n\n/tx/k\n6\n");  // ops apply in order
  EXPECT_EQ(Ctl({"get", "/tx/k", "--print-value-only"}).out, "6\n");
  EXPECT_EQ(Ctl({"get", "/tx/with space", "--print-value-only"}).out, "a b\n");

  // The same again fails now (value is 6): the failure branch runs.
  CtlResult fail = Ctl({"txn"}, input);
  EXPECT_EQ(fail.out, "FAILURE\n\nOK\n");
  EXPECT_EQ(Ctl({"get", "/tx/failed", "--print-value-only"}).out, "yes\n");

  // version, create, del with --prefix, and != / <.
  std::string more =
      "version(\"/tx/k\") != \"1\"\n"
      "create(\"/tx/k\") < \"1000000\"\n"
      "\n"
      "del /tx/ --prefix\n"
      "\n";
  CtlResult del = Ctl({"txn"}, more);
  EXPECT_EQ(del.out, "SUCCESS\n\n3\n") << del.err;

  CtlResult bad = Ctl({"txn"}, "nonsense(\"k\" = \"1\"\n\n\n");
  EXPECT_NE(bad.code, 0);
  EXPECT_NE(bad.err.find("malformed comparison"), std::string::npos) << bad.err;

  CtlResult json = Ctl({"txn", "-w", "json"}, "\nget /tx/none\n\n");
  EXPECT_NE(json.out.find("\"succeeded\":true"), std::string::npos) << json.out;
  EXPECT_NE(json.out.find("\"response_range\""), std::string::npos) << json.out;
}

TEST_F(NatcdctlTest, LockRunsACommandHoldingTheLock) {
  // The command sees the lock key in ETCD_LOCK_KEY and in the store.
  CtlResult r =
      Ctl({"lock", "/locks/l1", "--", "sh", "-c",
           "echo \"$ETCD_LOCK_KEY\"; " + Binary() + " get --prefix --keys-only /locks/l1/"},
          "", {{"NATCDCTL_NATS_URL", Url()}});
  EXPECT_EQ(r.code, 0) << r.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_match(r.out, m, std::regex("(/locks/l1/[0-9a-f]+)\n(.*)\n\n"))) << r.out;
  EXPECT_EQ(m[1].str(), m[2].str());
  // Released afterwards; the command's exit status is natcdctl's.
  EXPECT_EQ(Ctl({"get", "/locks/l1/", "--prefix", "--count-only"}).out, "0\n");
  EXPECT_EQ(Ctl({"lock", "/locks/l1", "--", "sh", "-c", "exit 3"}).code, 3);
}

TEST_F(NatcdctlTest, LockWaitsForTheHolder) {
  auto holder = Start({"lock", "/locks/l2"});
  ASSERT_TRUE(holder->WaitFor("/locks/l2/")) << holder->Output();
  std::string out = dir_->File("second-lock.out");
  auto waiter = Start({"lock", "/locks/l2", "--", "sh", "-c", "echo got it > " + out});
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(ReadFile(out), "");  // still held
  EXPECT_EQ(holder->Stop(), 0);  // unlocks
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (ReadFile(out).empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(ReadFile(out), "got it\n");
}

TEST_F(NatcdctlTest, ElectCampaignsAndListens) {
  auto leader = Start({"elect", "/elections/e1", "p1"});
  ASSERT_TRUE(leader->WaitFor("\np1\n")) << leader->Output();
  EXPECT_TRUE(std::regex_match(leader->Output(), std::regex("/elections/e1/[0-9a-f]+\np1\n")))
      << leader->Output();
  auto listener = Start({"elect", "--listen", "/elections/e1"});
  EXPECT_TRUE(listener->WaitFor(leader->Output())) << listener->Output();

  auto second = Start({"elect", "/elections/e1", "p2"});
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(second->Output(), "");  // not leading yet
  EXPECT_EQ(leader->Stop(), 0);     // resigns
  EXPECT_TRUE(second->WaitFor("\np2\n")) << second->Output();
  EXPECT_TRUE(listener->WaitFor("\np2\n")) << listener->Output();
  EXPECT_NE(Ctl({"elect", "/elections/e1"}).code, 0);  // no proposal without --listen
}

}  // namespace
}  // namespace natcd::testing
