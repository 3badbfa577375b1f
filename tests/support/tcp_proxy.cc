#include "support/tcp_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>

namespace natcd::testing {
namespace {

sockaddr_in Loopback(int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  return addr;
}

}  // namespace

TcpProxy::~TcpProxy() {
  stopping_ = true;
  if (wake_[1] >= 0 && write(wake_[1], "x", 1) < 0) {
    // The pipe is full: the accept thread is awake already.
  }
  if (thread_.joinable()) thread_.join();
  ShutdownAll();
  Reap(true);
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
  thread_ = std::thread([this] { Accept(); });
  return true;
}

void TcpProxy::Cut() {
  cut_ = true;
  ShutdownAll();
}

void TcpProxy::Heal() {
  cut_ = false;
  frozen_ = false;
  if (write(wake_[1], "x", 1) < 0) {
    // The pipe is full: the accept thread is awake already.
  }
}

void TcpProxy::Freeze() { frozen_ = true; }

void TcpProxy::ShutdownAll() {
  // shutdown() wakes a thread blocked in read() or write() on the socket;
  // the threads close nothing themselves, Reap does.
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& pair : pairs_) {
    shutdown(pair->client, SHUT_RDWR);
    shutdown(pair->server, SHUT_RDWR);
  }
}

void TcpProxy::Reap(bool all) {
  std::list<std::unique_ptr<Pair>> done;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = pairs_.begin(); it != pairs_.end();) {
      if (all || (*it)->running.load() == 0) {
        done.push_back(std::move(*it));
        it = pairs_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& pair : done) {
    pair->to_server.join();
    pair->to_client.join();
    close(pair->client);
    close(pair->server);
  }
}

void TcpProxy::RelayDirection(Pair* pair, int from, int to) {
  char buf[65536];
  for (;;) {
    // Frozen: nothing is read, so nothing flows and the kernel buffers
    // fill; the peers hear nothing until Heal.
    while (frozen_ && !cut_ && !stopping_) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    const ssize_t n = read(from, buf, sizeof buf);
    if (n <= 0 || cut_ || stopping_) break;
    while (frozen_ && !cut_ && !stopping_) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    bool ok = true;
    for (ssize_t off = 0; ok && off < n;) {
      const ssize_t w = send(to, buf + off, static_cast<size_t>(n - off), MSG_NOSIGNAL);
      ok = w > 0;
      off += ok ? w : 0;
    }
    if (!ok) break;
  }
  // Either side closing closes both, as a dropped connection does.
  shutdown(pair->client, SHUT_RDWR);
  shutdown(pair->server, SHUT_RDWR);
  pair->running--;
}

void TcpProxy::Accept() {
  while (!stopping_) {
    Reap(false);
    // Frozen: new connections wait in the backlog, unanswered.
    pollfd fds[2] = {{wake_[0], POLLIN, 0}, {listener_, frozen_ ? short{0} : short{POLLIN}, 0}};
    if (poll(fds, 2, 200) <= 0) continue;
    if (fds[0].revents & POLLIN) {
      char drain[64];
      if (read(wake_[0], drain, sizeof drain) < 0) {
        // Nothing to drain after all.
      }
    }
    if (!(fds[1].revents & POLLIN) || frozen_) continue;
    const int client = accept(listener_, nullptr, nullptr);
    if (client < 0) continue;
    if (cut_) {
      close(client);  // refused: the process sees a connection dropped at once
      continue;
    }
    const int server = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in target = Loopback(target_port_);
    if (server < 0 || connect(server, reinterpret_cast<sockaddr*>(&target), sizeof target) != 0) {
      close(client);
      if (server >= 0) close(server);
      continue;
    }
    auto pair = std::make_unique<Pair>();
    pair->client = client;
    pair->server = server;
    Pair* p = pair.get();
    std::lock_guard<std::mutex> lock(mu_);
    p->to_server = std::thread([this, p] { RelayDirection(p, p->client, p->server); });
    p->to_client = std::thread([this, p] { RelayDirection(p, p->server, p->client); });
    pairs_.push_back(std::move(pair));
    if (cut_) {  // cut while this one was being connected
      shutdown(client, SHUT_RDWR);
      shutdown(server, SHUT_RDWR);
    }
  }
}

}  // namespace natcd::testing
