#include "support/tcp_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace natcd::testing {
namespace {

sockaddr_in Loopback(int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  return addr;
}

// Copies what is readable on from to to; false when from closed or failed.
bool Relay(int from, int to) {
  char buf[65536];
  ssize_t n = read(from, buf, sizeof buf);
  if (n <= 0) return false;
  for (ssize_t off = 0; off < n;) {
    ssize_t w = write(to, buf + off, static_cast<size_t>(n - off));
    if (w <= 0) return false;
    off += w;
  }
  return true;
}

}  // namespace

TcpProxy::~TcpProxy() {
  stopping_ = true;
  if (wake_[1] >= 0) Wake();
  if (thread_.joinable()) thread_.join();
  CloseAll();
  for (int fd : {listener_, wake_[0], wake_[1]}) {
    if (fd >= 0) close(fd);
  }
}

bool TcpProxy::Start() {
  listener_ = socket(AF_INET, SOCK_STREAM, 0);
  if (listener_ < 0 || pipe(wake_) != 0) return false;
  int one = 1;
  setsockopt(listener_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr = Loopback(0);
  if (bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      listen(listener_, 16) != 0) {
    return false;
  }
  socklen_t len = sizeof addr;
  getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  thread_ = std::thread([this] { Run(); });
  return true;
}

void TcpProxy::Cut() {
  cut_ = true;
  Wake();
}

void TcpProxy::Heal() {
  cut_ = false;
  frozen_ = false;
  Wake();
}

void TcpProxy::Freeze() {
  frozen_ = true;
  Wake();
}

void TcpProxy::Wake() {
  if (write(wake_[1], "x", 1) < 0) {
    // The pipe is full: the relay thread is awake already.
  }
}

void TcpProxy::CloseAll() {
  for (auto [client, server] : pairs_) {
    close(client);
    close(server);
  }
  pairs_.clear();
}

void TcpProxy::Run() {
  while (!stopping_) {
    if (cut_) CloseAll();
    if (frozen_) {
      // Nothing is read, relayed or accepted (new connections wait in the
      // backlog): the kernel buffers fill and the peers hear nothing.
      pollfd wake = {wake_[0], POLLIN, 0};
      if (poll(&wake, 1, 1'000) > 0) {
        char drain[64];
        if (read(wake_[0], drain, sizeof drain) < 0) {
          // Nothing to drain after all.
        }
      }
      continue;
    }
    std::vector<pollfd> fds = {{wake_[0], POLLIN, 0}, {listener_, POLLIN, 0}};
    for (auto [client, server] : pairs_) {
      fds.push_back({client, POLLIN, 0});
      fds.push_back({server, POLLIN, 0});
    }
    if (poll(fds.data(), fds.size(), 1'000) <= 0) continue;
    if (fds[0].revents & POLLIN) {
      char drain[64];
      if (read(wake_[0], drain, sizeof drain) < 0) {
        // Nothing to drain after all.
      }
    }
    // Relay, dropping pairs where either side closed (fds has the pairs
    // as they were when poll() started: a new one joins after).
    std::vector<std::pair<int, int>> alive;
    for (size_t i = 0; i + 2 < fds.size(); i += 2) {
      auto [client, server] = pairs_[i / 2];
      const pollfd& c = fds[2 + i];
      const pollfd& s = fds[3 + i];
      bool ok = true;
      if (c.revents & (POLLIN | POLLHUP | POLLERR)) ok = Relay(client, server);
      if (ok && (s.revents & (POLLIN | POLLHUP | POLLERR))) ok = Relay(server, client);
      if (ok) {
        alive.emplace_back(client, server);
      } else {
        close(client);
        close(server);
      }
    }
    pairs_ = std::move(alive);
    if (fds[1].revents & POLLIN) {
      int client = accept(listener_, nullptr, nullptr);
      if (client >= 0 && cut_) {
        close(client);  // refused: the process sees a connection dropped at once
      } else if (client >= 0) {
        int server = socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in target = Loopback(target_port_);
        if (server >= 0 &&
            connect(server, reinterpret_cast<sockaddr*>(&target), sizeof target) == 0) {
          pairs_.emplace_back(client, server);
        } else {
          close(client);
          if (server >= 0) close(server);
        }
      }
    }
  }
}

}  // namespace natcd::testing
