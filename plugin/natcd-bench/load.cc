#include "plugin/natcd-bench/load.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace natcd::bench {
namespace {

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct Run {
  natsConnection* nc;
  const LoadSpec* spec;
  std::string inbox;
  std::vector<std::string> reply_subjects;
  std::vector<int64_t> sent_ns;  // per slot
  std::atomic<uint64_t> next{0};
  int64_t deadline_ns = 0;
  std::mutex mu;
  std::condition_variable done;
  uint64_t completed = 0;  // guarded by mu
  uint64_t errors = 0;
  std::vector<int64_t> latencies;
  int active = 0;  // slots still sending

  // Sends the next request on the slot; false when the load is over.
  bool Send(int slot) {
    uint64_t i = next.fetch_add(1);
    if (i >= spec->total || NowNs() > deadline_ns) return false;
    std::string body = spec->body(i);
    sent_ns[slot] = NowNs();
    const char* reply = reply_subjects[slot].c_str();
    if (spec->headers.empty()) {
      natsConnection_PublishRequest(nc, spec->subject.c_str(), reply, body.data(),
                                    static_cast<int>(body.size()));
    } else {
      natsMsg* msg = nullptr;
      natsMsg_Create(&msg, spec->subject.c_str(), reply, body.data(),
                     static_cast<int>(body.size()));
      for (const auto& [k, v] : spec->headers) natsMsgHeader_Set(msg, k.c_str(), v.c_str());
      natsConnection_PublishMsg(nc, msg);
      natsMsg_Destroy(msg);
    }
    return true;
  }

  static void OnReply(natsConnection*, natsSubscription*, natsMsg* msg, void* closure) {
    auto* run = static_cast<Run*>(closure);
    int64_t now = NowNs();
    const char* subject = natsMsg_GetSubject(msg);
    int slot = atoi(subject + run->inbox.size());
    const char* code = nullptr;
    bool error = natsMsgHeader_Get(msg, "Nats-Service-Error-Code", &code) == NATS_OK;
    natsMsg_Destroy(msg);
    {
      std::lock_guard<std::mutex> lock(run->mu);
      run->latencies.push_back(now - run->sent_ns[slot]);
      ++run->completed;
      if (error) ++run->errors;
    }
    if (!run->Send(slot)) {
      std::lock_guard<std::mutex> lock(run->mu);
      if (--run->active == 0) run->done.notify_all();
    }
  }
};

}  // namespace

LoadResult RunLoad(natsConnection* nc, const LoadSpec& spec) {
  Run run;
  run.nc = nc;
  run.spec = &spec;
  char* inbox = nullptr;
  natsInbox_Create(&inbox);
  run.inbox = std::string(inbox) + ".";
  free(inbox);
  for (int s = 0; s < spec.inflight; ++s)
    run.reply_subjects.push_back(run.inbox + std::to_string(s));
  run.sent_ns.assign(spec.inflight, 0);
  run.latencies.reserve(std::min<uint64_t>(spec.total, 1u << 20));

  natsSubscription* sub = nullptr;
  natsConnection_Subscribe(&sub, nc, (run.inbox + "*").c_str(), &Run::OnReply, &run);
  natsSubscription_SetPendingLimits(sub, -1, -1);
  natsConnection_Flush(nc);

  int64_t start = NowNs();
  run.deadline_ns = start + spec.max_ms * 1'000'000;
  {
    std::lock_guard<std::mutex> lock(run.mu);
    run.active = spec.inflight;
  }
  for (int s = 0; s < spec.inflight; ++s) {
    if (!run.Send(s)) {
      std::lock_guard<std::mutex> lock(run.mu);
      --run.active;
    }
  }
  LoadResult result;
  {
    std::unique_lock<std::mutex> lock(run.mu);
    // Replies may be lost: stop waiting a little after the deadline.
    run.done.wait_until(lock,
                        std::chrono::steady_clock::time_point(
                            std::chrono::nanoseconds(run.deadline_ns + 2'000'000'000)),
                        [&] { return run.active == 0; });
    result.seconds = (NowNs() - start) / 1e9;
    result.timeouts = static_cast<uint64_t>(run.active);
  }
  // Drain: no callback may run once `run` goes out of scope.
  natsSubscription_Drain(sub);
  natsSubscription_WaitForDrainCompletion(sub, 5'000);
  natsSubscription_Destroy(sub);
  std::lock_guard<std::mutex> lock(run.mu);
  result.completed = run.completed;
  result.errors = run.errors;
  result.latencies_ns = std::move(run.latencies);
  return result;
}

int64_t Percentile(std::vector<int64_t> latencies_ns, double p) {
  if (latencies_ns.empty()) return 0;
  std::sort(latencies_ns.begin(), latencies_ns.end());
  size_t rank = static_cast<size_t>(p / 100.0 * (latencies_ns.size() - 1) + 0.5);
  return latencies_ns[std::min(rank, latencies_ns.size() - 1)];
}

}  // namespace natcd::bench
