// natcd: the daemon. Attaches to a NATS deployment (or starts an embedded
// nats-server when no URL is configured) and serves the natcd wire contract
// (docs/PROTOCOL.md) as one member.
//
// Configuration: config/natcd.conf (or --config FILE), overridden by
// NATCD_* environment variables, overridden by flags. `natcd --help` lists
// every setting.
//
// Metrics and health: --listen-metrics-urls serves /metrics, /health,
// /readyz and /livez over HTTP (plugin/natcd/metrics_server.h); the
// embedded default serves them on 127.0.0.1:2381 (or a free port).
#include <signal.h>
#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>

#include <spdlog/spdlog.h>

#include "adapters/nats/node.h"
#include "adapters/nats/peer/raft_transport.h"
#include "alarm/backend_quota.h"
#include "auth/password.h"
#include "metrics/member_metrics.h"
#include "metrics/process_metrics.h"
#include "metrics/registry.h"
#include "natcd/clock.h"
#include "plugin/common/nats_auth.h"
#include "plugin/common/nats_servers.h"
#include "plugin/natcd/daemon_health.h"
#include "plugin/natcd/embedded_nats.h"
#include "plugin/natcd/etcd_api_listener.h"
#include "plugin/natcd/go_duration.h"
#include "plugin/natcd/listen_urls.h"
#include "plugin/natcd/metrics_server.h"
#include "server/member_identity.h"

namespace {

struct Settings {
  std::string nats_url;
  std::string data_dir = "data";
  std::string prefix = "natcd";
  std::string name = "natcd-1";
  std::string creds;
  std::string user;
  std::string password;
  std::string token;
  std::string tls_ca;
  std::string tls_cert;
  std::string tls_key;
  std::string nats_server_bin = "nats-server";
  int embedded_port = 4222;
  int64_t max_txn_ops = 128;
  int64_t value_cache_mib = 64;
  int64_t max_request_bytes = 1'572'864;
  int64_t lease_ttl_min_s = 2;
  int64_t watch_window = 64;
  int64_t watch_heartbeat_ms = 5'000;
  int64_t watch_ack_timeout_ms = 15'000;
  int64_t watch_coalesce_ms = 25;
  int64_t watch_coalesce_ready_min = 8;
  int64_t watch_progress_interval_ms = 600'000;
  int64_t watch_queue_events = 10'000;
  std::string cluster_name = "default";
  std::string initial_cluster;
  std::string initial_cluster_state = "new";
  int64_t heartbeat_interval_ms = 100;
  int64_t election_timeout_ms = 1'000;
  int64_t snapshot_count = 10'000;
  int64_t raft_log_segment_bytes = int64_t{64} << 20;
  // etcd's backend batch: 0 means etcd's default, as in etcd.
  std::string backend_batch_interval = "100ms";
  int64_t backend_batch_limit = 10'000;
  int64_t leader_request_weight = 48;
  std::string auto_compaction_mode = "off";
  int64_t auto_compaction_retention = 0;
  std::string log_level = "info";
  std::string listen_metrics_urls;
  // etcd's gRPC API (adapters/grpc/).
  std::string listen_client_urls;
  std::string advertise_client_urls;
  std::string cert_file;
  std::string key_file;
  std::string trusted_ca_file;
  bool client_cert_auth = false;
  // etcd's auth (the Auth service over gRPC).
  std::string auth_token = "simple";
  int64_t auth_token_ttl_s = 300;
  int bcrypt_cost = natcd::auth::kBcryptCostDefault;
  bool nats_trusted = false;
  // Alarms (etcd's flags and defaults).
  int64_t quota_backend_bytes = 0;
  std::string corrupt_check_time = "0s";
  bool initial_corrupt_check = false;
};

// The embedded default's metrics listener: etcd's usual metrics port in
// kubeadm setups, else any free one.
constexpr const char* kEmbeddedMetricsUrl = "http://127.0.0.1:2381";
constexpr const char* kEmbeddedMetricsFallbackUrl = "http://127.0.0.1:0";

// Connection callbacks reach the node through this (set once the node runs)
// and record the connection's state (natcd_nats_connected, _reconnects_total).
// Both are cleared before shutdown: nats.c runs the callbacks on a thread of
// its own, also while the connection is being destroyed.
struct ConnectionEvents {
  std::atomic<natcd::nats::Node*> node{nullptr};
  std::atomic<natcd::metrics::MemberMetrics*> metrics{nullptr};
};

void OnDisconnected(natsConnection*, void* closure) {
  spdlog::warn("NATS connection lost; reconnecting");
  auto* events = static_cast<ConnectionEvents*>(closure);
  if (auto* metrics = events->metrics.load()) metrics->nats_connected.Set(0);
  if (auto* node = events->node.load()) node->OnDisconnected();
}

void OnReconnected(natsConnection* nc, void* closure) {
  char url[256] = "";
  natsConnection_GetConnectedUrl(nc, url, sizeof url);
  spdlog::info("NATS reconnected to {}", url);
  auto* events = static_cast<ConnectionEvents*>(closure);
  if (auto* metrics = events->metrics.load()) {
    metrics->nats_connected.Set(1);
    metrics->nats_reconnects.Inc();
  }
  if (auto* node = events->node.load()) node->OnReconnected();
}

// send_asap: write each publish at once (replies) instead of letting nats.c
// batch them on its ~1 ms flusher cycle (the best-effort event stream).
natsStatus Connect(const Settings& s, ConnectionEvents* events, bool send_asap,
                   natsConnection** nc) {
  natsOptions* opts = nullptr;
  natsStatus st = natsOptions_Create(&opts);
  if (st == NATS_OK) st = natcd::SetNatsServers(opts, s.nats_url);
  if (st == NATS_OK) st = natsOptions_SetName(opts, ("natcd " + s.name).c_str());
  if (st == NATS_OK) st = natsOptions_SetSendAsap(opts, send_asap);
  // nats.c gives each asynchronous subscription a thread of its own unless
  // told to use its delivery pool: natcd's ~30 subscriptions (more on a
  // leader) then woke as many threads, and switching between them cost a
  // quarter of the leader's CPU under writes. Every callback here only
  // queues work for the engine thread, so one pool thread keeps up.
  if (st == NATS_OK) st = natsOptions_UseGlobalMessageDelivery(opts, true);
  // Reconnect for ever, with backoff and jitter; buffer what is published
  // meanwhile (events and watch messages; watches detect a loss by seq).
  if (st == NATS_OK) st = natsOptions_SetMaxReconnect(opts, -1);
  if (st == NATS_OK) st = natsOptions_SetReconnectWait(opts, 250);
  if (st == NATS_OK) st = natsOptions_SetReconnectJitter(opts, 100, 1000);
  if (st == NATS_OK) st = natsOptions_SetRetryOnFailedConnect(opts, true, nullptr, nullptr);
  if (st == NATS_OK && events != nullptr) {
    st = natsOptions_SetDisconnectedCB(opts, OnDisconnected, events);
  }
  if (st == NATS_OK && events != nullptr) {
    st = natsOptions_SetReconnectedCB(opts, OnReconnected, events);
  }
  if (st == NATS_OK) {
    st = natcd::ApplyNatsAuth(
        opts, {s.user, s.password, s.token, s.creds, s.tls_ca, s.tls_cert, s.tls_key});
  }
  if (st == NATS_OK) st = natsConnection_Connect(nc, opts);
  natsOptions_Destroy(opts);
  return st;
}

// Reads the TOML config file and makes each of its keys the default of the
// option of that name. Returns an error message, or "" (also when the file
// is missing and was not asked for explicitly).
std::string ApplyConfigFile(CLI::App* app, const std::string& path, bool required) {
  std::ifstream in(path);
  if (!in) return required ? "cannot read config file " + path : "";
  try {
    for (const CLI::ConfigItem& item : CLI::ConfigTOML().from_config(in)) {
      if (!item.parents.empty())
        return "config " + path + ": sections are not used: " + item.fullname();
      CLI::Option* opt = app->get_option_no_throw("--" + item.name);
      if (opt == nullptr || item.name == "config") {
        return "config " + path + ": unknown setting " + item.name;
      }
      if (item.inputs.size() != 1) return "config " + path + ": " + item.name + " needs one value";
      opt->default_val(item.inputs[0]);
    }
  } catch (const CLI::Error& e) {
    return "config " + path + ": " + e.what();
  }
  return "";
}

// Starts the metrics listener on `configured`, or, for the embedded default
// (nothing configured), on kEmbeddedMetricsUrl or a free port if that one
// is taken.
natcd::Result<std::unique_ptr<natcd::MetricsServer>> StartMetricsServer(
    const std::vector<natcd::ListenAddress>& configured, const natcd::metrics::Registry& registry,
    natcd::metrics::MemberMetrics& counts, natcd::metrics::HealthSource& health) {
  if (!configured.empty()) return natcd::MetricsServer::Start(configured, registry, counts, health);
  auto preferred = natcd::MetricsServer::Start(natcd::ParseListenUrls(kEmbeddedMetricsUrl).value(),
                                               registry, counts, health);
  if (preferred.ok()) return preferred;
  return natcd::MetricsServer::Start(natcd::ParseListenUrls(kEmbeddedMetricsFallbackUrl).value(),
                                     registry, counts, health);
}

}  // namespace

int main(int argc, char** argv) {
  Settings s;
  CLI::App app{
      "natcd: etcd's guarantees (revisions, watches, leases, txn) over NATS subjects.\n"
      "Settings come from the config file, then NATCD_* environment variables, then "
      "flags (flags win)."};
  // Precedence: the config file only sets defaults; a NATCD_* variable
  // overrides it and a flag overrides both. (CLI11's own config support
  // ranks the file above the environment, so the file is applied here.)
  std::string config_path = "config/natcd.conf";
  app.add_option("--config", config_path, "TOML config file (the default may be missing)")
      ->capture_default_str();
  auto add = [&](const char* flag, auto& value, const char* env, const char* help) {
    return app.add_option(flag, value, help)
        ->envname(env)
        ->capture_default_str()
        ->run_callback_for_default();
  };
  add("--nats-url", s.nats_url, "NATCD_NATS_URL",
      "NATS server URL(s), comma-separated; empty: start an embedded nats-server on loopback");
  add("--data-dir", s.data_dir, "NATCD_DATA_DIR", "where the database lives");
  add("--prefix", s.prefix, "NATCD_PREFIX", "subject prefix P (P.kv.put...)");
  add("--name", s.name, "NATCD_NAME", "this member's name");
  add("--creds", s.creds, "NATCD_CREDS", "NATS credentials file (JWT + nkey)");
  add("--user", s.user, "NATCD_USER", "NATS user");
  add("--password", s.password, "NATCD_PASSWORD", "NATS password");
  add("--token", s.token, "NATCD_TOKEN", "NATS token");
  add("--tls-ca", s.tls_ca, "NATCD_TLS_CA", "CA certificate file for the NATS server");
  add("--tls-cert", s.tls_cert, "NATCD_TLS_CERT", "client certificate file");
  add("--tls-key", s.tls_key, "NATCD_TLS_KEY", "client key file");
  add("--nats-server-bin", s.nats_server_bin, "NATCD_NATS_SERVER_BIN",
      "nats-server binary for the embedded default");
  add("--embedded-port", s.embedded_port, "NATCD_EMBEDDED_PORT",
      "port for the embedded nats-server (a free one if taken)");
  add("--max-txn-ops", s.max_txn_ops, "NATCD_MAX_TXN_OPS", "most operations in one txn");
  add("--value-cache-mib", s.value_cache_mib, "NATCD_VALUE_CACHE_MIB",
      "memory for keys' current values (MiB); the others are read from disk")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 30));
  add("--max-request-bytes", s.max_request_bytes, "NATCD_MAX_REQUEST_BYTES",
      "largest request body");
  add("--lease-ttl-min", s.lease_ttl_min_s, "NATCD_LEASE_TTL_MIN",
      "shorter lease TTLs are raised to this (seconds)");
  add("--watch-window", s.watch_window, "NATCD_WATCH_WINDOW", "unacknowledged messages per watch");
  add("--watch-queue-events", s.watch_queue_events, "NATCD_WATCH_QUEUE_EVENTS",
      "events a watch may have waiting: beyond it a NATS watch is canceled as a slow consumer, an "
      "etcd API watch catches up from history");
  add("--watch-heartbeat-ms", s.watch_heartbeat_ms, "NATCD_WATCH_HEARTBEAT_MS",
      "idle watches get a progress message this often");
  add("--watch-ack-timeout-ms", s.watch_ack_timeout_ms, "NATCD_WATCH_ACK_TIMEOUT_MS",
      "a watch unacknowledged this long is reclaimed");
  add("--watch-coalesce-ms", s.watch_coalesce_ms, "NATCD_WATCH_COALESCE_MS",
      "busy watches: events wait at most this long for the last message's ack (0: never)")
      ->check(CLI::Range(int64_t{0}, int64_t{60'000}));
  add("--watch-coalesce-ready-min", s.watch_coalesce_ready_min, "NATCD_WATCH_COALESCE_READY_MIN",
      "coalesce only while at least this many watches have events to send")
      ->check(CLI::Range(int64_t{1}, int64_t{1'000'000}));
  add("--watch-progress-interval-ms", s.watch_progress_interval_ms,
      "NATCD_WATCH_PROGRESS_INTERVAL_MS", "progress notifications for progress_notify watches");
  add("--auto-compaction-mode", s.auto_compaction_mode, "NATCD_AUTO_COMPACTION_MODE",
      "off, revision or periodic")
      ->check(CLI::IsMember({"off", "revision", "periodic"}));
  add("--auto-compaction-retention", s.auto_compaction_retention, "NATCD_AUTO_COMPACTION_RETENTION",
      "revision mode: revisions to keep; periodic mode: seconds of history to keep");
  add("--cluster-name", s.cluster_name, "NATCD_CLUSTER_NAME",
      "the cluster's name: members talk on P.raft.<cluster-name>.<member>");
  add("--initial-cluster", s.initial_cluster, "NATCD_INITIAL_CLUSTER",
      "names of the founding members, comma-separated (this one included); empty: a cluster "
      "of this member alone. A member started with a name not listed waits to be added "
      "(natcdctl member add)");
  add("--initial-cluster-state", s.initial_cluster_state, "NATCD_INITIAL_CLUSTER_STATE",
      "new: found the cluster (or a cluster of this member alone); existing: join a running "
      "cluster after natcdctl member add")
      ->check(CLI::IsMember({"new", "existing"}));
  add("--heartbeat-interval", s.heartbeat_interval_ms, "NATCD_HEARTBEAT_INTERVAL",
      "Raft heartbeat interval (ms)");
  add("--election-timeout", s.election_timeout_ms, "NATCD_ELECTION_TIMEOUT",
      "Raft election timeout (ms)");
  add("--raft-log-segment-bytes", s.raft_log_segment_bytes, "NATCD_RAFT_LOG_SEGMENT_BYTES",
      "size of each Raft log segment file, zero-filled when made (etcd's 64 MiB)")
      ->check(CLI::Range(int64_t{1024}, int64_t{1} << 40));
  add("--backend-batch-interval", s.backend_batch_interval, "NATCD_BACKEND_BATCH_INTERVAL",
      "the longest the database's open transaction stays uncommitted (a Go duration; 0: "
      "etcd's 100ms); answers never wait for it, a restart applies it again from the Raft log");
  add("--backend-batch-limit", s.backend_batch_limit, "NATCD_BACKEND_BATCH_LIMIT",
      "the most applied entries in the database's open transaction before it commits (0: "
      "etcd's 10000)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40));
  add("--snapshot-count", s.snapshot_count, "NATCD_SNAPSHOT_COUNT",
      "applied entries between Raft log compactions");
  add("--leader-request-weight", s.leader_request_weight, "NATCD_LEADER_REQUEST_WEIGHT",
      "subscriptions the leader holds on each write subject where a follower holds one (most "
      "writes then reach it without being forwarded; 1: an even share)")
      ->check(CLI::Range(int64_t{1}, int64_t{64}));
  add("--log-level", s.log_level, "NATCD_LOG_LEVEL", "trace, debug, info, warn, error");
  add("--listen-metrics-urls", s.listen_metrics_urls, "NATCD_LISTEN_METRICS_URLS",
      "http://host:port URLs, comma-separated, to serve /metrics, /health, /readyz and /livez "
      "on (port 0: a free one); empty: none, but the embedded default serves them on "
      "127.0.0.1:2381 (or a free port)");
  add("--listen-client-urls", s.listen_client_urls, "NATCD_LISTEN_CLIENT_URLS",
      "http(s)://host:port URLs, comma-separated, to serve etcd's gRPC API on (port 0: a free "
      "one); empty: none, but the embedded default serves it on 127.0.0.1:2379 (or a free port)");
  add("--advertise-client-urls", s.advertise_client_urls, "NATCD_ADVERTISE_CLIENT_URLS",
      "this member's client URLs as MemberList reports them; empty: the listening URLs");
  add("--cert-file", s.cert_file, "NATCD_CERT_FILE", "TLS certificate for https:// client URLs");
  add("--key-file", s.key_file, "NATCD_KEY_FILE", "TLS key for https:// client URLs");
  add("--trusted-ca-file", s.trusted_ca_file, "NATCD_TRUSTED_CA_FILE",
      "CA certificates that client certificates are checked against");
  app.add_flag("--client-cert-auth", s.client_cert_auth,
               "https:// client URLs require a client certificate signed by --trusted-ca-file")
      ->envname("NATCD_CLIENT_CERT_AUTH");
  add("--auth-token", s.auth_token, "NATCD_AUTH_TOKEN",
      "etcd's auth token type; natcd has \"simple\" (random tokens each member keeps)")
      ->check(CLI::IsMember({"simple"}));
  add("--auth-token-ttl", s.auth_token_ttl_s, "NATCD_AUTH_TOKEN_TTL",
      "seconds a simple token lives unused (etcd's default 300)")
      ->check(CLI::PositiveNumber);
  add("--bcrypt-cost", s.bcrypt_cost, "NATCD_BCRYPT_COST",
      "bcrypt cost of the password hashes the Auth service makes (etcd's default 10; outside "
      "4..31 the default is used, as etcd does)");
  app.add_flag("--nats-trusted", s.nats_trusted,
               "with auth enabled, serve NATS requests unchecked (NATS account permissions guard "
               "the subjects); without it they are refused while auth is enabled")
      ->envname("NATCD_NATS_TRUSTED");
  add("--quota-backend-bytes", s.quota_backend_bytes, "NATCD_QUOTA_BACKEND_BYTES",
      "raise the NOSPACE alarm when the database passes this size, refusing what would grow it "
      "(0: etcd's default, 2 GiB; negative: no quota)");
  add("--experimental-corrupt-check-time", s.corrupt_check_time,
      "NATCD_EXPERIMENTAL_CORRUPT_CHECK_TIME",
      "how often the leader compares every member's HashKV and raises CORRUPT for one that "
      "differs (a Go duration: 5m, 30s; 0s: never)");
  app.add_flag("--experimental-initial-corrupt-check", s.initial_corrupt_check,
               "before serving, compare this member's HashKV with the other members' and exit "
               "if one differs (a member with data; a new one has nothing to compare)")
      ->envname("NATCD_EXPERIMENTAL_INITIAL_CORRUPT_CHECK");
  bool config_given = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--config" && i + 1 < argc) {
      config_path = argv[i + 1];
      config_given = true;
    } else if (arg.rfind("--config=", 0) == 0) {
      config_path = arg.substr(9);
      config_given = true;
    }
  }
  if (std::string error = ApplyConfigFile(&app, config_path, config_given); !error.empty()) {
    fprintf(stderr, "natcd: %s\n", error.c_str());
    return 2;
  }
  CLI11_PARSE(app, argc, argv);
  spdlog::set_level(spdlog::level::from_str(s.log_level));
  // Checked before anything starts: a typo fails at once.
  auto metrics_addresses = natcd::ParseListenUrls(s.listen_metrics_urls);
  if (!metrics_addresses.ok()) {
    fprintf(stderr, "natcd: %s\n", std::string(metrics_addresses.status().message()).c_str());
    return 2;
  }

  auto corrupt_check_ms = natcd::ParseGoDurationMs(s.corrupt_check_time);
  if (!corrupt_check_ms.ok()) {
    fprintf(stderr, "natcd: --experimental-corrupt-check-time: %s\n",
            std::string(corrupt_check_ms.status().message()).c_str());
    return 2;
  }

  auto batch_interval_ms = natcd::ParseGoDurationMs(s.backend_batch_interval);
  if (!batch_interval_ms.ok() || *batch_interval_ms < 0) {
    fprintf(stderr, "natcd: --backend-batch-interval: %s\n",
            batch_interval_ms.ok() ? "negative duration"
                                   : std::string(batch_interval_ms.status().message()).c_str());
    return 2;
  }

  // Signals are taken by sigwait in main; every thread inherits the mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  std::error_code ec;
  std::filesystem::create_directories(s.data_dir, ec);
  if (ec) {
    spdlog::error("cannot create data dir {}: {}", s.data_dir, ec.message());
    return 1;
  }

  std::unique_ptr<natcd::EmbeddedNats> embedded;
  const bool embedded_default = s.nats_url.empty();
  if (embedded_default) {
    auto started = natcd::EmbeddedNats::Start(s.nats_server_bin, s.embedded_port,
                                              s.data_dir + "/nats-server.log");
    if (!started.ok()) {
      spdlog::error("embedded nats-server: {}", started.status().ToString());
      return 1;
    }
    embedded = std::move(started).value();
    s.nats_url = embedded->url();
    spdlog::info("started embedded nats-server at {} (log: {}/nats-server.log)", s.nats_url,
                 s.data_dir);
  }

  // Every metric this process exposes. The member records into
  // member_metrics; the daemon records the NATS connection's state.
  natcd::metrics::Registry registry;
  natcd::metrics::MemberMetrics member_metrics(registry, natcd::nats::NodeOptions{}.version);
  natcd::metrics::AddProcessMetrics(registry);

  ConnectionEvents events;
  events.metrics = &member_metrics;
  natsConnection* nc = nullptr;
  natsConnection* events_nc = nullptr;
  // nats.c retries a first connection for ever (natsOptions_
  // SetRetryOnFailedConnect) inside natsConnection_Connect: it runs on a
  // thread of its own so that a signal meanwhile still stops natcd at once
  // (nothing is open yet: there is nothing to clean up).
  natsStatus st = NATS_OK;
  std::atomic<bool> connected{false};
  std::thread connector([&] {
    st = Connect(s, &events, /*send_asap=*/true, &nc);
    if (st == NATS_OK) st = Connect(s, nullptr, /*send_asap=*/false, &events_nc);
    connected.store(true);
  });
  while (!connected.load()) {
    const timespec poll = {0, 100'000'000};
    const int sig = sigtimedwait(&signals, nullptr, &poll);
    if (sig > 0) {
      spdlog::info("signal {} before NATS was reached at {}: exiting", sig, s.nats_url);
      embedded.reset();  // stops the embedded nats-server, if any
      std::_Exit(0);
    }
  }
  connector.join();
  if (st != NATS_OK) {
    spdlog::error("connect to {}: {}", s.nats_url, natsStatus_GetText(st));
    natsConnection_Destroy(nc);
    return 1;
  }
  member_metrics.nats_connected.Set(1);

  natcd::SystemClock clock;
  natcd::nats::NodeOptions options;
  options.prefix = s.prefix;
  options.name = s.name;
  options.engine.db_path = s.data_dir + "/natcd.db";
  options.engine.clock = &clock;
  options.engine.seed = std::random_device{}();
  options.engine.max_txn_ops = s.max_txn_ops;
  options.engine.value_cache_bytes = static_cast<size_t>(s.value_cache_mib) << 20;
  options.engine.lease_ttl_s_min = s.lease_ttl_min_s;
  if (*batch_interval_ms > 0) options.engine.batch_interval_ms = *batch_interval_ms;
  if (s.backend_batch_limit > 0) {
    options.engine.batch_limit = static_cast<size_t>(s.backend_batch_limit);
  }
  options.engine.watch.watch_queue_events_max = static_cast<size_t>(s.watch_queue_events);
  options.request_bytes_max = static_cast<size_t>(s.max_request_bytes);
  options.watch_window_messages = static_cast<size_t>(s.watch_window);
  options.watch_heartbeat_ms = s.watch_heartbeat_ms;
  options.watch_ack_timeout_ms = s.watch_ack_timeout_ms;
  options.watch_coalesce_ms = s.watch_coalesce_ms;
  options.watch_coalesce_ready_min = static_cast<size_t>(s.watch_coalesce_ready_min);
  options.watch_progress_interval_ms = s.watch_progress_interval_ms;
  options.auto_compaction_mode =
      s.auto_compaction_mode == "revision"   ? natcd::AutoCompactor::Mode::kRevision
      : s.auto_compaction_mode == "periodic" ? natcd::AutoCompactor::Mode::kPeriodic
                                             : natcd::AutoCompactor::Mode::kOff;
  options.auto_compaction_retention = s.auto_compaction_retention;
  options.cluster_name = s.cluster_name;
  for (size_t start = 0; start < s.initial_cluster.size();) {
    size_t comma = s.initial_cluster.find(',', start);
    if (comma == std::string::npos) comma = s.initial_cluster.size();
    std::string member = s.initial_cluster.substr(start, comma - start);
    if (!member.empty()) options.initial_cluster.push_back(member);
    start = comma + 1;
  }
  options.new_cluster = s.initial_cluster_state == "new";
  options.auth_token_ttl_ms = s.auth_token_ttl_s * 1000;
  options.nats_auth_trusted = s.nats_trusted;
  options.heartbeat_interval_ms = s.heartbeat_interval_ms;
  options.election_timeout_ms = s.election_timeout_ms;
  options.snapshot_entries = static_cast<uint64_t>(s.snapshot_count);
  options.raft_log_segment_bytes = static_cast<uint64_t>(s.raft_log_segment_bytes);
  options.leader_request_weight = static_cast<int>(s.leader_request_weight);
  options.snapshot_catchup_entries = static_cast<uint64_t>(s.snapshot_count / 2);
  options.metrics = &member_metrics;
  // etcd's messages at start (embed/etcd.go, etcdserver/quota.go).
  options.quota_backend_bytes = natcd::QuotaBytesFromFlag(s.quota_backend_bytes);
  if (s.quota_backend_bytes < 0) {
    spdlog::info("disabled backend quota");
  } else if (options.quota_backend_bytes > natcd::kMaxQuotaBytes) {
    spdlog::warn("quota exceeds the maximum value: quota-size {}, maximum-size {}",
                 options.quota_backend_bytes, natcd::kMaxQuotaBytes);
  }
  // etcd sets it where it builds the quota: the bytes in force, 0 for none.
  member_metrics.quota_backend_bytes.Set(static_cast<double>(options.quota_backend_bytes));
  options.corrupt_check_interval_ms = std::max<int64_t>(*corrupt_check_ms, 0);
  options.initial_corrupt_check = s.initial_corrupt_check;
  // etcd's gRPC API: where configured, and on the embedded default.
  std::vector<std::string> client_urls;
  if (!s.listen_client_urls.empty() || embedded_default) {
    natcd::EtcdApiSettings api;
    api.server.listen_urls = natcd::SplitUrls(s.listen_client_urls);
    api.server.advertise_urls = natcd::SplitUrls(s.advertise_client_urls);
    api.server.cert_file = s.cert_file;
    api.server.key_file = s.key_file;
    api.server.trusted_ca_file = s.trusted_ca_file;
    api.server.client_cert_auth = s.client_cert_auth;
    api.server.request_bytes_max = static_cast<size_t>(s.max_request_bytes);
    api.server.prefix = s.prefix;
    api.server.cluster_name = s.cluster_name;
    api.server.election_timeout_ms = s.election_timeout_ms;
    api.server.bcrypt_cost = s.bcrypt_cost;
    if (s.bcrypt_cost < natcd::auth::kBcryptCostMin ||
        s.bcrypt_cost > natcd::auth::kBcryptCostMax) {
      spdlog::warn(
          "use default bcrypt cost instead of the invalid given cost: min-cost {}, max-cost {}, "
          "default-cost {}, given-cost {}",
          natcd::auth::kBcryptCostMin, natcd::auth::kBcryptCostMax, natcd::auth::kBcryptCostDefault,
          s.bcrypt_cost);
      api.server.bcrypt_cost = natcd::auth::kBcryptCostDefault;
    }
    api.embedded_default = embedded_default;
    api.clock = &clock;
    options.front_ends.push_back(natcd::EtcdApiFrontEnd(std::move(api), &client_urls));
  }
  auto node = natcd::nats::Node::Start(nc, options, events_nc);
  if (!node.ok()) {
    spdlog::error("start: {}", node.status().ToString());
    events.metrics = nullptr;
    natsConnection_Destroy(events_nc);
    natsConnection_Destroy(nc);
    return 1;
  }
  events.node = node->get();

  // The member's ID as the node derives it (options.member_id is left 0).
  const uint64_t member_id = natcd::server::MemberIdOf(s.name);
  member_metrics.SetServerId(member_id);
  natcd::DaemonHealth health(nc, natcd::nats::ForwardPrefix(s.prefix, member_id) + "maint.status");
  std::unique_ptr<natcd::MetricsServer> metrics_server;
  if (!metrics_addresses->empty() || embedded_default) {
    auto started = StartMetricsServer(*metrics_addresses, registry, member_metrics, health);
    if (started.ok()) metrics_server = std::move(started).value();
    if (!metrics_server) {
      spdlog::error("{}", started.status().message());
      events.node = nullptr;
      events.metrics = nullptr;
      (*node)->Stop();
      node->reset();
      natsConnection_Destroy(events_nc);
      natsConnection_Destroy(nc);
      return 1;
    }
    for (const std::string& url : metrics_server->urls()) {
      printf("natcd metrics on %s/metrics (health: /health /readyz /livez)\n", url.c_str());
    }
  }
  for (const std::string& url : client_urls) {
    printf("natcd etcd API on %s (etcdctl --endpoints %s)\n", url.c_str(),
           url.substr(url.find("://") + 3).c_str());
  }
  // Tests and scripts wait for this line.
  printf("natcd %s serving %s.> on %s (data: %s)\n", s.name.c_str(), s.prefix.c_str(),
         s.nats_url.c_str(), options.engine.db_path.c_str());
  fflush(stdout);

  int sig = 0;
  sigwait(&signals, &sig);
  spdlog::info("signal {}: shutting down", sig);
  metrics_server.reset();  // no probe of a member shutting down
  events.node = nullptr;
  events.metrics = nullptr;
  (*node)->Stop();
  node->reset();
  natsConnection_Destroy(events_nc);
  natsConnection_Destroy(nc);
  embedded.reset();
  nats_Close();
  return 0;
}
