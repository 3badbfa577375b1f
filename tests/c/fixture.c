// nats-server and natcd child processes for the C client tests; see fixture.h.
#define _GNU_SOURCE 1

#include "fixture.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { kStartTimeoutMs = 15000, kStopTimeoutMs = 5000 };

long long natcdFixture_NowMs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void natcdFixture_SleepMs(long long ms) {
  struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

// A port on 127.0.0.1 that was free a moment ago.
static int _freePort(void) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof addr;
  int port = -1;
  if (bind(fd, (struct sockaddr*)&addr, sizeof addr) == 0 &&
      getsockname(fd, (struct sockaddr*)&addr, &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

static bool _portAccepts(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  struct sockaddr_in addr = {.sin_family = AF_INET,
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
                             .sin_port = htons((uint16_t)port)};
  bool ok = connect(fd, (struct sockaddr*)&addr, sizeof addr) == 0;
  close(fd);
  return ok;
}

static const char* _natsServerBinary(void) {
  const char* env = getenv("NATCD_NATS_SERVER");
  if (env != NULL && env[0] != '\0') return env;
  static char found[512];
  const char* path = getenv("PATH");
  if (path != NULL) {
    const char* p = path;
    while (*p != '\0') {
      const char* end = strchr(p, ':');
      size_t n = end ? (size_t)(end - p) : strlen(p);
      if (n > 0 && n < sizeof found - 16) {
        snprintf(found, sizeof found, "%.*s/nats-server", (int)n, p);
        if (access(found, X_OK) == 0) return found;
      }
      if (end == NULL) break;
      p = end + 1;
    }
  }
  if (access("/usr/sbin/nats-server", X_OK) == 0) return "/usr/sbin/nats-server";
  return "/usr/bin/nats-server";
}

static const char* _natcdBinary(void) {
  const char* env = getenv("NATCD_BIN");
  return env != NULL && env[0] != '\0' ? env : "build/bin/natcd";
}

pid_t natcdFixture_Spawn(char* const argv[], const char* log_path) {
  // Prepared before fork: the parent runs other threads.
  int log_fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) return -1;
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    close(log_fd);
    return -1;
  }
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    dup2(log_fd, STDOUT_FILENO);
    dup2(log_fd, STDERR_FILENO);
    int null_fd = open("/dev/null", O_RDONLY);
    if (null_fd >= 0) dup2(null_fd, STDIN_FILENO);
    execv(argv[0], argv);
    _exit(127);
  }
  close(log_fd);
  return pid;
}

int natcdFixture_Reap(pid_t pid, int timeout_ms) {
  if (pid <= 0) return -1;
  long long deadline = natcdFixture_NowMs() + timeout_ms;
  for (;;) {
    int status = 0;
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) return status;
    if (r < 0 && errno != EINTR) return -1;
    if (natcdFixture_NowMs() >= deadline) break;
    natcdFixture_SleepMs(5);
  }
  kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

static void _freeArgs(natcdFixture* fx) {
  for (int i = 0; i < fx->n_natcd_args; ++i) free(fx->natcd_args[i]);
  fx->n_natcd_args = 0;
}

void natcdFixture_SetNatcdArgs(natcdFixture* fx, const char* const* natcd_args) {
  _freeArgs(fx);
  for (int i = 0; natcd_args != NULL && natcd_args[i] != NULL && i < NATCD_FIXTURE_MAX_ARGS; ++i) {
    fx->natcd_args[fx->n_natcd_args++] = strdup(natcd_args[i]);
  }
}

bool natcdFixture_Init(natcdFixture* fx, const char* const* natcd_args) {
  memset(fx, 0, sizeof *fx);
  fx->nats_pid = -1;
  fx->natcd_pid = -1;
  const char* tmp = getenv("TMPDIR");
  snprintf(fx->dir, sizeof fx->dir, "%s/natcd-ctest-XXXXXX", tmp != NULL ? tmp : "/tmp");
  if (mkdtemp(fx->dir) == NULL) {
    fprintf(stderr, "mkdtemp: %s\n", strerror(errno));
    return false;
  }
  snprintf(fx->data_dir, sizeof fx->data_dir, "%s/data", fx->dir);
  snprintf(fx->nats_log, sizeof fx->nats_log, "%s/nats.log", fx->dir);
  snprintf(fx->natcd_log, sizeof fx->natcd_log, "%s/natcd.log", fx->dir);
  mkdir(fx->data_dir, 0755);
  fx->port = _freePort();
  if (fx->port <= 0) return false;
  snprintf(fx->url, sizeof fx->url, "nats://127.0.0.1:%d", fx->port);
  natcdFixture_SetNatcdArgs(fx, natcd_args);
  return true;
}

bool natcdFixture_StartNats(natcdFixture* fx) {
  if (fx->nats_pid > 0) return true;
  char port[16];
  snprintf(port, sizeof port, "%d", fx->port);
  char* argv[] = {(char*)_natsServerBinary(), "-a", "127.0.0.1", "-p", port, NULL};
  fx->nats_pid = natcdFixture_Spawn(argv, fx->nats_log);
  if (fx->nats_pid < 0) return false;
  long long deadline = natcdFixture_NowMs() + kStartTimeoutMs;
  while (natcdFixture_NowMs() < deadline) {
    int status;
    if (waitpid(fx->nats_pid, &status, WNOHANG) == fx->nats_pid) {
      fprintf(stderr, "nats-server exited at start (status %d)\n", status);
      fx->nats_pid = -1;
      return false;
    }
    if (_portAccepts(fx->port)) return true;
    natcdFixture_SleepMs(10);
  }
  fprintf(stderr, "nats-server did not accept connections on %s\n", fx->url);
  natcdFixture_Reap(fx->nats_pid, 0);
  fx->nats_pid = -1;
  return false;
}

void natcdFixture_StopNats(natcdFixture* fx) {
  if (fx->nats_pid <= 0) return;
  kill(fx->nats_pid, SIGTERM);
  natcdFixture_Reap(fx->nats_pid, kStopTimeoutMs);
  fx->nats_pid = -1;
}

bool natcdFixture_RestartNats(natcdFixture* fx) {
  natcdFixture_StopNats(fx);
  return natcdFixture_StartNats(fx);
}

static long _fileSize(const char* path) {
  struct stat st;
  return stat(path, &st) == 0 ? (long)st.st_size : 0;
}

// Whether `needle` occurs in the file after byte `offset`.
static bool _logHas(const char* path, long offset, const char* needle) {
  FILE* f = fopen(path, "r");
  if (f == NULL) return false;
  bool found = false;
  if (fseek(f, offset, SEEK_SET) == 0) {
    char line[4096];
    while (!found && fgets(line, sizeof line, f) != NULL) found = strstr(line, needle) != NULL;
  }
  fclose(f);
  return found;
}

bool natcdFixture_StartNatcd(natcdFixture* fx) {
  if (fx->natcd_pid > 0) return true;
  char* argv[NATCD_FIXTURE_MAX_ARGS + 16];
  int n = 0;
  argv[n++] = (char*)_natcdBinary();
  argv[n++] = "--nats-url";
  argv[n++] = fx->url;
  argv[n++] = "--data-dir";
  argv[n++] = fx->data_dir;
  argv[n++] = "--config";
  argv[n++] = "/dev/null";
  /* A small Raft log segment: each is zero-filled when made (64 MiB by default). */
  argv[n++] = "--raft-log-segment-bytes";
  argv[n++] = "1048576";
  for (int i = 0; i < fx->n_natcd_args; ++i) argv[n++] = fx->natcd_args[i];
  argv[n] = NULL;
  long offset = _fileSize(fx->natcd_log);
  fx->natcd_pid = natcdFixture_Spawn(argv, fx->natcd_log);
  if (fx->natcd_pid < 0) return false;
  long long deadline = natcdFixture_NowMs() + kStartTimeoutMs;
  while (natcdFixture_NowMs() < deadline) {
    if (_logHas(fx->natcd_log, offset, "serving")) return true;
    int status;
    if (waitpid(fx->natcd_pid, &status, WNOHANG) == fx->natcd_pid) {
      fprintf(stderr, "natcd (%s) exited at start (status %d)\n", argv[0], status);
      fx->natcd_pid = -1;
      natcdFixture_DumpLogs(fx);
      return false;
    }
    natcdFixture_SleepMs(10);
  }
  fprintf(stderr, "natcd did not start within %d ms\n", kStartTimeoutMs);
  natcdFixture_KillNatcd(fx);
  natcdFixture_DumpLogs(fx);
  return false;
}

void natcdFixture_KillNatcd(natcdFixture* fx) {
  if (fx->natcd_pid <= 0) return;
  kill(fx->natcd_pid, SIGKILL);
  natcdFixture_Reap(fx->natcd_pid, kStopTimeoutMs);
  fx->natcd_pid = -1;
}

void natcdFixture_StopNatcd(natcdFixture* fx) {
  if (fx->natcd_pid <= 0) return;
  kill(fx->natcd_pid, SIGTERM);
  natcdFixture_Reap(fx->natcd_pid, kStopTimeoutMs);
  fx->natcd_pid = -1;
}

static void _dumpTail(const char* title, const char* path) {
  FILE* f = fopen(path, "r");
  if (f == NULL) return;
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  long from = size > 4000 ? size - 4000 : 0;
  fseek(f, from, SEEK_SET);
  fprintf(stderr, "---- %s (%s, last %ld bytes)\n", title, path, size - from);
  char buf[1024];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) fwrite(buf, 1, n, stderr);
  fprintf(stderr, "---- end of %s\n", title);
  fclose(f);
}

void natcdFixture_DumpLogs(const natcdFixture* fx) {
  _dumpTail("natcd log", fx->natcd_log);
  _dumpTail("nats-server log", fx->nats_log);
}

static int _removeEntry(const char* path, const struct stat* st, int flag, struct FTW* ftw) {
  (void)st;
  (void)flag;
  (void)ftw;
  remove(path);
  return 0;
}

void natcdFixture_Destroy(natcdFixture* fx) {
  natcdFixture_KillNatcd(fx);
  natcdFixture_StopNats(fx);
  _freeArgs(fx);
  if (fx->dir[0] != '\0' && getenv("NATCD_KEEP_TMP") == NULL) {
    nftw(fx->dir, _removeEntry, 16, FTW_DEPTH | FTW_PHYS);
  }
  fx->dir[0] = '\0';
}
