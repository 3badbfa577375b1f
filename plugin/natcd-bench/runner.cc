#include "plugin/natcd-bench/runner.h"

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "plugin/natcd-bench/clock.h"

namespace natcd::bench {

CasResult RunCas(Target& target, int clients, int64_t duration_ms) {
  CasResult result;
  if (!target.ResetCounter()) {
    result.errors = 1;
    return result;
  }
  std::atomic<uint64_t> increments{0}, conflicts{0}, errors{0};
  const int64_t start = NowNs();
  const int64_t deadline = start + duration_ms * 1'000'000;
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&] {
      Counter seen;
      bool known = false;
      while (NowNs() < deadline) {
        if (!known) {
          if (!target.ReadCounter(&seen)) {
            ++errors;
            continue;
          }
          known = true;
        }
        Counter now;
        bool now_known = false;
        switch (target.SwapCounter(seen, &now, &now_known)) {
          case CasOutcome::kSwapped:
            ++increments;
            break;
          case CasOutcome::kConflict:
            ++conflicts;
            break;
          case CasOutcome::kError:
            ++errors;
            break;
        }
        seen = now;
        known = now_known;
      }
    });
  }
  for (auto& t : threads) t.join();
  result.seconds = (NowNs() - start) / 1e9;
  result.increments = increments;
  result.conflicts = conflicts;
  result.errors = errors;
  Counter last;
  if (target.ReadCounter(&last)) result.final_value = last.value;
  return result;
}

namespace {

// Counts deliveries, samples their lag, and wakes the writer when it waits
// for the watchers to catch up.
class FanoutSink final : public EventSink {
 public:
  explicit FanoutSink(uint64_t sample_every) : sample_every_(sample_every) {}

  void OnEvent(const void* value, size_t len) override {
    const int64_t now = NowNs();
    const uint64_t n = delivered_.fetch_add(1);
    // seq_cst with the writer's waiting_ store and delivered_ load: either
    // the writer sees this event or this sees the writer waiting.
    if (waiting_.load()) {
      std::lock_guard<std::mutex> lock(*writer_mu_);
      writer_cv_->notify_one();
    }
    if (n % sample_every_ != 0) return;
    if (auto written = TimestampOf(value, len)) {
      std::lock_guard<std::mutex> lock(mu_);
      lag_.Record(now - *written);
    }
  }

  void WakeOnEvents(std::mutex* mu, std::condition_variable* cv) {
    writer_mu_ = mu;
    writer_cv_ = cv;
  }
  void SetWaiting(bool waiting) { waiting_.store(waiting); }
  uint64_t delivered() const { return delivered_.load(); }
  Histogram lag() {
    std::lock_guard<std::mutex> lock(mu_);
    return lag_;
  }

 private:
  const uint64_t sample_every_;
  std::atomic<uint64_t> delivered_{0};
  std::atomic<bool> waiting_{false};
  std::mutex* writer_mu_ = nullptr;  // set before the watchers open
  std::condition_variable* writer_cv_ = nullptr;
  std::mutex mu_;
  Histogram lag_;  // protected by mu_
};

// The fan-out's writer: puts on free slots while the watchers keep up.
class FanoutWriter final : public ReplySink {
 public:
  FanoutWriter(Target& target, FanoutSink& sink, int watchers, int window, bool paced)
      : target_(target), sink_(sink), watchers_(watchers), window_(window), paced_(paced) {}

  std::mutex& mu() { return mu_; }
  std::condition_variable& cv() { return cv_; }

  // Writes for duration_ms; returns when every put is answered (or after
  // a bounded wait). Successful puts in *written.
  bool Run(int64_t duration_ms, uint64_t* written) {
    if (!target_.BeginLoad(static_cast<int>(window_), this)) return false;
    for (uint64_t s = 0; s < window_; ++s) free_.push_back(static_cast<int>(s));
    const int64_t deadline = NowNs() + duration_ms * 1'000'000;
    uint64_t issued = 0;
    while (NowNs() < deadline) {
      int slot = -1;
      {
        std::unique_lock<std::mutex> lock(mu_);
        auto ready = [&] {
          // Paced: at most `window` puts whose events are not all delivered.
          return !free_.empty() &&
                 (!paced_ || issued * watchers_ < sink_.delivered() + window_ * watchers_);
        };
        sink_.SetWaiting(true);
        // Bounded wait: the deadline is checked at least every 5 ms.
        cv_.wait_for(lock, std::chrono::milliseconds(5), ready);
        sink_.SetWaiting(false);
        if (!ready()) continue;
        slot = free_.back();
        free_.pop_back();
      }
      target_.Issue(slot, Op::kWatchPut, issued++);
    }
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait_for(lock, std::chrono::seconds(10), [&] { return free_.size() == window_; });
    }
    target_.EndLoad();
    std::lock_guard<std::mutex> lock(mu_);
    *written = acked_;
    return true;
  }

  void OnReply(int slot, bool ok) override {
    std::lock_guard<std::mutex> lock(mu_);
    free_.push_back(slot);
    if (ok) ++acked_;
    cv_.notify_one();
  }

 private:
  Target& target_;
  FanoutSink& sink_;
  const uint64_t watchers_;
  const uint64_t window_;
  const bool paced_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<int> free_;  // slots without a put outstanding; protected by mu_
  uint64_t acked_ = 0;     // protected by mu_
};

}  // namespace

FanoutResult RunFanout(Target& target, int watchers, int window, int64_t duration_ms, bool paced) {
  FanoutResult result;
  result.watchers = watchers;
  // Sampling every watchers-th event keeps the lag sample about the size of
  // the number of writes whatever the fan-out.
  FanoutSink sink(static_cast<uint64_t>(watchers));
  FanoutWriter writer(target, sink, watchers, window, paced);
  sink.WakeOnEvents(&writer.mu(), &writer.cv());
  if (!target.OpenWatchers(watchers, &sink)) {
    target.CloseWatchers();
    return result;
  }
  const int64_t start = NowNs();
  if (!writer.Run(duration_ms, &result.writes)) {
    target.CloseWatchers();
    return result;
  }
  result.expected = result.writes * static_cast<uint64_t>(watchers);
  const int64_t give_up = NowNs() + 10'000'000'000;
  int64_t last_change = NowNs();
  uint64_t last_seen = sink.delivered();
  while (sink.delivered() < result.expected && NowNs() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    if (sink.delivered() != last_seen) {
      last_seen = sink.delivered();
      last_change = NowNs();
    }
  }
  // The rate counts up to the last delivery, not the polling after it.
  result.seconds = (last_change - start) / 1e9;
  result.delivered = sink.delivered();
  result.gaps = target.WatchGapsSeen();
  target.CloseWatchers();
  result.lag = sink.lag();
  return result;
}

ExpiryResult RunExpiry(Target& target, uint64_t leases, int64_t ttl_s, int64_t wait_s_max) {
  ExpiryResult result;
  const int64_t start = NowNs();
  target.SetLeaseTtl(ttl_s);
  target.ReserveLeases(leases);
  LoadSpec grant{
      .op = Op::kLeaseGrant, .inflight = 256, .first = 0, .total = leases, .max_ms = 120'000};
  const LoadResult granted = RunLoad(target, grant);
  // The last lease was granted no later than now: all are due by this.
  const int64_t all_due = NowNs() + ttl_s * 1'000'000'000;
  result.granted = granted.completed - granted.errors;
  LoadSpec attach{
      .op = Op::kPutLeased, .inflight = 256, .first = 0, .total = leases, .max_ms = 120'000};
  const LoadResult attached = RunLoad(target, attach);
  result.attached = attached.completed - attached.errors;
  result.setup_seconds = (NowNs() - start) / 1e9;
  target.SetLeaseTtl(kGrantTtlS);
  if (result.attached == 0) return result;
  const int64_t give_up = all_due + wait_s_max * 1'000'000'000;
  while (NowNs() < give_up) {
    const int64_t left = target.CountKeys("l");
    result.keys_left = left;
    if (left == 0) {
      result.seconds_to_gone = std::max<int64_t>(0, NowNs() - all_due) / 1e9;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return result;
}

}  // namespace natcd::bench
