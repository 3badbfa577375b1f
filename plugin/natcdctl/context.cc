#include "plugin/natcdctl/context.h"

#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdlib>
#include <cstring>

#include "plugin/common/nats_auth.h"
#include "plugin/common/nats_servers.h"
#include "plugin/natcdctl/format.h"

namespace natcdctl {

Conn::~Conn() {
  natcdClient_Destroy(client);
  natsConnection_Destroy(nc);
}

int64_t Context::TimeoutMs() const {
  int64_t ms = ParseDurationMs(opts.command_timeout);
  return ms > 0 ? ms : 5000;
}

namespace {

natsStatus Dial(const Options& o, natsConnection** nc) {
  natsOptions* nats_opts = nullptr;
  natsStatus st = natsOptions_Create(&nats_opts);
  // Several URLs (comma-separated, as etcdctl's --endpoints) form nats.c's pool.
  if (st == NATS_OK) st = natcd::SetNatsServers(nats_opts, o.nats_url);
  if (st == NATS_OK) st = natsOptions_SetNoRandomize(nats_opts, true);
  if (st == NATS_OK) st = natsOptions_SetName(nats_opts, "natcdctl");
  if (st == NATS_OK)
    st = natsOptions_SetTimeout(nats_opts, std::max<int64_t>(ParseDurationMs(o.dial_timeout), 1));
  if (st == NATS_OK) st = natsOptions_SetMaxReconnect(nats_opts, -1);
  if (st == NATS_OK) st = natsOptions_SetReconnectWait(nats_opts, 250);
  if (st == NATS_OK) {
    st = natcd::ApplyNatsAuth(nats_opts, {o.nats_user, o.nats_password, o.token, o.creds, o.tls_ca,
                                          o.tls_cert, o.tls_key});
  }
  if (st == NATS_OK) st = natsConnection_Connect(nc, nats_opts);
  natsOptions_Destroy(nats_opts);
  return st;
}

// etcdctl's prompt (speakeasy.Ask): "Password: " on stdout, the terminal's
// echo off while a line is read from stdin byte by byte (nothing past it
// is taken from a watch's or a command's input), a newline after it.
bool AskPassword(std::string* password) {
  Write("Password: ");
  termios saved{};
  const bool tty = isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved) == 0;
  if (tty) {
    termios quiet = saved;
    quiet.c_lflag &= ~static_cast<tcflag_t>(ECHO);
    tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet);
  }
  password->clear();
  bool ok = true;
  for (char ch;;) {
    ssize_t n = read(STDIN_FILENO, &ch, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) ok = false;
    if (n <= 0 || ch == '\n') break;
    password->push_back(ch);
  }
  if (tty) tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved);
  if (!password->empty() && password->back() == '\r') password->pop_back();
  Write("\n");
  return ok;
}

}  // namespace

int Context::Open(Conn* c) {
  if (!opts.user.empty() && !opts.password_given) {
    if (!AskPassword(&opts.password)) return Fail(kExitError, strerror(errno));
    opts.password_given = true;
  }
  natsStatus st = Dial(opts, &c->nc);
  if (st != NATS_OK) {
    return Fail(kExitBadConnection,
                "cannot connect to " + opts.nats_url + ": " + natsStatus_GetText(st));
  }
  natcdClientOptions client_opts;
  natcdClientOptions_Init(&client_opts);
  client_opts.prefix = opts.prefix.c_str();
  client_opts.retries = 1;
  client_opts.timeout_ms = std::max<int64_t>(TimeoutMs() / 2, 1);
  if (!opts.user.empty()) {
    client_opts.user = opts.user.c_str();
    client_opts.password = opts.password.c_str();
  }
  natcdStatus s = natcdClient_Create(&c->client, c->nc, &client_opts);
  // etcdctl exits with ExitBadConnection when its client cannot be made,
  // a failed authentication included.
  return s == natcdStatus_OK ? 0 : Fail(kExitBadConnection, LibErrorText(s));
}

std::string Context::Endpoint(const Conn& c) const {
  char url[256] = "";
  return natsConnection_GetConnectedUrl(c.nc, url, sizeof url) == NATS_OK && url[0] ? url
                                                                                    : opts.nats_url;
}

void Write(const std::string& s) {
  fwrite(s.data(), 1, s.size(), stdout);
  // Nobody reads any more (`natcdctl watch k | head -1`): end as SIGPIPE would.
  if (fflush(stdout) != 0 && errno == EPIPE) _exit(128 + SIGPIPE);
}

int Fail(int code, const std::string& message) {
  fflush(stdout);
  fprintf(stderr, "Error: %s\n", message.c_str());
  return code;
}

std::string LibErrorText(natcdStatus s) {
  natcdError e{};
  natcd_GetLastError(&e);
  std::string text = e.status == s && e.text[0] ? e.text : natcdStatus_GetText(s);
  if (size_t colon = text.find(": "); colon != std::string::npos && text.rfind("Err", 0) == 0) {
    text = text.substr(colon + 2);
  }
  // etcd's own words, without natcd's detail (" (lease 1234)").
  if (size_t detail = text.find(" (lease "); detail != std::string::npos) text.resize(detail);
  return text;
}

int LibFail(natcdStatus s) {
  return Fail(
      s == natcdStatus_NoResponders || s == natcdStatus_ConnectionError || s == natcdStatus_Timeout
          ? kExitBadConnection
          : kExitError,
      LibErrorText(s));
}

std::string AllKeysIfEmpty(const std::string& key, bool* prefix, bool* from_key) {
  if (!key.empty() || !(*prefix || *from_key)) return key;
  *prefix = false;
  *from_key = true;
  return std::string(1, '\0');
}

bool ParseHexId(const std::string& text, int64_t* id) {
  if (text.empty() || text.size() > 16) return false;
  char* end = nullptr;
  uint64_t v = strtoull(text.c_str(), &end, 16);
  if (*end != '\0') return false;
  *id = static_cast<int64_t>(v);
  return true;
}

std::string Hex16(int64_t id) {
  char buf[32];
  snprintf(buf, sizeof buf, "%016" PRIx64, static_cast<uint64_t>(id));
  return buf;
}

std::string HexId(uint64_t id) {
  char buf[32];
  snprintf(buf, sizeof buf, "%" PRIx64, id);
  return buf;
}

std::string ReadAll(FILE* f) {
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  return out;
}

sigset_t WaitSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGUSR1);
  return set;
}

int RunCommand(const std::vector<std::string>& argv,
               const std::vector<std::pair<std::string, std::string>>& env) {
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    sigset_t set = WaitSignals();
    pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
    for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    fprintf(stderr, "Error: cannot run %s: %s\n", argv[0].c_str(), strerror(errno));
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace natcdctl
