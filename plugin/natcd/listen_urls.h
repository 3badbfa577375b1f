// --listen-metrics-urls: etcd's comma-separated list of http://host:port
// URLs to serve /metrics and the health probes on.
//
// The host is an IP address (IPv6 in brackets) or `localhost` (127.0.0.1);
// port 0 picks a free port. https is refused: natcd's metrics listener has
// no TLS (serve it on loopback or behind a proxy).
#pragma once

#include <sys/socket.h>

#include <string>
#include <vector>

#include "natcd/status.h"

namespace natcd {

struct ListenAddress {
  sockaddr_storage addr{};  // AF_INET or AF_INET6, port set
  socklen_t addr_len = 0;
  std::string host;  // as written: "127.0.0.1", "::1"
  int port = 0;
  // "http://127.0.0.1:2381", "http://[::1]:2381" for the given port.
  std::string Url(int actual_port) const;
};

Result<std::vector<ListenAddress>> ParseListenUrls(const std::string& urls);

}  // namespace natcd
