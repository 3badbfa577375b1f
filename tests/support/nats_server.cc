// A nats-server child process for tests; see nats_server.h.

#include "support/nats_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <utility>

namespace natcd::testing {
namespace {

using Clock = std::chrono::steady_clock;

bool LoopbackPortAccepts(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  const bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  close(fd);
  return ok;
}

bool IsExecutable(const std::string& path) { return access(path.c_str(), X_OK) == 0; }

std::string FindNatsServer() {
  if (const char* env = std::getenv("NATCD_NATS_SERVER"); env != nullptr && *env != '\0') {
    return env;
  }
  if (const char* path = std::getenv("PATH"); path != nullptr) {
    std::stringstream dirs(path);
    std::string dir;
    while (std::getline(dirs, dir, ':')) {
      if (dir.empty()) continue;
      const std::string candidate = dir + "/nats-server";
      if (IsExecutable(candidate)) return candidate;
    }
  }
  for (const char* candidate : {"/usr/sbin/nats-server", "/usr/bin/nats-server"}) {
    if (IsExecutable(candidate)) return candidate;
  }
  return "";
}

}  // namespace

// A port on 127.0.0.1 that was free a moment ago (the kernel's pick for
// port 0). Another process could take it before nats-server binds it; that
// is unlikely and shows as a failed Start.
int PickFreeLoopbackPort() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  int port = -1;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

NatsServer::NatsServer(NatsServerOptions options) : options_(std::move(options)) {}

NatsServer::~NatsServer() {
  Stop();
  if (!work_dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(work_dir_, ec);
  }
}

std::string NatsServer::Log() const {
  if (log_path_.empty()) return "";
  std::ifstream in(log_path_);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

::testing::AssertionResult NatsServer::Start() {
  if (running()) return ::testing::AssertionFailure() << "nats-server is already running";
  const std::string binary = FindNatsServer();
  if (binary.empty()) {
    return ::testing::AssertionFailure()
           << "nats-server not found (set NATCD_NATS_SERVER or install nats-server)";
  }
  if (work_dir_.empty()) {
    std::string tmpl = (std::filesystem::temp_directory_path() / "natcd-nats-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) {
      return ::testing::AssertionFailure() << "mkdtemp: " << std::strerror(errno);
    }
    work_dir_ = tmpl;
    log_path_ = work_dir_ + "/nats-server.log";
    if (options_.jetstream) store_dir_ = work_dir_ + "/js";
  }
  if (port_ == 0) {
    port_ = PickFreeLoopbackPort();
    if (port_ <= 0) {
      port_ = 0;
      return ::testing::AssertionFailure() << "no free loopback port: " << std::strerror(errno);
    }
    url_ = "nats://127.0.0.1:" + std::to_string(port_);
  }

  // Everything the child needs is prepared before fork(): after it, only
  // async-signal-safe calls (the parent may run other threads).
  std::vector<std::string> args = {binary, "-a", "127.0.0.1", "-p", std::to_string(port_)};
  if (options_.jetstream) {
    args.insert(args.end(), {"-js", "-sd", store_dir_});
  }
  args.insert(args.end(), options_.extra_args.begin(), options_.extra_args.end());
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  const int log_fd = open(log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) return ::testing::AssertionFailure() << "open log: " << std::strerror(errno);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    close(log_fd);
    return ::testing::AssertionFailure() << "fork: " << std::strerror(errno);
  }
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);  // the parent died before prctl
    dup2(log_fd, STDOUT_FILENO);
    dup2(log_fd, STDERR_FILENO);
    const int null_fd = open("/dev/null", O_RDONLY);
    if (null_fd >= 0) dup2(null_fd, STDIN_FILENO);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(log_fd);
  pid_ = pid;

  const auto deadline = Clock::now() + options_.start_timeout;
  for (;;) {
    int status;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return ::testing::AssertionFailure()
             << "nats-server exited during start (status " << status << "); log:\n"
             << Log();
    }
    if (LoopbackPortAccepts(port_)) return ::testing::AssertionSuccess();
    if (Clock::now() >= deadline) {
      const std::string log = Log();
      Kill();
      return ::testing::AssertionFailure()
             << "nats-server did not accept connections on " << url_ << " within "
             << options_.start_timeout.count() << " ms; log:\n"
             << log;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

void NatsServer::Signal(int signo, std::chrono::milliseconds wait) {
  if (!running()) return;
  kill(pid_, signo);
  const auto deadline = Clock::now() + wait;
  for (;;) {
    int status;
    const pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_ || (r < 0 && errno == ECHILD)) {
      pid_ = -1;
      return;
    }
    if (Clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  kill(pid_, SIGKILL);
  int status;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
}

void NatsServer::Stop() { Signal(SIGTERM, options_.stop_timeout); }

void NatsServer::Kill() { Signal(SIGKILL, options_.stop_timeout); }

::testing::AssertionResult NatsServer::Restart() {
  Stop();
  return Start();
}

}  // namespace natcd::testing
