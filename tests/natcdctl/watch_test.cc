// natcdctl end to end: watch (printing and running a command per event).
#include "natcdctl/natcdctl_fixture.h"

namespace natcd::testing {
namespace {

TEST_F(NatcdctlTest, WatchPrintsEventsLikeEtcdctl) {
  // From the next revision on, so nothing races with the watch's creation.
  std::string rev = std::to_string(Revision() + 1);
  auto w = Start({"watch", "/w1/", "--prefix", "--rev", rev});
  ASSERT_EQ(Ctl({"put", "/w1/a", "1"}).code, 0);
  ASSERT_EQ(Ctl({"put", "/w1/b", "2"}).code, 0);
  ASSERT_EQ(Ctl({"put", "/w2", "outside"}).code, 0);
  ASSERT_EQ(Ctl({"del", "/w1/a"}).code, 0);
  std::string want = "PUT\n/w1/a\n1\nPUT\n/w1/b\n2\nDELETE\n/w1/a\n\n";
  EXPECT_TRUE(w->WaitFor(want)) << w->Output();
  EXPECT_EQ(w->Stop(), 0);
  EXPECT_EQ(w->Output(), want);
}

TEST_F(NatcdctlTest, WatchPrevKvAndRangeEnd) {
  ASSERT_EQ(Ctl({"put", "/w3/a", "old"}).code, 0);
  std::string rev = std::to_string(Revision() + 1);
  auto w = Start({"watch", "/w3/a", "/w3/c", "--prev-kv", "--rev", rev});
  ASSERT_EQ(Ctl({"put", "/w3/a", "new"}).code, 0);
  ASSERT_EQ(Ctl({"put", "/w3/c", "out of range"}).code, 0);
  ASSERT_EQ(Ctl({"put", "/w3/b", "b"}).code, 0);
  std::string want = "PUT\n/w3/a\nold\n/w3/a\nnew\nPUT\n/w3/b\nb\n";
  EXPECT_TRUE(w->WaitFor(want)) << w->Output();
  w->Stop();
  EXPECT_EQ(w->Output(), want);
}

TEST_F(NatcdctlTest, WatchHistoryFromRevision) {
  ASSERT_EQ(Ctl({"put", "/w4", "v1"}).code, 0);
  std::string rev = std::to_string(Revision());
  ASSERT_EQ(Ctl({"put", "/w4", "v2"}).code, 0);
  auto w = Start({"watch", "/w4", "--rev", rev, "-w", "json"});
  EXPECT_TRUE(w->WaitFor("\"value\":\"djI=\"")) << w->Output();  // base64("v2")
  std::string out = w->Output();
  EXPECT_NE(out.find("\"Events\":[{\"kv\":{\"key\":\"L3c0\""), std::string::npos) << out;
  EXPECT_NE(out.find("\"value\":\"djE=\""), std::string::npos) << out;
}

TEST_F(NatcdctlTest, WatchRunsACommandPerEventWithEtcdWatchEnv) {
  std::string log = dir_->File("watch-exec.log");
  std::string rev = std::to_string(Revision() + 1);
  auto w = Start({"watch", "/w5", "--rev", rev, "--", "sh", "-c",
                  "printf '%s|%s|%s|%s\\n' \"$ETCD_WATCH_EVENT_TYPE\" \"$ETCD_WATCH_KEY\" "
                  "\"$ETCD_WATCH_VALUE\" \"$ETCD_WATCH_REVISION\" >> " +
                      log});
  ASSERT_EQ(Ctl({"put", "/w5", "hello world"}).code, 0);
  int64_t put_rev = Revision();
  ASSERT_EQ(Ctl({"del", "/w5"}).code, 0);
  EXPECT_TRUE(w->WaitFor("DELETE\n/w5\n\n")) << w->Output();
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  std::string want = "\"PUT\"|\"/w5\"|\"hello world\"|" + std::to_string(put_rev) +
                     "\n\"DELETE\"|\"/w5\"|\"\"|" + std::to_string(put_rev + 1) + "\n";
  while (ReadFile(log) != want && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(ReadFile(log), want);
  // The events are printed too, as etcdctl does.
  EXPECT_EQ(w->Output(), "PUT\n/w5\nhello world\nDELETE\n/w5\n\n");
}

TEST_F(NatcdctlTest, WatchFromCompactedRevisionFails) {
  ASSERT_EQ(Ctl({"put", "/w6", "a"}).code, 0);
  ASSERT_EQ(Ctl({"put", "/w6", "b"}).code, 0);
  int64_t rev = Revision();
  CtlResult compact = Ctl({"compaction", std::to_string(rev)});
  EXPECT_EQ(compact.out, "compacted revision " + std::to_string(rev) + "\n");
  CtlResult r = Ctl({"watch", "/w6", "--rev", "1"});
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("compacted"), std::string::npos) << r.err;
  CtlResult get = Ctl({"get", "/w6", "--rev", "1"});
  EXPECT_EQ(get.code, 1);
  EXPECT_NE(get.err.find("Error: etcdserver: mvcc: required revision"), std::string::npos);
}

}  // namespace
}  // namespace natcd::testing

namespace natcd::testing {
namespace {

// natcd restarts under a running watch: the library re-creates it from the
// last revision printed + 1, so every event is printed exactly once.
TEST_F(NatcdctlTest, WatchSurvivesANatcdRestart) {
  std::string rev = std::to_string(Revision() + 1);
  auto w = Start({"watch", "/wr/", "--prefix", "--rev", rev});
  ASSERT_EQ(Ctl({"put", "/wr/a", "1"}).code, 0);
  ASSERT_TRUE(w->WaitFor("PUT\n/wr/a\n1\n")) << w->Output();
  ASSERT_EQ(natcd_->Stop(), 0);
  ASSERT_TRUE(natcd_->Start());
  ASSERT_EQ(Ctl({"put", "/wr/b", "2"}).code, 0);
  std::string want = "PUT\n/wr/a\n1\nPUT\n/wr/b\n2\n";
  EXPECT_TRUE(w->WaitFor(want)) << w->Output();
  EXPECT_EQ(w->Stop(), 0);
  EXPECT_EQ(w->Output(), want);
}

}  // namespace
}  // namespace natcd::testing
