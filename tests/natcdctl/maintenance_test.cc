// natcdctl end to end: endpoint hashkv and defrag, with etcdctl 3.4's
// output, on one member (the cluster of three: endpoint_test.cc).
#include "natcdctl/natcdctl_fixture.h"

namespace natcd::testing {
namespace {

// "<endpoint>, <hash>\n": the hash, or -1 when the output is not that.
int64_t HashOf(const CtlResult& r, const std::string& endpoint) {
  std::smatch m;
  if (r.code != 0 || !std::regex_match(r.out, m, std::regex(endpoint + ", ([0-9]+)\n"))) return -1;
  return std::stoll(m[1]);
}

// Puts count values of 1 KiB over 100 keys, one write of each key per txn.
void Fill(const std::string& prefix, int count) {
  const std::string value(1024, 'v');
  for (int done = 0; done < count;) {
    std::string input = "\n";
    for (int i = 0; i < 100 && done < count; ++i, ++done) {
      input += "put " + prefix + std::to_string(done % 100) + " " + value + "\n";
    }
    input += "\n\n";
    CtlResult r = NatcdctlTest::Ctl({"txn"}, input);
    ASSERT_EQ(r.code, 0) << r.err;
  }
}

int64_t JsonField(const std::string& json, const std::string& name) {
  std::smatch m;
  if (!std::regex_search(json, m, std::regex("\"" + name + "\":([0-9]+)"))) return -1;
  return std::stoll(m[1]);
}

TEST_F(NatcdctlTest, EndpointHashKVLikeEtcdctl) {
  ASSERT_EQ(Ctl({"put", "/hk/a", "1"}).code, 0);
  const int64_t rev = Revision();
  CtlResult first = Ctl({"endpoint", "hashkv"});
  const int64_t hash = HashOf(first, Url());
  ASSERT_GE(hash, 0) << first.out << first.err;
  // Asked again at a later revision, --rev gives back the earlier hash.
  ASSERT_EQ(Ctl({"put", "/hk/a", "2"}).code, 0);
  EXPECT_NE(HashOf(Ctl({"endpoint", "hashkv"}), Url()), hash);
  EXPECT_EQ(HashOf(Ctl({"endpoint", "hashkv", "--rev", std::to_string(rev)}), Url()), hash);
  // --cluster names the member.
  EXPECT_GE(HashOf(Ctl({"endpoint", "hashkv", "--cluster"}), "natcd-1"), 0);

  CtlResult table = Ctl({"endpoint", "hashkv", "-w", "table", "--rev", std::to_string(rev)});
  EXPECT_TRUE(std::regex_search(table.out, std::regex("\\| +ENDPOINT +\\| +HASH +\\|")))
      << table.out;
  EXPECT_NE(table.out.find(" " + std::to_string(hash) + " |"), std::string::npos) << table.out;
  CtlResult json = Ctl({"endpoint", "hashkv", "-w", "json", "--rev", std::to_string(rev)});
  EXPECT_EQ(json.out.rfind("[{\"Endpoint\":\"" + Url() + "\",\"HashKV\":{\"header\":{", 0), 0u)
      << json.out;
  EXPECT_EQ(JsonField(json.out, "hash"), hash) << json.out;
  EXPECT_EQ(JsonField(json.out, "hash_revision"), rev) << json.out;
  CtlResult fields = Ctl({"endpoint", "hashkv", "-w", "fields", "--rev", std::to_string(rev)});
  EXPECT_NE(fields.out.find("\"Hash\" : " + std::to_string(hash) + "\n"), std::string::npos)
      << fields.out;

  // A future revision: etcdctl's report on stderr, and the run fails.
  CtlResult future = Ctl({"endpoint", "hashkv", "--rev", std::to_string(rev + 1000)});
  EXPECT_EQ(future.code, 1);
  EXPECT_EQ(future.out, "");
  EXPECT_EQ(future.err.rfind("Failed to get the hash of endpoint " + Url() + " (", 0), 0u)
      << future.err;
  EXPECT_NE(future.err.find("is a future revision"), std::string::npos) << future.err;
}

TEST_F(NatcdctlTest, DefragShrinksTheDatabaseAfterCompaction) {
  Fill("/df/", 3'000);
  ASSERT_EQ(Ctl({"compaction", std::to_string(Revision()), "--physical"}).code, 0);
  CtlResult before = Ctl({"endpoint", "status", "-w", "json"});
  const int64_t size = JsonField(before.out, "dbSize");
  const int64_t in_use = JsonField(before.out, "dbSizeInUse");
  ASSERT_GT(size, 3'000 * 1'024) << before.out;
  EXPECT_LT(in_use, size / 2) << before.out;  // compaction freed the pages
  const int64_t hash = HashOf(Ctl({"endpoint", "hashkv"}), Url());

  CtlResult r = Ctl({"defrag"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "Finished defragmenting etcd member[" + Url() + "]\n");
  CtlResult after = Ctl({"endpoint", "status", "-w", "json"});
  EXPECT_LT(JsonField(after.out, "dbSize"), size / 2) << after.out;
  EXPECT_EQ(JsonField(after.out, "dbSizeInUse"), JsonField(after.out, "dbSize")) << after.out;
  EXPECT_EQ(HashOf(Ctl({"endpoint", "hashkv"}), Url()), hash);  // the same state
  EXPECT_EQ(Ctl({"get", "/df/42", "--print-value-only"}).out, std::string(1024, 'v') + "\n");

  CtlResult cluster = Ctl({"defrag", "--cluster"});
  EXPECT_EQ(cluster.code, 0) << cluster.err;
  EXPECT_EQ(cluster.out, "Finished defragmenting etcd member[natcd-1]\n");
}

}  // namespace
}  // namespace natcd::testing
