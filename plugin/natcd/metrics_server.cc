#include "plugin/natcd/metrics_server.h"

#include <microhttpd.h>

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <mutex>

#include "metrics/text_format.h"

namespace natcd {
namespace {

constexpr const char* kPlainText = "text/plain; charset=utf-8";

MHD_Result Respond(MHD_Connection* connection, unsigned int code, const std::string& body,
                   const char* content_type, const char* allow = nullptr) {
  MHD_Response* response = MHD_create_response_from_buffer(
      body.size(), const_cast<char*>(body.data()), MHD_RESPMEM_MUST_COPY);
  if (response == nullptr) return MHD_NO;
  MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
  // Go's http.Error, which etcd answers errors with, sets it too.
  if (code >= 400) MHD_add_response_header(response, "X-Content-Type-Options", "nosniff");
  if (allow != nullptr) MHD_add_response_header(response, MHD_HTTP_HEADER_ALLOW, allow);
  MHD_Result queued = MHD_queue_response(connection, code, response);
  MHD_destroy_response(response);
  return queued;
}

MHD_Result CollectQuery(void* cls, MHD_ValueKind, const char* key, const char* value) {
  auto* query = static_cast<metrics::HealthQuery*>(cls);
  std::string_view k = key != nullptr ? key : "";
  std::string_view v = value != nullptr ? value : "";
  if (k == "exclude" && !v.empty()) query->excluded_alarms.emplace(v);
  if (k == "serializable") query->serializable = v == "true";
  return MHD_YES;
}

// libmicrohttpd reports why it could not bind through this logger only.
struct StartErrors {
  std::mutex mu;
  std::string last;
};

void LogError(void* cls, const char* format, va_list args) {
  char buf[512];
  vsnprintf(buf, sizeof buf, format, args);
  std::string text = buf;
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  auto* errors = static_cast<StartErrors*>(cls);
  std::lock_guard lock(errors->mu);
  errors->last = text;
}

}  // namespace

struct MetricsServer::Handler {
  const metrics::Registry& registry;
  metrics::MemberMetrics& counts;
  metrics::HealthSource& health;
  StartErrors errors;

  MHD_Result Serve(MHD_Connection* connection, std::string_view path, std::string_view method) {
    std::optional<metrics::HealthProbe> probe;
    if (path == "/health") probe = metrics::HealthProbe::kHealth;
    if (path == "/readyz") probe = metrics::HealthProbe::kReadyz;
    if (path == "/livez") probe = metrics::HealthProbe::kLivez;
    if (path != "/metrics" && !probe) {
      return Respond(connection, MHD_HTTP_NOT_FOUND, "404 page not found\n", kPlainText);
    }
    if (method != MHD_HTTP_METHOD_GET && method != MHD_HTTP_METHOD_HEAD) {
      return Respond(connection, MHD_HTTP_METHOD_NOT_ALLOWED, "Method Not Allowed\n", kPlainText,
                     "GET");
    }
    if (!probe) {
      return Respond(connection, MHD_HTTP_OK, registry.TextExposition(),
                     std::string(metrics::kTextContentType).c_str());
    }
    metrics::HealthQuery query;
    MHD_get_connection_values(connection, MHD_GET_ARGUMENT_KIND, CollectQuery, &query);
    metrics::HealthVerdict verdict =
        metrics::EvaluateHealth(*probe, health.Read(query.serializable), query);
    (verdict.healthy ? counts.health_success : counts.health_failures).Inc();
    if (verdict.healthy) return Respond(connection, MHD_HTTP_OK, verdict.Json(), kPlainText);
    // http.Error adds a newline.
    return Respond(connection, MHD_HTTP_SERVICE_UNAVAILABLE, verdict.Json() + "\n", kPlainText);
  }

  static MHD_Result Access(void* cls, MHD_Connection* connection, const char* url,
                           const char* method, const char*, const char*, size_t*, void**) {
    // Answered on the first call, once the headers are in: no request here
    // has a body to wait for (one sent anyway is discarded).
    return static_cast<Handler*>(cls)->Serve(connection, url, method);
  }
};

Result<std::unique_ptr<MetricsServer>> MetricsServer::Start(
    const std::vector<ListenAddress>& addresses, const metrics::Registry& registry,
    metrics::MemberMetrics& counts, metrics::HealthSource& health) {
  std::unique_ptr<MetricsServer> server(new MetricsServer());
  server->handler_.reset(new Handler{registry, counts, health, {}});
  for (const ListenAddress& a : addresses) {
    unsigned int flags = MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG;
    if (a.addr.ss_family == AF_INET6) flags |= MHD_USE_IPv6;
    MHD_Daemon* d = MHD_start_daemon(
        flags, static_cast<uint16_t>(a.port), nullptr, nullptr, &Handler::Access,
        server->handler_.get(), MHD_OPTION_SOCK_ADDR, &a.addr, MHD_OPTION_THREAD_POOL_SIZE, 2u,
        MHD_OPTION_CONNECTION_LIMIT, 64u, MHD_OPTION_CONNECTION_TIMEOUT, 10u,
        MHD_OPTION_EXTERNAL_LOGGER, &LogError, &server->handler_->errors, MHD_OPTION_END);
    if (d == nullptr) {
      std::string why;
      {
        std::lock_guard lock(server->handler_->errors.mu);
        why =
            server->handler_->errors.last.empty() ? "cannot listen" : server->handler_->errors.last;
      }
      return Status::Unavailable("ErrUnavailable",
                                 "metrics listener " + a.Url(a.port) + ": " + why);
    }
    server->daemons_.push_back(d);
    const MHD_DaemonInfo* info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    server->urls_.push_back(a.Url(info != nullptr ? info->port : a.port));
  }
  return server;
}

MetricsServer::~MetricsServer() {
  for (MHD_Daemon* d : daemons_) MHD_stop_daemon(d);
}

}  // namespace natcd
