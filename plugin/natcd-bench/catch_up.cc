#include "plugin/natcd-bench/catch_up.h"

#include <nats/nats.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <sstream>
#include <thread>
#include <utility>
#include <vector>

#include "plugin/natcd-bench/clock.h"
#include "plugin/natcd-bench/cluster_admin.h"
#include "plugin/natcd-bench/deployment.h"
#include "plugin/natcd-bench/key_loader.h"
#include "plugin/natcd-bench/natcd_cluster.h"
#include "plugin/natcd-bench/nats_requests.h"
#include "plugin/natcd-bench/process.h"
#include "plugin/natcd-bench/report.h"

namespace natcd::bench {
namespace {

// The members natcd-bench starts with their default prefix.
constexpr const char* kPrefix = "natcd";
constexpr int kFoundingMembers = 3;
constexpr const char* kLearner = "m4";
constexpr int64_t kLeaderTimeoutMs = 30'000;
// Promote is refused while the learner is behind: ask again this often.
constexpr int64_t kPromoteRetryMs = 200;
// Bounds, far from what a working cluster takes (issue 6: 1,000,000 keys
// loaded at 5,500 puts/s or better, caught up in 3.9 s): past them the run
// is broken, not slow, and gives up rather than hang.
constexpr int64_t kLoadMsBase = 60'000;
constexpr int64_t kLoadUsPerKey = 1'000;  // 1,000 puts/s
constexpr int64_t kCatchUpMsBase = 60'000;
constexpr int64_t kCatchUpUsPerKey = 200;  // 1,000,000 keys: 260 s
constexpr double kMB = 1e6;                // SI, as natcdctl endpoint status prints sizes

using Connection = std::unique_ptr<natsConnection, decltype(&natsConnection_Destroy)>;

int Fail(const std::string& what) {
  fprintf(stderr, "natcd-bench catch-up: %s\n", what.c_str());
  return 1;
}

// The lines of a member's log that tell how it caught up (a snapshot or
// the log), at most `lines_max`.
std::vector<std::string> SnapshotLines(const Process& member, size_t lines_max) {
  std::istringstream log(member.LogTail(64 * 1024));
  std::vector<std::string> out;
  std::string line;
  while (std::getline(log, line) && out.size() < lines_max) {
    if (line.find("snapshot") != std::string::npos) out.push_back(line);
  }
  return out;
}

// "natcd.db 152.9 MB, natcd.db-wal 18.1 MB": the files of a data folder,
// since the database is split between the file and SQLite's WAL until a
// checkpoint.
std::string FileSizes(const std::string& dir) {
  std::error_code ec;
  std::vector<std::pair<std::string, uintmax_t>> files;
  for (auto it = std::filesystem::directory_iterator(dir, ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    std::error_code size_ec;
    const uintmax_t size = it->file_size(size_ec);
    if (!size_ec && it->is_regular_file(size_ec)) files.emplace_back(it->path().filename(), size);
  }
  std::sort(files.begin(), files.end());
  std::string out;
  for (const auto& [name, size] : files) {
    char buf[64];
    snprintf(buf, sizeof buf, " %.1f MB", static_cast<double>(size) / kMB);
    out += (out.empty() ? "" : ", ") + name + buf;
  }
  return out;
}

int Measure(const CatchUpOptions& o, const std::string& root) {
  Deployment deployment(root, o.natcd_bin, SelfPath());
  Process nats;
  const std::string url = deployment.StartNats(nats, "nats", false);
  if (url.empty()) return Fail("nats-server did not start");
  Connection nc(ConnectNats(url), &natsConnection_Destroy);
  if (nc == nullptr) return Fail("cannot connect to " + url);
  const ClusterAdmin admin(nc.get(), kPrefix);
  NatcdCluster cluster(deployment, admin, url, "natcd");
  std::string error;
  if (!cluster.Start(kFoundingMembers, kLeaderTimeoutMs, &error)) return Fail(error);
  printf("natcd: %s on %s, data in %s\n", NatcdCluster::Describe(kFoundingMembers).c_str(),
         url.c_str(), root.c_str());
  fflush(stdout);

  const int64_t load_ms_max = kLoadMsBase + static_cast<int64_t>(o.keys) * kLoadUsPerKey / 1000;
  const LoadResult load = LoadKeys(nc.get(), kPrefix, o.keys, o.in_flight, load_ms_max);
  const uint64_t loaded = load.completed - load.errors;
  printf("loaded %s keys in %.1f s: %s puts/s (%d in flight, %llu errors, %llu unanswered)\n",
         FormatValue(static_cast<double>(loaded), 0).c_str(), load.seconds,
         FormatValue(load.per_second(), 0).c_str(), o.in_flight,
         static_cast<unsigned long long>(load.errors),
         static_cast<unsigned long long>(load.timeouts));
  fflush(stdout);
  if (loaded < o.keys) {
    return Fail("loaded only " + std::to_string(loaded) + " of " + std::to_string(o.keys) +
                " keys within " + std::to_string(load_ms_max / 1000) + " s");
  }

  size_t leader = 0;
  if (!cluster.LeaderIndex(&leader, &error)) return Fail(error);
  const std::string leader_dir = cluster.DataDir(leader);
  printf("leader %s: data folder %.1f MB on disk (%s)\n", cluster.name(leader).c_str(),
         DiskBytes(leader_dir) / kMB, FileSizes(leader_dir).c_str());
  fflush(stdout);

  // From the member add (a membership change the leader commits) until the
  // promotion is accepted: the learner's start, its snapshot or log, and
  // the last entries it needs are all inside.
  const int64_t catch_up_ms_max =
      kCatchUpMsBase + static_cast<int64_t>(o.keys) * kCatchUpUsPerKey / 1000;
  const int64_t start = NowNs();
  uint64_t id = 0;
  if (!cluster.AddLearner(kLearner, &id, &error)) return Fail(error);
  const size_t learner = cluster.size() - 1;
  int attempts = 0;
  std::string refused;
  while (true) {
    ++attempts;
    if (admin.PromoteMember(id, &refused)) break;
    if (NowNs() - start > catch_up_ms_max * 1'000'000) {
      fprintf(stderr, "%s's log, the end:\n%s\n", kLearner,
              cluster.process(learner).LogTail().c_str());
      return Fail(std::string(kLearner) + " not promoted after " +
                  std::to_string(catch_up_ms_max / 1000) + " s (" + std::to_string(attempts) +
                  " attempts; the last: " + refused + ")");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(kPromoteRetryMs));
  }
  const double seconds = (NowNs() - start) / 1e9;
  for (const std::string& line : SnapshotLines(cluster.process(learner), 4)) {
    printf("  %s: %s\n", kLearner, line.c_str());
  }
  printf("%s (learner, empty data folder) caught up and promoted in %.1f s (%d promote attempts)\n",
         kLearner, seconds, attempts);
  fflush(stdout);
  return 0;
}

}  // namespace

int RunCatchUp(const CatchUpOptions& o) {
  if (Deployment::NatsServerBinary().empty()) {
    return Fail("nats-server not found (Debian package nats-server)");
  }
  const std::string root = MakeTempDir("natcd-catch-up", o.tmp_dir);
  if (root.empty()) return Fail("cannot create a temporary folder");
  // Every server is stopped when Measure returns (the processes' and the
  // cluster's destructors), before their data goes.
  const int code = Measure(o, root);
  RemoveTree(root);
  nats_Close();
  return code;
}

}  // namespace natcd::bench
