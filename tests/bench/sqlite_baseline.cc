// sqlite_baseline: the physical floor under engine_bench. Raw SQLite, no
// natcd code: the same file settings as core/storage/sqlite_backend.cc, the
// same kv row shape, prepared statements bound the same way. The gap between
// these numbers and engine_bench's is the cost of natcd's MVCC layer
// (index, events, revision bookkeeping, watch notify).
//
// The settings and the row shape are RawSqlite's, those of
// core/storage/sqlite_backend.cc; raw_sqlite.h says why each is set:
//   PRAGMA page_size=4096; PRAGMA journal_mode=WAL;
//   PRAGMA synchronous=FULL (sync:1) or OFF (sync:0);
//   PRAGMA cache_size=-65536; PRAGMA temp_store=MEMORY;
//   PRAGMA wal_autocheckpoint=4096; PRAGMA locking_mode=NORMAL;
//   PRAGMA mmap_size=0; BEGIN IMMEDIATE ... COMMIT per batch.
// Each insert is one row at the next rev, sub 0, a 19-byte key cycling over
// --natcd_write_keys keys, a --natcd_value_bytes value. The table starts
// with one row per key, as engine_bench's BM_Put does.
//
// Named benchmarks:
//   BM_SqliteInsert/batch:B/sync:S      B inserts per transaction. Compare
//                                       with engine_bench BM_Put/batch:B/sync:S.
//   BM_SqliteInsertMeta/batch:B/sync:S  the same plus the two meta rows the
//                                       engine rewrites on every commit
//                                       (INSERT OR REPLACE INTO meta: revision
//                                       and applied_index): the engine's I/O
//                                       per commit without its CPU. sync:1
//                                       only.
//   BM_SqlitePipelined/batch:B          a prototype of pipelined group
//                                       commit, durable: synchronous=NORMAL
//                                       (WAL commits do not fsync), and a
//                                       syncer thread fdatasyncs the -wal
//                                       file after each COMMIT while the next
//                                       batch is inserted. A batch counts as
//                                       done (acknowledgeable) only when the
//                                       fdatasync that started after its
//                                       COMMIT returned; at most one is in
//                                       flight. Throughput is bounded by
//                                       max(insert CPU, fsync) instead of
//                                       their sum. Counter: wait_ms, the
//                                       time per batch spent waiting for the
//                                       previous fsync.
//   BM_FileAppendSync/bytes:N           no SQLite: pwrite N bytes at the end
//                                       of a file, then fdatasync. The
//                                       device's floor under every commit.
//
// Flags (besides Google Benchmark's):
//   --natcd_write_keys=N      keyspace (10000)
//   --natcd_value_bytes=N     value size (100)
//   --natcd_page_size=N       PRAGMA page_size (4096, the engine's); to see
//                             what a larger page would save
//   --natcd_autocheckpoint=N  PRAGMA wal_autocheckpoint (4096, the
//                             engine's); 0 shows commits without checkpoints
#include <fcntl.h>
#include <sqlite3.h>
#include <unistd.h>

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_util.h"
#include "bench/raw_sqlite.h"

namespace natcd::bench {
namespace {

int64_t g_write_keys = 10'000;
int64_t g_value_bytes = 100;
int64_t g_page_size = 4096;
int64_t g_autocheckpoint = 4096;

void RunInserts(benchmark::State& state, bool with_meta) {
  const int64_t batch = state.range(0);
  const bool sync = state.range(1) != 0;
  TempDir dir;
  RawSqliteOptions options;
  options.sync = sync;
  options.page_size = g_page_size;
  options.autocheckpoint = g_autocheckpoint;
  RawSqlite db(dir.File("baseline.db"), options);

  std::vector<std::string> keys, values;
  for (int64_t i = 0; i < g_write_keys; ++i) {
    keys.push_back(Key("/bench/key/", i));
    values.push_back(Value(g_value_bytes, i + 2));
  }
  int64_t rev = 0;
  db.Begin();
  for (int64_t i = 0; i < g_write_keys; ++i) db.Insert(++rev, keys[i], values[i], 1);
  db.Commit();

  size_t next = 0;
  int64_t version = 2;
  for (auto _ : state) {
    db.Begin();
    for (int64_t b = 0; b < batch; ++b) {
      db.Insert(++rev, keys[next], values[next], version);
      if (++next == keys.size()) {
        next = 0;
        ++version;
      }
    }
    if (with_meta) {
      db.SetMeta("revision", rev);
      db.SetMeta("applied_index", rev);
    }
    db.Commit();
  }
  state.SetItemsProcessed(state.iterations() * batch);
}

void BM_SqliteInsert(benchmark::State& state) { RunInserts(state, false); }
void BM_SqliteInsertMeta(benchmark::State& state) { RunInserts(state, true); }

// Runs fdatasync(fd) when asked, one request at a time.
class Syncer {
 public:
  explicit Syncer(int fd) : fd_(fd), thread_([this] { Run(); }) {}
  ~Syncer() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  // Starts an fdatasync; the previous one must be done (Wait).
  void Start() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      requested_ = true;
    }
    cv_.notify_all();
  }
  // Waits until the started fdatasync (if any) returned.
  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return !requested_ && !running_; });
    if (failed_) {
      std::perror("bench: fdatasync");
      std::abort();
    }
  }

 private:
  void Run() {
    std::unique_lock<std::mutex> lock(mu_);
    while (true) {
      cv_.wait(lock, [this] { return stop_ || requested_; });
      if (stop_) return;
      requested_ = false;
      running_ = true;
      lock.unlock();
      const bool ok = fdatasync(fd_) == 0;
      lock.lock();
      running_ = false;
      if (!ok) failed_ = true;
      cv_.notify_all();
    }
  }

  const int fd_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool requested_ = false;
  bool running_ = false;
  bool stop_ = false;
  bool failed_ = false;
  std::thread thread_;
};

void BM_SqlitePipelined(benchmark::State& state) {
  const int64_t batch = state.range(0);
  TempDir dir;
  const std::string path = dir.File("pipelined.db");
  RawSqliteOptions options;
  options.synchronous = "NORMAL";
  options.page_size = g_page_size;
  options.autocheckpoint = g_autocheckpoint;
  RawSqlite db(path, options);

  std::vector<std::string> keys, values;
  for (int64_t i = 0; i < g_write_keys; ++i) {
    keys.push_back(Key("/bench/key/", i));
    values.push_back(Value(g_value_bytes, i + 2));
  }
  int64_t rev = 0;
  db.Begin();
  for (int64_t i = 0; i < g_write_keys; ++i) db.Insert(++rev, keys[i], values[i], 1);
  db.Commit();
  // The WAL exists from the first commit and is reused, never deleted,
  // while the connection is open.
  int wal_fd = open((path + "-wal").c_str(), O_RDONLY);
  if (wal_fd < 0) {
    state.SkipWithError("open -wal");
    return;
  }
  StepTimer wait;
  {
    Syncer syncer(wal_fd);
    size_t next = 0;
    for (auto _ : state) {
      db.Begin();
      for (int64_t b = 0; b < batch; ++b) {
        db.Insert(++rev, keys[next], values[next], 2);
        if (++next == keys.size()) next = 0;
      }
      // The previous batch is durable once this returns.
      wait.Start();
      syncer.Wait();
      wait.Stop();
      db.Commit();
      syncer.Start();
    }
    syncer.Wait();  // the last batch
  }
  close(wal_fd);
  state.SetItemsProcessed(state.iterations() * batch);
  state.counters["wait_ms"] = wait.seconds() * 1e3 / static_cast<double>(state.iterations());
}

void BM_FileAppendSync(benchmark::State& state) {
  const std::string bytes(static_cast<size_t>(state.range(0)), 'x');
  TempDir dir;
  const std::string path = dir.File("append");
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) {
    state.SkipWithError("open");
    return;
  }
  off_t offset = 0;
  for (auto _ : state) {
    if (pwrite(fd, bytes.data(), bytes.size(), offset) != static_cast<ssize_t>(bytes.size()) ||
        fdatasync(fd) != 0) {
      state.SkipWithError("pwrite/fdatasync");
      break;
    }
    offset += static_cast<off_t>(bytes.size());
  }
  close(fd);
  state.SetBytesProcessed(state.iterations() * state.range(0));
}

void Register() {
  // Same run lengths as engine_bench's BM_Put.
  // Run lengths as engine_bench's BM_Put. The meta variant only where the
  // engine's I/O matters (sync:1).
  benchmark::RegisterBenchmark("BM_SqliteInsert", BM_SqliteInsert)
      ->ArgNames({"batch", "sync"})
      ->Args({1, 1})
      ->MinTime(1.0)
      ->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("BM_SqliteInsert", BM_SqliteInsert)
      ->ArgNames({"batch", "sync"})
      ->Args({1000, 1})
      ->MinTime(2.0)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_SqliteInsert", BM_SqliteInsert)
      ->ArgNames({"batch", "sync"})
      ->Args({1, 0})
      ->Args({1000, 0})
      ->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("BM_SqliteInsertMeta", BM_SqliteInsertMeta)
      ->ArgNames({"batch", "sync"})
      ->Args({1, 1})
      ->MinTime(1.0)
      ->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("BM_SqliteInsertMeta", BM_SqliteInsertMeta)
      ->ArgNames({"batch", "sync"})
      ->Args({1000, 1})
      ->MinTime(2.0)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_SqlitePipelined", BM_SqlitePipelined)
      ->ArgNames({"batch"})
      ->Arg(1000)
      ->MinTime(2.0)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_FileAppendSync", BM_FileAppendSync)
      ->ArgNames({"bytes"})
      ->Arg(4096)
      ->Arg(160 * 1024)
      ->MinTime(1.0)
      ->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
}

}  // namespace
}  // namespace natcd::bench

int main(int argc, char** argv) {
  using natcd::bench::Flag;
  return natcd::bench::Main(
      argc, argv,
      {Flag{"write_keys", &natcd::bench::g_write_keys, "keyspace of the inserts"},
       Flag{"value_bytes", &natcd::bench::g_value_bytes, "value size in bytes"},
       Flag{"page_size", &natcd::bench::g_page_size, "PRAGMA page_size"},
       Flag{"autocheckpoint", &natcd::bench::g_autocheckpoint, "PRAGMA wal_autocheckpoint"}},
      natcd::bench::Register);
}
