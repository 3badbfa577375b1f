#include "plugin/natcd/listen_urls.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <charconv>

namespace natcd {
namespace {

Status Bad(const std::string& url, const std::string& why) {
  return Status::InvalidArgument("ErrInvalidArgument", "listen-metrics-urls: " + url + ": " + why);
}

Result<ListenAddress> ParseOne(const std::string& url) {
  constexpr std::string_view kScheme = "http://";
  if (url.rfind("https://", 0) == 0) return Bad(url, "https is not supported (no TLS here)");
  if (url.rfind(kScheme, 0) != 0) return Bad(url, "not an http://host:port URL");
  std::string rest = url.substr(kScheme.size());
  if (!rest.empty() && rest.back() == '/') rest.pop_back();
  ListenAddress a;
  size_t colon;
  if (!rest.empty() && rest[0] == '[') {
    size_t close = rest.find(']');
    if (close == std::string::npos) return Bad(url, "unclosed [");
    a.host = rest.substr(1, close - 1);
    colon = close + 1;
    if (colon >= rest.size() || rest[colon] != ':') return Bad(url, "no port");
  } else {
    colon = rest.rfind(':');
    if (colon == std::string::npos) return Bad(url, "no port");
    a.host = rest.substr(0, colon);
  }
  std::string port = rest.substr(colon + 1);
  auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), a.port);
  if (port.empty() || ec != std::errc() || end != port.data() + port.size() || a.port < 0 ||
      a.port > 65535) {
    return Bad(url, "bad port");
  }
  if (a.host == "localhost") a.host = "127.0.0.1";
  auto* v4 = reinterpret_cast<sockaddr_in*>(&a.addr);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&a.addr);
  if (inet_pton(AF_INET, a.host.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(static_cast<uint16_t>(a.port));
    a.addr_len = sizeof(sockaddr_in);
  } else if (inet_pton(AF_INET6, a.host.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<uint16_t>(a.port));
    a.addr_len = sizeof(sockaddr_in6);
  } else {
    return Bad(url, "the host must be an IP address or localhost");
  }
  return a;
}

}  // namespace

std::string ListenAddress::Url(int actual_port) const {
  bool v6 = addr.ss_family == AF_INET6;
  return "http://" + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(actual_port);
}

Result<std::vector<ListenAddress>> ParseListenUrls(const std::string& urls) {
  std::vector<ListenAddress> out;
  for (size_t start = 0; start <= urls.size();) {
    size_t comma = urls.find(',', start);
    if (comma == std::string::npos) comma = urls.size();
    std::string url = urls.substr(start, comma - start);
    start = comma + 1;
    if (url.empty()) continue;
    Result<ListenAddress> a = ParseOne(url);
    if (!a.ok()) return a.status();
    out.push_back(std::move(a).value());
  }
  return out;
}

}  // namespace natcd
