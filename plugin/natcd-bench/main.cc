// natcd-bench: natcd side by side with etcd and NATS JetStream KV, with the
// limits of the machine (a bare NATS echo service, the disk's fsync rate)
// measured in the same run. Every workload is written once against the
// Target interface (target.h); the systems differ only in their target.
//
// RUN:    natcd-bench [--quick] [--systems natcd,natcd-grpc,jetstream,etcd] [--workloads all]
//                     [--report-dir build/bench]
//         Starts nats-server (JetStream, store in a temporary folder), natcd,
//         etcd and the echo service on loopback, runs every workload against
//         each, stops them, prints the table and writes report.md with a CDF
//         plot of put latency (gnuplot) into --report-dir.
//         natcd-bench --systems natcd --members 3: natcd as a cluster of
//         three members (m1..m3) on the one nats-server (natcd_cluster.h).
//         natcd-bench --nats-url URL: natcd alone, already running at URL.
//         natcd-bench catch-up --keys N: a member added to a loaded
//         3-member cluster, timed until promoted (catch_up.h).
//         natcd-bench echo-server --nats-url URL --subject S: the echo floor.
// OUTPUT: one line per workload and system as it runs; then the table, with
//         the ratios natcd/<system> and natcd/floor.
#include <unistd.h>
#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>

#include "plugin/natcd-bench/catch_up.h"
#include "plugin/natcd-bench/clock.h"
#include "plugin/natcd-bench/cluster_admin.h"
#include "plugin/natcd-bench/deployment.h"
#include "plugin/natcd-bench/floors.h"
#include "plugin/natcd-bench/jetstream_target.h"
#include "plugin/natcd-bench/load.h"
#include "plugin/natcd-bench/natcd_cluster.h"
#include "plugin/natcd-bench/natcd_target.h"
#include "plugin/natcd-bench/nats_requests.h"
#include "plugin/natcd-bench/process.h"
#include "plugin/natcd-bench/report.h"
#include "plugin/natcd-bench/runner.h"
#include "plugin/natcd-bench/workload.h"
#ifdef NATCD_BENCH_ETCD
#include "plugin/natcd-bench/etcd_target.h"
#endif

namespace natcd::bench {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string LoadAverage() {
  std::string load = ReadFile("/proc/loadavg");
  std::istringstream in(load);
  std::string one, five, fifteen;
  in >> one >> five >> fifteen;
  return one + " " + five + " " + fifteen;
}

struct Options {
  bool quick = false;
  std::string systems = "natcd,natcd-grpc,jetstream,etcd";
  std::string workloads = "all";
  std::string report_dir = "build/bench";
  std::string nats_url;  // natcd already running there: natcd alone
  std::string prefix = "natcd";
  std::string natcd_bin;
  std::string tmp_dir;
  int members = 1;               // natcd's: > 1 is a cluster, natcd alone
  bool strict = false;           // exit 3 if the run had problems: for the smoke test
  bool no_watch_groups = false;  // natcd's watchers keep streams of their own
};

// How long a started cluster may take to elect its first leader: several
// election timeouts (1 s each), on a machine that may be busy.
constexpr int64_t kLeaderTimeoutMs = 30'000;

bool Wants(const Options& o, const std::string& system) {
  std::stringstream list(o.systems);
  std::string name;
  while (std::getline(list, name, ',')) {
    if (name == system) return true;
  }
  return false;
}

// A cluster is natcd's alone: etcd and JetStream KV run one server each,
// and a table of three members against one would compare the wrong
// things. "" when the options are fine, else why not.
std::string MembersProblem(const Options& o) {
  if (o.members == 1) return "";
  if (!o.nats_url.empty()) {
    return "--members starts natcd's members itself: it does not go with --nats-url";
  }
  std::stringstream list(o.systems);
  std::string name;
  while (std::getline(list, name, ',')) {
    if (name != "natcd") {
      return "--members " + std::to_string(o.members) +
             " measures a natcd cluster alone: use --systems natcd (not " + name + ")";
    }
  }
  return "";
}

// What a run has to say beside the table: problems (errors, timeouts,
// lost events, a counter that disagrees) and plain information.
struct Notes {
  std::vector<std::string> lines;
  int problems = 0;

  void Problem(const std::string& system, const std::string& what) {
    const std::string line = system + ": " + what;
    fprintf(stderr, "natcd-bench: %s\n", line.c_str());
    lines.push_back(line);
    ++problems;
  }
  void Info(const std::string& line) { lines.push_back(line); }
};

// The figures a closed-loop workload reports.
void RecordLoad(Report& report, const Workload& w, const std::string& system, const LoadResult& r) {
  const std::map<Op, std::string> unit = {
      {Op::kPut, "puts/s"},        {Op::kGet, "gets/s"},          {Op::kGetSerializable, "gets/s"},
      {Op::kRange100, "ranges/s"}, {Op::kLeaseGrant, "grants/s"}, {Op::kKeepAlive, "keepalives/s"}};
  const std::string rate = unit.count(w.op) ? unit.at(w.op) : "requests/s";
  if (w.inflight == 1) {
    report.Set(w.number, w.name, "p50 µs", false, 0, system, r.latency.Percentile(50) / 1e3);
    report.Set(w.number, w.name, "p99 µs", false, 0, system, r.latency.Percentile(99) / 1e3);
    report.Set(w.number, w.name, rate, true, 0, system, r.per_second());
    return;
  }
  report.Set(w.number, w.name, rate, true, 0, system, r.per_second());
  if (w.op == Op::kPut || w.op == Op::kGet) {
    report.Set(w.number, w.name, "p99 µs", false, 0, system, r.latency.Percentile(99) / 1e3);
  }
}

void PrintLoad(const std::string& system, const std::string& name, const LoadResult& r) {
  printf("%-22s %-22s %10.0f/s  p50 %8.1f us  p99 %8.1f us  n=%llu errors=%llu timeouts=%llu\n",
         system.c_str(), name.c_str(), r.per_second(), r.latency.Percentile(50) / 1e3,
         r.latency.Percentile(99) / 1e3, static_cast<unsigned long long>(r.completed),
         static_cast<unsigned long long>(r.errors), static_cast<unsigned long long>(r.timeouts));
  fflush(stdout);
}

struct Cdfs {
  std::vector<std::pair<std::string, Histogram>> series;
};

// Workloads 1-7 against one system.
void RunSystem(Target& target, const std::vector<Workload>& workloads, const Scale& scale,
               Report& report, Cdfs& cdfs, Notes* notes) {
  const std::string system = target.name();
  // The 10,000 keys the reads need.
  const LoadResult fill = RunLoad(
      target, {.op = Op::kPut, .inflight = 256, .first = 0, .total = kDataKeys, .max_ms = 120'000});
  if (fill.completed - fill.errors < kDataKeys) {
    notes->Problem(system, "filled only " + std::to_string(fill.completed - fill.errors) + " keys");
  }
  for (const Workload& w : workloads) {
    switch (w.kind) {
      case Kind::kLoad: {
        if (!target.Supports(w.op)) break;
        if (w.op == Op::kKeepAlive && !target.PrepareKeepAlive()) {
          notes->Problem(system, "cannot grant the keep-alive lease");
          break;
        }
        const LoadResult r = RunLoad(target, {.op = w.op,
                                              .inflight = w.inflight,
                                              .first = 0,
                                              .total = scale.load_requests_max,
                                              .max_ms = scale.load_ms});
        PrintLoad(system, w.name, r);
        if (r.errors > 0 || r.timeouts > 0) {
          notes->Problem(system, w.name + ": " + std::to_string(r.errors) + " errors, " +
                                     std::to_string(r.timeouts) + " unanswered");
        }
        RecordLoad(report, w, system, r);
        if (w.op == Op::kPut && (w.inflight == 1 || w.inflight == 256)) {
          cdfs.series.emplace_back(system + " " + w.name, r.latency);
        }
        break;
      }
      case Kind::kCas: {
        const CasResult r = RunCas(target, w.inflight, scale.load_ms);
        printf("%-22s %-22s %10.0f/s  conflicts %llu  errors %llu  counter %lld\n", system.c_str(),
               w.name.c_str(), r.per_second(), static_cast<unsigned long long>(r.conflicts),
               static_cast<unsigned long long>(r.errors), static_cast<long long>(r.final_value));
        fflush(stdout);
        // Every successful swap adds one: anything else is a lost update.
        if (r.final_value != static_cast<int64_t>(r.increments)) {
          notes->Problem(system, "cas-16: counter reads " + std::to_string(r.final_value) +
                                     " after " + std::to_string(r.increments) +
                                     " successful increments");
        }
        report.Set(w.number, w.name, "increments/s", true, 0, system, r.per_second());
        break;
      }
      case Kind::kFanout:
        for (int n : scale.watchers) {
          const std::string name = "watch-" + std::to_string(n);
          // Capacity with the writer unpaced; lag with it paced (runner.h).
          for (bool paced : {false, true}) {
            const FanoutResult r = RunFanout(target, n, w.inflight, scale.watch_ms, paced);
            const std::string label = name + (paced ? " paced" : "");
            printf(
                "%-22s %-22s %10.0f ev/s  lag p50 %8.2f ms  p99 %8.2f ms  writes=%llu "
                "delivered=%llu/%llu group_seq_gaps=%llu\n",
                system.c_str(), label.c_str(), r.per_second(), r.lag.Percentile(50) / 1e6,
                r.lag.Percentile(99) / 1e6, static_cast<unsigned long long>(r.writes),
                static_cast<unsigned long long>(r.delivered),
                static_cast<unsigned long long>(r.expected),
                static_cast<unsigned long long>(r.gaps.gaps));
            fflush(stdout);
            if (r.expected == 0 || r.delivered != r.expected) {
              notes->Problem(system, label + ": delivered " + std::to_string(r.delivered) + " of " +
                                         std::to_string(r.expected) + " events");
            }
            if (r.gaps.gaps != 0) {
              notes->Problem(system, label + ": " + std::to_string(r.gaps.gaps) +
                                         " gaps in watch groups' group_seq (" +
                                         std::to_string(r.gaps.messages_missed) +
                                         " group messages missed)");
            }
            if (r.expected == 0) continue;
            if (!paced) {
              report.Set(w.number, name, "events/s", true, 0, system, r.per_second());
            } else {
              report.Set(w.number, name, "p99 lag ms (paced)", false, 2, system,
                         r.lag.Percentile(99) / 1e6);
              report.Set(w.number, name, "events/s (paced)", true, 0, system, r.per_second());
            }
          }
        }
        break;
      case Kind::kExpiry: {
        if (!target.Supports(Op::kLeaseGrant)) break;
        const ExpiryResult r =
            RunExpiry(target, scale.expiry_leases, scale.expiry_ttl_s, scale.expiry_wait_s_max);
        printf("%-22s %-22s %llu leases, %llu keys: gone %.2f s after due (setup %.1f s)\n",
               system.c_str(), w.name.c_str(), static_cast<unsigned long long>(r.granted),
               static_cast<unsigned long long>(r.attached), r.seconds_to_gone, r.setup_seconds);
        fflush(stdout);
        if (r.granted < scale.expiry_leases || r.attached < r.granted) {
          notes->Problem(system, w.name + ": granted " + std::to_string(r.granted) + ", attached " +
                                     std::to_string(r.attached) + " of " +
                                     std::to_string(scale.expiry_leases));
        }
        if (r.seconds_to_gone < 0) {
          notes->Problem(system, w.name + ": " + std::to_string(r.keys_left) +
                                     " keys left after waiting " +
                                     std::to_string(scale.expiry_wait_s_max) + " s");
          break;
        }
        report.Set(w.number, w.name, "s until all keys gone", false, 2, system, r.seconds_to_gone);
        break;
      }
      case Kind::kFootprint:
        break;  // on fresh servers, after every system: see Footprint
    }
  }
}

// Workload 8 on a fresh server: fill `keys` distinct keys, then the server's
// RSS and the bytes its data takes on disk.
void RecordFootprint(Report& report, const std::string& system, Target& target, uint64_t keys,
                     const Process& server, const std::string& data_dir, Notes* notes) {
  // What the server holds before any key: the rest is what the keys cost.
  const double rss_empty = server.RssBytes() / kMiB;
  const LoadResult r = RunLoad(
      target, {.op = Op::kFill, .inflight = 256, .first = 0, .total = keys, .max_ms = 300'000});
  if (r.completed - r.errors < keys) {
    notes->Problem(system, "footprint: wrote " + std::to_string(r.completed - r.errors) + " of " +
                               std::to_string(keys) + " keys");
  }
  const double rss = server.RssBytes() / kMiB;
  const double disk = DiskBytes(data_dir) / kMiB;
  printf("%-22s %-22s %llu keys in %.1f s: RSS %.1f MiB, disk %.1f MiB\n", system.c_str(),
         "footprint", static_cast<unsigned long long>(r.completed - r.errors), r.seconds, rss,
         disk);
  fflush(stdout);
  report.Set(8, "footprint", "server RSS MiB at start", false, 1, system, rss_empty);
  report.Set(8, "footprint", "server RSS MiB", false, 1, system, rss);
  report.Set(8, "footprint", "disk MiB", false, 1, system, disk);
}

int Compare(const Options& o) {
  if (const std::string problem = MembersProblem(o); !problem.empty()) {
    fprintf(stderr, "natcd-bench: %s\n", problem.c_str());
    return 2;
  }
  const Scale scale = o.quick ? QuickScale() : FullScale();
  std::string unknown;
  auto selected = SelectWorkloads(o.workloads, &unknown);
  if (!selected) {
    fprintf(stderr, "natcd-bench: unknown workload %s\n", unknown.c_str());
    return 2;
  }
  const std::vector<Workload> workloads = *selected;
  auto chosen = [&](Kind kind) {
    for (const auto& w : workloads) {
      if (w.kind == kind) return true;
    }
    return false;
  };
  const int64_t started = NowNs();
  const std::string load_before = LoadAverage();
  Notes notes;

  // natcd alone against a deployment that is already running.
  if (!o.nats_url.empty()) {
    natsConnection* nc = ConnectNats(o.nats_url);
    if (nc == nullptr) return 1;
    NatcdTarget natcd(nc, o.prefix, !o.no_watch_groups);
    Report report({"natcd"});
    Cdfs cdfs;
    RunSystem(natcd, workloads, scale, report, cdfs, &notes);
    printf("\n%s", report.Text().c_str());
    natsConnection_Destroy(nc);
    return o.strict && notes.problems > 0 ? 3 : 0;
  }

  const std::string root = MakeTempDir("natcd-bench", o.tmp_dir);
  if (root.empty()) {
    fprintf(stderr, "natcd-bench: cannot create a temporary folder\n");
    return 1;
  }
  Deployment deployment(root, o.natcd_bin, SelfPath());
  if (Deployment::NatsServerBinary().empty()) {
    fprintf(stderr, "natcd-bench: nats-server not found (Debian package nats-server)\n");
    return 1;
  }
  std::vector<std::string> systems;
  if (Wants(o, "natcd")) systems.push_back("natcd");
  bool with_etcd = Wants(o, "etcd");
  // natcd over etcd's gRPC API, with the etcd target's client code.
  bool with_natcd_grpc = Wants(o, "natcd-grpc");
#ifndef NATCD_BENCH_ETCD
  if (with_etcd || with_natcd_grpc) {
    notes.Info(
        "etcd, natcd (gRPC): not compared: natcd-bench was built without grpc++ "
        "(libgrpc++-dev)");
    with_etcd = false;
    with_natcd_grpc = false;
  }
#endif
  if (with_natcd_grpc) systems.push_back("natcd (gRPC)");
  if (with_etcd && Deployment::EtcdBinary().empty()) {
    notes.Info("etcd: not compared: no etcd binary (Debian package etcd-server)");
    with_etcd = false;
  }
  if (with_etcd) systems.push_back("etcd");
  const bool with_js = Wants(o, "jetstream");
  const bool sync_offered = with_js && deployment.NatsOffersSyncAlways();
  if (with_js) systems.push_back("JetStream KV");
  if (sync_offered) systems.push_back("JetStream KV (sync)");
  if (with_js && !sync_offered) {
    notes.Info(
        "JetStream KV (sync): not measured: this nats-server (" +
        FirstLine("'" + Deployment::NatsServerBinary() + "' --version") +
        ") has no per-write sync (its config rejects `sync_interval: always`, added in 2.10)");
  }

  Report report(systems);
  Cdfs cdfs;

  // The shared nats-server: natcd, JetStream KV and the echo floor on it.
  Process nats, echo;
  const std::string url = deployment.StartNats(nats, "nats", false);
  if (url.empty() || !deployment.StartEcho(echo, url)) return 1;
  natsConnection* nc = ConnectNats(url);
  if (nc == nullptr) return 1;

  // The floors.
  // The disk is shared with whatever else runs on the machine, and an idle
  // vCPU can be slow to wake for the I/O completion (floors.h): measured
  // idle and with the CPUs busy, at the start and at the end, the floor is
  // the best of them (what the disk can do).
  const int cpus = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  std::vector<std::pair<std::string, FsyncResult>> fsyncs;
  auto measure_fsync = [&](const std::string& when, int busy) {
    FsyncResult r = MeasureFsync(root, scale.fsync_ms, busy);
    if (!r.error.empty()) notes.Problem("fsync floor", r.error);
    const std::string label = when + (busy ? ", CPUs busy" : ", CPUs idle");
    printf("%-22s %-22s %10.0f/s  p50 %8.1f us  p99 %8.1f us\n", "fsync floor",
           ("fdatasync " + label).c_str(), r.per_second(), r.latency.Percentile(50) / 1e3,
           r.latency.Percentile(99) / 1e3);
    fflush(stdout);
    fsyncs.emplace_back(label, std::move(r));
  };
  measure_fsync("start", 0);
  measure_fsync("start", cpus);
  EchoTarget echo_target(nc, kEchoSubject);
  std::map<int, LoadResult> echo_at;
  for (int inflight : {1, 64, 256}) {
    echo_at[inflight] = RunLoad(echo_target, {.op = Op::kPut,
                                              .inflight = inflight,
                                              .first = 0,
                                              .total = scale.load_requests_max,
                                              .max_ms = scale.load_ms});
    PrintLoad("echo floor", "echo-" + std::to_string(inflight), echo_at[inflight]);
  }
  cdfs.series.emplace_back("echo floor (1 in flight)", echo_at[1].latency);

  if (Wants(o, "natcd")) {
    const ClusterAdmin admin(nc, o.prefix);
    NatcdCluster cluster(deployment, admin, url, "natcd");
    std::string error;
    if (!cluster.Start(o.members, kLeaderTimeoutMs, &error)) {
      fprintf(stderr, "natcd-bench: %s\n", error.c_str());
      return 1;
    }
    printf("%-22s %s\n", "natcd", NatcdCluster::Describe(o.members).c_str());
    fflush(stdout);
    NatcdTarget natcd(nc, o.prefix, !o.no_watch_groups);
    RunSystem(natcd, workloads, scale, report, cdfs, &notes);
    cluster.Stop();
  }
#ifdef NATCD_BENCH_ETCD
  if (with_natcd_grpc) {
    Process natcd_process;
    NatcdMember member;
    const int port = PickFreeLoopbackPort();
    member.client_url = "http://127.0.0.1:" + std::to_string(port);
    if (!deployment.StartNatcd(natcd_process, url, "natcd-grpc", member)) return 1;
    EtcdTarget natcd_grpc("127.0.0.1:" + std::to_string(port), "natcd (gRPC)");
    if (!natcd_grpc.WaitReady(30'000)) {
      fprintf(stderr, "natcd-bench: natcd's gRPC API does not answer:\n%s\n",
              natcd_process.LogTail().c_str());
      return 1;
    }
    printf("%-22s %s\n", "natcd (gRPC)", "one member, etcd's gRPC API, the etcd target's client");
    fflush(stdout);
    RunSystem(natcd_grpc, workloads, scale, report, cdfs, &notes);
    natcd_process.Stop();
  }
  if (with_etcd) {
    Process etcd_process;
    const std::string endpoint = deployment.StartEtcd(etcd_process, "etcd");
    if (endpoint.empty()) return 1;
    EtcdTarget etcd(endpoint);
    if (!etcd.WaitReady(30'000)) {
      fprintf(stderr, "natcd-bench: etcd does not answer:\n%s\n", etcd_process.LogTail().c_str());
      return 1;
    }
    RunSystem(etcd, workloads, scale, report, cdfs, &notes);
  }
#endif
  if (with_js) {
    JetStreamTarget js("JetStream KV", url);
    if (!js.Open()) return 1;
    RunSystem(js, workloads, scale, report, cdfs, &notes);
  }
  if (sync_offered) {
    Process sync_nats;
    const std::string sync_url = deployment.StartNats(sync_nats, "nats-sync", true);
    JetStreamTarget js("JetStream KV (sync)", sync_url);
    if (sync_url.empty() || !js.Open()) return 1;
    RunSystem(js, workloads, scale, report, cdfs, &notes);
  }
  natsConnection_Destroy(nc);
  echo.Stop();

  // Workload 8, each system on a fresh server.
  if (chosen(Kind::kFootprint)) {
    const uint64_t keys = scale.footprint_keys;
    if (Wants(o, "natcd")) {
      Process fnats;
      const std::string furl = deployment.StartNats(fnats, "footprint-nats", false);
      natsConnection* fnc = furl.empty() ? nullptr : ConnectNats(furl);
      if (fnc != nullptr) {
        const ClusterAdmin admin(fnc, o.prefix);
        NatcdCluster fcluster(deployment, admin, furl, "footprint-natcd");
        std::string error;
        size_t leader = 0;
        // A cluster's figures are its leader's: every member holds the
        // same data, and the leader does the most work.
        if (fcluster.Start(o.members, kLeaderTimeoutMs, &error) &&
            fcluster.LeaderIndex(&leader, &error)) {
          NatcdTarget natcd(fnc, o.prefix, !o.no_watch_groups);
          RecordFootprint(report, "natcd", natcd, keys, fcluster.process(leader),
                          fcluster.DataDir(leader), &notes);
          report.Set(8, "footprint", "nats-server RSS MiB (beside natcd)", false, 1, "natcd",
                     fnats.RssBytes() / kMiB);
          if (o.members > 1) {
            notes.Info("natcd footprint: of the leader, " + fcluster.name(leader) + ", one of " +
                       std::to_string(o.members) + " members holding the same data");
          }
        } else {
          notes.Problem("natcd", "footprint: " + error);
        }
        fcluster.Stop();
        natsConnection_Destroy(fnc);
      }
    }
#ifdef NATCD_BENCH_ETCD
    if (with_etcd) {
      Process fetcd;
      const std::string endpoint = deployment.StartEtcd(fetcd, "footprint-etcd");
      EtcdTarget etcd(endpoint);
      if (!endpoint.empty() && etcd.WaitReady(30'000)) {
        RecordFootprint(report, "etcd", etcd, keys, fetcd, root + "/footprint-etcd", &notes);
      }
    }
#endif
    if (with_js) {
      Process fnats;
      const std::string furl = deployment.StartNats(fnats, "footprint-js", false);
      JetStreamTarget js("JetStream KV", furl);
      if (!furl.empty() && js.Open()) {
        RecordFootprint(report, "JetStream KV", js, keys, fnats, root + "/footprint-js", &notes);
      }
    }
  }

  // The floors beside the figures they limit.
  measure_fsync("end", 0);
  measure_fsync("end", cpus);
  const FsyncResult* best = &fsyncs.front().second;
  std::string spread;
  for (const auto& [label, r] : fsyncs) {
    if (r.syncs > 0 && r.latency.Percentile(50) < best->latency.Percentile(50)) best = &r;
    spread += (spread.empty() ? "" : ", ") + label + " " +
              FormatValue(r.latency.Percentile(50) / 1e3, 0) + " µs";
  }
  const FsyncResult& fsync_floor = *best;
  notes.Info("fsync floor (fdatasync p50): " + spread +
             "; the floor is the best (an idle vCPU of this machine can wait for a timer tick "
             "before it sees the I/O complete)");
  const double fsync_p50_us = fsync_floor.latency.Percentile(50) / 1e3;
  const double echo_p50_us = echo_at[1].latency.Percentile(50) / 1e3;
  report.SetFloor("put-seq", "p50 µs", false, 0, fsync_p50_us + echo_p50_us,
                  "fsync p50 + echo p50");
  report.SetFloor("put-64", "puts/s", true, 0, echo_at[64].per_second(), "echo, 64 in flight");
  report.SetFloor("put-256", "puts/s", true, 0, echo_at[256].per_second(), "echo, 256 in flight");
  report.SetFloor("get-256", "gets/s", true, 0, echo_at[256].per_second(), "echo, 256 in flight");
  report.SetFloor("get-256-serializable", "gets/s", true, 0, echo_at[256].per_second(),
                  "echo, 256 in flight");
  report.SetFloor("range100-64", "ranges/s", true, 0, echo_at[64].per_second(),
                  "echo, 64 in flight");
  report.SetFloor("keepalive-256", "keepalives/s", true, 0, echo_at[256].per_second(),
                  "echo, 256 in flight");
  report.SetFloor("echo-1", "p50 µs", false, 0, echo_p50_us, "nats.c echo service, 1 in flight");
  report.SetFloor("echo-1", "p99 µs", false, 0, echo_at[1].latency.Percentile(99) / 1e3, "");
  report.SetFloor("echo-64", "requests/s", true, 0, echo_at[64].per_second(), "");
  report.SetFloor("echo-256", "requests/s", true, 0, echo_at[256].per_second(), "");
  report.SetFloor("fsync", "p50 µs", false, 0, fsync_p50_us, "fdatasync of a 100-byte append");
  report.SetFloor("fsync", "syncs/s", true, 0, fsync_floor.per_second(), "");

  const double elapsed_s = (NowNs() - started) / 1e9;
  const std::string load_after = LoadAverage();
  printf("\n%s\n", report.Text().c_str());
  if (Wants(o, "natcd")) printf("natcd: %s\n", NatcdCluster::Describe(o.members).c_str());
  printf("load average (1 5 15 min): before %s, after %s; %.0f s in all\n", load_before.c_str(),
         load_after.c_str(), elapsed_s);

  // report.md and the plot.
  std::string plot_error;
  const bool plotted = PlotCdf(o.report_dir, "put-latency-cdf.svg",
                               "put latency CDF (1 and 256 in flight)", cdfs.series, &plot_error);
  if (!plotted) notes.Info("plot: " + plot_error);
  std::ostringstream md;
  char when[64];
  const time_t now = time(nullptr);
  strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", gmtime(&now));
  md << "# natcd side by side with etcd and NATS JetStream KV\n\n"
     << "Written by `natcd-bench" << (o.quick ? " --quick" : "")
     << (o.members > 1 ? " --systems natcd --members " + std::to_string(o.members) + "`"
                       : std::string("` (`make bench-compare`)"))
     << " on " << when << ", " << FormatValue(elapsed_s, 0) << " s. One machine, "
     << sysconf(_SC_NPROCESSORS_ONLN)
     << " cores shared by the clients and every server; load average (1, 5, 15 min) " << load_before
     << " before, " << load_after << " after. On loopback; "
     << (o.members > 1 ? "natcd as a cluster of " + NatcdCluster::Describe(o.members) +
                             " on one nats-server (NATS queue groups spread the requests "
                             "over them)"
                       : std::string("a single member each"))
     << ".\n\n"
     << "- natcd: " << o.natcd_bin << "\n"
     << "- nats-server: " << FirstLine("'" + Deployment::NatsServerBinary() + "' --version")
     << "\n";
  if (with_etcd)
    md << "- etcd: " << FirstLine("'" + Deployment::EtcdBinary() + "' --version") << "\n";
  md << "\n## Durability, as each system ran\n\n";
  if (o.members > 1) {
    md << "- **natcd**: default settings, " << NatcdCluster::Describe(o.members)
       << "; replies to a write once a majority of members (" << o.members / 2 + 1 << " of "
       << o.members
       << ") have fsynced the Raft log entry holding it and the member that answers has applied "
          "it (one SQLite transaction and one fsync per batch of entries on each member).\n";
  } else {
    md << "- **natcd**: default settings, a single member; replies to a write after the Raft "
          "log entry holding it, and the state it produces, are fsynced (one SQLite transaction "
          "and one fsync per batch of entries).\n";
  }
  if (with_etcd) {
    md << "- **etcd**: default settings; fsyncs its WAL before it acknowledges each commit "
          "(batched by raft).\n";
  }
  if (with_js) {
    md << "- **JetStream KV**: as shipped, file storage; acknowledges a write once it is in the "
          "file, without fsync (its `sync_interval` defaults to 2 minutes): a power loss can "
          "lose writes it acknowledged.\n";
  }
  if (sync_offered) {
    md << "- **JetStream KV (sync)**: `sync_interval: always`: fsync before each "
          "acknowledgement.\n";
  } else if (with_js) {
    md << "- JetStream KV with per-write sync: not measured, this nats-server has no such "
          "setting (`sync_interval: always` came in nats-server 2.10).\n";
  }
  md << "\n## Figures\n\n"
     << "↑: higher is better, ↓: lower is better. Ratios are natcd's figure divided by the "
        "other's (for ↓ rows, below 1 means natcd is better). n/a: the system has no such "
        "operation (JetStream KV: leases, range reads, serializable reads). Values are 100 "
        "bytes over 10,000 keys; each load runs "
     << scale.load_ms / 1000.0 << " s; lease expiry with "
     << FormatValue(static_cast<double>(scale.expiry_leases), 0) << " leases (TTL "
     << scale.expiry_ttl_s << " s), from the moment the last one is due; footprint after "
     << FormatValue(static_cast<double>(scale.footprint_keys), 0) << " keys on a fresh server.\n\n"
     << report.MarkdownTable() << "\n"
     << "Floors: `put-seq` p50 against fsync p50 + echo p50; request rates against the "
        "nats.c echo service with as many requests in flight. The echo service is a NATS "
        "client like natcd, so a request crosses nats-server twice; JetStream KV is inside "
        "nats-server and can beat this floor.\n\n";
  if (plotted) md << "![put latency CDF](put-latency-cdf.svg)\n\n";
  md << "## The issue's goals\n\n| goal | measured | met |\n| --- | --- | --- |\n";
  for (const Goal& g : report.Goals()) {
    md << "| " << g.text << " | " << g.measured << " | "
       << (g.met ? (*g.met ? "yes" : "**no**") : "—") << " |\n";
  }
  md << "\n## How each system was driven\n\n"
     << "Every workload is one piece of code against a target interface; closed loops keep "
        "N requests in flight on one connection. natcd: etcd's protobuf messages on natcd's "
        "NATS subjects (nats.c). etcd: the same encoded messages through grpc++'s generic "
        "stub to etcd's gRPC methods; keep-alives on one LeaseKeepAlive stream per request "
        "in flight; watchers on one Watch stream. JetStream KV: bucket, counter and checks "
        "through nats.c's kvStore API; pipelined puts and gets send the messages "
        "kvStore_Put and kvStore_Get send (a JetStream publish, a direct get); watchers are "
        "the ordered consumers kvStore_Watch creates. Compare-and-swap: 16 threads, each "
        "reading the counter and swapping it with a txn (natcd, etcd) or kvStore_Update "
        "(JetStream); the counter is checked against the successful swaps. Watch fan-out: "
        "one writer with 64 puts in flight; `events/s` with the writer unpaced (the fan-out "
        "capacity), `(paced)` with the writer also holding back while more than 64 puts' "
        "events are undelivered, so that the lag, from sending a put to a watcher receiving "
        "its event, is that of a rate the system sustains rather than of a queue growing for "
        "the length of the run.\n";
  if (!notes.lines.empty()) {
    md << "\n## Notes from this run\n\n";
    for (const auto& n : notes.lines) md << "- " << n << "\n";
  }
  const std::string report_path = o.report_dir + "/report.md";
  std::ofstream(report_path) << md.str();
  printf("report: %s%s\n", report_path.c_str(), plotted ? " (with put-latency-cdf.svg)" : "");
  for (const auto& n : notes.lines) printf("note: %s\n", n.c_str());
  RemoveTree(root);
  nats_Close();
  return o.strict && notes.problems > 0 ? 3 : 0;
}

}  // namespace
}  // namespace natcd::bench

int main(int argc, char** argv) {
  using natcd::bench::Options;
  Options o;
  std::string echo_url, echo_subject = natcd::bench::kEchoSubject;
  CLI::App app{"natcd-bench: natcd side by side with etcd and NATS JetStream KV"};
  app.add_flag("--quick", o.quick, "small sizes: the whole run in under two minutes");
  app.add_option("--systems", o.systems,
                 "comma-separated: natcd, natcd-grpc (natcd over etcd's gRPC API), jetstream, etcd")
      ->capture_default_str();
  app.add_option("--workloads", o.workloads, "comma-separated workload names, or all")
      ->capture_default_str();
  app.add_option("--report-dir", o.report_dir, "where report.md and the plot go")
      ->capture_default_str();
  app.add_option("--nats-url", o.nats_url,
                 "run against the natcd already serving at this URL (natcd alone)");
  app.add_option("--prefix", o.prefix, "natcd subject prefix")->capture_default_str();
  app.add_option("--natcd-bin", o.natcd_bin, "the natcd to start (default: beside natcd-bench)");
  app.add_option("--tmp-dir", o.tmp_dir, "where the servers' data goes (default $TMPDIR or /tmp)");
  app.add_option("--members", o.members,
                 "natcd's members: more than 1 starts a cluster m1..mN (with --systems natcd)")
      ->capture_default_str()
      ->check(CLI::Range(1, natcd::bench::kMembersMax));
  app.add_flag("--no-watch-groups", o.no_watch_groups,
               "natcd's watchers do not join watch groups (each gets its own messages)");
  app.add_flag("--strict", o.strict,
               "exit with 3 if any request failed, went unanswered or an event was lost");
  CLI::App* echo =
      app.add_subcommand("echo-server", "the echo floor's service (started by the bench)");
  echo->add_option("--nats-url", echo_url)->required();
  echo->add_option("--subject", echo_subject)->capture_default_str();
  natcd::bench::CatchUpOptions catch_up;
  CLI::App* catch_up_cmd = app.add_subcommand(
      "catch-up", "a member added to a loaded 3-member natcd cluster: time until promoted");
  catch_up_cmd->add_option("--keys", catch_up.keys, "keys loaded before the member is added")
      ->required()
      ->check(CLI::Range(uint64_t{1}, uint64_t{100'000'000}));
  catch_up_cmd->add_option("--in-flight", catch_up.in_flight, "puts outstanding while loading")
      ->capture_default_str()
      ->check(CLI::Range(1, 65'536));
  catch_up_cmd->add_option("--natcd-bin", catch_up.natcd_bin,
                           "the natcd to start (default: beside natcd-bench)");
  catch_up_cmd->add_option("--tmp-dir", catch_up.tmp_dir,
                           "where the servers' data goes (default $TMPDIR or /tmp)");
  CLI11_PARSE(app, argc, argv);
  if (echo->parsed()) return natcd::bench::RunEchoServer(echo_url, echo_subject);
  const std::string beside_me = natcd::bench::Dirname(natcd::bench::SelfPath()) + "/natcd";
  if (catch_up_cmd->parsed()) {
    if (catch_up.natcd_bin.empty()) catch_up.natcd_bin = beside_me;
    return natcd::bench::RunCatchUp(catch_up);
  }
  if (o.natcd_bin.empty()) o.natcd_bin = beside_me;
  std::error_code ec;
  std::filesystem::create_directories(o.report_dir, ec);
  return natcd::bench::Compare(o);
}
