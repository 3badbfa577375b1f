// raft_log_bench: what making one Raft Ready durable costs -- its entries
// and hard state -- in the Raft log file (core/storage/raft_log/) against
// today's path, the same entries and hard state in one SQLite transaction
// (raft/sqlite_raft_storage.h, committed by SqliteBackend::CommitBatch
// with synchronous=FULL). The SQLite side carries only the log, not the
// applied rows the member commits with it: the comparison favours SQLite.
//
// Named benchmarks (each iteration: one batch of `entries` new entries of
// --natcd_entry_bytes bytes each, and a hard state whose commit is the
// new last index):
//   BM_RaftLogAppend/entries:N/sync:S
//     RaftLogFile::Append(entries, hard_state, sync): one write and, when
//     S is 1, one fdatasync. 64 MiB segments, preallocated; rotation
//     happens within the run when it fills one and is counted in.
//   BM_SqliteRaftAppend/entries:N
//     SqliteRaftStorage::Append + SetHardState, then CommitBatch (one
//     SQLite transaction, its WAL frames and the fsync).
// Counters: entries_per_s; bytes_per_second counts the entries' data.
//
// Flags (besides Google Benchmark's):
//   --natcd_entry_bytes=N   data bytes per entry (100: a small put's
//                           encoded request)
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "raft/sqlite_raft_storage.h"
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

void BM_SqliteRaftAppend(benchmark::State& state) {
  const int64_t n = state.range(0);
  TempDir dir;
  BackendOptions options;
  options.path = dir.File("natcd.db");
  options.sync = true;
  std::unique_ptr<SqliteBackend> backend = CheckOk(SqliteBackend::Open(options), "Open");
  std::unique_ptr<raft::SqliteRaftStorage> storage =
      CheckOk(raft::SqliteRaftStorage::Open(backend.get()), "SqliteRaftStorage::Open");
  std::vector<raft::Entry> batch;
  for (auto _ : state) {
    state.PauseTiming();
    NextBatch(storage->LastIndex(), n, &batch);
    const raft::HardState hs{1, 1, batch.back().index};
    state.ResumeTiming();
    CheckOk(storage->Append(batch), "SqliteRaftStorage::Append");
    CheckOk(storage->SetHardState(hs), "SetHardState");
    CheckOk(backend->CommitBatch(), "CommitBatch");
  }
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
