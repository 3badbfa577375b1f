// watch_bench: watch delivery through the engine's WatchHub, in process.
//
// Named benchmarks:
//   BM_WatchFanout/watchers:W/batch:B
//     W synced watchers of one prefix (engine->watches().Create, range
//     [prefix, PrefixRangeEnd(prefix))). Each iteration applies B puts under
//     the prefix (overwriting --natcd_watch_keys keys, so events carry
//     prev_kv), commits, then drains every ready watcher with Poll (at most
//     1,000 events per message). items_per_second = events delivered per
//     second (B x W per iteration, checked). Goal: >= 2,000,000 events/s
//     with W = 1,000.
//     The engine runs with sync=false: this measures the delivery path; the
//     fsync a durable commit adds is what engine_bench BM_Put/sync:1
//     measures. Counters, per iteration: apply_us (the B Applies),
//     commit_us (Commit: SQLite commit + WatchHub::Notify, the fan-out into
//     W queues), poll_us (Ready + every Poll), and ns_per_event for each.
//
// Flags (besides Google Benchmark's):
//   --natcd_watch_keys=N   keys under the prefix that puts cycle over (1000)
//   --natcd_value_bytes=N  value size (100)
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "natcd/key_range.h"

namespace natcd::bench {
namespace {

int64_t g_watch_keys = 1'000;
int64_t g_value_bytes = 100;

constexpr const char* kPrefix = "/watched/";

void BM_WatchFanout(benchmark::State& state) {
  const int64_t watchers = state.range(0);
  const int64_t batch = state.range(1);
  EngineEnv env(/*sync=*/false);
  LoadKeys(&env, kPrefix, 0, g_watch_keys, g_value_bytes, 10'000);

  WatchHub& hub = env.engine->watches();
  WatchOptions options;
  options.key = kPrefix;
  options.range_end = PrefixRangeEnd(kPrefix);
  for (int64_t i = 0; i < watchers; ++i) CheckOk(hub.Create(options), "WatchHub::Create");
  if (hub.unsynced_size() != 0) {
    state.SkipWithError("watchers created at the next revision should be synced at once");
    return;
  }

  std::vector<WriteRequest> requests;
  for (int64_t i = 0; i < g_watch_keys; ++i) {
    requests.push_back(PutRequest{Key(kPrefix, i), Value(g_value_bytes, i + 2)});
  }

  StepTimer apply, commit, poll;
  WatchMessage message;
  size_t next = 0;
  int64_t delivered = 0;
  for (auto _ : state) {
    apply.Start();
    for (int64_t b = 0; b < batch; ++b) {
      env.Apply(requests[next]);
      if (++next == requests.size()) next = 0;
    }
    apply.Stop();
    commit.Start();
    env.Commit();
    commit.Stop();
    poll.Start();
    for (WatchId id : hub.Ready()) {
      while (hub.Poll(id, 1'000, &message)) {
        delivered += static_cast<int64_t>(message.events.size());
      }
    }
    poll.Stop();
  }
  if (delivered != state.iterations() * batch * watchers) {
    state.SkipWithError("events delivered != puts x watchers");
  }
  const double iterations = static_cast<double>(state.iterations());
  const double events = static_cast<double>(delivered);
  state.SetItemsProcessed(delivered);
  state.counters["apply_us"] = apply.seconds() * 1e6 / iterations;
  state.counters["commit_us"] = commit.seconds() * 1e6 / iterations;
  state.counters["poll_us"] = poll.seconds() * 1e6 / iterations;
  state.counters["commit_ns_per_event"] = commit.seconds() * 1e9 / events;
  state.counters["poll_ns_per_event"] = poll.seconds() * 1e9 / events;
}

void Register() {
  benchmark::RegisterBenchmark("BM_WatchFanout", BM_WatchFanout)
      ->ArgNames({"watchers", "batch"})
      ->Args({1000, 100})
      ->Args({1000, 1000})
      ->Args({1, 1000})
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
}

}  // namespace
}  // namespace natcd::bench

int main(int argc, char** argv) {
  using natcd::bench::Flag;
  return natcd::bench::Main(
      argc, argv,
      {Flag{"watch_keys", &natcd::bench::g_watch_keys, "keys under the watched prefix"},
       Flag{"value_bytes", &natcd::bench::g_value_bytes, "value size in bytes"}},
      natcd::bench::Register);
}
