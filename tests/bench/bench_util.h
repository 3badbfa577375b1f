// Helpers shared by the benchmark binaries in tests/bench/: a temporary
// directory, an engine on it, key and value makers, natcd's own flags and
// the main() every binary uses.
//
// Each binary documents its named benchmarks and flags at its top. Every
// binary also takes Google Benchmark's flags (--benchmark_filter=REGEX,
// --benchmark_repetitions=N, --benchmark_min_time=S, --benchmark_format=json
// ...). natcd's flags are spelled --natcd_NAME=VALUE and are removed from
// argv before Google Benchmark sees it.
//
// Every benchmark reports wall-clock time (UseRealTime): fsync waits are
// the point of several of them. On a shared machine compare the CPU column
// too: when other processes take the CPU, wall time grows and CPU time
// stays close to what one free core would do.
//
// Setup failures abort with the Status: a benchmark that measured an error
// path by accident is worse than no number.
#pragma once

#include <benchmark/benchmark.h>
#include <malloc.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "natcd/clock.h"
#include "natcd/engine.h"
#include "natcd/status.h"

namespace natcd::bench {

[[noreturn]] inline void Die(const char* what, const Status& s) {
  std::fprintf(stderr, "bench: %s: %s\n", what, s.ToString().c_str());
  std::abort();
}

inline void CheckOk(const Status& s, const char* what) {
  if (!s.ok()) Die(what, s);
}

template <typename T>
T CheckOk(Result<T> r, const char* what) {
  if (!r.ok()) Die(what, r.status());
  return std::move(r).value();
}

// A fresh directory under $TMPDIR (default /tmp), removed with everything in
// it when destroyed.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "natcd-bench-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) {
      std::perror("bench: mkdtemp");
      std::abort();
    }
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string File(std::string_view name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

// prefix followed by i as 8 decimal digits: "/bench/key/" gives 19-byte
// keys, longer than std::string's inline buffer like most real etcd keys.
inline std::string Key(std::string_view prefix, int64_t i) {
  char digits[32];
  std::snprintf(digits, sizeof(digits), "%08lld", static_cast<long long>(i));
  return std::string(prefix) + digits;
}

// n bytes that do not compress to nothing.
inline std::string Value(size_t n, uint64_t seed = 1) {
  std::string v(n, '\0');
  for (size_t i = 0; i < n; ++i) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    v[i] = static_cast<char>('a' + (seed >> 59) % 26);
  }
  return v;
}

// A cheap deterministic sequence for picking keys (xorshift64*).
class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed ? seed : 1) {}
  uint64_t Next() {
    s_ ^= s_ >> 12;
    s_ ^= s_ << 25;
    s_ ^= s_ >> 27;
    return s_ * 2685821657736338717ULL;
  }
  uint64_t Uniform(uint64_t n) { return Next() % n; }

 private:
  uint64_t s_;
};

// An engine on its own temporary database with a manual clock. The engine
// is destroyed before the directory.
struct EngineEnv {
  TempDir dir;
  ManualClock clock;
  EngineOptions options;
  std::unique_ptr<Engine> engine;
  uint64_t log_index = 0;  // the Raft index handed to Apply

  explicit EngineEnv(bool sync) {
    options.db_path = dir.File("natcd.db");
    options.sync = sync;
    options.clock = &clock;
    options.seed = 42;
    Open();
  }
  ~EngineEnv() { engine.reset(); }

  void Open() {
    engine = CheckOk(Engine::Open(options), "Engine::Open");
    engine->PromoteLeases(0);
  }
  void Close() { engine.reset(); }

  WriteResponse Apply(const WriteRequest& request) {
    return CheckOk(engine->Apply(request, ++log_index), "Engine::Apply");
  }
  void Commit() { CheckOk(engine->Commit(), "Engine::Commit"); }
};

// Puts keys Key(prefix, first) .. Key(prefix, first + n - 1) with
// value_bytes-byte values, committing every batch puts.
inline void LoadKeys(EngineEnv* env, std::string_view prefix, int64_t first, int64_t n,
                     size_t value_bytes, int64_t batch) {
  const std::string value = Value(value_bytes);
  for (int64_t i = 0; i < n; ++i) {
    WriteRequest request = PutRequest{Key(prefix, first + i), value};
    env->Apply(request);
    if ((i + 1) % batch == 0 || i + 1 == n) env->Commit();
  }
}

// Heap bytes in use by malloc: small chunks plus mmap'd large ones.
inline int64_t HeapInUseBytes() {
  struct mallinfo2 mi = mallinfo2();
  return static_cast<int64_t>(mi.uordblks + mi.hblkhd);
}

// Accumulates wall time of a sub-step across iterations.
class StepTimer {
 public:
  using Clock = std::chrono::steady_clock;
  void Start() { start_ = Clock::now(); }
  void Stop() { total_ += Clock::now() - start_; }
  double seconds() const { return std::chrono::duration<double>(total_).count(); }

 private:
  Clock::time_point start_;
  Clock::duration total_{};
};

// ---- flags -------------------------------------------------------------------

struct Flag {
  const char* name;  // without the leading "--natcd_"
  int64_t* value;
  const char* help;
};

// Takes every --natcd_NAME=VALUE out of argv. Unknown --natcd_ flags are
// an error; --help prints natcd's flags before Google Benchmark's help.
inline void ParseFlags(int* argc, char** argv, const std::vector<Flag>& flags) {
  int out = 1;
  for (int i = 1; i < *argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::printf("natcd flags:\n");
      for (const Flag& f : flags) {
        std::printf("  --natcd_%s=N  %s (default %lld)\n", f.name, f.help,
                    static_cast<long long>(*f.value));
      }
      std::printf("\n");
    }
    if (arg.rfind("--natcd_", 0) != 0) {
      argv[out++] = argv[i];
      continue;
    }
    arg.remove_prefix(std::strlen("--natcd_"));
    size_t eq = arg.find('=');
    bool known = false;
    for (const Flag& f : flags) {
      if (eq != std::string_view::npos && arg.substr(0, eq) == f.name) {
        *f.value = std::strtoll(std::string(arg.substr(eq + 1)).c_str(), nullptr, 10);
        known = true;
      }
    }
    if (!known) {
      std::fprintf(stderr, "bench: unknown flag %s\n", argv[i]);
      std::exit(2);
    }
  }
  *argc = out;
  argv[out] = nullptr;
}

// The main() of every benchmark binary: natcd's flags, then registration
// (which may depend on them), then Google Benchmark.
inline int Main(int argc, char** argv, const std::vector<Flag>& flags,
                const std::function<void()>& register_benchmarks) {
  ParseFlags(&argc, argv, flags);
  register_benchmarks();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

}  // namespace natcd::bench
