// natcdctl alarm list and alarm disarm end to end, as an operator meets the
// NOSPACE alarm: a natcd with a small --quota-backend-bytes filled until
// puts fail with etcd's error, the alarm listed, reads, deletes,
// compaction and defragmentation still served, and the documented
// recovery (compact, defrag, disarm) letting puts in again. Output as
// etcdctl 3.4 prints it (tests/grpc/etcdctl_alarm_test.cc compares the two).
#include "natcdctl/natcdctl_fixture.h"

namespace natcd::testing {
namespace {

constexpr const char* kNoSpace = "Error: etcdserver: mvcc: database space exceeded\n";

class NatcdctlAlarmTest : public NatcdctlTest {
 public:
  // 1 MiB; the Raft log (in the same database) is compacted every two
  // entries, so what compaction and defragmentation give back is the
  // keys' history.
  static void SetUpTestSuite() {
    StartSuite({"--quota-backend-bytes", "1048576", "--snapshot-count", "2"});
  }
};

// The member's ID in decimal, from a JSON header.
std::string MemberIdOf(const std::string& json) {
  std::smatch m;
  if (!std::regex_search(json, m, std::regex("\"member_id\":([0-9]+)"))) return "";
  return m[1];
}

TEST_F(NatcdctlAlarmTest, NoSpaceIsListedAndCompactDefragDisarmRecover) {
  CtlResult none = Ctl({"alarm", "list"});
  ASSERT_EQ(none.code, 0) << none.err;
  EXPECT_EQ(none.out, "");
  const std::string id = MemberIdOf(Ctl({"endpoint", "status", "-w", "json"}).out);
  ASSERT_FALSE(id.empty());
  ASSERT_EQ(Ctl({"put", "/nospace/deleted", "d"}).code, 0);

  // Overwrites of one key, 100 kB each, until the quota refuses one.
  const std::string value(100'000, 'v');
  CtlResult refused;
  for (int i = 0; i < 40; ++i) {
    refused = Ctl({"put", "/nospace/big"}, value);
    if (refused.code != 0) break;
  }
  ASSERT_NE(refused.code, 0) << "the quota was never reached";
  EXPECT_EQ(refused.err, kNoSpace);
  EXPECT_EQ(refused.code, 1);

  const std::string line = "memberID:" + id + " alarm:NOSPACE \n";
  CtlResult list = Ctl({"alarm", "list"});
  ASSERT_EQ(list.code, 0) << list.err;
  EXPECT_EQ(list.out, line);
  CtlResult table = Ctl({"alarm", "list", "-w", "table"});
  EXPECT_EQ(table.code, 4);
  EXPECT_EQ(table.err, "Error: table not supported as output format\n");
  CtlResult json = Ctl({"alarm", "list", "-w", "json"});
  EXPECT_TRUE(std::regex_match(json.out, std::regex("\\{\"header\":\\{\"cluster_id\":[0-9]+,"
                                                    "\"member_id\":" +
                                                    id +
                                                    ",\"revision\":[0-9]+,\"raft_term\":[0-9]+\\},"
                                                    "\"alarms\":\\[\\{\"memberID\":" +
                                                    id + ",\"alarm\":1\\}\\]\\}\n")))
      << json.out;
  CtlResult fields = Ctl({"alarm", "list", "-w", "fields"});
  EXPECT_NE(fields.out.find("\"MemberID\" : " + id + "\n\"AlarmType\" : NOSPACE\n\n"),
            std::string::npos)
      << fields.out;
  EXPECT_NE(Ctl({"endpoint", "status"}).out.find("memberID:" + id + " alarm:NOSPACE"),
            std::string::npos);

  // Refused: what would grow the store, however small.
  CtlResult small = Ctl({"put", "/nospace/small", "x"});
  EXPECT_EQ(small.err, kNoSpace);
  EXPECT_EQ(Ctl({"lease", "grant", "60"}).err,
            "Error: failed to grant lease (etcdserver: mvcc: database space exceeded)\n");
  // Served: reads, deletes, compaction, defragmentation.
  CtlResult get = Ctl({"get", "/nospace/deleted"});
  EXPECT_EQ(get.out, "/nospace/deleted\nd\n") << get.err;
  CtlResult del = Ctl({"del", "/nospace/deleted"});
  EXPECT_EQ(del.out, "1\n") << del.err;
  const int64_t rev = Revision();
  ASSERT_GT(rev, 0);
  CtlResult compacted = Ctl({"compaction", std::to_string(rev)});
  EXPECT_EQ(compacted.out, "compacted revision " + std::to_string(rev) + "\n") << compacted.err;
  CtlResult defrag = Ctl({"defrag"});
  EXPECT_EQ(defrag.out, "Finished defragmenting etcd member[" + Url() + "]\n") << defrag.err;
  // The alarm stays raised until disarmed, whatever room there is now.
  EXPECT_EQ(Ctl({"put", "/nospace/small", "x"}).err, kNoSpace);

  CtlResult disarm = Ctl({"alarm", "disarm"});
  ASSERT_EQ(disarm.code, 0) << disarm.err;
  EXPECT_EQ(disarm.out, line);
  EXPECT_EQ(Ctl({"alarm", "list"}).out, "");
  CtlResult put = Ctl({"put", "/nospace/small", "x"});
  EXPECT_EQ(put.out, "OK\n") << put.err;
  // Nothing left to disarm: nothing printed.
  CtlResult again = Ctl({"alarm", "disarm", "-w", "json"});
  EXPECT_EQ(again.code, 0) << again.err;
  EXPECT_EQ(again.out, "{}\n");
}

TEST_F(NatcdctlAlarmTest, AlarmCommandsTakeNoArguments) {
  CtlResult list = Ctl({"alarm", "list", "extra"});
  EXPECT_EQ(list.code, 128);
  EXPECT_EQ(list.err, "Error: alarm list command accepts no arguments\n");
  CtlResult disarm = Ctl({"alarm", "disarm", "extra"});
  EXPECT_EQ(disarm.code, 128);
  EXPECT_EQ(disarm.err, "Error: alarm disarm command accepts no arguments\n");
}

}  // namespace
}  // namespace natcd::testing
