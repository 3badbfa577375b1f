#include "plugin/natcd-bench/floors.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "plugin/natcd-bench/clock.h"

namespace natcd::bench {
namespace {

void Echo(natsConnection* nc, natsSubscription*, natsMsg* msg, void*) {
  const char* reply = natsMsg_GetReply(msg);
  if (reply != nullptr) {
    natsConnection_Publish(nc, reply, natsMsg_GetData(msg), natsMsg_GetDataLength(msg));
  }
  natsMsg_Destroy(msg);
}

}  // namespace

int RunEchoServer(const std::string& url, const std::string& subject) {
  // Block the stop signals before nats.c starts its threads, then wait for
  // one: a clean exit without a handler.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);
  natsConnection* nc = ConnectNats(url);
  if (nc == nullptr) return 1;
  natsSubscription* sub = nullptr;
  if (natsConnection_Subscribe(&sub, nc, subject.c_str(), &Echo, nullptr) != NATS_OK ||
      natsConnection_Flush(nc) != NATS_OK) {
    fprintf(stderr, "echo-server: subscribe %s failed\n", subject.c_str());
    return 1;
  }
  natsSubscription_SetPendingLimits(sub, -1, -1);
  printf("echo-server serving %s\n", subject.c_str());
  fflush(stdout);
  int signo = 0;
  sigwait(&stop, &signo);
  natsSubscription_Destroy(sub);
  natsConnection_Destroy(nc);
  nats_Close();
  return 0;
}

bool EchoTarget::BeginLoad(int slots, ReplySink* sink) {
  return requests_.Begin(nc_, slots, sink, [](int, natsMsg*) { return true; });
}

void EchoTarget::Issue(int slot, Op op, uint64_t i) {
  // The same payload a put carries: key and value.
  const std::string body = SlashKey(KeyOf(op, i)) + ValueOf(i);
  requests_.Send(slot, subject_.c_str(), body.data(), static_cast<int>(body.size()));
}

FsyncResult MeasureFsync(const std::string& dir, int64_t duration_ms, int busy_cpus) {
  FsyncResult result;
  const std::string path = dir + "/fsync-floor";
  const int fd = open(path.c_str(), O_CREAT | O_RDWR | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    result.error = path + ": " + strerror(errno);
    return result;
  }
  // Written and synced before the clock starts, as a write-ahead log's
  // segment is (etcd preallocates 64 MiB, SQLite reuses its WAL file): a
  // sync then flushes data alone, not the file's size or block map.
  constexpr off_t kFileBytes = 16 << 20;
  constexpr off_t kStride = 4096;  // one record per block, as a log moves on
  const std::string zeros(1 << 20, '\0');
  for (off_t at = 0; at < kFileBytes && result.error.empty(); at += zeros.size()) {
    if (pwrite(fd, zeros.data(), zeros.size(), at) != static_cast<ssize_t>(zeros.size())) {
      result.error = path + ": " + strerror(errno);
    }
  }
  if (result.error.empty() && fsync(fd) != 0) result.error = path + ": " + strerror(errno);
  const std::string record = ValueOf(0);
  std::atomic<bool> stop{false};
  std::vector<std::thread> spinners;
  for (int c = 0; c < busy_cpus; ++c) {
    spinners.emplace_back([&stop] {
      // SCHED_IDLE: keeps the vCPU awake, yet gives way at once to the
      // thread that measures (a normal thread would cost it a time slice).
      sched_param param{};
      pthread_setschedparam(pthread_self(), SCHED_IDLE, &param);
      while (!stop.load(std::memory_order_relaxed)) {
      }
    });
  }
  const int64_t start = NowNs();
  const int64_t deadline = start + duration_ms * 1'000'000;
  off_t at = 0;
  while (result.error.empty() && NowNs() < deadline) {
    const int64_t t0 = NowNs();
    if (pwrite(fd, record.data(), record.size(), at) != static_cast<ssize_t>(record.size()) ||
        fdatasync(fd) != 0) {
      result.error = path + ": " + strerror(errno);
      break;
    }
    result.latency.Record(NowNs() - t0);
    ++result.syncs;
    at = (at + kStride) % kFileBytes;
  }
  result.seconds = (NowNs() - start) / 1e9;
  stop = true;
  for (auto& t : spinners) t.join();
  close(fd);
  unlink(path.c_str());
  return result;
}

}  // namespace natcd::bench
