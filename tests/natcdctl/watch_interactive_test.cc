// natcdctl end to end: watch -i, etcdctl's interactive mode (`watch ...`
// and `progress` lines from stdin).
#include "natcdctl/natcdctl_fixture.h"

namespace natcd::testing {
namespace {

TEST_F(NatcdctlTest, WatchInteractiveWatchesWhatEachLineAsks) {
  std::string rev = std::to_string(Revision() + 1);
  auto w = StartInteractive({"watch", "-i"});
  ASSERT_TRUE(w);
  ASSERT_TRUE(w->Send("watch /wi/a --rev " + rev + "\n"));
  ASSERT_TRUE(w->Send("watch /wi/p/ --prefix --prev-kv --rev=" + rev + "\n"));
  ASSERT_EQ(Ctl({"put", "/wi/a", "1"}).code, 0);
  ASSERT_EQ(Ctl({"put", "/wi/p/x", "2"}).code, 0);
  ASSERT_EQ(Ctl({"put", "/wi/p/x", "3"}).code, 0);
  ASSERT_EQ(Ctl({"put", "/wi/b", "outside"}).code, 0);
  EXPECT_TRUE(w->WaitFor("PUT\n/wi/a\n1\n")) << w->Output();
  EXPECT_TRUE(w->WaitFor("PUT\n/wi/p/x\n2\n/wi/p/x\n3\n")) << w->Output();  // prev_kv
  EXPECT_EQ(w->Output().find("outside"), std::string::npos);

  // progress: every watch reports the revision it has seen.
  ASSERT_TRUE(w->Send("progress\n"));
  EXPECT_TRUE(w->WaitFor("progress notify: ")) << w->Output();

  // Lines it does not take: etcdctl's messages, and the watches go on.
  ASSERT_TRUE(w->Send("bogus /wi/a\n"));
  ASSERT_TRUE(w->Send("watch\n"));
  ASSERT_TRUE(w->Send("\n"));
  EXPECT_TRUE(w->WaitFor("Invalid command bogus /wi/a (only support watch)\n")) << w->Output();
  EXPECT_TRUE(w->WaitFor("Invalid command watch (command type or key is not provided)\n"))
      << w->Output();
  EXPECT_TRUE(w->WaitFor("Invalid command:  (watch and progress supported)\n")) << w->Output();
  ASSERT_EQ(Ctl({"del", "/wi/a"}).code, 0);
  EXPECT_TRUE(w->WaitFor("DELETE\n/wi/a\n\n")) << w->Output();
  EXPECT_EQ(w->Stop(), 0);  // SIGTERM ends it cleanly
}

TEST_F(NatcdctlTest, WatchInteractiveRunsALinesCommandAndEndsAtEof) {
  std::string log = dir_->File("watch-i-exec.log");
  std::string rev = std::to_string(Revision() + 1);
  auto w = StartInteractive({"watch", "-i"});
  ASSERT_TRUE(w);
  ASSERT_TRUE(
      w->Send("watch /wi/x --rev " + rev + " -- sh -c \"echo $ETCD_WATCH_KEY >> " + log + "\"\n"));
  ASSERT_EQ(Ctl({"put", "/wi/x", "1"}).code, 0);
  EXPECT_TRUE(w->WaitFor("PUT\n/wi/x\n1\n")) << w->Output();
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (ReadFile(log) != "\"/wi/x\"\n" && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(ReadFile(log), "\"/wi/x\"\n");
  // etcdctl ends at the end of its input, with exit code 3 (ExitInvalidInput).
  w->CloseStdin();
  EXPECT_EQ(w->Wait(), 3);
  EXPECT_NE(w->Output().find("Error: Error reading watch request line: EOF\n"), std::string::npos)
      << w->Output();
}

TEST_F(NatcdctlTest, WatchWithoutKeyNeedsInteractiveMode) {
  CtlResult r = Ctl({"watch"});
  EXPECT_EQ(r.code, 128);
  EXPECT_NE(r.err.find("watch in non-interactive mode requires at least one argument"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace natcd::testing
