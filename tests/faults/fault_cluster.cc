#include "faults/fault_cluster.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <chrono>
#include <sstream>
#include <thread>

namespace natcd::testing {
namespace {

using Clock = std::chrono::steady_clock;

std::string Loopback(int port) { return "nats://127.0.0.1:" + std::to_string(port); }

// GET http://127.0.0.1:port/path, the body ("" on failure); 2 s at most.
std::string HttpGet(int port, const std::string& path) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return "";
  timeval tv{2, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  std::string response;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
    const std::string request = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
    if (write(fd, request.data(), request.size()) == static_cast<ssize_t>(request.size())) {
      char buf[4096];
      for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) response.append(buf, n);
    }
  }
  close(fd);
  const size_t body = response.find("\r\n\r\n");
  return body == std::string::npos ? "" : response.substr(body + 4);
}

}  // namespace

FaultCluster::FaultCluster(TopologyOptions options)
    : options_(std::move(options)),
      paused_(options_.members, false),
      cut_(options_.members, false),
      server_down_(options_.nats_servers, false),
      routes_cut_(options_.nats_servers, false) {
  for (int i = 0; i < options_.members; i++) names_.push_back("m" + std::to_string(i + 1));
}

FaultCluster::~FaultCluster() {
  // A stopped process ignores SIGTERM until continued; SIGKILL works on it,
  // and the destructors kill. Members first: they would log every server
  // going away.
  members_.clear();
  if (tmpfs_mounted_) {
    const std::string dir = dirs_[options_.tmpfs_member]->path();
    umount2(dir.c_str(), MNT_DETACH);
  }
  servers_.clear();
  route_proxies_.clear();
  member_proxies_.clear();
}

std::vector<std::string> FaultCluster::ServerArgs(int s) const {
  // The monitoring port: a failed run shows each server's routes.
  std::vector<std::string> args = {"-m", std::to_string(monitor_ports_[s])};
  if (options_.nats_servers == 1) return args;
  args.insert(args.end(),
              {"--cluster", Loopback(cluster_ports_[s]), "--cluster_name", "natcd-faults"});
  std::string routes;
  for (int b = 0; b < options_.nats_servers; b++) {
    if (b == s) continue;
    int port = options_.proxy_routes ? route_proxies_.at({s, b})->port() : cluster_ports_[b];
    if (!routes.empty()) routes += ",";
    routes += Loopback(port);
  }
  args.insert(args.end(), {"--routes", routes});
  if (options_.proxy_routes) {
    // Servers gossip each other's route URLs and connect to the ones they
    // do not know yet, which would bypass the proxies: advertise a port
    // nobody listens on, and give such implicit routes no retry.
    args.insert(args.end(),
                {"--cluster_advertise", "127.0.0.1:" + std::to_string(PickFreeLoopbackPort()),
                 "--connect_retries", "0"});
  }
  return args;
}

::testing::AssertionResult FaultCluster::Start() {
  const int n_servers = options_.nats_servers;
  for (int s = 0; s < n_servers; s++) {
    cluster_ports_.push_back(PickFreeLoopbackPort());
    monitor_ports_.push_back(PickFreeLoopbackPort());
  }
  if (options_.proxy_routes) {
    for (int a = 0; a < n_servers; a++) {
      for (int b = 0; b < n_servers; b++) {
        if (a == b) continue;
        auto proxy = std::make_unique<TcpProxy>(cluster_ports_[b]);
        if (!proxy->Start()) return ::testing::AssertionFailure() << "route proxy did not start";
        route_proxies_[{a, b}] = std::move(proxy);
      }
    }
  }
  for (int s = 0; s < n_servers; s++) {
    NatsServerOptions server_options;
    server_options.extra_args = ServerArgs(s);
    servers_.push_back(std::make_unique<NatsServer>(server_options));
    auto started = servers_.back()->Start();
    if (!started) return started;
  }
  for (int i = 0; i < options_.members; i++) {
    std::string url = ServerUrl(i % n_servers);
    if (options_.proxy_members) {
      auto proxy = std::make_unique<TcpProxy>(servers_[i % n_servers]->port());
      if (!proxy->Start()) return ::testing::AssertionFailure() << "member proxy did not start";
      url = Loopback(proxy->port());
      member_proxies_.push_back(std::move(proxy));
    }
    std::string initial;
    for (const std::string& name : names_) initial += (initial.empty() ? "" : ",") + name;
    std::vector<std::string> args = {"--name",
                                     names_[i],
                                     "--initial-cluster",
                                     initial,
                                     "--heartbeat-interval",
                                     std::to_string(options_.heartbeat_interval_ms),
                                     "--election-timeout",
                                     std::to_string(options_.election_timeout_ms),
                                     "--lease-ttl-min",
                                     "1",
                                     "--watch-heartbeat-ms",
                                     std::to_string(options_.watch_heartbeat_ms),
                                     "--log-level",
                                     "warn"};
    args.insert(args.end(), options_.extra_member_args.begin(), options_.extra_member_args.end());
    dirs_.push_back(std::make_unique<TempDir>());
    if (i == options_.tmpfs_member) {
      const std::string size = "size=" + std::to_string(options_.tmpfs_bytes);
      if (mount("natcd-faults", dirs_.back()->path().c_str(), "tmpfs", 0, size.c_str()) != 0) {
        return ::testing::AssertionFailure() << "mount tmpfs: " << std::strerror(errno);
      }
      tmpfs_mounted_ = true;
    }
    members_.push_back(std::make_unique<NatcdProcess>(url, dirs_.back()->path(), args));
  }
  // One after the other, from this thread: a child dies with the thread
  // that forked it (PR_SET_PDEATHSIG), so no helper thread may start one.
  for (int i = 0; i < options_.members; i++) {
    auto started = members_[i]->Start();
    if (!started) return started << " (member " << names_[i] << ")";
  }
  if (LeaderIndex(30'000) < 0) return ::testing::AssertionFailure() << "no leader elected";
  return ::testing::AssertionSuccess();
}

std::string FaultCluster::ServerUrl(int s) const { return servers_[s]->url(); }

std::string FaultCluster::ClientUrls() const {
  std::string urls;
  for (const auto& server : servers_) urls += (urls.empty() ? "" : ",") + server->url();
  return urls;
}

int FaultCluster::LeaderFromLogs() const {
  // Each member logs its role changes: "natcd m1: leader, term 3, leader ...".
  // The leader is the member whose last role is leader in the highest term
  // any member has reached (a deposed leader that has not heard of the new
  // term yet still says leader, in an older term).
  int64_t top_term = -1;
  int top_leader = -1;
  for (int i = 0; i < options_.members; i++) {
    if (!members_[i]->running()) continue;
    const std::string log = members_[i]->Log();
    const std::string tag = "natcd " + names_[i] + ": ";
    size_t at = log.rfind(tag);
    while (at != std::string::npos) {
      const size_t role_end = log.find(", term ", at);
      const size_t line_end = log.find('\n', at);
      if (role_end != std::string::npos && role_end < line_end) {
        const std::string role = log.substr(at + tag.size(), role_end - at - tag.size());
        const int64_t term = std::atoll(log.c_str() + role_end + 7);
        if (term > top_term) {
          top_term = term;
          top_leader = -1;
        }
        if (term == top_term && role == "leader") top_leader = i;
        break;
      }
      if (at == 0) break;
      at = log.rfind(tag, at - 1);
    }
  }
  return top_leader;
}

int FaultCluster::LeaderIndex(int timeout_ms) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  do {
    if (int leader = LeaderFromLogs(); leader >= 0) return leader;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  } while (Clock::now() < deadline);
  return -1;
}

void FaultCluster::KillMember(int i) {
  members_[i]->Kill();
  paused_[i] = false;
}

bool FaultCluster::StopMemberWithin(int i, std::chrono::milliseconds limit) {
  if (paused_[i]) ResumeMember(i);
  return members_[i]->StopWithin(limit);
}

::testing::AssertionResult FaultCluster::RestartMember(int i) {
  if (members_[i]->running()) return ::testing::AssertionSuccess();
  return members_[i]->Start();
}

void FaultCluster::PauseMember(int i) {
  if (!members_[i]->running() || paused_[i]) return;
  kill(members_[i]->pid(), SIGSTOP);
  paused_[i] = true;
}

void FaultCluster::ResumeMember(int i) {
  if (!paused_[i]) return;
  if (members_[i]->running()) kill(members_[i]->pid(), SIGCONT);
  paused_[i] = false;
}

void FaultCluster::CutMember(int i) {
  if (member_proxies_.empty() || i < 0) return;
  member_proxies_[i]->Cut();
  cut_[i] = true;
}

void FaultCluster::FreezeMember(int i) {
  if (member_proxies_.empty() || i < 0) return;
  member_proxies_[i]->Freeze();
  cut_[i] = true;
}

void FaultCluster::HealMember(int i) {
  if (member_proxies_.empty() || i < 0) return;
  member_proxies_[i]->Heal();
  cut_[i] = false;
}

void FaultCluster::KillServer(int s) {
  servers_[s]->Kill();
  server_down_[s] = true;
}

::testing::AssertionResult FaultCluster::RestartServer(int s) {
  server_down_[s] = false;
  if (servers_[s]->running()) return ::testing::AssertionSuccess();
  return servers_[s]->Start();
}

::testing::AssertionResult FaultCluster::FillDisk(int i) {
  if (i != options_.tmpfs_member) return ::testing::AssertionFailure() << "not on a tmpfs";
  const std::string path = dirs_[i]->File("filler");
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ::testing::AssertionFailure() << "open filler: " << std::strerror(errno);
  static const char block[1 << 16] = {};
  for (;;) {
    const ssize_t n = write(fd, block, sizeof block);
    if (n <= 0) break;  // ENOSPC: full (a partial write filled the rest)
  }
  close(fd);
  disk_full_ = true;
  return ::testing::AssertionSuccess();
}

void FaultCluster::FreeDisk(int i) {
  if (i != options_.tmpfs_member) return;
  unlink(dirs_[i]->File("filler").c_str());
  disk_full_ = false;
}

void FaultCluster::CutRoutes(int s) {
  for (auto& [pair, proxy] : route_proxies_) {
    if (pair.first == s || pair.second == s) proxy->Cut();
  }
  routes_cut_[s] = true;
}

void FaultCluster::HealRoutes(int s) {
  for (auto& [pair, proxy] : route_proxies_) {
    if (pair.first == s || pair.second == s) proxy->Heal();
  }
  routes_cut_[s] = false;
}

::testing::AssertionResult FaultCluster::HealAll() {
  for (int s = 0; s < servers(); s++) {
    if (routes_cut_[s]) HealRoutes(s);
    if (server_down_[s]) {
      auto restarted = RestartServer(s);
      if (!restarted) return restarted;
    }
  }
  if (disk_full_) FreeDisk(options_.tmpfs_member);
  for (int i = 0; i < members(); i++) {
    if (paused_[i]) ResumeMember(i);
    if (cut_[i]) HealMember(i);
    if (!members_[i]->running()) {
      auto restarted = RestartMember(i);
      if (!restarted) return restarted << " (member " << names_[i] << ")";
    }
  }
  return ::testing::AssertionSuccess();
}

std::string FaultCluster::Logs() const {
  std::ostringstream out;
  for (int i = 0; i < options_.members; i++) {
    std::string log = members_[i]->Log();
    // The tail is what a failure needs; a long run's whole log drowns it.
    if (log.size() > 6000) log = "...\n" + log.substr(log.size() - 6000);
    out << "--- " << names_[i] << " log:\n" << log << "\n";
  }
  for (int s = 0; s < servers(); s++) {
    // Its routes and clients coming and going, without the rest.
    std::istringstream in(servers_[s]->Log());
    if (servers() > 1 && servers_[s]->running()) {
      // Who it is routed to now, and what it has sent and received on each.
      std::istringstream routez(HttpGet(monitor_ports_[s], "/routez"));
      out << "--- nats-" << s << " /routez:\n";
      for (std::string line; std::getline(routez, line);) {
        if (line.find("\"remote_id\"") != std::string::npos ||
            line.find("\"num_routes\"") != std::string::npos ||
            line.find("\"server_id\"") != std::string::npos ||
            line.find("msgs\"") != std::string::npos ||
            line.find("\"port\"") != std::string::npos) {
          out << line << "\n";
        }
      }
    }
    if (servers_[s]->running()) {
      // Its client connections: a member's that nats-server cannot write to
      // shows pending bytes.
      std::istringstream connz(HttpGet(monitor_ports_[s], "/connz?subs=0"));
      out << "--- nats-" << s << " /connz:\n";
      for (std::string line; std::getline(connz, line);) {
        if (line.find("\"cid\"") != std::string::npos ||
            line.find("\"port\"") != std::string::npos ||
            line.find("pending_bytes") != std::string::npos ||
            line.find("msgs\"") != std::string::npos ||
            line.find("\"subscriptions\"") != std::string::npos ||
            line.find("\"name\"") != std::string::npos) {
          out << line << "\n";
        }
      }
    }
    out << "--- nats-" << s << " (port " << servers_[s]->port() << ") routes and errors:\n";
    for (std::string line; std::getline(in, line);) {
      if (line.find("rid:") != std::string::npos || line.find("[ERR]") != std::string::npos ||
          line.find("[WRN]") != std::string::npos) {
        out << line << "\n";
      }
    }
  }
  return out.str();
}

}  // namespace natcd::testing
