// A linearizability checker for the key-value histories the Raft simulator
// records: Wing & Gong's search with Lowe's memoization of (linearized set,
// state), as Porcupine does, over each key on its own (a history is
// linearizable iff each key's sub-history is: P-compositionality).
//
// An operation that never returned (its client gave up) may take effect at
// any point after its call, or never: its return time is infinite.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace natcd::raft::sim {

enum class OpKind : uint8_t { kPut, kGet, kCas };

struct KvOp {
  OpKind kind = OpKind::kGet;
  std::string key;
  std::string value;     // kPut: the value; kCas: the new value
  std::string expected;  // kCas: the value it must find ("" = absent)
  // Times on one clock; call < return. kNever: the client never heard back.
  int64_t call = 0;
  int64_t ret = kNever;
  // The outcome, when ret != kNever: kGet's value ("" = absent), kCas's ok.
  std::string output;
  bool ok = false;

  static constexpr int64_t kNever = std::numeric_limits<int64_t>::max();
};

struct CheckResult {
  bool linearizable = true;
  // When not: the key whose history has no linearization.
  std::string key;
  // Stopped after the step budget: linearizable is then unknown (false).
  bool gave_up = false;
};

// max_steps bounds the search per key (0 = unbounded).
CheckResult CheckLinearizable(const std::vector<KvOp>& history, uint64_t max_steps = 0);

}  // namespace natcd::raft::sim
