#include "plugin/natcd-bench/runner.h"

#include <atomic>
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

class FanoutSink final : public EventSink {
 public:
  explicit FanoutSink(uint64_t sample_every) : sample_every_(sample_every) {}

  void OnEvent(const void* value, size_t len) override {
    const int64_t now = NowNs();
    const uint64_t n = delivered_.fetch_add(1);
    if (n % sample_every_ != 0) return;
    if (auto written = TimestampOf(value, len)) {
      std::lock_guard<std::mutex> lock(mu_);
      lag_.Record(now - *written);
    }
  }

  uint64_t delivered() const { return delivered_.load(); }
  Histogram lag() {
    std::lock_guard<std::mutex> lock(mu_);
    return lag_;
  }

 private:
  const uint64_t sample_every_;
  std::atomic<uint64_t> delivered_{0};
  std::mutex mu_;
  Histogram lag_;  // protected by mu_
};

}  // namespace

FanoutResult RunFanout(Target& target, int watchers, int inflight, int64_t duration_ms) {
  FanoutResult result;
  result.watchers = watchers;
  // Sampling every watchers-th event keeps the lag sample about the size of
  // the number of writes whatever the fan-out.
  FanoutSink sink(static_cast<uint64_t>(watchers));
  if (!target.OpenWatchers(watchers, &sink)) {
    target.CloseWatchers();
    return result;
  }
  LoadSpec writes;
  writes.op = Op::kWatchPut;
  writes.inflight = inflight;
  writes.total = UINT64_MAX;
  writes.max_ms = duration_ms;
  const int64_t start = NowNs();
  const LoadResult written = RunLoad(target, writes);
  result.writes = written.completed - written.errors;
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
  result.seconds = (std::max(last_change, start + duration_ms * 1'000'000) - start) / 1e9;
  if (sink.delivered() >= result.expected) result.seconds = (last_change - start) / 1e9;
  result.delivered = sink.delivered();
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
