// The servers of one comparison, all on loopback, each keeping its data and
// log in one temporary folder: nats-server with JetStream (optionally with
// per-write sync), natcd attached to it (alone or as one member of a
// cluster: natcd_cluster.h), etcd, and the echo service.
//
// Thread safety: none; one thread starts and stops servers.
#pragma once

#include <string>

#include "plugin/natcd-bench/process.h"

namespace natcd::bench {

inline constexpr const char* kEchoSubject = "natcdbench.echo";

// How a natcd takes part in a cluster (natcd's --name, --initial-cluster,
// --initial-cluster-state).
struct NatcdMember {
  std::string name;             // "": natcd's default, a member alone
  std::string initial_cluster;  // founding members "m1,m2,m3"; "" when joining
  bool join_existing = false;   // added at runtime: --initial-cluster-state existing
  std::string prefix;           // its subject prefix; "": natcd's default
  std::string client_url;       // --listen-client-urls (etcd's gRPC API); "": none
};

class Deployment {
 public:
  // root: the folder for data and logs; natcd_bin: the natcd to start;
  // bench_bin: the natcd-bench whose echo-server subcommand is the floor.
  Deployment(std::string root, std::string natcd_bin, std::string bench_bin)
      : root_(std::move(root)),
        natcd_bin_(std::move(natcd_bin)),
        bench_bin_(std::move(bench_bin)) {}

  // nats-server with JetStream storing in <root>/<name>; sync_always adds
  // per-write sync (sync_interval: always). Returns its URL, "" on failure.
  std::string StartNats(Process& p, const std::string& name, bool sync_always) const;
  // natcd with its defaults (durable), data in <root>/<name>; with
  // `member` left empty, a single member as natcd starts without cluster
  // flags.
  bool StartNatcd(Process& p, const std::string& url, const std::string& name,
                  const NatcdMember& member = {}) const;
  // etcd with its defaults (fsync per commit), data in <root>/<name>.
  // Returns "127.0.0.1:<client port>", "" on failure.
  std::string StartEtcd(Process& p, const std::string& name) const;
  bool StartEcho(Process& p, const std::string& url) const;
  // Whether this nats-server accepts per-write sync (nats-server 2.10+).
  bool NatsOffersSyncAlways() const;

  static std::string NatsServerBinary();
  static std::string EtcdBinary();  // "" if etcd is not installed
  const std::string& root() const { return root_; }

 private:
  const std::string root_;
  const std::string natcd_bin_;
  const std::string bench_bin_;
};

// The first line a command prints (stdout and stderr); "" if it cannot run.
std::string FirstLine(const std::string& command);
// This program's path, from /proc/self/exe.
std::string SelfPath();
std::string Dirname(const std::string& path);

}  // namespace natcd::bench
