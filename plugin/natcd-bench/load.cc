#include "plugin/natcd-bench/load.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <vector>

#include "plugin/natcd-bench/clock.h"

namespace natcd::bench {
namespace {

class Loop final : public ReplySink {
 public:
  Loop(LoadTarget& target, const LoadSpec& spec)
      : target_(target), spec_(spec), sent_ns_(spec.inflight) {}

  LoadResult Run() {
    LoadResult result;
    if (!target_.BeginLoad(spec_.inflight, this)) {
      result.timeouts = spec_.total;
      return result;
    }
    const int64_t start = NowNs();
    deadline_ns_ = start + spec_.max_ms * 1'000'000;
    {
      std::lock_guard<std::mutex> lock(mu_);
      active_ = spec_.inflight;
    }
    for (int s = 0; s < spec_.inflight; ++s) {
      if (!Send(s)) Retire();
    }
    {
      std::unique_lock<std::mutex> lock(mu_);
      // A lost reply would stall a slot for ever: stop waiting a little
      // after the deadline and count what is still out as timeouts.
      done_.wait_until(lock,
                       std::chrono::steady_clock::time_point(
                           std::chrono::nanoseconds(deadline_ns_ + 5'000'000'000)),
                       [&] { return active_ == 0; });
      result.seconds = (NowNs() - start) / 1e9;
      result.timeouts = static_cast<uint64_t>(active_);
    }
    target_.EndLoad();
    std::lock_guard<std::mutex> lock(mu_);
    result.completed = completed_;
    result.errors = errors_;
    result.latency = latency_;
    return result;
  }

  void OnReply(int slot, bool ok) override {
    const int64_t now = NowNs();
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++completed_;
      if (ok) {
        latency_.Record(now - sent_ns_[slot]);
      } else {
        ++errors_;
      }
    }
    if (!Send(slot)) Retire();
  }

 private:
  // Sends the next request on the slot; false when the load is over.
  bool Send(int slot) {
    const uint64_t n = next_.fetch_add(1);
    if (n >= spec_.total || NowNs() > deadline_ns_) return false;
    sent_ns_[slot] = NowNs();
    target_.Issue(slot, spec_.op, spec_.first + n);
    return true;
  }

  void Retire() {
    std::lock_guard<std::mutex> lock(mu_);
    if (--active_ == 0) done_.notify_all();
  }

  LoadTarget& target_;
  const LoadSpec& spec_;
  // Written by the thread that sends on a slot, read by the one that gets
  // its reply: the target's send/receive path orders the two.
  std::vector<int64_t> sent_ns_;
  std::atomic<uint64_t> next_{0};
  int64_t deadline_ns_ = 0;
  std::mutex mu_;
  std::condition_variable done_;
  // Protected by mu_.
  uint64_t completed_ = 0;
  uint64_t errors_ = 0;
  Histogram latency_;
  int active_ = 0;  // slots still sending
};

}  // namespace

LoadResult RunLoad(LoadTarget& target, const LoadSpec& spec) { return Loop(target, spec).Run(); }

}  // namespace natcd::bench
