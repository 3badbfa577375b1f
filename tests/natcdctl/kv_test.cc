// natcdctl end to end: global flags, put/get/del and the output formats.
#include "natcdctl/natcdctl_fixture.h"

namespace natcd::testing {
namespace {

TEST_F(NatcdctlTest, PutThenGetPrintsKeyAndValueLines) {
  CtlResult put = Ctl({"put", "/kv1/foo", "bar"});
  EXPECT_EQ(put.code, 0) << put.err;
  EXPECT_EQ(put.out, "OK\n");
  CtlResult get = Ctl({"get", "/kv1/foo"});
  EXPECT_EQ(get.code, 0) << get.err;
  EXPECT_EQ(get.out, "/kv1/foo\nbar\n");
  // A missing key prints nothing.
  EXPECT_EQ(Ctl({"get", "/kv1/missing"}).out, "");
}

TEST_F(NatcdctlTest, PutReadsTheValueFromStdinAndPrintsPrevKv) {
  CtlResult put = Ctl({"put", "/kv2/a"}, "from stdin");
  EXPECT_EQ(put.code, 0) << put.err;
  EXPECT_EQ(Ctl({"get", "/kv2/a", "--print-value-only"}).out, "from stdin\n");
  CtlResult prev = Ctl({"put", "/kv2/a", "second", "--prev-kv"});
  EXPECT_EQ(prev.out, "OK\n/kv2/a\nfrom stdin\n");
  // --ignore-value keeps the value (and needs no value argument).
  EXPECT_EQ(Ctl({"put", "/kv2/a", "--ignore-value"}).out, "OK\n");
  EXPECT_EQ(Ctl({"get", "/kv2/a", "--print-value-only"}).out, "second\n");
  // --ignore-value on a missing key is etcd's error.
  CtlResult missing = Ctl({"put", "/kv2/none", "--ignore-value"});
  EXPECT_EQ(missing.code, 1);
  EXPECT_NE(missing.err.find("Error: "), std::string::npos) << missing.err;
}

TEST_F(NatcdctlTest, PutWithLeaseAndIgnoreLease) {
  CtlResult grant = Ctl({"lease", "grant", "100"});
  ASSERT_EQ(grant.code, 0) << grant.err;
  std::string id = grant.out.substr(6, 16);
  EXPECT_EQ(Ctl({"put", "/kv3/k", "v1", "--lease", id}).out, "OK\n");
  EXPECT_EQ(Ctl({"put", "/kv3/k", "v2", "--ignore-lease"}).out, "OK\n");
  CtlResult fields = Ctl({"get", "/kv3/k", "-w", "fields"});
  EXPECT_NE(fields.out.find("\"Lease\" : " + std::to_string(std::stoull(id, nullptr, 16))),
            std::string::npos)
      << fields.out;
  EXPECT_NE(fields.out.find("\"Value\" : \"v2\""), std::string::npos);
  CtlResult bad = Ctl({"put", "/kv3/k", "v", "--lease", "xyz"});
  EXPECT_NE(bad.code, 0);
  EXPECT_NE(bad.err.find("bad lease ID"), std::string::npos) << bad.err;
}

TEST_F(NatcdctlTest, GetRangesAndOptions) {
  for (const char* k : {"/kv4/a", "/kv4/b", "/kv4/c"}) {
    ASSERT_EQ(Ctl({"put", k, std::string("v") + (k + 5)}).code, 0);
  }
  ASSERT_EQ(Ctl({"put", "/kv4/a", "va2"}).code, 0);  // a: version 2, newest mod
  EXPECT_EQ(Ctl({"get", "/kv4/", "--prefix"}).out, "/kv4/a\nva2\n/kv4/b\nvb\n/kv4/c\nvc\n");
  EXPECT_EQ(Ctl({"get", "/kv4/a", "/kv4/c"}).out, "/kv4/a\nva2\n/kv4/b\nvb\n");
  EXPECT_EQ(Ctl({"get", "/kv4/b", "--from-key", "--keys-only"}).out.substr(0, 15),
            "/kv4/b\n\n/kv4/c\n");
  EXPECT_EQ(Ctl({"get", "/kv4/", "--prefix", "--keys-only"}).out, "/kv4/a\n\n/kv4/b\n\n/kv4/c\n\n");
  EXPECT_EQ(Ctl({"get", "/kv4/", "--prefix", "--limit", "2", "--print-value-only"}).out,
            "va2\nvb\n");
  EXPECT_EQ(Ctl({"get", "/kv4/", "--prefix", "--count-only"}).out, "3\n");
  EXPECT_EQ(Ctl({"get", "/kv4/", "--prefix", "--order", "DESCEND", "--keys-only"}).out,
            "/kv4/c\n\n/kv4/b\n\n/kv4/a\n\n");
  EXPECT_EQ(Ctl({"get", "/kv4/", "--prefix", "--sort-by", "MODIFY", "--order", "descend",
                 "--print-value-only"})
                .out,
            "va2\nvc\nvb\n");
  EXPECT_EQ(Ctl({"get", "/kv4/", "--prefix", "--sort-by", "VERSION", "--order", "DESCEND",
                 "--limit", "1", "--print-value-only"})
                .out,
            "va2\n");
  EXPECT_EQ(Ctl({"get", "/kv4/", "--prefix", "--sort-by", "VALUE", "--print-value-only"}).out,
            "va2\nvb\nvc\n");
  // --rev reads history: the revision before the second put of a.
  int64_t rev = Revision();
  EXPECT_EQ(Ctl({"get", "/kv4/a", "--rev", std::to_string(rev - 1)}).out, "/kv4/a\nva\n");
  CtlResult bad = Ctl({"get", "/kv4/", "--prefix", "--sort-by", "NOPE"});
  EXPECT_NE(bad.code, 0);
  EXPECT_NE(bad.err.find("bad sort target"), std::string::npos);
  EXPECT_NE(Ctl({"get", "/kv4/a", "/kv4/z", "--prefix"}).code, 0);
}

TEST_F(NatcdctlTest, DelPrintsTheDeletedCount) {
  for (const char* k : {"/kv5/a", "/kv5/b", "/kv5/c", "/kv6"})
    ASSERT_EQ(Ctl({"put", k, "x"}).code, 0);
  EXPECT_EQ(Ctl({"del", "/kv5/a"}).out, "1\n");
  EXPECT_EQ(Ctl({"del", "/kv5/a"}).out, "0\n");
  EXPECT_EQ(Ctl({"del", "/kv5/b", "--prev-kv"}).out, "1\n/kv5/b\nx\n");
  EXPECT_EQ(Ctl({"del", "/kv5/", "--prefix"}).out, "1\n");
  EXPECT_EQ(Ctl({"put", "/kv5/z", "y"}).code, 0);
  EXPECT_EQ(Ctl({"del", "/kv5/", "/kv5/zz"}).out, "1\n");
  EXPECT_EQ(Ctl({"get", "/kv5", "--prefix", "--count-only"}).out, "0\n");
  EXPECT_EQ(Ctl({"get", "/kv6"}).out, "/kv6\nx\n");
}

TEST_F(NatcdctlTest, JsonOutputLikeEtcdctl) {
  ASSERT_EQ(Ctl({"put", "/kv7", "bar"}).code, 0);
  CtlResult get = Ctl({"get", "/kv7", "-w", "json"});
  EXPECT_EQ(get.code, 0) << get.err;
  // base64("/kv7") = L2t2Nw==, base64("bar") = YmFy.
  std::regex want(
      "\\{\"header\":\\{\"cluster_id\":[0-9]+,\"member_id\":[0-9]+,\"revision\":[0-9]+,"
      "\"raft_term\":[0-9]+\\},\"kvs\":\\[\\{\"key\":\"L2t2Nw==\",\"create_revision\":[0-9]+,"
      "\"mod_revision\":[0-9]+,\"version\":1,\"value\":\"YmFy\"\\}\\],\"count\":1\\}\n");
  EXPECT_TRUE(std::regex_match(get.out, want)) << get.out;
  CtlResult put = Ctl({"put", "/kv7", "baz", "-w", "json"});
  EXPECT_TRUE(std::regex_match(put.out, std::regex("\\{\"header\":\\{[^}]*\\}\\}\n"))) << put.out;
  CtlResult del = Ctl({"del", "/kv7", "-w", "json"});
  EXPECT_NE(del.out.find(",\"deleted\":1}"), std::string::npos) << del.out;
}

TEST_F(NatcdctlTest, FieldsOutputLikeEtcdctl) {
  ASSERT_EQ(Ctl({"put", "/kv8", "a \"q\"\n"}).code, 0);
  CtlResult get = Ctl({"get", "/kv8", "-w", "fields"});
  std::regex want(
      "\"ClusterID\" : [0-9]+\n\"MemberID\" : [0-9]+\n\"Revision\" : [0-9]+\n\"RaftTerm\" : "
      "[0-9]+\n"
      "\"Key\" : \"/kv8\"\n\"CreateRevision\" : [0-9]+\n\"ModRevision\" : [0-9]+\n"
      "\"Version\" : 1\n\"Value\" : \"a \\\\\"q\\\\\"\\\\n\"\n\"Lease\" : 0\n"
      "\"More\" : false\n\"Count\" : 1\n");
  EXPECT_TRUE(std::regex_match(get.out, want)) << get.out;
}

TEST_F(NatcdctlTest, TableOutput) {
  ASSERT_EQ(Ctl({"put", "/kv9", "value"}).code, 0);
  CtlResult get = Ctl({"get", "/kv9", "-w", "table"});
  std::regex want(
      "\\+------\\+-------\\+-----------------\\+--------------\\+---------\\+-------\\+\n"
      "\\| KEY  \\| VALUE \\| CREATE REVISION \\| MOD REVISION \\| VERSION \\| LEASE \\|\n"
      "\\+[-+]+\n"
      "\\| /kv9 \\| value \\| +[0-9]+ \\| +[0-9]+ \\|       1 \\|       \\|\n"
      "\\+[-+]+\n");
  EXPECT_TRUE(std::regex_match(get.out, want)) << get.out;
}

TEST_F(NatcdctlTest, EnvironmentVariablesLikeEtcdctl) {
  ASSERT_EQ(Ctl({"put", "/kv10", "v"}).code, 0);
  CtlResult r =
      Ctl({"get", "/kv10"}, "", {{"NATCDCTL_NATS_URL", Url()}, {"NATCDCTL_WRITE_OUT", "json"}},
          /*no_url=*/true);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("{\"header\":", 0), 0u) << r.out;
  // A flag wins over the environment.
  r = Ctl({"get", "/kv10", "-w", "simple"}, "", {{"NATCDCTL_WRITE_OUT", "json"}});
  EXPECT_EQ(r.out, "/kv10\nv\n");
  // Nobody serves another prefix: a failure within --command-timeout.
  auto start = std::chrono::steady_clock::now();
  r = Ctl({"get", "/kv10", "--command-timeout", "1s"}, "", {{"NATCDCTL_PREFIX", "elsewhere"}});
  EXPECT_NE(r.code, 0);
  EXPECT_EQ(r.err.rfind("Error: ", 0), 0u) << r.err;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(4));
}

TEST_F(NatcdctlTest, ConnectionFailureAndBadArguments) {
  CtlResult r = Ctl({"--nats-url", "nats://127.0.0.1:1", "get", "x"}, "", {}, /*no_url=*/true);
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err.rfind("Error: cannot connect", 0), 0u) << r.err;
  EXPECT_NE(Ctl({"get"}).code, 0);
  EXPECT_NE(Ctl({"nosuchcommand"}).code, 0);
  EXPECT_NE(Ctl({"get", "x", "-w", "yaml"}).code, 0);
}

TEST_F(NatcdctlTest, HelpEverywhere) {
  CtlResult top = Ctl({"--help"});
  EXPECT_EQ(top.code, 0);
  for (const char* cmd : {"put", "get", "del", "txn", "watch", "lease", "compaction", "endpoint",
                          "member", "lock", "elect", "--nats-url", "--write-out"}) {
    EXPECT_NE(top.out.find(cmd), std::string::npos) << cmd;
  }
  CtlResult put = Ctl({"put", "--help"});
  EXPECT_EQ(put.code, 0);
  EXPECT_NE(put.out.find("--prev-kv"), std::string::npos) << put.out;
  CtlResult grant = Ctl({"lease", "grant", "--help"});
  EXPECT_EQ(grant.code, 0);
  EXPECT_NE(grant.out.find("ttl"), std::string::npos) << grant.out;
}

}  // namespace
}  // namespace natcd::testing

namespace natcd::testing {
namespace {

TEST_F(NatcdctlTest, EmptyKeyWithPrefixMeansEveryKey) {
  CtlResult all = Ctl({"get", "", "--prefix", "--count-only"});
  EXPECT_EQ(all.code, 0) << all.err;
  ASSERT_EQ(Ctl({"put", "/empty-prefix", "x"}).code, 0);
  int64_t before = std::stoll(all.out);
  EXPECT_GE(std::stoll(Ctl({"get", "", "--from-key", "--count-only"}).out), before + 1);
  EXPECT_EQ(Ctl({"put", "--", "/dash", "-value"}).out, "OK\n");
  EXPECT_EQ(Ctl({"get", "/dash", "--print-value-only"}).out, "-value\n");
}

// NATS authentication flags, and their NATCDCTL_* variables.
TEST_F(NatcdctlTest, TokenAndUserAuthentication) {
  struct Case {
    std::vector<std::string> server_args, natcd_args, ctl_args;
    Env env;
    std::string url_login = "";  // "user:password@" in natcdctl's NATS URL
  };
  std::vector<Case> cases = {
      {{"--auth", "s3cret"}, {"--token", "s3cret"}, {"--token", "s3cret"}, {}},
      {{"--auth", "s3cret"}, {"--token", "s3cret"}, {}, {{"NATCDCTL_TOKEN", "s3cret"}}},
      {{"--user", "alice", "--pass", "pw"},
       {"--user", "alice", "--password", "pw"},
       {"--nats-user", "alice", "--nats-password", "pw"},
       {}},
      {{"--user", "alice", "--pass", "pw"},
       {"--user", "alice", "--password", "pw"},
       {},
       {{"NATCDCTL_NATS_USER", "alice"}, {"NATCDCTL_NATS_PASSWORD", "pw"}}},
      // nats.c takes the login from the URL too.
      {{"--user", "alice", "--pass", "pw"},
       {"--user", "alice", "--password", "pw"},
       {},
       {},
       "alice:pw@"},
  };
  for (const Case& c : cases) {
    NatsServerOptions options;
    options.extra_args = c.server_args;
    NatsServer server(options);
    ASSERT_TRUE(server.Start());
    TempDir dir;
    std::vector<std::string> natcd_args = c.natcd_args;
    natcd_args.insert(natcd_args.end(), {"--log-level", "warn"});
    NatcdProcess natcd(server.url(), dir.path(), natcd_args);
    ASSERT_TRUE(natcd.Start());
    std::string url = server.url();
    url.insert(url.find("//") + 2, c.url_login);
    std::vector<std::string> args = {"--nats-url", url};
    args.insert(args.end(), c.ctl_args.begin(), c.ctl_args.end());
    std::vector<std::string> put = args;
    put.insert(put.end(), {"put", "/auth", "ok"});
    CtlResult r = Ctl(put, "", c.env, /*no_url=*/true);
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out, "OK\n");
    // Without credentials the server refuses the connection.
    CtlResult refused = Ctl({"--nats-url", server.url(), "get", "/auth"}, "", {}, true);
    EXPECT_EQ(refused.code, 2);
    EXPECT_EQ(refused.err.rfind("Error: cannot connect", 0), 0u) << refused.err;
  }
}

TEST_F(NatcdctlTest, GetRevisionFilters) {
  // etcdctl 3.6's --min/max-create-rev and --min/max-mod-rev: bounds on
  // the keys' revisions, inclusive.
  ASSERT_EQ(Ctl({"put", "/rf/a", "1"}).code, 0);
  const std::string a = std::to_string(Revision());
  ASSERT_EQ(Ctl({"put", "/rf/b", "2"}).code, 0);
  const std::string b = std::to_string(Revision());
  ASSERT_EQ(Ctl({"put", "/rf/c", "3"}).code, 0);
  ASSERT_EQ(Ctl({"put", "/rf/a", "4"}).code, 0);  // a: created first, changed last
  const std::string a2 = std::to_string(Revision());
  auto keys = [&](std::vector<std::string> flags) {
    std::vector<std::string> args = {"get", "/rf/", "--prefix", "--keys-only"};
    args.insert(args.end(), flags.begin(), flags.end());
    CtlResult r = Ctl(args);
    EXPECT_EQ(r.code, 0) << r.err;
    return r.out;
  };
  EXPECT_EQ(keys({"--min-create-rev", b}), "/rf/b\n\n/rf/c\n\n");
  EXPECT_EQ(keys({"--max-create-rev=" + b}), "/rf/a\n\n/rf/b\n\n");
  EXPECT_EQ(keys({"--min-create-rev", b, "--max-create-rev", b}), "/rf/b\n\n");
  EXPECT_EQ(keys({"--min-mod-rev", a2}), "/rf/a\n\n");
  EXPECT_EQ(keys({"--max-mod-rev", b}), "/rf/b\n\n");
  EXPECT_EQ(keys({"--min-mod-rev", a, "--max-create-rev", a}), "/rf/a\n\n");
  EXPECT_EQ(keys({"--min-create-rev", a2}), "");
  EXPECT_NE(Ctl({"get", "/rf/", "--min-mod-rev", "x"}).code, 0) << "not a number";
}

}  // namespace
}  // namespace natcd::testing
