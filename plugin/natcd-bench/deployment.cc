#include "plugin/natcd-bench/deployment.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <vector>

namespace natcd::bench {

std::string Deployment::StartNats(Process& p, const std::string& name, bool sync_always) const {
  const int port = PickFreeLoopbackPort();
  const std::string conf = root_ + "/" + name + ".conf";
  std::ofstream(conf) << "listen: 127.0.0.1:" << port << "\n"
                      << "jetstream {\n  store_dir: \"" << root_ << "/" << name << "\"\n"
                      << (sync_always ? "  sync_interval: always\n" : "") << "}\n";
  std::string error;
  if (!p.Start({NatsServerBinary(), "-c", conf}, root_ + "/" + name + ".log", "", port, 10'000,
               &error)) {
    fprintf(stderr, "natcd-bench: nats-server: %s\n", error.c_str());
    return "";
  }
  return "nats://127.0.0.1:" + std::to_string(port);
}

bool Deployment::StartNatcd(Process& p, const std::string& url, const std::string& name,
                            const NatcdMember& member) const {
  // --config /dev/null: natcd's defaults, whatever config files are around.
  std::vector<std::string> argv = {natcd_bin_, "--nats-url", url, "--config", "/dev/null"};
  argv.insert(argv.end(), {"--data-dir", root_ + "/" + name});
  if (!member.name.empty()) {
    argv.insert(argv.end(), {"--name", member.name});
  }
  if (!member.initial_cluster.empty()) {
    argv.insert(argv.end(), {"--initial-cluster", member.initial_cluster});
  }
  if (member.join_existing) {
    argv.insert(argv.end(), {"--initial-cluster-state", "existing"});
  }
  if (!member.prefix.empty()) {
    argv.insert(argv.end(), {"--prefix", member.prefix});
  }
  if (!member.client_url.empty()) {
    argv.insert(argv.end(), {"--listen-client-urls", member.client_url});
  }
  std::string error;
  // A member prints "serving" before any leader is known: members start one
  // after the other, and NatcdCluster waits for the leader.
  if (!p.Start(argv, root_ + "/" + name + ".log", "serving", 0, 30'000, &error)) {
    fprintf(stderr, "natcd-bench: natcd%s: %s\n",
            member.name.empty() ? "" : (" " + member.name).c_str(), error.c_str());
    return false;
  }
  return true;
}

std::string Deployment::StartEtcd(Process& p, const std::string& name) const {
  const int client = PickFreeLoopbackPort();
  const int peer = PickFreeLoopbackPort();
  const std::string c = "http://127.0.0.1:" + std::to_string(client);
  const std::string q = "http://127.0.0.1:" + std::to_string(peer);
  std::string error;
  if (!p.Start({EtcdBinary(), "--name", "bench", "--data-dir", root_ + "/" + name,
                "--listen-client-urls", c, "--advertise-client-urls", c, "--listen-peer-urls", q,
                "--initial-advertise-peer-urls", q, "--initial-cluster", "bench=" + q,
                "--log-level", "warn"},
               root_ + "/" + name + ".log", "", client, 30'000, &error)) {
    fprintf(stderr, "natcd-bench: etcd: %s\n", error.c_str());
    return "";
  }
  return "127.0.0.1:" + std::to_string(client);
}

bool Deployment::StartEcho(Process& p, const std::string& url) const {
  std::string error;
  if (!p.Start({bench_bin_, "echo-server", "--nats-url", url, "--subject", kEchoSubject},
               root_ + "/echo.log", "serving", 0, 10'000, &error)) {
    fprintf(stderr, "natcd-bench: echo-server: %s\n", error.c_str());
    return false;
  }
  return true;
}

bool Deployment::NatsOffersSyncAlways() const {
  const std::string conf = root_ + "/sync-check.conf";
  std::ofstream(conf) << "listen: 127.0.0.1:-1\njetstream {\n  store_dir: \"" << root_
                      << "/sync-check\"\n  sync_interval: always\n}\n";
  // -t only parses the configuration; 2.9 rejects the unknown field.
  const std::string out = FirstLine("'" + NatsServerBinary() + "' -t -c '" + conf + "'");
  return out.find("unknown field") == std::string::npos && out.find("rror") == std::string::npos;
}

std::string Deployment::NatsServerBinary() {
  return FindExecutable("nats-server", {"/usr/sbin", "/usr/bin"});
}

std::string Deployment::EtcdBinary() { return FindExecutable("etcd", {"/usr/bin", "/usr/sbin"}); }

std::string FirstLine(const std::string& command) {
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr) return "";
  char buf[256] = {0};
  if (fgets(buf, sizeof buf, p) == nullptr) buf[0] = '\0';
  pclose(p);
  std::string line(buf);
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
  return line;
}

std::string SelfPath() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, n) : "";
}

std::string Dirname(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

}  // namespace natcd::bench
