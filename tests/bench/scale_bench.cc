// scale_bench: a store of --natcd_scale_keys keys (1,000,000 by default):
// how long Engine::Open takes to rebuild the in-memory index from SQLite,
// and how much heap that index holds per key.
//
// Named benchmarks:
//   BM_Reopen/value_bytes:V/cold:C
//     The store: N keys "/bench/key/%08d" (19 bytes), one put each, with
//     V-byte values, built once per V through the engine with sync=false
//     and group commits of 10,000, then closed (SQLite checkpoints the
//     WAL into the database file on close). Each iteration times one
//     Engine::Open (sync=true, as a restarted member would) and closes the
//     engine untimed. cold:1 first evicts the database file from the OS
//     page cache (fdatasync + posix_fadvise DONTNEED), so Open reads from
//     the disk; cold:0 reads it from the page cache. Goal: <= 2 s with
//     1,000,000 keys.
//     Memory, measured around each Open (mallinfo2: bytes in use, small
//     chunks plus mmap'd blocks), minus what SQLite itself holds
//     (sqlite3_memory_used: mostly its page cache, up to 64 MiB), divided
//     by N:
//       heap_B_per_key     the engine's heap per key
//       beyond_key_B       heap_B_per_key - 19 key bytes
//       beyond_kv_B        heap_B_per_key - 19 key bytes - V value bytes
//     With V = 0 the index holds no value (an empty value has no heap
//     block): beyond_key_B is the index alone. With V = 100 it is the index
//     plus the cached values. sqlite_MiB is the delta of SQLite's own
//     memory over the Open. (The resident set is not reported: the build
//     ran in this process and left freed pages that the Open reuses, so
//     its delta means nothing.)
//   BM_Reopen/order:random/value_bytes:V/cold:C
//     As BM_Reopen, but the same N keys were created in a random order
//     (a fixed shuffle, seed 42), so the load meets them out of key order,
//     as a store whose keys came from many clients does. Goal: <= 2 s with
//     1,000,000 keys, as for ascending keys. Run for V = 0 and the warm
//     page cache only: the order changes the index's work, not the reading.
//     Building this store costs about as much as the ascending one plus
//     the random inserts of the build itself.
//   BM_SqliteScan/value_bytes:V/cold:C
//     The floor under BM_Reopen: raw SQLite opens the same store and steps
//     through "SELECT rev, sub, key, value, create_rev, version, lease,
//     tombstone FROM kv WHERE rev >= 0 ORDER BY rev, sub" (the engine's
//     load query) reading every column without copying it. No natcd code.
//
// Flags (besides Google Benchmark's):
//   --natcd_scale_keys=N    keys in the store (1000000)
//   --natcd_value_bytes=N   V of the index-plus-values run (100); the
//                           index-only run always uses 0
#include <fcntl.h>
#include <sqlite3.h>
#include <unistd.h>

#include <map>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "bench/bench_util.h"

namespace natcd::bench {
namespace {

int64_t g_scale_keys = 1'000'000;
int64_t g_value_bytes = 100;

constexpr const char* kPrefix = "/bench/key/";
constexpr double kKeyBytes = 19;  // "/bench/key/" + 8 digits

// The order in which a store's keys were created.
enum class Order { kAscending, kRandom };

// Puts Key(kPrefix, i) for every i in [0, n), in a random order (a fixed
// shuffle), committing every batch puts.
void LoadKeysShuffled(EngineEnv* env, int64_t n, size_t value_bytes, int64_t batch) {
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), int64_t{0});
  Rng rng(42);
  for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.Uniform(i)]);
  const std::string value = Value(value_bytes);
  for (int64_t i = 0; i < n; ++i) {
    WriteRequest request = PutRequest{Key(kPrefix, order[static_cast<size_t>(i)]), value};
    env->Apply(request);
    if ((i + 1) % batch == 0 || i + 1 == n) env->Commit();
  }
}

// One built store per (value size, order), kept for the whole process
// (destroyed at exit, which removes it).
struct Store {
  TempDir dir;
  std::string path;
};

const Store& BuiltStore(int64_t value_bytes, Order order = Order::kAscending) {
  static std::map<std::pair<int64_t, Order>, std::unique_ptr<Store>> stores;
  std::unique_ptr<Store>& store = stores[{value_bytes, order}];
  if (store == nullptr) {
    EngineEnv env(/*sync=*/false);
    if (order == Order::kRandom) {
      LoadKeysShuffled(&env, g_scale_keys, static_cast<size_t>(value_bytes), 10'000);
    } else {
      LoadKeys(&env, kPrefix, 0, g_scale_keys, static_cast<size_t>(value_bytes), 10'000);
    }
    env.Close();
    store = std::make_unique<Store>();
    store->path = store->dir.File("natcd.db");
    std::filesystem::rename(env.options.db_path, store->path);
    for (const char* suffix : {"-wal", "-shm"}) {
      std::error_code ignored;
      std::filesystem::remove(env.options.db_path + suffix, ignored);
    }
  }
  return *store;
}

void EvictFromPageCache(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0) return;
  if (fdatasync(fd) != 0) std::perror("bench: fdatasync");
  if (posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) != 0) std::perror("bench: posix_fadvise");
  close(fd);
}

void ReopenBenchmark(benchmark::State& state, Order order) {
  const int64_t value_bytes = state.range(0);
  const bool cold = state.range(1) != 0;
  const Store& store = BuiltStore(value_bytes, order);

  ManualClock clock;
  EngineOptions options;
  options.db_path = store.path;
  options.sync = true;
  options.clock = &clock;

  double natcd_heap = 0, sqlite_mem = 0;
  size_t keys = 0;
  for (auto _ : state) {
    state.PauseTiming();
    if (cold) EvictFromPageCache(store.path);
    const int64_t heap_before = HeapInUseBytes();
    const int64_t sqlite_before = sqlite3_memory_used();
    state.ResumeTiming();

    std::unique_ptr<Engine> engine = CheckOk(Engine::Open(options), "Engine::Open");

    state.PauseTiming();
    const int64_t sqlite_delta = sqlite3_memory_used() - sqlite_before;
    natcd_heap += static_cast<double>(HeapInUseBytes() - heap_before - sqlite_delta);
    sqlite_mem += static_cast<double>(sqlite_delta);
    keys = engine->key_count();
    engine.reset();
    state.ResumeTiming();
  }
  if (keys != static_cast<size_t>(g_scale_keys)) state.SkipWithError("key count after reopen");
  const double n = static_cast<double>(g_scale_keys);
  const double iterations = static_cast<double>(state.iterations());
  const double per_key = natcd_heap / iterations / n;
  state.counters["keys"] = n;
  state.counters["heap_B_per_key"] = per_key;
  state.counters["beyond_key_B"] = per_key - kKeyBytes;
  state.counters["beyond_kv_B"] = per_key - kKeyBytes - static_cast<double>(value_bytes);
  state.counters["sqlite_MiB"] = sqlite_mem / iterations / (1 << 20);
}

void BM_Reopen(benchmark::State& state) { ReopenBenchmark(state, Order::kAscending); }
void BM_ReopenRandom(benchmark::State& state) { ReopenBenchmark(state, Order::kRandom); }

void BM_SqliteScan(benchmark::State& state) {
  const bool cold = state.range(1) != 0;
  const Store& store = BuiltStore(state.range(0));
  int64_t rows = 0;
  for (auto _ : state) {
    state.PauseTiming();
    if (cold) EvictFromPageCache(store.path);
    state.ResumeTiming();
    sqlite3* db = nullptr;
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_open_v2(store.path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX,
                        nullptr) != SQLITE_OK ||
        sqlite3_exec(db, "PRAGMA cache_size=-65536", nullptr, nullptr, nullptr) != SQLITE_OK ||
        sqlite3_prepare_v2(db,
                           "SELECT rev, sub, key, value, create_rev, version, lease, tombstone "
                           "FROM kv WHERE rev >= 0 ORDER BY rev, sub",
                           -1, &stmt, nullptr) != SQLITE_OK) {
      state.SkipWithError(sqlite3_errmsg(db));
      sqlite3_close(db);
      return;
    }
    rows = 0;
    int64_t checksum = 0;
    while (sqlite3_step(stmt) == SQLITE_ROW) {
      checksum += sqlite3_column_int64(stmt, 0) + sqlite3_column_int64(stmt, 1);
      checksum += sqlite3_column_bytes(stmt, 2) + sqlite3_column_bytes(stmt, 3);
      benchmark::DoNotOptimize(sqlite3_column_blob(stmt, 2));
      benchmark::DoNotOptimize(sqlite3_column_blob(stmt, 3));
      for (int c = 4; c < 8; ++c) checksum += sqlite3_column_int64(stmt, c);
      ++rows;
    }
    benchmark::DoNotOptimize(checksum);
    sqlite3_finalize(stmt);
    sqlite3_close(db);
  }
  if (rows != g_scale_keys) state.SkipWithError("row count");
  state.counters["rows"] = static_cast<double>(rows);
}

void Register() {
  for (int64_t value_bytes : {int64_t{0}, g_value_bytes}) {
    for (int64_t cold : {0, 1}) {
      benchmark::RegisterBenchmark("BM_Reopen", BM_Reopen)
          ->ArgNames({"value_bytes", "cold"})
          ->Args({value_bytes, cold})
          ->Iterations(cold ? 1 : 2)
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark("BM_SqliteScan", BM_SqliteScan)
          ->ArgNames({"value_bytes", "cold"})
          ->Args({value_bytes, cold})
          ->Iterations(cold ? 1 : 2)
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond);
    }
  }
  benchmark::RegisterBenchmark("BM_Reopen/order:random", BM_ReopenRandom)
      ->ArgNames({"value_bytes", "cold"})
      ->Args({0, 0})
      ->Iterations(2)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
}

}  // namespace
}  // namespace natcd::bench

int main(int argc, char** argv) {
  using natcd::bench::Flag;
  return natcd::bench::Main(
      argc, argv,
      {Flag{"scale_keys", &natcd::bench::g_scale_keys, "keys in the store"},
       Flag{"value_bytes", &natcd::bench::g_value_bytes, "value size of the index+values run"}},
      natcd::bench::Register);
}
