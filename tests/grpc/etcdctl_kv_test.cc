// etcdctl 3.4 (Debian's etcd-client) against natcd's gRPC API: KV, txn,
// compaction and the errors etcdctl shows, with etcdctl's own output.
#include <regex>

#include "grpc/etcdctl_fixture.h"

namespace natcd::testing {
namespace {

using KvTest = EtcdctlTest;

TEST_F(KvTest, PutGetDelete) {
  CommandResult r = Run({"put", "/kv/a", "1"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "OK\n");
  r = Run({"get", "/kv/a"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "/kv/a\n1\n");
  r = Run({"put", "/kv/a", "2", "--prev-kv"});
  EXPECT_EQ(r.out, "OK\n/kv/a\n1\n");
  r = Run({"del", "/kv/a", "--prev-kv"});
  EXPECT_EQ(r.out, "1\n/kv/a\n2\n");
  r = Run({"get", "/kv/a"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  r = Run({"del", "/kv/a"});
  EXPECT_EQ(r.out, "0\n");
}

TEST_F(KvTest, GetFlags) {
  for (const char* k : {"/g/c", "/g/a", "/g/b"})
    ASSERT_EQ(Run({"put", k, std::string(k) + "v"}).code, 0);
  EXPECT_EQ(Run({"get", "/g/", "--prefix", "--keys-only"}).out, "/g/a\n\n/g/b\n\n/g/c\n\n");
  EXPECT_EQ(Run({"get", "/g/", "--prefix", "--print-value-only"}).out, "/g/av\n/g/bv\n/g/cv\n");
  EXPECT_EQ(Run({"get", "/g/", "--prefix", "--limit", "2", "--keys-only"}).out, "/g/a\n\n/g/b\n\n");
  EXPECT_EQ(
      Run({"get", "/g/", "--prefix", "--sort-by", "KEY", "--order", "DESCEND", "--keys-only"}).out,
      "/g/c\n\n/g/b\n\n/g/a\n\n");
  EXPECT_EQ(
      Run({"get", "/g/", "--prefix", "--sort-by", "CREATE", "--order", "ASCEND", "--keys-only"})
          .out,
      "/g/c\n\n/g/a\n\n/g/b\n\n");
  EXPECT_EQ(Run({"get", "/g/b", "--from-key", "--keys-only", "--limit", "2"}).out,
            "/g/b\n\n/g/c\n\n");
  EXPECT_EQ(Run({"get", "/g/a", "/g/c", "--keys-only"}).out, "/g/a\n\n/g/b\n\n");
  EXPECT_EQ(Run({"get", "/g/a", "--consistency", "s"}).out, "/g/a\n/g/av\n");
  // An older revision of a key.
  CommandResult json = Run({"get", "/g/a", "-w", "json"});
  std::smatch m;
  ASSERT_TRUE(std::regex_search(json.out, m, std::regex("\"mod_revision\":([0-9]+)"))) << json.out;
  const std::string rev = m[1];
  ASSERT_EQ(Run({"put", "/g/a", "new"}).code, 0);
  EXPECT_EQ(Run({"get", "/g/a", "--rev", rev}).out, "/g/a\n/g/av\n");
  EXPECT_EQ(Run({"get", "/g/a"}).out, "/g/a\nnew\n");
  // --count-only is etcdctl 3.5's; the JSON count is 3.4's way.
  EXPECT_NE(Run({"get", "/g/", "--prefix", "-w", "json", "--keys-only"}).out.find("\"count\":3"),
            std::string::npos);
}

TEST_F(KvTest, Txn) {
  ASSERT_EQ(Run({"put", "/txn/k", "v1"}).code, 0);
  CommandResult r = Run({"txn"},
                        "value(\"/txn/k\") = \"v1\"\n\n"
                        "put /txn/k v2\nput /txn/other o\n\n"
                        "put /txn/failed yes\n\n");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "SUCCESS\n\nOK\n\nOK\n");
  EXPECT_EQ(Run({"get", "/txn/k", "--print-value-only"}).out, "v2\n");
  r = Run({"txn"}, "value(\"/txn/k\") = \"v1\"\n\nput /txn/k v3\n\nget /txn/k\n\n");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "FAILURE\n\n/txn/k\nv2\n");
  // kube-apiserver's create: only if absent.
  r = Run({"txn"}, "mod(\"/txn/new\") = \"0\"\n\nput /txn/new created\n\n\n");
  EXPECT_EQ(r.out, "SUCCESS\n\nOK\n");
  r = Run({"txn"}, "mod(\"/txn/new\") = \"0\"\n\nput /txn/new again\n\n\n");
  EXPECT_EQ(r.out, "FAILURE\n");  // no failure ops: nothing after it
  // The same key twice in one txn.
  r = Run({"txn"}, "\nput /txn/d 1\nput /txn/d 2\n\n\n");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("etcdserver: duplicate key given in txn request"), std::string::npos)
      << r.err;
}

TEST_F(KvTest, CompactionAndItsErrors) {
  ASSERT_EQ(Run({"put", "/c/k", "1"}).code, 0);
  CommandResult json = Run({"get", "/c/k", "-w", "json"});
  std::smatch m;
  ASSERT_TRUE(std::regex_search(json.out, m, std::regex("\"mod_revision\":([0-9]+)")));
  const int64_t rev = std::stoll(m[1]);
  ASSERT_EQ(Run({"put", "/c/k", "2"}).code, 0);
  CommandResult r = Run({"compaction", std::to_string(rev + 1), "--physical"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "compacted revision " + std::to_string(rev + 1) + "\n");
  r = Run({"get", "/c/k", "--rev", std::to_string(rev)});
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("Error: etcdserver: mvcc: required revision has been compacted"),
            std::string::npos)
      << r.err;
  r = Run({"get", "/c/k", "--rev", "100000000"});
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("etcdserver: mvcc: required revision is a future revision"),
            std::string::npos)
      << r.err;
  r = Run({"put", "", "v"});
  EXPECT_NE(r.code, 0);
}

TEST_F(KvTest, ALargeValueIsRefusedWithEtcdsError) {
  // Over --max-request-bytes (1.5 MiB), within gRPC's limit (2 MiB).
  const std::string big(1'700'000, 'x');
  CommandResult r = Run({"put", "/big"}, big);
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("etcdserver: request is too large"), std::string::npos) << r.err;
  EXPECT_EQ(Run({"put", "/big", "small"}).out, "OK\n");  // still serving
}

}  // namespace
}  // namespace natcd::testing
