// The metrics listener (--listen-metrics-urls), on libmicrohttpd:
//
//   GET /metrics   the registry in the Prometheus text format 0.0.4
//   GET /health    etcd's health probe: 200 {"health":"true","reason":""},
//   GET /readyz    or 503 {"health":"false","reason":"..."} (see
//   GET /livez     core/metrics/health.h; query: exclude=ALARM, serializable=true)
//
// Any other path answers 404 and any method but GET or HEAD on a known path
// 405, as etcd's Go mux does. Each probe's answer counts into
// MemberMetrics::health_success or health_failures.
//
// Threads. libmicrohttpd serves on two threads of its own (so a scrape does
// not wait behind a probe), at most 64 connections, each idle at most 10 s.
// The registry, the counts and the health source must outlive the server; the health
// source is called on those threads.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "metrics/health.h"
#include "metrics/member_metrics.h"
#include "metrics/registry.h"
#include "natcd/status.h"
#include "plugin/natcd/listen_urls.h"

struct MHD_Daemon;

namespace natcd {

class MetricsServer {
 public:
  // Listens on every address (port 0: a free one) or fails with the first
  // that cannot be bound, listening on none.
  static Result<std::unique_ptr<MetricsServer>> Start(const std::vector<ListenAddress>& addresses,
                                                      const metrics::Registry& registry,
                                                      metrics::MemberMetrics& counts,
                                                      metrics::HealthSource& health);
  ~MetricsServer();  // stops listening; waits for the requests being served
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // One per address, with the port actually bound: "http://127.0.0.1:2381".
  const std::vector<std::string>& urls() const { return urls_; }

 private:
  struct Handler;
  MetricsServer() = default;
  std::unique_ptr<Handler> handler_;
  std::vector<MHD_Daemon*> daemons_;
  std::vector<std::string> urls_;
};

}  // namespace natcd
