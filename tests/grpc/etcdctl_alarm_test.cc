// The NOSPACE alarm through etcd's own etcdctl 3.4 (Debian's etcd-client)
// against natcd's gRPC API, as an operator meets it: a natcd with a small
// --quota-backend-bytes filled until puts fail with etcd's error, `alarm
// list` showing NOSPACE, reads, deletes, compaction and defrag still
// served, and compaction + defrag + `alarm disarm` letting puts in again.
// natcdctl, over NATS, prints what etcdctl prints.
#include <regex>

#include "grpc/etcdctl_fixture.h"

namespace natcd::testing {
namespace {

constexpr const char* kNoSpace = "Error: etcdserver: mvcc: database space exceeded\n";

class EtcdctlAlarmTest : public EtcdctlTest {
 public:
  // 1 MiB; the Raft log (in the same database) is compacted every two
  // entries, so what compaction and defragmentation give back is the
  // keys' history.
  static void SetUpTestSuite() {
    StartSuite({"--quota-backend-bytes", "1048576", "--snapshot-count", "2"});
  }

  // natcdctl over NATS, against the same natcd.
  static CommandResult Natcdctl(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {EtcdctlTest::Natcdctl(), "--nats-url", server_->url()};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunArgv(argv);
  }
};

bool EndsWith(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

TEST_F(EtcdctlAlarmTest, NoSpaceThroughEtcdctlAndTheRecoveryEtcdDocuments) {
  CommandResult none = Run({"alarm", "list"});
  ASSERT_EQ(none.code, 0) << none.err;
  EXPECT_EQ(none.out, "");
  ASSERT_EQ(Run({"put", "/grpcnospace/deleted", "d"}).code, 0);

  const std::string value(100'000, 'v');
  CommandResult refused;
  for (int i = 0; i < 40; ++i) {
    refused = Run({"put", "/grpcnospace/big"}, value);  // the value on stdin
    if (refused.code != 0) break;
  }
  ASSERT_NE(refused.code, 0) << "the quota was never reached";
  // etcdctl's client logs its retries on stderr first.
  EXPECT_TRUE(EndsWith(refused.err, kNoSpace)) << refused.err;

  CommandResult list = Run({"alarm", "list"});
  ASSERT_EQ(list.code, 0) << list.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_match(list.out, m, std::regex("memberID:([0-9]+) alarm:NOSPACE \n")))
      << list.out;
  const std::string line = list.out;
  // Every format, its refusal of table included.
  for (const char* format : {"simple", "json", "fields", "table"}) {
    CommandResult theirs = Run({"alarm", "list", "-w", format});
    CommandResult ours = Natcdctl({"alarm", "list", "-w", format});
    EXPECT_EQ(ours.out, theirs.out) << format;
    EXPECT_EQ(ours.err, theirs.err) << format;
    EXPECT_EQ(ours.code, theirs.code) << format;
  }

  EXPECT_TRUE(EndsWith(Run({"put", "/grpcnospace/small", "x"}).err, kNoSpace));
  EXPECT_TRUE(
      EndsWith(Run({"lease", "grant", "60"}).err,
               "Error: failed to grant lease (etcdserver: mvcc: database space exceeded)\n"));
  EXPECT_EQ(Natcdctl({"lease", "grant", "60"}).err,
            "Error: failed to grant lease (etcdserver: mvcc: database space exceeded)\n");
  CommandResult get = Run({"get", "/grpcnospace/deleted"});
  EXPECT_EQ(get.out, "/grpcnospace/deleted\nd\n") << get.err;
  CommandResult del = Run({"del", "/grpcnospace/deleted"});
  EXPECT_EQ(del.out, "1\n") << del.err;
  const int64_t rev = HeaderRevision(Run({"get", "/grpcnospace/none", "-w", "json"}).out);
  ASSERT_GT(rev, 0);
  CommandResult compacted = Run({"compaction", std::to_string(rev)});
  EXPECT_EQ(compacted.out, "compacted revision " + std::to_string(rev) + "\n") << compacted.err;
  CommandResult defrag = Run({"defrag"});
  EXPECT_EQ(defrag.out, "Finished defragmenting etcd member[" + endpoint_ + "]\n") << defrag.err;
  EXPECT_TRUE(EndsWith(Run({"put", "/grpcnospace/small", "x"}).err, kNoSpace))
      << "raised until disarmed";

  CommandResult disarm = Run({"alarm", "disarm"});
  ASSERT_EQ(disarm.code, 0) << disarm.err;
  EXPECT_EQ(disarm.out, line);
  EXPECT_EQ(Run({"alarm", "list"}).out, "");
  CommandResult put = Run({"put", "/grpcnospace/small", "x"});
  EXPECT_EQ(put.out, "OK\n") << put.err;
  // Disarming with nothing raised: etcdctl's and natcdctl's answer alike.
  for (const char* format : {"simple", "json"}) {
    CommandResult theirs = Run({"alarm", "disarm", "-w", format});
    CommandResult ours = Natcdctl({"alarm", "disarm", "-w", format});
    EXPECT_EQ(theirs.code, 0) << theirs.err;
    EXPECT_EQ(ours.out, theirs.out) << format;
  }
}

// natcdctl's disarm prints the alarms it cleared as etcdctl's does.
TEST_F(EtcdctlAlarmTest, NatcdctlDisarmPrintsWhatEtcdctlPrints) {
  CommandResult status = Run({"endpoint", "status", "-w", "json"});
  std::smatch m;
  ASSERT_TRUE(std::regex_search(status.out, m, std::regex("\"member_id\":([0-9]+)"))) << status.out;
  const std::string id = m[1];
  // The quota raises it again.
  ASSERT_EQ(Run({"alarm", "list"}).out, "");
  const std::string value(100'000, 'w');
  CommandResult refused;
  for (int i = 0; i < 40; ++i) {
    refused = Run({"put", "/grpcnospace/again"}, value);
    if (refused.code != 0) break;
  }
  ASSERT_TRUE(EndsWith(refused.err, kNoSpace)) << refused.code << " " << refused.err;
  ASSERT_EQ(Run({"alarm", "list"}).out, "memberID:" + id + " alarm:NOSPACE \n");
  CommandResult ours = Natcdctl({"alarm", "disarm", "-w", "json"});
  ASSERT_EQ(ours.code, 0) << ours.err;
  EXPECT_EQ(ours.out, "{\"alarms\":[{\"memberID\":" + id + ",\"alarm\":1}]}\n");
  EXPECT_EQ(Run({"alarm", "list"}).out, "");
}

}  // namespace
}  // namespace natcd::testing
