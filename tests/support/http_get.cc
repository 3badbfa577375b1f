#include "support/http_get.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>

namespace natcd::testing {

HttpResponse HttpRequest(const std::string& url, const std::string& method,
                         std::chrono::milliseconds timeout) {
  HttpResponse r;
  const std::string scheme = "http://";
  if (url.rfind(scheme, 0) != 0) {
    r.error = "not an http URL: " + url;
    return r;
  }
  std::string rest = url.substr(scheme.size());
  size_t slash = rest.find('/');
  std::string host_port = rest.substr(0, slash);
  std::string target = slash == std::string::npos ? "/" : rest.substr(slash);
  size_t colon = host_port.rfind(':');
  if (colon == std::string::npos) {
    r.error = "no port: " + url;
    return r;
  }
  std::string host = host_port.substr(0, colon);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(std::stoi(host_port.substr(colon + 1))));
  // Tests never talk to anything outside 127.0.0.0/8.
  if (inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1 ||
      (ntohl(addr.sin_addr.s_addr) >> 24) != 127) {
    r.error = "not a loopback address: " + host;
    return r;
  }
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(timeout.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((timeout.count() % 1000) * 1000);
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    r.error = "connect " + host_port + " failed";
    close(fd);
    return r;
  }
  std::string request =
      method + " " + target + " HTTP/1.1\r\nHost: " + host_port + "\r\nConnection: close\r\n\r\n";
  if (send(fd, request.data(), request.size(), MSG_NOSIGNAL) !=
      static_cast<ssize_t>(request.size())) {
    r.error = "send failed";
    close(fd);
    return r;
  }
  std::string raw;
  char buf[65536];
  for (ssize_t n; (n = recv(fd, buf, sizeof buf, 0)) > 0;) raw.append(buf, static_cast<size_t>(n));
  close(fd);
  size_t head_end = raw.find("\r\n\r\n");
  if (raw.rfind("HTTP/1.", 0) != 0 || head_end == std::string::npos) {
    r.error = "not an HTTP response: " + raw.substr(0, 200);
    return r;
  }
  r.status = std::stoi(raw.substr(9, 3));
  size_t line_start = raw.find("\r\n") + 2;
  while (line_start < head_end) {
    size_t line_end = raw.find("\r\n", line_start);
    std::string line = raw.substr(line_start, line_end - line_start);
    line_start = line_end + 2;
    size_t sep = line.find(':');
    if (sep == std::string::npos) continue;
    std::string name = line.substr(0, sep);
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    std::string value = line.substr(sep + 1);
    value.erase(0, value.find_first_not_of(' '));
    r.headers[name] = value;
  }
  r.body = raw.substr(head_end + 4);
  auto length = r.headers.find("content-length");
  if (length != r.headers.end() && std::stoul(length->second) != r.body.size()) {
    r.error = "body shorter than Content-Length";
  }
  return r;
}

}  // namespace natcd::testing
