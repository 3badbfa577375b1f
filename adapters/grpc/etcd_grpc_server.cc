#include "adapters/grpc/etcd_grpc_server.h"

#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/security/server_credentials.h>

#include <absl/synchronization/mutex.h>

#include <chrono>
#include <climits>
#include <fstream>
#include <sstream>

#include "adapters/grpc/concurrency_call.h"
#include "adapters/grpc/etcd_methods.h"
#include "adapters/grpc/health_watch.h"
#include "adapters/grpc/leader_monitor.h"
#include "adapters/grpc/lease_keepalive_call.h"
#include "adapters/grpc/live_calls.h"
#include "adapters/grpc/snapshot_call.h"
#include "adapters/grpc/stream_call.h"
#include "adapters/grpc/unary_call.h"
#include "adapters/grpc/watch_call.h"
#include "adapters/grpc/watch_registry.h"

namespace natcd::etcd_api {
namespace {

// etcd's gRPC limits: a request may be max-request-bytes plus 512 KiB of
// gRPC overhead; responses are not limited.
constexpr int kGrpcOverheadBytes = 512 * 1024;
// etcd's server keepalive: pings no more often than every 5 s are fine
// (clients ping every 10 s or more), probes idle connections every 2 h and
// gives up after 20 s without an answer.
constexpr int kKeepaliveMinPingMs = 5'000;
constexpr int kKeepaliveTimeMs = 2 * 3600 * 1000;
constexpr int kKeepaliveTimeoutMs = 20'000;

// grpc-go's answers for a method or service that is not served.
grpc::Status Unimplemented(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (path.empty() || path[0] != '/' || slash == 0 || slash == std::string::npos) {
    return grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "malformed method name: " + path);
  }
  const std::string service = path.substr(1, slash - 1);
  const std::string method = path.substr(slash + 1);
  return grpc::Status(grpc::StatusCode::UNIMPLEMENTED,
                      "unknown method " + method + " for service " + service);
}

class EtcdService final : public grpc::CallbackGenericService {
 public:
  explicit EtcdService(const CallContext* calls) : calls_(calls) {}

  grpc::ServerGenericBidiReactor* CreateReactor(
      grpc::GenericCallbackServerContext* context) override {
    const MethodInfo* method = FindMethod(context->method());
    if (method == nullptr) return RejectedCall(Unimplemented(context->method()));
    // clientv3's WithRequireLeader (kube-apiserver's watches, keep-alive
    // streams): a member that knows no leader refuses the call, as etcd's
    // interceptor does, so the client tries another member.
    if (RequiresLeader(*context) && calls_->member->leader() == 0) {
      return RejectedCall(grpc::Status(grpc::StatusCode::UNAVAILABLE, "etcdserver: no leader"));
    }
    switch (method->method) {
      case Method::kWatch:
        return WatchCall::Start(context, method, calls_);
      case Method::kLeaseKeepAlive:
        return LeaseKeepAliveCall::Start(context, method, calls_);
      case Method::kLock:
      case Method::kUnlock:
      case Method::kCampaign:
      case Method::kProclaim:
      case Method::kLeader:
      case Method::kObserve:
      case Method::kResign:
        return ConcurrencyCall::Start(context, method, calls_);
      case Method::kSnapshot:
        return SnapshotCall::Start(context, method, calls_);
      case Method::kHealthWatch:
        return HealthWatchCall::Start(context, method, calls_);
      default:
        return UnaryCall::Start(context, method, calls_);
    }
  }

 private:
  const CallContext* const calls_;
};

struct ListenUrl {
  bool tls = false;
  std::string host;  // as grpc takes it: "127.0.0.1", "[::1]", "localhost"
  int port = 0;
};

Result<ListenUrl> ParseUrl(const std::string& url) {
  ListenUrl out;
  std::string rest;
  if (url.rfind("http://", 0) == 0) {
    rest = url.substr(7);
  } else if (url.rfind("https://", 0) == 0) {
    out.tls = true;
    rest = url.substr(8);
  } else {
    return Status::InvalidArgument("ErrConfig",
                                   "listen-client-urls: " + url + ": want http:// or https://");
  }
  while (!rest.empty() && rest.back() == '/') rest.pop_back();
  const size_t colon = rest.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == rest.size()) {
    return Status::InvalidArgument("ErrConfig", "listen-client-urls: " + url + ": want host:port");
  }
  out.host = rest.substr(0, colon);
  const std::string port = rest.substr(colon + 1);
  char* end = nullptr;
  const long n = std::strtol(port.c_str(), &end, 10);
  if (*end != '\0' || n < 0 || n > 65535) {
    return Status::InvalidArgument("ErrConfig", "listen-client-urls: " + url + ": bad port");
  }
  out.port = static_cast<int>(n);
  return out;
}

Result<std::string> ReadFile(const std::string& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::InvalidArgument("ErrConfig", std::string(what) + ": cannot read " + path);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

Result<std::shared_ptr<grpc::ServerCredentials>> TlsCredentials(const GrpcServerOptions& o) {
  if (o.cert_file.empty() || o.key_file.empty()) {
    return Status::InvalidArgument("ErrConfig",
                                   "an https:// client URL needs --cert-file and --key-file");
  }
  Result<std::string> cert = ReadFile(o.cert_file, "cert-file");
  if (!cert.ok()) return cert.status();
  Result<std::string> key = ReadFile(o.key_file, "key-file");
  if (!key.ok()) return key.status();
  grpc::SslServerCredentialsOptions ssl(GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  ssl.pem_key_cert_pairs.push_back({*key, *cert});
  if (!o.trusted_ca_file.empty()) {
    Result<std::string> ca = ReadFile(o.trusted_ca_file, "trusted-ca-file");
    if (!ca.ok()) return ca.status();
    ssl.pem_root_certs = *ca;
  }
  if (o.client_cert_auth) {
    if (o.trusted_ca_file.empty()) {
      return Status::InvalidArgument("ErrConfig", "--client-cert-auth needs --trusted-ca-file");
    }
    ssl.client_certificate_request = GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
  }
  return grpc::SslServerCredentials(ssl);
}

}  // namespace

// The member's hooks for this front end: watch delivery, and the leader
// monitor and health streams on its ticks.
class GrpcFrontEnd final : public server::FrontEnd {
 public:
  GrpcFrontEnd(WatchRegistry* watches, LeaderMonitor* monitor, HealthWatchers* health)
      : watches_(watches), monitor_(monitor), health_(health) {}
  void Attach(Engine* engine) override { watches_->Attach(engine); }
  void Detach() override { watches_->Detach(); }
  void AfterTurn() override { watches_->AfterTurn(); }
  void Tick() override {
    watches_->Tick();
    monitor_->Tick();
    health_->Tick();
  }
  void LeadershipChanged(bool leading) override { watches_->LeadershipChanged(leading); }

 private:
  WatchRegistry* const watches_;
  LeaderMonitor* const monitor_;
  HealthWatchers* const health_;
};

struct EtcdGrpcServer::Parts {
  GrpcServerOptions options;
  Clock* clock = nullptr;
  CallContext calls;
  std::unique_ptr<WatchRegistry> watches;
  std::unique_ptr<LeaderMonitor> leader_monitor;
  std::unique_ptr<HealthWatchers> health;
  std::unique_ptr<GrpcFrontEnd> front_end;
  LiveCalls live;
  std::unique_ptr<EtcdService> service;
  std::unique_ptr<grpc::Server> server;
  std::vector<std::string> urls;
  bool stopped = false;
};

Result<std::unique_ptr<EtcdGrpcServer>> EtcdGrpcServer::Start(const GrpcServerOptions& options,
                                                              server::Member* member,
                                                              const nats::HeaderInfo& header,
                                                              Clock* clock) {
  if (options.listen_urls.empty()) {
    return Status::InvalidArgument("ErrConfig", "no client URL to listen on");
  }
  // Debian's Abseil is built with assertions on, so every absl::Mutex that
  // grpc++ takes also records the lock order for deadlock detection, under
  // one process-wide lock: contention on every call. grpc++ is not
  // natcd's to debug; the detection is a debugging aid, off.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  auto parts = std::make_unique<Parts>();
  parts->options = options;
  parts->clock = clock;
  Parts* p = parts.get();
  p->calls.member = member;
  p->calls.clock = clock;
  p->calls.request_bytes_max = options.request_bytes_max;
  p->calls.bcrypt_cost = options.bcrypt_cost;
  p->calls.response.header = header;
  p->calls.response.prefix = options.prefix;
  p->calls.response.cluster_name = options.cluster_name;
  p->calls.response.version = kEtcdApiVersion;
  p->watches = std::make_unique<WatchRegistry>(&p->calls, options.watch_stream_bytes_max);
  p->calls.watches = p->watches.get();
  p->calls.live = &p->live;
  p->leader_monitor = std::make_unique<LeaderMonitor>(member, clock, options.election_timeout_ms);
  p->calls.leader_monitor = p->leader_monitor.get();
  p->health = std::make_unique<HealthWatchers>(member);
  p->calls.health = p->health.get();
  p->front_end =
      std::make_unique<GrpcFrontEnd>(p->watches.get(), p->leader_monitor.get(), p->health.get());
  p->service = std::make_unique<EtcdService>(&p->calls);

  grpc::ServerBuilder builder;
  std::vector<ListenUrl> listen;
  std::vector<int> ports(options.listen_urls.size(), 0);
  for (size_t i = 0; i < options.listen_urls.size(); i++) {
    Result<ListenUrl> url = ParseUrl(options.listen_urls[i]);
    if (!url.ok()) return url.status();
    std::shared_ptr<grpc::ServerCredentials> credentials = grpc::InsecureServerCredentials();
    if (url->tls) {
      Result<std::shared_ptr<grpc::ServerCredentials>> tls = TlsCredentials(options);
      if (!tls.ok()) return tls.status();
      credentials = *tls;
    }
    builder.AddListeningPort(url->host + ":" + std::to_string(url->port), credentials, &ports[i]);
    listen.push_back(*url);
  }
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS,
                             kKeepaliveMinPingMs);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, kKeepaliveTimeMs);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, kKeepaliveTimeoutMs);
  builder.SetMaxReceiveMessageSize(
      static_cast<int>(std::min<size_t>(options.request_bytes_max + kGrpcOverheadBytes, INT_MAX)));
  builder.SetMaxSendMessageSize(INT_MAX);
  builder.RegisterCallbackGenericService(p->service.get());
  p->server = builder.BuildAndStart();
  bool bound = p->server != nullptr;
  for (int port : ports) bound = bound && port != 0;
  if (!bound) {
    if (p->server) p->server->Shutdown();
    std::string list;
    for (const std::string& url : options.listen_urls) list += (list.empty() ? "" : ",") + url;
    return Status::Unavailable("ErrListen", "cannot listen on " + list + " (address in use?)");
  }
  for (size_t i = 0; i < listen.size(); i++) {
    p->urls.push_back(std::string(listen[i].tls ? "https://" : "http://") + listen[i].host + ":" +
                      std::to_string(ports[i]));
  }
  // The others learn them through the log (the member publishes them).
  member->SetClientUrls(options.advertise_urls.empty() ? p->urls : options.advertise_urls);
  return std::unique_ptr<EtcdGrpcServer>(new EtcdGrpcServer(std::move(parts)));
}

EtcdGrpcServer::EtcdGrpcServer(std::unique_ptr<Parts> parts) : parts_(std::move(parts)) {}

EtcdGrpcServer::~EtcdGrpcServer() { StopReceiving(parts_->clock->MonotonicMs()); }

server::FrontEnd* EtcdGrpcServer::front_end() { return parts_->front_end.get(); }

void EtcdGrpcServer::StopReceiving(int64_t deadline_ms) {
  Parts& p = *parts_;
  if (p.stopped) return;
  p.stopped = true;
  // Streams never end by themselves: end them now, as etcd's clients expect
  // of a member going away (they move to another endpoint).
  p.live.EndAll(grpc::Status(grpc::StatusCode::UNAVAILABLE, "etcdserver: server stopped"));
  const int64_t wait_ms = std::max<int64_t>(0, deadline_ms - p.clock->MonotonicMs());
  p.server->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(wait_ms));
  p.server->Wait();
}

const std::vector<std::string>& EtcdGrpcServer::urls() const { return parts_->urls; }

}  // namespace natcd::etcd_api
