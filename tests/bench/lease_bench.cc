// lease_bench: lease grants, keepalives and mass expiry through the engine.
//
// Named benchmarks:
//   BM_LeaseGrant/batch:B/sync:S  B LeaseGrant entries (Prepare picks the ID,
//                                 then Apply), one Commit. items = grants.
//   BM_LeaseKeepAlive             Engine::LeaseKeepAlive on one of
//                                 --natcd_keepalive_leases leases, at random
//                                 (member-local: no Apply, no Commit).
//   BM_LeaseExpireMass/leases:N   N leases with --natcd_keys_per_lease keys
//                                 each expire together: the leader loop
//                                 ExpiredLeases -> Apply -> Commit (durable,
//                                 sync=true) until no lease is due. The time
//                                 is the seconds until every key is gone
//                                 (checked with a count-only Range) and
//                                 every lease is gone. One iteration. Counters
//                                 split it: expired_s (ExpiredLeases),
//                                 apply_s, commit_s, entries (Apply calls).
//                                 The store is built with sync=false, then
//                                 reopened durable, so the build is fast.
//
// Flags (besides Google Benchmark's):
//   --natcd_expire_leases=N     leases of BM_LeaseExpireMass (100000)
//   --natcd_keys_per_lease=N    keys attached to each (1)
//   --natcd_keepalive_leases=N  leases of BM_LeaseKeepAlive (10000)
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "natcd/key_range.h"

namespace natcd::bench {
namespace {

int64_t g_expire_leases = 100'000;
int64_t g_keys_per_lease = 1;
int64_t g_keepalive_leases = 10'000;

constexpr int64_t kTtlS = 10;

void BM_LeaseGrant(benchmark::State& state) {
  const int64_t batch = state.range(0);
  EngineEnv env(state.range(1) != 0);
  for (auto _ : state) {
    for (int64_t b = 0; b < batch; ++b) {
      WriteRequest request = LeaseGrantRequest{kTtlS, 0};
      env.engine->Prepare(&request);
      env.Apply(request);
    }
    env.Commit();
  }
  state.SetItemsProcessed(state.iterations() * batch);
}

std::vector<int64_t> GrantLeases(EngineEnv* env, int64_t n) {
  std::vector<int64_t> ids;
  ids.reserve(n);
  for (int64_t i = 0; i < n; ++i) {
    WriteRequest request = LeaseGrantRequest{kTtlS, 0};
    env->engine->Prepare(&request);
    ids.push_back(std::get<LeaseGrantResponse>(env->Apply(request)).id);
    if ((i + 1) % 10'000 == 0) env->Commit();
  }
  env->Commit();
  return ids;
}

void BM_LeaseKeepAlive(benchmark::State& state) {
  EngineEnv env(/*sync=*/false);
  std::vector<int64_t> ids = GrantLeases(&env, g_keepalive_leases);
  Rng rng(3);
  int64_t lost = 0;
  for (auto _ : state) {
    LeaseKeepAliveResponse r = env.engine->LeaseKeepAlive({ids[rng.Uniform(ids.size())]});
    if (r.ttl != kTtlS) ++lost;
    benchmark::DoNotOptimize(r);
  }
  if (lost != 0) state.SkipWithError("a keepalive did not find its lease");
  state.SetItemsProcessed(state.iterations());
}

void BM_LeaseExpireMass(benchmark::State& state) {
  const int64_t leases = state.range(0);
  constexpr const char* kPrefix = "/leased/";
  EngineEnv env(/*sync=*/false);
  std::vector<int64_t> ids = GrantLeases(&env, leases);
  const std::string value = Value(100);
  int64_t k = 0;
  for (int64_t id : ids) {
    for (int64_t j = 0; j < g_keys_per_lease; ++j) {
      PutRequest put{Key(kPrefix, k++), value};
      put.lease = id;
      env.Apply(put);
      if (k % 10'000 == 0) env.Commit();
    }
  }
  env.Commit();
  env.Close();
  env.options.sync = true;
  env.Open();  // PromoteLeases(0): every deadline is now + TTL

  RangeRequest count;
  count.key = kPrefix;
  count.range_end = PrefixRangeEnd(kPrefix);
  count.count_only = true;

  StepTimer expired, apply, commit;
  int64_t entries = 0;
  for (auto _ : state) {
    env.clock.AdvanceMs(kTtlS * 1000 + 1);
    while (true) {
      expired.Start();
      std::optional<LeaseExpireRequest> due = env.engine->ExpiredLeases();
      expired.Stop();
      if (!due) break;
      apply.Start();
      env.Apply(*due);
      apply.Stop();
      commit.Start();
      env.Commit();
      commit.Stop();
      ++entries;
    }
  }
  RangeResponse left = CheckOk(env.engine->Range(count), "Range");
  if (left.count != 0 || env.engine->lease_count() != 0) {
    state.SkipWithError("keys or leases survived the expiry");
  }
  state.SetItemsProcessed(leases);
  state.counters["keys"] = static_cast<double>(k);
  state.counters["expired_s"] = expired.seconds();
  state.counters["apply_s"] = apply.seconds();
  state.counters["commit_s"] = commit.seconds();
  state.counters["entries"] = static_cast<double>(entries);
}

void Register() {
  benchmark::RegisterBenchmark("BM_LeaseGrant", BM_LeaseGrant)
      ->ArgNames({"batch", "sync"})
      ->Args({1000, 1})
      ->MinTime(1.0)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_LeaseKeepAlive", BM_LeaseKeepAlive)
      ->UseRealTime()
      ->Unit(benchmark::kNanosecond);
  benchmark::RegisterBenchmark("BM_LeaseExpireMass", BM_LeaseExpireMass)
      ->ArgNames({"leases"})
      ->Arg(g_expire_leases)
      ->Iterations(1)
      ->UseRealTime()
      ->Unit(benchmark::kSecond);
}

}  // namespace
}  // namespace natcd::bench

int main(int argc, char** argv) {
  using natcd::bench::Flag;
  return natcd::bench::Main(
      argc, argv,
      {Flag{"expire_leases", &natcd::bench::g_expire_leases, "leases of BM_LeaseExpireMass"},
       Flag{"keys_per_lease", &natcd::bench::g_keys_per_lease, "keys attached to each lease"},
       Flag{"keepalive_leases", &natcd::bench::g_keepalive_leases, "leases of BM_LeaseKeepAlive"}},
      natcd::bench::Register);
}
