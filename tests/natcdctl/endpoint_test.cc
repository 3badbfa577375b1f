// natcdctl end to end: endpoint health and, on a cluster of three,
// endpoint status/health/hashkv --cluster and defrag --cluster (each member
// reached over NATS by its ID).
#include <functional>
#include <map>
#include <set>

#include "natcdctl/natcdctl_fixture.h"

namespace natcd::testing {
namespace {

// Go's time.Duration.String(), as etcdctl prints "took".
const std::string kGoDuration = "[0-9]+(\\.[0-9]+)?(ns|\xc2\xb5s|ms|s)";

TEST_F(NatcdctlTest, EndpointHealthLikeEtcdctl) {
  CtlResult ok = Ctl({"endpoint", "health"});
  EXPECT_EQ(ok.code, 0) << ok.err;
  EXPECT_TRUE(std::regex_match(
      ok.out, std::regex(Url() + " is healthy: successfully committed proposal: took = " +
                         kGoDuration + "\n")))
      << ok.out;
  CtlResult json = Ctl({"endpoint", "health", "-w", "json"});
  EXPECT_TRUE(std::regex_match(
      json.out, std::regex("\\[\\{\"endpoint\":\"" + Url() + "\",\"health\":true,\"took\":\"" +
                           kGoDuration + "\"\\}\\]\n")))
      << json.out;
  CtlResult table = Ctl({"endpoint", "health", "-w", "table"});
  // The columns are as wide as their widest cell (TOOK's depends on the
  // time the request took): the header's cells, centered.
  EXPECT_TRUE(std::regex_search(table.out,
                                std::regex("\\| +ENDPOINT +\\| HEALTH \\| +TOOK +\\| ERROR \\|\n")))
      << table.out;
  EXPECT_TRUE(std::regex_search(table.out, std::regex("\\| +true \\| +" + kGoDuration + " \\|")))
      << table.out;
  // Every line as wide as the others ("µs" is one column).
  size_t first = table.out.find('\n');
  for (size_t at = 0, end; (end = table.out.find('\n', at)) != std::string::npos; at = end + 1) {
    std::string line = table.out.substr(at, end - at);
    size_t columns = 0;
    for (unsigned char c : line) columns += (c & 0xc0) != 0x80;
    EXPECT_EQ(columns, first) << table.out;
  }
  CtlResult fields = Ctl({"endpoint", "health", "-w", "fields"});
  EXPECT_TRUE(std::regex_match(fields.out,
                               std::regex("\"Endpoint\" : \"" + Url() + "\"\n\"Health\" : true\n" +
                                          "\"Took\" : " + kGoDuration + "\n\"Error\" : \n\n")))
      << fields.out;

  // Nobody serves this prefix: unhealthy, on stderr, and the run fails.
  CtlResult none = Ctl({"endpoint", "health", "--prefix", "nobody", "--command-timeout", "1s"});
  EXPECT_EQ(none.code, 1);
  EXPECT_EQ(none.out, "");
  EXPECT_EQ(none.err.rfind(Url() + " is unhealthy: failed to commit proposal: ", 0), 0u)
      << none.err;
  EXPECT_NE(none.err.find("\nError: unhealthy cluster\n"), std::string::npos) << none.err;
  CtlResult none_json =
      Ctl({"endpoint", "health", "-w", "json", "--prefix", "nobody", "--command-timeout", "1s"});
  EXPECT_NE(none_json.out.find("\"health\":false"), std::string::npos) << none_json.out;
  EXPECT_NE(none_json.out.find("\"error\":\""), std::string::npos) << none_json.out;
}

TEST_F(NatcdctlTest, EndpointStatusClusterOfOne) {
  // The one member, reached by its ID: the endpoint column names it.
  CtlResult r = Ctl({"endpoint", "status", "--cluster"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(std::regex_match(
      r.out, std::regex("natcd-1, [0-9a-f]+, [^,]+, [0-9.]+ [kMG]?B, true, false, [0-9]+, "
                        "[0-9]+, [0-9]+, \n")))
      << r.out;
  CtlResult health = Ctl({"endpoint", "health", "--cluster"});
  EXPECT_EQ(health.code, 0) << health.err;
  EXPECT_TRUE(std::regex_match(
      health.out, std::regex("natcd-1 is healthy: successfully committed proposal: took = " +
                             kGoDuration + "\n")))
      << health.out;
}

// Three members on one nats-server; natcdctl reaches them through it.
class NatcdctlClusterTest : public NatcdctlTest {
 public:
  static void SetUpTestSuite() {
    dir_ = new TempDir;
    server_ = new NatsServer;
    ASSERT_TRUE(server_->Start());
    for (const char* name : {"n1", "n2", "n3"}) {
      member_dirs_[name] = std::make_unique<TempDir>();
      members_[name] = std::make_unique<NatcdProcess>(
          server_->url(), member_dirs_[name]->path(),
          std::vector<std::string>{"--name", name, "--initial-cluster", "n1,n2,n3",
                                   "--heartbeat-interval", "50", "--election-timeout", "500",
                                   "--log-level", "warn"});
      ASSERT_TRUE(members_[name]->Start());
    }
  }
  static void TearDownTestSuite() {
    members_.clear();
    member_dirs_.clear();
    delete server_;
    delete dir_;
    server_ = nullptr;
    dir_ = nullptr;
  }
  void TearDown() override {
    if (!HasFailure()) return;
    for (auto& [name, m] : members_) std::cerr << "--- " << name << " log:\n" << m->Log() << "\n";
  }

  // Runs natcdctl until `done` holds for its result (at most 15 s).
  static CtlResult Until(const std::vector<std::string>& args,
                         const std::function<bool(const CtlResult&)>& done) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
    CtlResult r;
    do {
      r = Ctl(args);
      if (done(r)) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    } while (std::chrono::steady_clock::now() < deadline);
    return r;
  }

  static size_t Count(const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  }

  static inline std::map<std::string, std::unique_ptr<TempDir>> member_dirs_;
  static inline std::map<std::string, std::unique_ptr<NatcdProcess>> members_;
};

TEST_F(NatcdctlClusterTest, StatusAndHealthOfEveryMember) {
  // Once a leader is elected every member knows it: one line each, one leader.
  CtlResult status = Until({"endpoint", "status", "--cluster"}, [](const CtlResult& r) {
    return r.code == 0 && Count(r.out, ", true, false, ") == 1;
  });
  ASSERT_EQ(status.code, 0) << status.err;
  std::set<std::string> ids;
  for (const char* name : {"n1", "n2", "n3"}) {
    std::smatch m;
    ASSERT_TRUE(std::regex_search(
        status.out, m,
        std::regex(std::string("(^|\n)") + name +
                   ", ([0-9a-f]+), [^,]+, [0-9.]+ [kMG]?B, (true|false), false, [0-9]+, "
                   "[0-9]+, [0-9]+, \n")))
        << status.out;
    ids.insert(m[2]);
  }
  EXPECT_EQ(ids.size(), 3u) << "each line is another member";
  EXPECT_EQ(Count(status.out, "\n"), 3u) << status.out;
  // Without --cluster: the one member the connection reached.
  EXPECT_EQ(Count(Ctl({"endpoint", "status"}).out, "\n"), 1u);

  CtlResult json = Ctl({"endpoint", "status", "--cluster", "-w", "json"});
  EXPECT_EQ(json.out.rfind("[{\"Endpoint\":\"n", 0), 0u) << json.out;
  EXPECT_EQ(Count(json.out, "{\"Endpoint\":"), 3u) << json.out;
  EXPECT_EQ(json.out.substr(json.out.size() - 4), "}}]\n") << json.out;
  CtlResult table = Ctl({"endpoint", "status", "--cluster", "-w", "table"});
  EXPECT_EQ(Count(table.out, "\n"), 7u) << table.out;  // 3 rules, header, 3 rows

  CtlResult health =
      Until({"endpoint", "health", "--cluster"}, [](const CtlResult& r) { return r.code == 0; });
  EXPECT_EQ(health.code, 0) << health.err;
  EXPECT_TRUE(std::regex_match(
      health.out, std::regex("(n[123] is healthy: successfully committed proposal: took = " +
                             kGoDuration + "\n){3}")))
      << health.out;
}

// Every member applied the same log: the same hash, before and after each
// defragments its own database.
TEST_F(NatcdctlClusterTest, HashKVIsEqualOnEveryMemberAndDefragKeepsIt) {
  for (int i = 0; i < 20; ++i) {
    ASSERT_EQ(Ctl({"put", "/hkc/" + std::to_string(i % 5), std::to_string(i)}).code, 0);
  }
  ASSERT_EQ(Ctl({"del", "/hkc/0"}).code, 0);
  const std::regex three("n[123], ([0-9]+)\nn[123], \\1\nn[123], \\1\n");
  // A follower may not have applied the last write yet: until all agree.
  CtlResult hashes = Until({"endpoint", "hashkv", "--cluster"}, [&](const CtlResult& r) {
    return r.code == 0 && std::regex_match(r.out, three);
  });
  ASSERT_TRUE(std::regex_match(hashes.out, three)) << hashes.out << hashes.err;
  for (const char* name : {"n1", "n2", "n3"}) {
    EXPECT_NE(hashes.out.find(std::string(name) + ", "), std::string::npos) << hashes.out;
  }

  CtlResult defrag = Ctl({"defrag", "--cluster"});
  EXPECT_EQ(defrag.code, 0) << defrag.err;
  EXPECT_TRUE(std::regex_match(defrag.out,
                               std::regex("(Finished defragmenting etcd member\\[n[123]\\]\n){3}")))
      << defrag.out;
  EXPECT_EQ(Ctl({"endpoint", "hashkv", "--cluster"}).out, hashes.out);
}

TEST_F(NatcdctlClusterTest, AMemberDownIsReportedAndTheRunFails) {
  ASSERT_EQ(members_["n3"]->Stop(), 0);
  // The other two go on (electing again if n3 led).
  CtlResult status = Until({"endpoint", "status", "--cluster"}, [](const CtlResult& r) {
    return Count(r.out, "\n") == 2 && Count(r.out, ", true, false, ") == 1;
  });
  EXPECT_EQ(status.code, 1);
  EXPECT_EQ(status.err.rfind("Failed to get the status of endpoint n3 (", 0), 0u) << status.err;
  EXPECT_TRUE(std::regex_search(status.out, std::regex("(^|\n)n1, "))) << status.out;
  EXPECT_TRUE(std::regex_search(status.out, std::regex("(^|\n)n2, "))) << status.out;

  CtlResult health = Until({"endpoint", "health", "--cluster"},
                           [](const CtlResult& r) { return Count(r.out, "is healthy") == 2; });
  EXPECT_EQ(health.code, 1);
  EXPECT_TRUE(std::regex_match(
      health.out, std::regex("(n[12] is healthy: successfully committed proposal: took = " +
                             kGoDuration + "\n){2}")))
      << health.out;
  EXPECT_EQ(health.err.rfind("n3 is unhealthy: failed to commit proposal: ", 0), 0u) << health.err;
  EXPECT_NE(health.err.find("\nError: unhealthy cluster\n"), std::string::npos) << health.err;
  CtlResult hashes = Ctl({"endpoint", "hashkv", "--cluster"});
  EXPECT_EQ(hashes.code, 1);
  EXPECT_EQ(hashes.err.rfind("Failed to get the hash of endpoint n3 (", 0), 0u) << hashes.err;
  EXPECT_EQ(Count(hashes.out, "\n"), 2u) << hashes.out;
  CtlResult defrag = Ctl({"defrag", "--cluster"});
  EXPECT_EQ(defrag.code, 1);
  EXPECT_EQ(defrag.err.rfind("Failed to defragment etcd member[n3] (", 0), 0u) << defrag.err;
  EXPECT_EQ(Count(defrag.out, "Finished defragmenting etcd member["), 2u) << defrag.out;
  CtlResult table = Ctl({"endpoint", "health", "--cluster", "-w", "table"});
  EXPECT_TRUE(
      std::regex_search(table.out, std::regex("\\| +n3 \\| +false \\| [^|]+ \\| [^|]*[a-z]")))
      << table.out;

  ASSERT_TRUE(members_["n3"]->Start());
  CtlResult back =
      Until({"endpoint", "health", "--cluster"}, [](const CtlResult& r) { return r.code == 0; });
  EXPECT_EQ(back.code, 0) << back.err;
}

}  // namespace
}  // namespace natcd::testing
