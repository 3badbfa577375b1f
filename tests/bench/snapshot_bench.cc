// snapshot_bench: what the state machine's snapshot costs the leader --
// copying its live database into a file to ship, and checksumming it.
//
// Named benchmarks:
//   BM_WriteDatabaseSnapshot/value_bytes:V
//     The store: N keys "/bench/key/%08d" (--natcd_snapshot_keys,
//     1,000,000), one put each with V-byte values (--natcd_value_bytes,
//     100), applied through the engine at Raft indexes 1..N (sync=false,
//     a Commit every 10,000), and left open: the leader's live database,
//     WAL included. Each iteration times one WriteDatabaseSnapshot (VACUUM
//     INTO from a second, read-only connection, then fsync and rename) to
//     the same output file. Counters: snapshot_MiB (the copy's size),
//     live_MiB (the database file plus its WAL), keys.
//   BM_Crc32c/MiB:M
//     CRC-32C over an M MiB buffer held in memory: the transfer checks
//     every byte twice (its chunk's checksum and the whole file's) on each
//     side. Reported as bytes per second.
//
// Flags (besides Google Benchmark's):
//   --natcd_snapshot_keys=N   keys in the store (1000000)
//   --natcd_value_bytes=N     value size (100)
#include <filesystem>
#include <memory>
#include <string>

#include "bench/bench_util.h"
#include "storage/crc32c.h"
#include "storage/sqlite_snapshot.h"

namespace natcd::bench {
namespace {

int64_t g_snapshot_keys = 1'000'000;
int64_t g_value_bytes = 100;

constexpr const char* kPrefix = "/bench/key/";

double MiB(uintmax_t bytes) { return static_cast<double>(bytes) / (1 << 20); }

void BM_WriteDatabaseSnapshot(benchmark::State& state) {
  EngineEnv env(/*sync=*/false);
  LoadKeys(&env, kPrefix, 0, g_snapshot_keys, static_cast<size_t>(state.range(0)), 10'000);
  const std::string out = env.dir.File("snapshot.db");
  uint64_t applied = 0;
  for (auto _ : state) {
    applied = CheckOk(WriteDatabaseSnapshot(env.options.db_path, out), "WriteDatabaseSnapshot");
  }
  if (applied != static_cast<uint64_t>(g_snapshot_keys)) state.SkipWithError("applied index");
  std::error_code ignored;
  state.counters["keys"] = static_cast<double>(g_snapshot_keys);
  state.counters["snapshot_MiB"] = MiB(std::filesystem::file_size(out));
  state.counters["live_MiB"] =
      MiB(std::filesystem::file_size(env.options.db_path) +
          std::filesystem::file_size(env.options.db_path + "-wal", ignored));
}

void BM_Crc32c(benchmark::State& state) {
  const std::string bytes = Value(static_cast<size_t>(state.range(0)) << 20);
  uint32_t crc = 0;
  for (auto _ : state) {
    crc = Crc32c(bytes);
    benchmark::DoNotOptimize(crc);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(bytes.size()));
}

void Register() {
  benchmark::RegisterBenchmark("BM_WriteDatabaseSnapshot", BM_WriteDatabaseSnapshot)
      ->ArgNames({"value_bytes"})
      ->Args({g_value_bytes})
      ->Iterations(3)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_Crc32c", BM_Crc32c)
      ->ArgNames({"MiB"})
      ->Args({64})
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
}

}  // namespace
}  // namespace natcd::bench

int main(int argc, char** argv) {
  using natcd::bench::Flag;
  return natcd::bench::Main(
      argc, argv,
      {Flag{"snapshot_keys", &natcd::bench::g_snapshot_keys, "keys in the store"},
       Flag{"value_bytes", &natcd::bench::g_value_bytes, "value size"}},
      natcd::bench::Register);
}
