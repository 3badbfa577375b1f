// raft_log_bench: what making one Raft Ready durable costs -- its entries
// and hard state -- in the Raft log file (core/storage/raft_log/) against
// the path before it, the same entries and hard state in one SQLite
// transaction (the rows raft/durable_raft_storage.h now only migrates:
// a run of entries and the hard state row, committed with
// synchronous=FULL). The SQLite side carries only the log, not the applied
// rows the member committed with it: the comparison favours SQLite.
//
// Named benchmarks (each iteration: one batch of `entries` new entries of
// --natcd_entry_bytes bytes each, and a hard state whose commit is the
// new last index):
//   BM_RaftLogAppend/entries:N/sync:S
//     RaftLogFile::Append(entries, hard_state, sync): one write and, when
//     S is 1, one fdatasync. 64 MiB segments, preallocated; rotation
//     happens within the run when it fills one and is counted in.
//   BM_DurableRaftPersist/entries:N
//     DurableRaftStorage::Persist(entries, hard_state, sync=true): what
//     the member's Ready does (the log file's Append, and the in-memory
//     copy Raft reads).
//   BM_SqliteRaftAppend/entries:N
//     the run and the hard state row inserted in one SQLite transaction,
//     as before the log file, and committed (its WAL frames and fsync).
// Counters: entries_per_s; bytes_per_second counts the entries' data.
//
// Flags (besides Google Benchmark's):
//   --natcd_entry_bytes=N   data bytes per entry (100: a small put's
//                           encoded request)
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <sqlite3.h>
#include "bench/bench_util.h"

#include "raft/durable_raft_storage.h"
#include "raft/types.h"
#include "storage/raft_log/raft_log_file.h"
#include "storage/sqlite_backend.h"

namespace natcd::bench {
namespace {

int64_t g_entry_bytes = 100;

// The next batch after `last`: n entries of term 1.
void NextBatch(uint64_t last, int64_t n, std::vector<raft::Entry>* batch) {
  batch->resize(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; k++) {
    raft::Entry& e = (*batch)[static_cast<size_t>(k)];
    e.term = 1;
    e.index = last + 1 + static_cast<uint64_t>(k);
    e.type = raft::EntryType::kNormal;
    if (e.data.size() != static_cast<size_t>(g_entry_bytes)) {
      e.data = Value(static_cast<size_t>(g_entry_bytes), e.index);
    }
  }
}

void Report(benchmark::State& state, int64_t n) {
  const double entries = static_cast<double>(state.iterations()) * static_cast<double>(n);
  state.counters["entries_per_s"] = benchmark::Counter(entries, benchmark::Counter::kIsRate);
  state.SetBytesProcessed(static_cast<int64_t>(entries) * g_entry_bytes);
}

void BM_RaftLogAppend(benchmark::State& state) {
  const int64_t n = state.range(0);
  const bool sync = state.range(1) != 0;
  TempDir dir;
  raftlog::PosixLogFs fs;
  std::unique_ptr<raftlog::RaftLogFile> log =
      CheckOk(raftlog::RaftLogFile::Open(&fs, dir.File("log")), "RaftLogFile::Open");
  std::vector<raft::Entry> batch;
  for (auto _ : state) {
    state.PauseTiming();
    NextBatch(log->LastIndex(), n, &batch);
    const raft::HardState hs{1, 1, batch.back().index};
    state.ResumeTiming();
    CheckOk(log->Append(batch, hs, sync), "RaftLogFile::Append");
  }
  Report(state, n);
}

void BM_DurableRaftPersist(benchmark::State& state) {
  const int64_t n = state.range(0);
  TempDir dir;
  BackendOptions options;
  options.path = dir.File("natcd.db");
  options.sync = true;
  std::unique_ptr<SqliteBackend> backend = CheckOk(SqliteBackend::Open(options), "Open");
  raftlog::PosixLogFs fs;
  std::unique_ptr<raft::DurableRaftStorage> storage =
      CheckOk(raft::DurableRaftStorage::Open(backend.get(), &fs,
                                             raft::DurableRaftStorage::LogDirOf(options.path)),
              "DurableRaftStorage::Open");
  std::vector<raft::Entry> batch;
  for (auto _ : state) {
    state.PauseTiming();
    NextBatch(storage->LastIndex(), n, &batch);
    const raft::HardState hs{1, 1, batch.back().index};
    state.ResumeTiming();
    CheckOk(storage->Persist(batch, hs, true), "DurableRaftStorage::Persist");
  }
  Report(state, n);
}

void PutU64(std::string* out, uint64_t v) {
  for (int i = 0; i < 8; i++) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

void BM_SqliteRaftAppend(benchmark::State& state) {
  const int64_t n = state.range(0);
  TempDir dir;
  BackendOptions options;
  options.path = dir.File("natcd.db");
  options.sync = true;
  std::unique_ptr<SqliteBackend> backend = CheckOk(SqliteBackend::Open(options), "Open");
  sqlite3* db = backend->handle();
  CheckOk(sqlite3_exec(db,
                       "CREATE TABLE raft_log_run (first_idx INTEGER PRIMARY KEY, last_idx "
                       "INTEGER NOT NULL, entries BLOB NOT NULL);"
                       "CREATE TABLE raft_state (name TEXT PRIMARY KEY, value BLOB NOT NULL) "
                       "WITHOUT ROWID;",
                       nullptr, nullptr, nullptr) == SQLITE_OK
              ? Status::OK()
              : Status::Internal(sqlite3_errmsg(db)),
          "create tables");
  sqlite3_stmt* run = nullptr;
  sqlite3_stmt* hard = nullptr;
  sqlite3_prepare_v2(db, "INSERT INTO raft_log_run VALUES (?, ?, ?)", -1, &run, nullptr);
  sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO raft_state VALUES ('hard_state', ?)", -1, &hard,
                     nullptr);
  std::vector<raft::Entry> batch;
  uint64_t last = 0;
  std::string blob, hs;
  for (auto _ : state) {
    state.PauseTiming();
    NextBatch(last, n, &batch);
    state.ResumeTiming();
    CheckOk(backend->BeginBatch(), "BeginBatch");
    blob.clear();
    for (const raft::Entry& e : batch) {
      PutU64(&blob, e.term);
      blob.push_back(0);
      for (int i = 0; i < 4; i++)
        blob.push_back(static_cast<char>((e.data.size() >> (8 * i)) & 0xff));
      blob += e.data;
    }
    sqlite3_bind_int64(run, 1, static_cast<int64_t>(batch.front().index));
    sqlite3_bind_int64(run, 2, static_cast<int64_t>(batch.back().index));
    sqlite3_bind_blob64(run, 3, blob.data(), blob.size(), SQLITE_STATIC);
    const bool ran = sqlite3_step(run) == SQLITE_DONE;
    sqlite3_reset(run);
    hs.clear();
    PutU64(&hs, 1);
    PutU64(&hs, 1);
    PutU64(&hs, batch.back().index);
    sqlite3_bind_blob64(hard, 1, hs.data(), hs.size(), SQLITE_STATIC);
    const bool stored = sqlite3_step(hard) == SQLITE_DONE;
    sqlite3_reset(hard);
    CheckOk(ran && stored ? Status::OK() : Status::Internal(sqlite3_errmsg(db)), "insert");
    CheckOk(backend->CommitBatch(), "CommitBatch");
    last = batch.back().index;
  }
  sqlite3_finalize(run);
  sqlite3_finalize(hard);
  Report(state, n);
}

void Register() {
  benchmark::RegisterBenchmark("BM_RaftLogAppend", BM_RaftLogAppend)
      ->ArgNames({"entries", "sync"})
      ->Args({1, 1})
      ->Args({256, 1})
      ->Args({1, 0})
      ->Args({256, 0})
      ->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("BM_DurableRaftPersist", BM_DurableRaftPersist)
      ->ArgNames({"entries"})
      ->Args({1})
      ->Args({256})
      ->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("BM_SqliteRaftAppend", BM_SqliteRaftAppend)
      ->ArgNames({"entries"})
      ->Args({1})
      ->Args({256})
      ->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
}

}  // namespace
}  // namespace natcd::bench

int main(int argc, char** argv) {
  using natcd::bench::Flag;
  return natcd::bench::Main(
      argc, argv, {Flag{"entry_bytes", &natcd::bench::g_entry_bytes, "data bytes per entry"}},
      natcd::bench::Register);
}
