// The simulator's replicated state machine: a key-value map with put, get
// and compare-and-swap, commands deduplicated by operation id (a network
// that duplicates a forwarded proposal must not apply it twice — natcd's
// engine does the same with request ids).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "raft/sim/linearizability.h"

namespace natcd::raft::sim {

struct Command {
  uint64_t op_id = 0;
  OpKind kind = OpKind::kPut;
  std::string key;
  std::string value;
  std::string expected;
};

std::string EncodeCommand(const Command& c);
std::optional<Command> DecodeCommand(const std::string& data);

struct CommandResult {
  bool duplicate = false;  // already applied: no effect, no answer
  bool ok = false;         // kCas: swapped
  std::string value;       // kGet: the value ("" = absent)
};

class KvStateMachine {
 public:
  CommandResult Apply(const Command& c);
  std::string Get(const std::string& key) const;
  std::string Snapshot() const;
  bool Restore(const std::string& data);
  // Equal maps and applied sets: two members in the same state.
  bool operator==(const KvStateMachine&) const = default;

 private:
  std::map<std::string, std::string> kv_;
  std::set<uint64_t> applied_ops_;
};

}  // namespace natcd::raft::sim
