#include "plugin/natcd/embedded_nats.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <thread>

namespace natcd {
namespace {

// Binds 127.0.0.1:port (0: any) and returns the port bound, or -1.
int BindLoopback(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  int bound = -1;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
    socklen_t len = sizeof addr;
    getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    bound = ntohs(addr.sin_port);
  }
  close(fd);
  return bound;
}

bool Accepts(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  close(fd);
  return ok;
}

}  // namespace

Result<std::unique_ptr<EmbeddedNats>> EmbeddedNats::Start(const std::string& binary,
                                                          int preferred_port,
                                                          const std::string& log_file) {
  int port = BindLoopback(preferred_port);
  if (port < 0) port = BindLoopback(0);
  if (port < 0) return Status::Unavailable("ErrEmbedded", "no free loopback port");
  std::string port_arg = std::to_string(port);

  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) return Status::Unavailable("ErrEmbedded", "fork failed");
  if (pid == 0) {
    // The server must not outlive natcd, even after a kill -9.
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(1);
    if (!log_file.empty()) {
      int fd = open(log_file.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (fd >= 0) {
        dup2(fd, STDOUT_FILENO);
        dup2(fd, STDERR_FILENO);
        close(fd);
      }
    }
    execlp(binary.c_str(), binary.c_str(), "-a", "127.0.0.1", "-p", port_arg.c_str(), nullptr);
    _exit(127);
  }
  std::unique_ptr<EmbeddedNats> server(new EmbeddedNats());
  server->pid_ = pid;
  server->url_ = "nats://127.0.0.1:" + port_arg;
  for (int i = 0; i < 500; ++i) {  // up to 10 s
    if (Accepts(port)) return server;
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      server->pid_ = -1;
      return Status::Unavailable("ErrEmbedded", binary +
                                                    " exited at start (is it installed? "
                                                    "`make deps` installs nats-server)");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return Status::Unavailable("ErrEmbedded", binary + " did not accept connections in 10 s");
}

EmbeddedNats::~EmbeddedNats() {
  if (pid_ <= 0) return;
  kill(pid_, SIGTERM);
  for (int i = 0; i < 250; ++i) {
    if (waitpid(pid_, nullptr, WNOHANG) == pid_) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
}

}  // namespace natcd
