// metrics_bench: what recording a metric costs the thread that records it
// (the engine thread, on its hot path), alone and from several threads at
// once, and what a scrape of a member's metrics costs.
//
// Named benchmarks:
//   BM_CounterInc/threads:T       Counter::Inc, T threads on one counter
//   BM_GaugeAdd/threads:T         Gauge::Add (a compare-and-swap loop)
//   BM_HistogramObserve/threads:T Histogram::Observe into etcd's 14 fsync
//                                 buckets (binary search, two atomics)
//   BM_TextExposition             Registry::TextExposition of MemberMetrics
//                                 with process_* (reads /proc): one scrape.
//                                 bytes = the exposition's size.
//
// No flags besides Google Benchmark's.
#include <string>

#include "bench/bench_util.h"
#include "metrics/member_metrics.h"
#include "metrics/process_metrics.h"

namespace natcd::bench {
namespace {

// The metrics the threads of one benchmark share (Google Benchmark runs
// each thread's copy of the function).
struct Shared {
  metrics::Registry registry;
  metrics::Counter& counter = registry.AddCounter("c_total", "C.");
  metrics::Gauge& gauge = registry.AddGauge("g", "G.");
  metrics::Histogram& histogram =
      registry.AddHistogram("h_seconds", "H.", metrics::ExponentialBuckets(0.001, 2, 14));
};
Shared& Metrics() {
  static Shared* shared = new Shared();  // never destroyed: threads may still run at exit
  return *shared;
}

void BM_CounterInc(benchmark::State& state) {
  metrics::Counter& c = Metrics().counter;
  for (auto _ : state) c.Inc();
  state.SetItemsProcessed(state.iterations());
}

void BM_GaugeAdd(benchmark::State& state) {
  metrics::Gauge& g = Metrics().gauge;
  for (auto _ : state) g.Add(1);
  state.SetItemsProcessed(state.iterations());
}

void BM_HistogramObserve(benchmark::State& state) {
  metrics::Histogram& h = Metrics().histogram;
  double v = 0.0001;
  for (auto _ : state) {
    h.Observe(v);
    v = v > 10 ? 0.0001 : v * 1.5;  // every bucket in turn
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_TextExposition(benchmark::State& state) {
  metrics::Registry registry;
  metrics::MemberMetrics member(registry, "0.1.0");
  metrics::AddProcessMetrics(registry);
  for (const char* endpoint : {"kv.range", "kv.put", "kv.delete", "kv.txn", "lease.grant"}) {
    member.request_seconds.WithLabels({endpoint}).Observe(0.001);
  }
  size_t bytes = 0;
  for (auto _ : state) {
    std::string text = registry.TextExposition();
    bytes = text.size();
    benchmark::DoNotOptimize(text);
  }
  state.counters["bytes"] = static_cast<double>(bytes);
}

void Register() {
  for (auto* b : {benchmark::RegisterBenchmark("BM_CounterInc", BM_CounterInc),
                  benchmark::RegisterBenchmark("BM_GaugeAdd", BM_GaugeAdd),
                  benchmark::RegisterBenchmark("BM_HistogramObserve", BM_HistogramObserve)}) {
    b->Threads(1)->Threads(2)->UseRealTime();
  }
  benchmark::RegisterBenchmark("BM_TextExposition", BM_TextExposition)
      ->Unit(benchmark::kMicrosecond);
}

}  // namespace
}  // namespace natcd::bench

int main(int argc, char** argv) {
  return natcd::bench::Main(argc, argv, {}, natcd::bench::Register);
}
