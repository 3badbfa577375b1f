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

namespace natcd::testing {
namespace {

// --tls-ca/--tls-cert/--tls-key against a nats-server that verifies client
// certificates (a CA, a server and a client certificate made by openssl).
TEST_F(NatcdctlTest, MutualTls) {
  if (system("command -v openssl >/dev/null 2>&1") != 0) GTEST_SKIP() << "no openssl";
  TempDir certs;
  std::string d = certs.path();
  std::string script =
      "(cd " + d +
      " && openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=test-ca"
      " -keyout ca.key -out ca.pem"
      " && printf 'subjectAltName=IP:127.0.0.1\\nextendedKeyUsage=serverAuth,clientAuth\\n' > ext"
      " && for n in server client; do"
      "  openssl req -newkey rsa:2048 -nodes -subj /CN=$n -keyout $n.key -out $n.csr &&"
      "  openssl x509 -req -in $n.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 1"
      "  -extfile ext -out $n.pem || exit 1; done) >/dev/null 2>&1";
  ASSERT_EQ(system(script.c_str()), 0);
  NatsServerOptions options;
  options.extra_args = {"--tlsverify",     "--tlscert",   d + "/server.pem", "--tlskey",
                        d + "/server.key", "--tlscacert", d + "/ca.pem"};
  NatsServer server(options);
  ASSERT_TRUE(server.Start());
  std::string url = "tls://127.0.0.1:" + std::to_string(server.port());
  std::vector<std::string> tls = {"--tls-ca",        d + "/ca.pem", "--tls-cert",
                                  d + "/client.pem", "--tls-key",   d + "/client.key"};
  TempDir data;
  std::vector<std::string> natcd_args = tls;
  natcd_args.insert(natcd_args.end(), {"--log-level", "warn"});
  NatcdProcess natcd(url, data.path(), natcd_args);
  ASSERT_TRUE(natcd.Start());

  std::vector<std::string> args = {"--nats-url", url};
  args.insert(args.end(), tls.begin(), tls.end());
  args.insert(args.end(), {"put", "/tls", "secure"});
  CtlResult put = Ctl(args, "", {}, /*no_url=*/true);
  EXPECT_EQ(put.code, 0) << put.err;
  EXPECT_EQ(put.out, "OK\n");
  CtlResult get = Ctl({"get", "/tls", "--print-value-only"}, "",
                      {{"NATCDCTL_NATS_URL", url},
                       {"NATCDCTL_TLS_CA", d + "/ca.pem"},
                       {"NATCDCTL_TLS_CERT", d + "/client.pem"},
                       {"NATCDCTL_TLS_KEY", d + "/client.key"}},
                      /*no_url=*/true);
  EXPECT_EQ(get.out, "secure\n") << get.err;
  // Without a client certificate the server refuses.
  CtlResult refused =
      Ctl({"--nats-url", url, "--tls-ca", d + "/ca.pem", "--dial-timeout", "1s", "get", "/tls"}, "",
          {}, true);
  EXPECT_EQ(refused.code, 2) << refused.out;
}

}  // namespace
}  // namespace natcd::testing

namespace natcd::testing {
namespace {

TEST_F(NatcdctlTest, PhysicalCompactionAndAWatchIntoAClosedPipe) {
  ASSERT_EQ(Ctl({"put", "/pc", "1"}).code, 0);
  int64_t rev = Revision();
  CtlResult r = Ctl({"compaction", std::to_string(rev), "--physical"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "compacted revision " + std::to_string(rev) + "\n");
  EXPECT_NE(Ctl({"compaction", "abc"}).code, 0);

  // A watch whose reader went away ends at its next write (as etcdctl on SIGPIPE).
  std::string cmd = Binary() + " --nats-url " + Url() + " watch /pc --rev " + std::to_string(rev) +
                    " | head -c 1 >/dev/null";
  pid_t pid = fork();
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = -1;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      ADD_FAILURE() << "the watch did not end";
      break;
    }
    ASSERT_EQ(Ctl({"put", "/pc", "more"}).code, 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(WIFEXITED(status));
}

}  // namespace
}  // namespace natcd::testing

namespace natcd::testing {
namespace {

// --creds (a JWT + nkey credentials file) for natcd and natcdctl, against an
// operator-mode nats-server. tests/js/make_creds.mjs makes the operator,
// account and user with nats.js's jwt and nkeys packages.
TEST_F(NatcdctlTest, CredentialsFile) {
  if (system("command -v node >/dev/null 2>&1") != 0 ||
      access("tests/js/node_modules/@nats-io/jwt", F_OK) != 0) {
    GTEST_SKIP() << "needs node and tests/js/node_modules (make deps), run from the repo root";
  }
  TempDir auth;
  ASSERT_EQ(system(("node tests/js/make_creds.mjs " + auth.path()).c_str()), 0);
  const std::string creds = auth.File("user.creds");
  NatsServerOptions options;
  options.extra_args = {"-c", auth.File("server.conf")};
  NatsServer server(options);
  ASSERT_TRUE(server.Start());
  TempDir data;
  NatcdProcess natcd(server.url(), data.path(), {"--creds", creds, "--log-level", "warn"});
  ASSERT_TRUE(natcd.Start());

  CtlResult put =
      Ctl({"--nats-url", server.url(), "--creds", creds, "put", "/creds", "jwt"}, "", {}, true);
  EXPECT_EQ(put.code, 0) << put.err;
  EXPECT_EQ(put.out, "OK\n");
  CtlResult get = Ctl({"--nats-url", server.url(), "get", "/creds", "--print-value-only"}, "",
                      {{"NATCDCTL_CREDS", creds}}, true);
  EXPECT_EQ(get.out, "jwt\n") << get.err;
  // Without credentials the server refuses.
  CtlResult refused =
      Ctl({"--nats-url", server.url(), "--dial-timeout", "1s", "get", "/creds"}, "", {}, true);
  EXPECT_EQ(refused.code, 2) << refused.out;
}

}  // namespace
}  // namespace natcd::testing
