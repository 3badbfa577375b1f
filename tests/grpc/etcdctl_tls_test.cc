// etcd's gRPC API over TLS with client certificates (--cert-file,
// --key-file, --trusted-ca-file, --client-cert-auth), through etcdctl's
// --cacert/--cert/--key. The certificates are made for the test by the
// openssl command.
#include <cstdlib>

#include "grpc/etcdctl_fixture.h"

namespace natcd::testing {
namespace {

// A CA, and a server and a client certificate it signed (the server's for
// 127.0.0.1), in dir.
bool MakeCertificates(const TempDir& dir) {
  const std::string d = dir.path();
  const std::string script =
      "set -e; cd '" + d +
      "'; "
      "openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=natcd-test-ca "
      "  -keyout ca.key -out ca.crt >/dev/null 2>&1; "
      "printf 'subjectAltName=IP:127.0.0.1\\nextendedKeyUsage=serverAuth,clientAuth\\n' > ext; "
      "for who in server client; do "
      "  openssl req -newkey rsa:2048 -nodes -subj /CN=$who -keyout $who.key -out $who.csr "
      "    >/dev/null 2>&1; "
      "  openssl x509 -req -in $who.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 "
      "    -extfile ext -out $who.crt >/dev/null 2>&1; "
      "done";
  return std::system(script.c_str()) == 0;
}

class TlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(MakeCertificates(certs_));
    ASSERT_TRUE(server_.Start());
    natcd_ = std::make_unique<NatcdProcess>(
        server_.url(), data_.path(),
        std::vector<std::string>{"--log-level", "warn", "--listen-client-urls",
                                 "https://127.0.0.1:0", "--cert-file", certs_.File("server.crt"),
                                 "--key-file", certs_.File("server.key"), "--trusted-ca-file",
                                 certs_.File("ca.crt"), "--client-cert-auth"});
    ASSERT_TRUE(natcd_->Start());
    endpoint_ = EtcdEndpointOf(*natcd_);
    ASSERT_FALSE(endpoint_.empty()) << natcd_->Log();
  }

  CommandResult Etcdctl(std::vector<std::string> tls, const std::vector<std::string>& args) {
    std::vector<std::string> argv = {
        "/usr/bin/etcdctl",  "--endpoints", "https://" + endpoint_, "--dial-timeout", "3s",
        "--command-timeout", "5s"};
    argv.insert(argv.end(), tls.begin(), tls.end());
    argv.insert(argv.end(), args.begin(), args.end());
    return RunEtcdctl(data_, counter_++, argv);
  }

  TempDir certs_;
  TempDir data_;
  NatsServer server_;
  std::unique_ptr<NatcdProcess> natcd_;
  std::string endpoint_;
  int counter_ = 0;
};

TEST_F(TlsTest, AClientCertificateSignedByTheTrustedCaIsServed) {
  const std::vector<std::string> tls = {"--cacert", certs_.File("ca.crt"),
                                        "--cert",   certs_.File("client.crt"),
                                        "--key",    certs_.File("client.key")};
  CommandResult r = Etcdctl(tls, {"put", "/tls/k", "v"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "OK\n");
  EXPECT_EQ(Etcdctl(tls, {"get", "/tls/k", "--print-value-only"}).out, "v\n");
}

TEST_F(TlsTest, WithoutAClientCertificateTheCallFails) {
  CommandResult r = Etcdctl({"--cacert", certs_.File("ca.crt")}, {"put", "/tls/k", "v"});
  EXPECT_NE(r.code, 0);
  // Nor in plain text.
  std::vector<std::string> argv = {"/usr/bin/etcdctl",
                                   "--endpoints",
                                   "http://" + endpoint_,
                                   "--dial-timeout",
                                   "2s",
                                   "--command-timeout",
                                   "3s",
                                   "put",
                                   "/tls/k",
                                   "v"};
  const std::string in = data_.File("plain-in");
  { std::ofstream f(in); }
  pid_t pid = SpawnProcess(argv, in, data_.File("plain-out"), data_.File("plain-err"),
                           {{"ETCDCTL_API", "3"}});
  EXPECT_NE(WaitProcess(pid, std::chrono::seconds(20)), 0);
}

}  // namespace
}  // namespace natcd::testing
