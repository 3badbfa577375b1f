// natcdctl's --user and --password mean what etcdctl's do (natcd's auth,
// not the NATS login): against one natcd with auth enabled, etcdctl 3.4
// over gRPC and natcdctl over NATS print the same output, the same error
// and exit with the same code, for good and wrong passwords, the password
// from --password or from the prompt, and a user without the permission.
#include "grpc/etcdctl_fixture.h"

namespace natcd::testing {
namespace {

class NatcdctlAuthTest : public EtcdctlTest {
 public:
  static CommandResult Natcdctl(const std::vector<std::string>& args,
                                const std::string& input = "") {
    std::vector<std::string> argv = {EtcdctlTest::Natcdctl(), "--nats-url", server_->url()};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunArgv(argv, input);
  }
};

// The error etcdctl ends with: its client logs its retries (and the
// prompt's stty its complaints) on stderr before it.
std::string LastLine(const std::string& text) {
  std::string s = text;
  while (!s.empty() && s.back() == '\n') s.pop_back();
  const size_t nl = s.rfind('\n');
  return nl == std::string::npos ? s : s.substr(nl + 1);
}

TEST_F(NatcdctlAuthTest, UserAndPasswordAsEtcdctl) {
  for (const std::vector<std::string>& setup :
       {std::vector<std::string>{"user", "add", "root:rootpw"},
        {"user", "add", "alice:alicepw"},
        {"put", "/nca/a", "1"},
        {"auth", "enable"}}) {
    CommandResult r = Run(setup);
    ASSERT_EQ(r.code, 0) << r.out << r.err;
  }
  struct Case {
    std::vector<std::string> args;
    std::string input;  // stdin: the prompt's answer
    int code;
    std::string last_error;  // the last line on stderr ("" for none expected)
  };
  const std::string kAuthFailed =
      "Error: etcdserver: authentication failed, invalid user ID or password";
  const std::vector<Case> cases = {
      {{"--user", "root:rootpw", "put", "/nca/b", "2"}, "", 0, ""},
      {{"--user", "root:rootpw", "get", "/nca/", "--prefix"}, "", 0, ""},
      {{"--user", "root", "--password", "rootpw", "get", "/nca/a", "--print-value-only"},
       "",
       0,
       ""},
      {{"--user", "root", "get", "/nca/b"}, "rootpw\n", 0, ""},
      {{"--user", "alice:alicepw", "get", "/nca/a"}, "", 1, "Error: etcdserver: permission denied"},
      {{"--user", "root:wrong", "get", "/nca/a"}, "", 2, kAuthFailed},
      {{"--user", "root", "get", "/nca/a"}, "wrong\n", 2, kAuthFailed},
      {{"--user", "ghost:x", "put", "/nca/c", "3"}, "", 2, kAuthFailed},
      // With --password, --user is the name as given, colon and all.
      {{"--user", "root:rootpw", "--password", "rootpw", "get", "/nca/a"}, "", 2, kAuthFailed},
  };
  for (const Case& c : cases) {
    const std::string what = ::testing::PrintToString(c.args);
    CommandResult theirs = Run(c.args, c.input);
    CommandResult ours = Natcdctl(c.args, c.input);
    EXPECT_EQ(theirs.code, c.code) << what << theirs.err;
    EXPECT_EQ(ours.code, c.code) << what << ours.err;
    EXPECT_EQ(ours.out, theirs.out) << what;
    if (!c.last_error.empty()) {
      EXPECT_EQ(LastLine(theirs.err), c.last_error) << what;
      EXPECT_EQ(ours.err, c.last_error + "\n") << what;
    }
  }
  // Nothing the refused calls tried was written.
  EXPECT_EQ(Natcdctl({"--user", "root:rootpw", "get", "/nca/", "--prefix", "--keys-only"}).out,
            "/nca/a\n\n/nca/b\n\n");
}

}  // namespace
}  // namespace natcd::testing
