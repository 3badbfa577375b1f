// natcdctl end to end: --hex, --endpoints lists, version, interactive txn and
// smaller options.
#include "natcdctl/natcdctl_fixture.h"

namespace natcd::testing {
namespace {

TEST_F(NatcdctlTest, HexOutput) {
  ASSERT_EQ(Ctl({"put", "/hx", "ab"}).code, 0);
  EXPECT_EQ(Ctl({"--hex", "get", "/hx"}).out, "\\x2f\\x68\\x78\n\\x61\\x62\n");
  EXPECT_EQ(Ctl({"get", "/hx"}, "", {{"NATCDCTL_HEX", "true"}}).out,
            "\\x2f\\x68\\x78\n\\x61\\x62\n");
}

TEST_F(NatcdctlTest, EndpointsListAndVersion) {
  // A dead URL first: the pool moves on to the live one.
  CtlResult r = Ctl({"--endpoints", "nats://127.0.0.1:1," + Url(), "endpoint", "status"}, "", {},
                    /*no_url=*/true);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind(Url() + ", ", 0), 0u) << r.out;
  CtlResult v = Ctl({"version"});
  EXPECT_EQ(v.code, 0);
  EXPECT_TRUE(std::regex_match(v.out, std::regex("natcdctl version: [0-9.]+\nAPI version: 3.5\n")))
      << v.out;
  EXPECT_NE(Ctl({"--dial-timeout", "bogus", "version"}).code, 0);
}

TEST_F(NatcdctlTest, InteractiveTxnPrompts) {
  CtlResult r =
      Ctl({"txn", "-i"}, "create(\"/itx\") = \"0\"\n\nput /itx first\n\nput /itx again\n");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "compares:\nsuccess requests (get, put, del):\nfailure requests (get, put, del):\n"
            "\nSUCCESS\n\nOK\n");
  EXPECT_EQ(Ctl({"get", "/itx", "--print-value-only"}).out, "first\n");
}

TEST_F(NatcdctlTest, SmallerOptions) {
  for (const char* k : {"/so/a", "/so/b", "/so/c"}) ASSERT_EQ(Ctl({"put", k, "v"}).code, 0);
  // JSON says when --limit cut the answer.
  CtlResult json = Ctl({"get", "/so/", "--prefix", "--limit", "1", "-w", "json"});
  EXPECT_NE(json.out.find(",\"more\":true,\"count\":3}"), std::string::npos) << json.out;
  EXPECT_EQ(Ctl({"get", "/so/a", "--consistency", "s", "--print-value-only"}).out, "v\n");
  // --from-key on keys that sort after every other test's ('~' > '/').
  for (const char* k : {"~so/a", "~so/b", "~so/c"}) ASSERT_EQ(Ctl({"put", k, "v"}).code, 0);
  EXPECT_EQ(Ctl({"del", "~so/b", "--from-key"}).out, "2\n");
  EXPECT_EQ(Ctl({"get", "~so/a", "--from-key", "--keys-only"}).out, "~so/a\n\n");
  EXPECT_EQ(Ctl({"del", "/so/b", "/so/c"}).out, "1\n");
  EXPECT_EQ(Ctl({"get", "/so/", "--prefix", "--keys-only"}).out, "/so/a\n\n/so/c\n\n");

  std::string rev = std::to_string(Revision() + 1);
  auto w = Start({"watch", "/so/a", "--rev", rev, "--print-value-only"});
  ASSERT_EQ(Ctl({"put", "/so/a", "only the value"}).code, 0);
  EXPECT_TRUE(w->WaitFor("PUT\nonly the value\n")) << w->Output();
}

}  // namespace
}  // namespace natcd::testing
