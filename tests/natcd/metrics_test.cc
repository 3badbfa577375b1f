// natcd's metrics listener against a real natcd and nats-server: /metrics
// parsed line by line as the Prometheus text format (the strict parser in
// tests/support/prometheus_text.h), /health /readyz /livez as etcd answers
// them, through a NATS outage, and the --listen-metrics-urls wiring (flag,
// config file, NATCD_LISTEN_METRICS_URLS, the embedded default).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "natcd/natcd_fixture.h"
#include "support/http_get.h"
#include "support/prometheus_text.h"

namespace natcd::testing {
namespace {

constexpr const char* kHealthy = R"({"health":"true","reason":""})";

// The <url> of every "natcd metrics on <url>/metrics" line of a log. (No
// std::regex: g++ 12 warns inside it under the sanitizers' -O1.)
std::vector<std::string> MetricsUrls(const std::string& log) {
  const std::string kLead = "natcd metrics on ";
  std::vector<std::string> urls;
  for (size_t at = log.find(kLead); at != std::string::npos; at = log.find(kLead, at + 1)) {
    size_t start = at + kLead.size();
    size_t end = log.find("/metrics", start);
    if (end != std::string::npos) urls.push_back(log.substr(start, end - start));
  }
  return urls;
}

std::string MetricsUrl(const std::string& log) {
  std::vector<std::string> urls = MetricsUrls(log);
  return urls.empty() ? "" : urls[0];
}

// Polls until `done` holds or `timeout` passes; returns whether it held.
bool WaitFor(const std::function<bool()>& done,
             std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
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

ParsedExposition Scrape(const std::string& url) {
  HttpResponse r = HttpRequest(url + "/metrics");
  ParsedExposition p;
  EXPECT_EQ(r.status, 200) << r.error;
  EXPECT_EQ(r.headers["content-type"], "text/plain; version=0.0.4; charset=utf-8");
  std::string error = ParseExposition(r.body, &p);
  EXPECT_EQ(error, "") << r.body;
  return p;
}

class MetricsTest : public NatcdTest {
 protected:
  void SetUp() override {
    NatcdTest::SetUp();
    if (HasFatalFailure()) return;
    url_ = MetricsUrl(natcd_->Log());
    ASSERT_FALSE(url_.empty()) << natcd_->Log();
  }
  std::vector<std::string> ExtraArgs() override {
    return {"--log-level", "warn", "--listen-metrics-urls", "http://127.0.0.1:0"};
  }
  std::string url_;
};

TEST_F(MetricsTest, EveryLineParsesAsTheExpositionFormat) {
  for (int i = 0; i < 5; ++i) ASSERT_GT(client_->Put("/m/" + std::to_string(i), "v"), 0);
  ASSERT_TRUE(WaitFor([&] { return HttpRequest(url_ + "/health").status == 200; }));
  ParsedExposition p = Scrape(url_);
  // etcd's names, with etcd's types.
  for (auto [name, type] : std::vector<std::pair<std::string, std::string>>{
           {"etcd_server_has_leader", "gauge"},
           {"etcd_server_leader_changes_seen_total", "counter"},
           {"etcd_server_proposals_committed_total", "gauge"},
           {"etcd_mvcc_db_total_size_in_bytes", "gauge"},
           {"etcd_disk_wal_fsync_duration_seconds", "histogram"},
           {"etcd_disk_backend_commit_duration_seconds", "histogram"},
           {"etcd_debugging_mvcc_keys_total", "gauge"},
           {"etcd_debugging_mvcc_watcher_total", "gauge"},
           {"natcd_request_duration_seconds", "histogram"},
           {"process_cpu_seconds_total", "counter"},
       }) {
    ASSERT_TRUE(p.families.count(name)) << name;
    EXPECT_EQ(p.families[name].type, type) << name;
  }
  EXPECT_EQ(p.Find("etcd_disk_wal_fsync_duration_seconds_bucket", {{"le", "+Inf"}}),
            p.Find("etcd_disk_wal_fsync_duration_seconds_count"));
  EXPECT_EQ(p.Find("natcd_nats_connected"), 1);
  EXPECT_EQ(p.families["etcd_server_version"].samples.size(), 1u);
  EXPECT_GT(p.Find("process_resident_memory_bytes").value_or(0), 1 << 20);
  EXPECT_GT(p.Find("process_open_fds").value_or(0), 3);
  EXPECT_GE(p.Find("etcd_server_health_success").value_or(0), 1);
}

// The member records what it does, under etcd's names.
TEST_F(MetricsTest, TheMemberRecordsWhatItDoes) {
  for (int i = 0; i < 5; ++i) ASSERT_GT(client_->Put("/rec/" + std::to_string(i), "v"), 0);
  ASSERT_GT(client_->Put("/rec/0", "again"), 0);
  ASSERT_GT(client_->Grant(60), 0);
  (void)client_->Range("/rec/0");
  ParsedExposition p;
  ASSERT_TRUE(WaitFor([&] {
    p = Scrape(url_);
    return p.Find("etcd_debugging_mvcc_keys_total").value_or(0) == 5;
  })) << "keys_total follows the engine";
  EXPECT_EQ(p.Find("etcd_server_has_leader"), 1);
  EXPECT_EQ(p.Find("etcd_server_is_leader"), 1);
  EXPECT_EQ(p.Find("etcd_server_leader_changes_seen_total"), 1);
  EXPECT_EQ(p.Find("etcd_mvcc_put_total"), 6);
  EXPECT_EQ(p.Find("etcd_debugging_lease_granted_total"), 1);
  EXPECT_GE(p.Find("etcd_mvcc_range_total").value_or(0), 1);
  EXPECT_EQ(p.Find("etcd_debugging_mvcc_current_revision"), 7);
  const double applied = p.Find("etcd_server_proposals_applied_total").value_or(0);
  EXPECT_GE(applied, 7) << "every write is an entry";
  EXPECT_GE(p.Find("etcd_server_proposals_committed_total").value_or(0), applied);
  EXPECT_EQ(p.Find("etcd_server_proposals_pending"), 0);
  EXPECT_GE(p.Find("etcd_disk_wal_fsync_duration_seconds_count").value_or(0), 7)
      << "each write's turn fsyncs";
  // The database commits in batches (--backend-batch-interval, 100 ms),
  // not once per fsync.
  EXPECT_TRUE(WaitFor([&] {
    return Scrape(url_).Find("etcd_disk_backend_commit_duration_seconds_count").value_or(0) >= 1;
  })) << "the batch commits within the interval";
  EXPECT_GT(p.Find("etcd_disk_wal_write_bytes_total").value_or(0), 0);
  EXPECT_GT(p.Find("etcd_mvcc_db_total_size_in_bytes").value_or(0), 4096);
  EXPECT_EQ(p.Find("natcd_request_duration_seconds_count", {{"endpoint", "kv.put"}}), 6);
  EXPECT_EQ(p.Find("natcd_request_duration_seconds_count", {{"endpoint", "lease.grant"}}), 1);
}

// db size in use is the file less SQLite's free pages: compaction frees
// pages (in use drops, the file stays), a defragment gives them back. (The
// Raft log shares the file and keeps its entries: not all of it is freed.)
TEST_F(MetricsTest, DbSizeInUseFollowsCompactionAndDefragment) {
  const std::string value(4096, 'x');
  int64_t rev = 0;
  for (int i = 0; i < 200; ++i) rev = client_->Put("/dbsize", value);
  ASSERT_GT(rev, 0);
  Natcd__V1__CompactionRequest compact = NATCD__V1__COMPACTION_REQUEST__INIT;
  compact.revision = rev;
  compact.physical = true;
  ASSERT_TRUE(client_->Call("kv.compact", &compact.base).ok());
  ParsedExposition p;
  ASSERT_TRUE(WaitFor([&] {
    p = Scrape(url_);
    return p.Find("etcd_mvcc_db_total_size_in_use_in_bytes").value_or(0) <
           p.Find("etcd_mvcc_db_total_size_in_bytes").value_or(0) * 0.75;
  })) << "compaction frees pages: "
      << p.Find("etcd_mvcc_db_total_size_in_use_in_bytes").value_or(0) << " of "
      << p.Find("etcd_mvcc_db_total_size_in_bytes").value_or(0);
  const double total = p.Find("etcd_mvcc_db_total_size_in_bytes").value_or(0);
  ASSERT_TRUE(client_->Raw(client_->Subject("maint.defrag"), "").ok());
  ASSERT_TRUE(WaitFor([&] {
    p = Scrape(url_);
    return p.Find("etcd_mvcc_db_total_size_in_bytes").value_or(total) < total * 0.75;
  })) << "defragment shrinks the file: "
      << p.Find("etcd_mvcc_db_total_size_in_bytes").value_or(0) << " of " << total;
  EXPECT_EQ(p.Find("etcd_mvcc_db_total_size_in_use_in_bytes"),
            p.Find("etcd_mvcc_db_total_size_in_bytes"));
}

TEST_F(MetricsTest, HealthAsEtcdAnswersIt) {
  ASSERT_TRUE(WaitFor([&] { return HttpRequest(url_ + "/health").status == 200; }))
      << HttpRequest(url_ + "/health").body;
  for (const char* path :
       {"/health", "/readyz", "/livez", "/health?serializable=true", "/health?exclude=NOSPACE"}) {
    HttpResponse r = HttpRequest(url_ + path);
    EXPECT_EQ(r.status, 200) << path << ": " << r.body;
    EXPECT_EQ(r.body, kHealthy) << path;
  }
  // HEAD as GET, without a body; any other method refused as Go's mux does.
  HttpResponse head = HttpRequest(url_ + "/health", "HEAD");
  EXPECT_EQ(head.status, 200);
  EXPECT_EQ(head.body, "");
  HttpResponse post = HttpRequest(url_ + "/health", "POST");
  EXPECT_EQ(post.status, 405);
  EXPECT_EQ(post.headers["allow"], "GET");
}

TEST_F(MetricsTest, UnknownPathIsNotFound) {
  for (const char* path : {"/", "/metricsx", "/health/", "/v3/kv/range", "/debug/vars"}) {
    HttpResponse r = HttpRequest(url_ + path);
    EXPECT_EQ(r.status, 404) << path;
    EXPECT_EQ(r.body, "404 page not found\n") << path;
  }
}

// A member past its backend quota: /health answers etcd's 503 with the
// NOSPACE alarm as its reason (/livez stays true: a full member is alive;
// exclude=NOSPACE ignores it), and true again once the alarm is disarmed.
class MetricsQuotaTest : public MetricsTest {
 protected:
  std::vector<std::string> ExtraArgs() override {
    std::vector<std::string> args = MetricsTest::ExtraArgs();
    args.insert(args.end(), {"--quota-backend-bytes", "1048576", "--snapshot-count", "2"});
    return args;
  }
};

TEST_F(MetricsQuotaTest, HealthFalseWithTheNoSpaceAlarmRaised) {
  ASSERT_TRUE(WaitFor([&] { return HttpRequest(url_ + "/health").status == 200; }))
      << HttpRequest(url_ + "/health").body;
  EXPECT_EQ(Scrape(url_).Find("etcd_server_quota_backend_bytes"), 1048576);
  const std::string value(100'000, 'q');
  Natcd__V1__PutRequest put;
  natcd__v1__put_request__init(&put);
  put.key = {7, reinterpret_cast<uint8_t*>(const_cast<char*>("/quota/"))};
  put.value = {value.size(), reinterpret_cast<uint8_t*>(const_cast<char*>(value.data()))};
  WireReply refused;
  for (int i = 0; i < 40 && refused.ok(); ++i) refused = client_->Call("kv.put", &put.base);
  ASSERT_FALSE(refused.ok()) << "the quota was never reached";
  EXPECT_EQ(refused.error, "ErrNoSpace: etcdserver: mvcc: database space exceeded");

  HttpResponse r;
  EXPECT_TRUE(WaitFor([&] {
    r = HttpRequest(url_ + "/health");
    return r.status == 503;
  })) << r.status
      << " " << r.body;
  EXPECT_EQ(r.body, std::string(R"({"health":"false","reason":"ALARM NOSPACE"})") + "\n");
  EXPECT_EQ(r.headers["content-type"], "text/plain; charset=utf-8");
  EXPECT_EQ(HttpRequest(url_ + "/readyz").status, 503);
  for (const char* path : {"/livez", "/health?exclude=NOSPACE"}) {
    HttpResponse ok = HttpRequest(url_ + path);
    EXPECT_EQ(ok.status, 200) << path << ": " << ok.body;
    EXPECT_EQ(ok.body, kHealthy) << path;
  }

  Natcd__V1__StatusRequest status;
  natcd__v1__status_request__init(&status);
  auto member = WireClient::Decode<Natcd__V1__StatusResponse>(
      &natcd__v1__status_response__descriptor, client_->Call("maint.status", &status.base));
  ASSERT_TRUE(member && member->header);
  Natcd__V1__AlarmRequest disarm;
  natcd__v1__alarm_request__init(&disarm);
  disarm.action = NATCD__V1__ALARM_REQUEST__ALARM_ACTION__DEACTIVATE;
  disarm.memberid = member->header->member_id;
  disarm.alarm = NATCD__V1__ALARM_TYPE__NOSPACE;
  WireReply disarmed = client_->Call("maint.alarm", &disarm.base);
  ASSERT_TRUE(disarmed.ok()) << disarmed.error;
  auto cleared = WireClient::Decode<Natcd__V1__AlarmResponse>(
      &natcd__v1__alarm_response__descriptor, disarmed);
  ASSERT_TRUE(cleared);
  EXPECT_EQ(cleared->n_alarms, 1u);
  EXPECT_TRUE(WaitFor([&] {
    r = HttpRequest(url_ + "/health");
    return r.status == 200;
  })) << r.status
      << " " << r.body;
  EXPECT_EQ(r.body, kHealthy);
}

// With its NATS server gone natcd cannot serve: /health says so within a
// bounded time, and recovers when the server is back.
TEST_F(MetricsTest, HealthFalseWhileNatsIsDownAndBackAfter) {
  ASSERT_TRUE(WaitFor([&] { return HttpRequest(url_ + "/health").status == 200; }));
  server_.Kill();
  auto killed = std::chrono::steady_clock::now();
  HttpResponse r;
  ASSERT_TRUE(WaitFor(
      [&] {
        r = HttpRequest(url_ + "/health");
        return r.status == 503;
      },
      std::chrono::seconds(5)))
      << r.status << " " << r.body;
  auto took = std::chrono::steady_clock::now() - killed;
  EXPECT_LT(took, std::chrono::seconds(3));
  // Until nats.c notices the dead connection the member's status request
  // may time out first ("STATUS ERROR:Timeout", unhealthy too); then the
  // reason is the connection.
  EXPECT_TRUE(WaitFor(
      [&] {
        r = HttpRequest(url_ + "/health");
        return r.body == std::string(R"({"health":"false","reason":"NATS DISCONNECTED"})") + "\n";
      },
      std::chrono::seconds(5)))
      << r.body;
  EXPECT_EQ(r.headers["content-type"], "text/plain; charset=utf-8");
  EXPECT_EQ(HttpRequest(url_ + "/readyz").status, 503);
  EXPECT_EQ(HttpRequest(url_ + "/livez").status, 503);
  EXPECT_TRUE(WaitFor([&] { return Scrape(url_).Find("natcd_nats_connected") == 0; }));
  EXPECT_GE(Scrape(url_).Find("etcd_server_health_failures").value_or(0), 1);

  ASSERT_TRUE(server_.Restart());
  EXPECT_TRUE(WaitFor([&] { return HttpRequest(url_ + "/health").status == 200; },
                      std::chrono::seconds(15)))
      << HttpRequest(url_ + "/health").body;
  ParsedExposition p = Scrape(url_);
  EXPECT_EQ(p.Find("natcd_nats_connected"), 1);
  EXPECT_GE(p.Find("natcd_nats_reconnects_total").value_or(0), 1);
}

// In a cluster that loses its quorum the member left has no leader: its
// /health says so (serializable=true, the member alone, still answers
// true), and says true again once a quorum is back.
TEST(MetricsClusterTest, NoQuorumNoLeaderNoHealth) {
  NatsServer server;
  ASSERT_TRUE(server.Start());
  std::map<std::string, std::unique_ptr<TempDir>> dirs;
  std::map<std::string, std::unique_ptr<NatcdProcess>> members;
  std::map<std::string, std::string> urls;
  for (const char* name : {"n1", "n2", "n3"}) {
    dirs[name] = std::make_unique<TempDir>();
    members[name] = std::make_unique<NatcdProcess>(
        server.url(), dirs[name]->path(),
        std::vector<std::string>{"--name", name, "--initial-cluster", "n1,n2,n3",
                                 "--heartbeat-interval", "50", "--election-timeout", "500",
                                 "--log-level", "warn", "--listen-metrics-urls",
                                 "http://127.0.0.1:0"});
    ASSERT_TRUE(members[name]->Start());
    urls[name] = MetricsUrl(members[name]->Log());
    ASSERT_NE(urls[name], "") << members[name]->Log();
  }
  for (const auto& [name, url] : urls) {
    EXPECT_TRUE(WaitFor([&] { return HttpRequest(url + "/health").status == 200; }))
        << name << ": " << HttpRequest(url + "/health").body;
  }
  members["n1"]->Kill();
  members["n2"]->Kill();
  // Wait for the reason expected: a probe may also time out on the way
  // ("STATUS ERROR:Timeout"), which is a true answer too.
  HttpResponse r;
  EXPECT_TRUE(WaitFor([&] {
    r = HttpRequest(urls["n3"] + "/health");
    return r.status == 503 &&
           r.body == std::string(R"({"health":"false","reason":"RAFT NO LEADER"})") + "\n";
  })) << r.status
      << " " << r.body;
  EXPECT_EQ(HttpRequest(urls["n3"] + "/readyz").status, 503);
  EXPECT_EQ(HttpRequest(urls["n3"] + "/health?serializable=true").body, kHealthy);

  ASSERT_TRUE(members["n2"]->Start());
  EXPECT_TRUE(WaitFor([&] { return HttpRequest(urls["n3"] + "/health").status == 200; }))
      << HttpRequest(urls["n3"] + "/health").body;
}

// natcd as a child with these arguments and environment; waits for its
// serving line (or its exit) and stops it with SIGTERM on destruction.
class Daemon {
 public:
  Daemon(const std::vector<std::string>& args,
         const std::vector<std::pair<std::string, std::string>>& env)
      : log_(dir_.File("natcd.log")) {
    pid_ = fork();
    if (pid_ == 0) {
      for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
      FILE* f = freopen(log_.c_str(), "w", stdout);
      (void)f;
      dup2(STDOUT_FILENO, STDERR_FILENO);
      std::string bin = NatcdProcess::Binary();
      std::vector<char*> argv = {bin.data()};
      for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      execv(bin.c_str(), argv.data());
      _exit(127);
    }
    WaitFor(
        [&] {
          if (waitpid(pid_, &exit_status_, WNOHANG) == pid_) {
            pid_ = -1;
            return true;
          }
          return Log().find("serving") != std::string::npos;
        },
        std::chrono::seconds(15));
  }
  ~Daemon() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      waitpid(pid_, nullptr, 0);
    }
  }
  std::string Log() const {
    std::ifstream in(log_);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  bool exited() const { return pid_ < 0; }
  int exit_status() const { return exit_status_; }
  std::string data_dir() { return dir_.File("data"); }

 private:
  TempDir dir_;
  std::string log_;
  pid_t pid_ = -1;
  int exit_status_ = 0;
};

class MetricsConfigTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(server_.Start()); }
  std::vector<std::string> Base(const std::string& config) {
    return {"--config",        config,        "--nats-url", server_.url(), "--data-dir",
            dir_.File("data"), "--log-level", "warn"};
  }
  static std::string Url(int port) { return "http://127.0.0.1:" + std::to_string(port); }
  NatsServer server_;
  TempDir dir_;
};

TEST_F(MetricsConfigTest, FlagBeatsEnvironmentBeatsConfigFile) {
  int file_port = FreePort(), env_port = FreePort(), flag_port = FreePort();
  std::string conf = dir_.File("natcd.conf");
  std::ofstream(conf) << "listen-metrics-urls = \"" << Url(file_port) << "\"\n";
  {
    Daemon d(Base(conf), {});
    EXPECT_EQ(MetricsUrl(d.Log()), Url(file_port)) << d.Log();
    EXPECT_EQ(HttpRequest(Url(file_port) + "/metrics").status, 200);
  }
  {
    Daemon d(Base(conf), {{"NATCD_LISTEN_METRICS_URLS", Url(env_port)}});
    EXPECT_EQ(MetricsUrl(d.Log()), Url(env_port)) << d.Log();
    EXPECT_EQ(HttpRequest(Url(env_port) + "/metrics").status, 200);
  }
  {
    std::vector<std::string> args = Base(conf);
    args.insert(args.end(), {"--listen-metrics-urls", Url(flag_port)});
    Daemon d(args, {{"NATCD_LISTEN_METRICS_URLS", Url(env_port)}});
    EXPECT_EQ(MetricsUrl(d.Log()), Url(flag_port)) << d.Log();
    EXPECT_EQ(HttpRequest(Url(flag_port) + "/metrics").status, 200);
  }
}

TEST_F(MetricsConfigTest, SeveralUrlsServeTheSame) {
  std::vector<std::string> args = Base("/dev/null");
  args.insert(args.end(), {"--listen-metrics-urls", "http://127.0.0.1:0,http://localhost:0"});
  Daemon d(args, {});
  std::vector<std::string> urls = MetricsUrls(d.Log());
  ASSERT_EQ(urls.size(), 2u) << d.Log();
  EXPECT_NE(urls[0], urls[1]);
  for (const std::string& url : urls) EXPECT_EQ(HttpRequest(url + "/metrics").status, 200) << url;
}

TEST_F(MetricsConfigTest, HelpNamesTheSetting) {
  Daemon d({"--help"}, {});
  EXPECT_NE(d.Log().find("--listen-metrics-urls"), std::string::npos) << d.Log();
  EXPECT_NE(d.Log().find("NATCD_LISTEN_METRICS_URLS"), std::string::npos) << d.Log();
}

TEST_F(MetricsConfigTest, UnsetMeansOffWhenAttachedToNats) {
  Daemon d(Base("/dev/null"), {});
  ASSERT_FALSE(d.exited()) << d.Log();
  EXPECT_EQ(MetricsUrl(d.Log()), "") << d.Log();
}

TEST_F(MetricsConfigTest, BadUrlsAreRefusedAtStart) {
  for (const char* bad : {"ftp://127.0.0.1:1", "https://127.0.0.1:2381", "http://127.0.0.1",
                          "http://example.com:2381", "http://127.0.0.1:99999"}) {
    std::vector<std::string> args = Base("/dev/null");
    args.insert(args.end(), {"--listen-metrics-urls", bad});
    Daemon d(args, {});
    ASSERT_TRUE(d.exited()) << bad;
    EXPECT_TRUE(WIFEXITED(d.exit_status()) && WEXITSTATUS(d.exit_status()) == 2) << bad;
    EXPECT_NE(d.Log().find("listen-metrics-urls: "), std::string::npos) << d.Log();
  }
}

TEST_F(MetricsConfigTest, PortTakenIsAnErrorWhenConfigured) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(listen(fd, 1), 0);
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  std::vector<std::string> args = Base("/dev/null");
  args.insert(args.end(), {"--listen-metrics-urls", Url(ntohs(addr.sin_port))});
  Daemon d(args, {});
  close(fd);
  ASSERT_TRUE(d.exited()) << d.Log();
  EXPECT_NE(d.Log().find("metrics listener " + Url(ntohs(addr.sin_port))), std::string::npos)
      << d.Log();
}

// The embedded default (no NATS URL) serves metrics on loopback, on 2381 or,
// when that is taken (here by the test itself when it can), another port.
TEST(MetricsEmbeddedTest, EmbeddedDefaultServesOnLoopbackAndPrintsWhere) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(2381);
  bool holding_2381 =
      bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 && listen(fd, 1) == 0;
  TempDir dir;
  std::string port = std::to_string(FreePort());
  Daemon d({"--config", "/dev/null", "--data-dir", dir.File("data"), "--embedded-port", port,
            "--log-level", "warn"},
           {});
  close(fd);
  ASSERT_FALSE(d.exited()) << d.Log();
  std::string url = MetricsUrl(d.Log());
  ASSERT_NE(url, "") << d.Log();
  EXPECT_EQ(url.rfind("http://127.0.0.1:", 0), 0u) << url;
  if (holding_2381) {
    EXPECT_NE(url, "http://127.0.0.1:2381");  // the fallback
  }
  EXPECT_EQ(HttpRequest(url + "/metrics").status, 200);
  EXPECT_TRUE(WaitFor([&] { return HttpRequest(url + "/health").body == kHealthy; }))
      << HttpRequest(url + "/health").body;
}

}  // namespace
}  // namespace natcd::testing
