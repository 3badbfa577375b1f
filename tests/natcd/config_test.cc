// natcd's settings (config file < NATCD_* environment < flags) and the
// embedded default (no NATS URL: a nats-server child on loopback, stopped
// on exit).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "natcd/natcd_fixture.h"

namespace natcd::testing {
namespace {

// Runs natcd with the arguments and environment until it prints its serving
// line (returned), then stops it with SIGTERM. Empty on failure.
std::string ServingLine(const std::vector<std::string>& args,
                        const std::vector<std::pair<std::string, std::string>>& env,
                        int* exit_status = nullptr, std::string* log_out = nullptr) {
  TempDir out;
  std::string log = out.File("out.log");
  pid_t pid = fork();
  if (pid == 0) {
    for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
    FILE* f = freopen(log.c_str(), "w", stdout);
    (void)f;
    dup2(STDOUT_FILENO, STDERR_FILENO);
    std::vector<char*> argv;
    std::string bin = NatcdProcess::Binary();
    argv.push_back(bin.data());
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(bin.c_str(), argv.data());
    _exit(127);
  }
  std::string line;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (std::chrono::steady_clock::now() < deadline && line.empty()) {
    std::ifstream in(log);
    std::string l;
    while (std::getline(in, l)) {
      if (l.find("serving") != std::string::npos) line = l;
    }
    if (waitpid(pid, nullptr, WNOHANG) == pid) {
      pid = -1;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (pid > 0) {
    kill(pid, SIGTERM);
    int status = 0;
    waitpid(pid, &status, 0);
    if (exit_status) *exit_status = status;
  }
  if (log_out) {
    std::ifstream in(log);
    log_out->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  return line;
}

bool PortAccepts(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  close(fd);
  return ok;
}

int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

class ConfigTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(server_.Start()); }
  NatsServer server_;
  TempDir dir_;
};

TEST_F(ConfigTest, FlagsBeatEnvironmentBeatsConfigFile) {
  std::string conf = dir_.File("natcd.conf");
  std::ofstream(conf) << "prefix = \"fromfile\"\nname = \"file-name\"\n";
  std::vector<std::string> base = {"--config",    conf,         "--nats-url",
                                   server_.url(), "--data-dir", dir_.File("data")};

  std::string line = ServingLine(base, {});
  EXPECT_NE(line.find("serving fromfile.>"), std::string::npos) << line;
  EXPECT_NE(line.find("natcd file-name"), std::string::npos) << line;

  line = ServingLine(base, {{"NATCD_PREFIX", "fromenv"}});
  EXPECT_NE(line.find("serving fromenv.>"), std::string::npos) << line;
  EXPECT_NE(line.find("natcd file-name"), std::string::npos) << line;

  std::vector<std::string> with_flag = base;
  with_flag.insert(with_flag.end(), {"--prefix", "fromflag"});
  line = ServingLine(with_flag, {{"NATCD_PREFIX", "fromenv"}});
  EXPECT_NE(line.find("serving fromflag.>"), std::string::npos) << line;
}

TEST_F(ConfigTest, UnknownConfigSettingIsRefusedWithItsName) {
  std::string conf = dir_.File("bad.conf");
  std::ofstream(conf) << "prefix = \"x\"\nno-such-setting = 1\n";
  std::string log;
  int status = 0;
  std::string line =
      ServingLine({"--config", conf, "--nats-url", server_.url()}, {}, &status, &log);
  EXPECT_TRUE(line.empty());
  EXPECT_NE(log.find("unknown setting no-such-setting"), std::string::npos) << log;
}

// The example config in the repository names only settings natcd knows,
// with values it accepts (tests run from the repository's root).
TEST_F(ConfigTest, ShippedConfigFileIsAccepted) {
  std::string log;
  std::string line = ServingLine({"--config", "config/natcd.conf", "--nats-url", server_.url(),
                                  "--data-dir", dir_.File("data")},
                                 {}, nullptr, &log);
  EXPECT_NE(line.find("serving"), std::string::npos) << log;
}

// --experimental-corrupt-check-time takes Go's duration syntax, as etcd's
// flag: a bare number, an unknown unit or no number is refused with Go's
// words.
TEST_F(ConfigTest, CorruptCheckTimeIsAGoDuration) {
  for (const char* good : {"1m30s", "1.5s"}) {
    std::string log;
    std::string line = ServingLine(
        {"--config", "/dev/null", "--nats-url", server_.url(), "--data-dir",
         dir_.File(std::string("data-") + good), "--experimental-corrupt-check-time", good},
        {}, nullptr, &log);
    EXPECT_NE(line.find("serving"), std::string::npos) << good << ": " << log;
  }
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"5", "time: missing unit in duration \"5\""},
      {"bogus", "time: invalid duration \"bogus\""},
      {"1x", "time: unknown unit \"x\" in duration \"1x\""},
      {"s", "time: invalid duration \"s\""}};
  for (const auto& [text, error] : bad) {
    std::string log;
    int status = 0;
    std::string line = ServingLine({"--config", "/dev/null", "--nats-url", server_.url(),
                                    "--experimental-corrupt-check-time", text},
                                   {}, &status, &log);
    EXPECT_TRUE(line.empty()) << text;
    EXPECT_NE(log.find("--experimental-corrupt-check-time: " + error + "\n"), std::string::npos)
        << text << ": " << log;
  }
}

// Every segment file, and the spare made ready for the next, is as large
// as the flag (or its environment variable) says.
TEST_F(ConfigTest, RaftLogSegmentBytesSizesTheSegmentFiles) {
  std::string log;
  std::string line = ServingLine(
      {"--config", "/dev/null", "--nats-url", server_.url(), "--data-dir", dir_.File("data")},
      {{"NATCD_RAFT_LOG_SEGMENT_BYTES", "65536"}}, nullptr, &log);
  ASSERT_NE(line.find("serving"), std::string::npos) << log;
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir_.File("data/natcd.db.raftlog"))) {
    EXPECT_EQ(e.file_size(), 65536u) << e.path();
    files++;
  }
  EXPECT_EQ(files, 2) << "a segment and the spare";
  int status = 0;
  line = ServingLine({"--config", "/dev/null", "--nats-url", server_.url(), "--data-dir",
                      dir_.File("small"), "--raft-log-segment-bytes", "100"},
                     {}, &status, &log);
  EXPECT_TRUE(line.empty());
  EXPECT_NE(log.find("--raft-log-segment-bytes"), std::string::npos) << log;
}

// etcd's backend batch flags: a Go duration and a count, refused at start
// when they are not.
TEST_F(ConfigTest, BackendBatchFlagsTakeEtcdsValues) {
  std::string log;
  std::string line = ServingLine({"--config", "/dev/null", "--nats-url", server_.url(),
                                  "--data-dir", dir_.File("batch"), "--backend-batch-limit", "1"},
                                 {{"NATCD_BACKEND_BATCH_INTERVAL", "10ms"}}, nullptr, &log);
  EXPECT_NE(line.find("serving"), std::string::npos) << log;
  int status = 0;
  line = ServingLine({"--config", "/dev/null", "--nats-url", server_.url(), "--data-dir",
                      dir_.File("bad"), "--backend-batch-interval", "100"},
                     {}, &status, &log);
  EXPECT_TRUE(line.empty());
  EXPECT_NE(log.find("--backend-batch-interval: time: missing unit in duration \"100\""),
            std::string::npos)
      << log;
  line = ServingLine({"--config", "/dev/null", "--nats-url", server_.url(), "--data-dir",
                      dir_.File("bad"), "--backend-batch-limit", "-1"},
                     {}, &status, &log);
  EXPECT_TRUE(line.empty());
  EXPECT_NE(log.find("--backend-batch-limit"), std::string::npos) << log;
}

TEST_F(ConfigTest, HelpListsEverySetting) {
  std::string log;
  ServingLine({"--help"}, {}, nullptr, &log);
  for (const char* flag : {"--nats-url",
                           "--data-dir",
                           "--prefix",
                           "--name",
                           "--creds",
                           "--user",
                           "--password",
                           "--token",
                           "--tls-ca",
                           "--tls-cert",
                           "--tls-key",
                           "--max-txn-ops",
                           "--max-request-bytes",
                           "--lease-ttl-min",
                           "--value-cache-mib",
                           "--watch-window",
                           "--watch-coalesce-ms",
                           "--auto-compaction-mode",
                           "--quota-backend-bytes",
                           "--raft-log-segment-bytes",
                           "--backend-batch-interval",
                           "--backend-batch-limit",
                           "--experimental-corrupt-check-time",
                           "--experimental-initial-corrupt-check",
                           "NATCD_NATS_URL"}) {
    EXPECT_NE(log.find(flag), std::string::npos) << flag << " missing from --help:\n" << log;
  }
}

TEST_F(ConfigTest, EmbeddedDefaultStartsAndStopsItsNatsServer) {
  int port = FreePort();
  std::string data = dir_.File("embedded");
  pid_t pid = fork();
  std::string log = dir_.File("embedded.log");
  if (pid == 0) {
    FILE* f = freopen(log.c_str(), "w", stdout);
    (void)f;
    dup2(STDOUT_FILENO, STDERR_FILENO);
    std::string bin = NatcdProcess::Binary();
    std::string port_arg = std::to_string(port);
    execl(bin.c_str(), bin.c_str(), "--config", "/dev/null", "--data-dir", data.c_str(),
          "--embedded-port", port_arg.c_str(), "--log-level", "warn", nullptr);
    _exit(127);
  }
  std::string line;
  for (int i = 0; i < 1500 && line.empty(); ++i) {
    std::ifstream in(log);
    std::string l;
    while (std::getline(in, l)) {
      if (l.find("serving") != std::string::npos) line = l;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::string url = "nats://127.0.0.1:" + std::to_string(port);
  EXPECT_NE(line.find(url), std::string::npos) << line;
  {
    WireClient client(url);
    ASSERT_TRUE(client.connected());
    EXPECT_EQ(client.Put("/embedded", "works"), 2);
  }
  kill(pid, SIGTERM);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_FALSE(PortAccepts(port)) << "the embedded nats-server outlived natcd";
}

}  // namespace
}  // namespace natcd::testing
