// etcdctl 3.4 against natcd's gRPC API: watches (history, prev_kv,
// interactive), leases (grant, attach, time-to-live, keep-alive, revoke,
// list) and the recipes etcdctl builds on them (lock, elect).
#include <regex>

#include "grpc/etcdctl_fixture.h"

namespace natcd::testing {
namespace {

using WatchLeaseTest = EtcdctlTest;

std::string LeaseIdOf(const std::string& granted) {
  std::smatch m;
  if (!std::regex_search(granted, m, std::regex("lease ([0-9a-f]+) granted"))) return "";
  return m[1];
}

TEST_F(WatchLeaseTest, WatchSeesPutsAndDeletesWithPrevKv) {
  const int64_t now = HeaderRevision(Run({"get", "/w/", "-w", "json"}).out);
  auto watch = Start({"watch", "/w/", "--prefix", "--prev-kv", "--rev", std::to_string(now + 1)});
  ASSERT_EQ(Run({"put", "/w/a", "1"}).code, 0);
  ASSERT_EQ(Run({"put", "/w/a", "2"}).code, 0);
  ASSERT_EQ(Run({"del", "/w/a"}).code, 0);
  // etcdctl prints an event's type, its prev_kv (when there is one) and its kv.
  ASSERT_TRUE(watch->WaitFor("DELETE\n/w/a\n2\n/w/a\n\n")) << watch->Output();
  EXPECT_EQ(watch->Output(), "PUT\n/w/a\n1\nPUT\n/w/a\n1\n/w/a\n2\nDELETE\n/w/a\n2\n/w/a\n\n");
}

TEST_F(WatchLeaseTest, WatchFromARevisionReplaysHistory) {
  ASSERT_EQ(Run({"put", "/h/k", "one"}).code, 0);
  CommandResult json = Run({"get", "/h/k", "-w", "json"});
  std::smatch m;
  ASSERT_TRUE(std::regex_search(json.out, m, std::regex("\"mod_revision\":([0-9]+)")));
  const std::string rev = m[1];
  ASSERT_EQ(Run({"put", "/h/k", "two"}).code, 0);
  auto watch = Start({"watch", "/h/k", "--rev", rev});
  ASSERT_TRUE(watch->WaitFor("two\n")) << watch->Output();
  EXPECT_EQ(watch->Output(), "PUT\n/h/k\none\nPUT\n/h/k\ntwo\n");
}

TEST_F(WatchLeaseTest, InteractiveWatch) {
  const int n = counter_++;
  const std::string out = dir_->File("iw-" + std::to_string(n));
  int fds[2];
  ASSERT_EQ(pipe2(fds, O_CLOEXEC), 0);
  pid_t pid = SpawnProcess(Argv({"watch", "-i"}), "", out, out, {{"ETCDCTL_API", "3"}}, fds[0]);
  close(fds[0]);
  BackgroundProcess watch(pid, out, fds[1]);
  const int64_t now = HeaderRevision(Run({"get", "/iw/a", "-w", "json"}).out);
  ASSERT_TRUE(watch.Send("watch --rev " + std::to_string(now + 1) + " /iw/a\n"));
  ASSERT_EQ(Run({"put", "/iw/a", "x"}).code, 0);
  ASSERT_TRUE(watch.WaitFor("PUT\n/iw/a\nx\n")) << watch.Output();
}

TEST_F(WatchLeaseTest, LeaseLifecycle) {
  CommandResult r = Run({"lease", "grant", "60"});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string id = LeaseIdOf(r.out);
  ASSERT_FALSE(id.empty()) << r.out;
  EXPECT_EQ(r.out, "lease " + id + " granted with TTL(60s)\n");
  ASSERT_EQ(Run({"put", "/l/k", "v", "--lease", id}).code, 0);
  r = Run({"lease", "timetolive", id, "--keys"});
  EXPECT_TRUE(std::regex_match(
      r.out, std::regex("lease " + id + " granted with TTL\\(60s\\), remaining\\((59|60)s\\), " +
                        "attached keys\\(\\[/l/k\\]\\)\n")))
      << r.out;
  r = Run({"lease", "keep-alive", "--once", id});
  EXPECT_EQ(r.out, "lease " + id + " keepalived with TTL(60)\n");
  r = Run({"lease", "list"});
  EXPECT_NE(r.out.find(id + "\n"), std::string::npos) << r.out;
  r = Run({"lease", "revoke", id});
  EXPECT_EQ(r.out, "lease " + id + " revoked\n");
  EXPECT_EQ(Run({"get", "/l/k"}).out, "");  // the key went with the lease
  r = Run({"lease", "revoke", id});
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("Error: failed to revoke lease (etcdserver: requested lease not found)\n"),
            std::string::npos)
      << r.err;
  r = Run({"lease", "timetolive", id});
  EXPECT_EQ(r.out, "lease " + id + " already expired\n");
}

TEST_F(WatchLeaseTest, AStreamedKeepAliveKeepsTheLeaseAlive) {
  CommandResult r = Run({"lease", "grant", "2"});
  const std::string id = LeaseIdOf(r.out);
  ASSERT_FALSE(id.empty()) << r.out << r.err;
  ASSERT_EQ(Run({"put", "/ka/k", "v", "--lease", id}).code, 0);
  auto keepalive = Start({"lease", "keep-alive", id});
  std::this_thread::sleep_for(std::chrono::seconds(4));  // twice the TTL
  EXPECT_EQ(Run({"get", "/ka/k", "--print-value-only"}).out, "v\n");
  EXPECT_NE(keepalive->Output().find("lease " + id + " keepalived with TTL(2)"), std::string::npos)
      << keepalive->Output();
  keepalive->Stop();
}

TEST_F(WatchLeaseTest, LockIsExclusive) {
  auto holder = Start({"lock", "/locks/one"});
  ASSERT_TRUE(holder->WaitFor("/locks/one/")) << holder->Output();
  // A second locker waits while the first holds it.
  auto waiter = Start({"lock", "/locks/one"});
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  EXPECT_EQ(waiter->Output(), "");
  holder->Stop();
  ASSERT_TRUE(waiter->WaitFor("/locks/one/")) << waiter->Output();
  // With a command: run while holding it.
  waiter->Stop();
  CommandResult r = Run({"lock", "/locks/two", "echo", "held"});
  EXPECT_EQ(r.out, "held\n") << r.err;
}

TEST_F(WatchLeaseTest, ElectionLeaderIsObserved) {
  auto candidate = Start({"elect", "/elections/e", "alice"});
  ASSERT_TRUE(candidate->WaitFor("alice")) << candidate->Output();
  // -l observes: it prints the leader, then every change, until stopped.
  auto observer = Start({"elect", "-l", "/elections/e"});
  ASSERT_TRUE(observer->WaitFor("alice\n")) << observer->Output();
  EXPECT_TRUE(std::regex_match(observer->Output(), std::regex("/elections/e/[0-9a-f]+\nalice\n")))
      << observer->Output();
}

}  // namespace
}  // namespace natcd::testing
