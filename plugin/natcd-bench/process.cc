#include "plugin/natcd-bench/process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "plugin/natcd-bench/clock.h"

namespace natcd::bench {

bool Process::Start(const std::vector<std::string>& argv, const std::string& log_path,
                    const std::string& ready_text, int ready_port, int64_t timeout_ms,
                    std::string* error) {
  log_path_ = log_path;
  const int log_fd = open(log_path.c_str(), O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);
  if (log_fd < 0) {
    *error = "cannot create " + log_path;
    return false;
  }
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    close(log_fd);
    *error = "fork failed";
    return false;
  }
  if (pid == 0) {
    // Dies with natcd-bench, even on a crash: no server is left behind.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    dup2(log_fd, STDOUT_FILENO);
    dup2(log_fd, STDERR_FILENO);
    const int null_fd = open("/dev/null", O_RDONLY);
    if (null_fd >= 0) dup2(null_fd, STDIN_FILENO);
    execv(args[0], args.data());
    _exit(127);
  }
  close(log_fd);
  pid_ = pid;
  const int64_t give_up = NowNs() + timeout_ms * 1'000'000;
  while (NowNs() < give_up) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      *error = argv[0] + " exited during start:\n" + LogTail();
      return false;
    }
    const bool text_ok =
        ready_text.empty() || LogTail(1 << 20).find(ready_text) != std::string::npos;
    if (text_ok && (ready_port == 0 || LoopbackPortAccepts(ready_port))) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  *error = argv[0] + " not ready in time:\n" + LogTail();
  Stop();
  return false;
}

void Process::Stop() {
  if (pid_ <= 0) return;
  kill(pid_, SIGTERM);
  const int64_t give_up = NowNs() + 10'000'000'000;
  int status = 0;
  while (waitpid(pid_, &status, WNOHANG) == 0) {
    if (NowNs() > give_up) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  pid_ = -1;
}

int64_t Process::RssBytes() const {
  if (pid_ <= 0) return -1;
  std::ifstream status("/proc/" + std::to_string(pid_) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::atoll(line.c_str() + 6) * 1024;
  }
  return -1;
}

std::string Process::LogTail(size_t bytes) const {
  std::ifstream in(log_path_, std::ios::binary);
  std::stringstream all;
  all << in.rdbuf();
  const std::string text = all.str();
  return text.size() > bytes ? text.substr(text.size() - bytes) : text;
}

int PickFreeLoopbackPort() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  int port = -1;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

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

int64_t DiskBytes(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  int64_t total = 0;
  struct stat st {};
  if (lstat(path.c_str(), &st) == 0) total += static_cast<int64_t>(st.st_blocks) * 512;
  if (!fs::is_directory(path, ec)) return total;
  for (auto it = fs::recursive_directory_iterator(path, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    if (lstat(it->path().c_str(), &st) == 0) total += static_cast<int64_t>(st.st_blocks) * 512;
  }
  return total;
}

std::string FindExecutable(const std::string& name, const std::vector<std::string>& also_in) {
  std::vector<std::string> dirs;
  if (const char* path = std::getenv("PATH"); path != nullptr) {
    std::stringstream list(path);
    std::string dir;
    while (std::getline(list, dir, ':')) {
      if (!dir.empty()) dirs.push_back(dir);
    }
  }
  dirs.insert(dirs.end(), also_in.begin(), also_in.end());
  for (const auto& dir : dirs) {
    const std::string candidate = dir + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

std::string MakeTempDir(const std::string& stem, const std::string& parent) {
  const char* tmp = std::getenv("TMPDIR");
  std::string dir = !parent.empty() ? parent : (tmp != nullptr && *tmp ? tmp : "/tmp");
  std::string pattern = dir + "/" + stem + "-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) return "";
  return pattern;
}

void RemoveTree(const std::string& path) {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
}

}  // namespace natcd::bench
