// The log commands a leader proposed, kept by log position until applied,
// so that applying them does not decode what the leader itself encoded
// (decoding its own commands again was about a twentieth of a leader's CPU).
//
// A kept command is used only for the entry at the same index with the same
// term: by Raft's log matching property that is the very entry proposed.
// Any other entry (one this member did not propose, or one that replaced a
// proposal after a change of leader) is decoded from the log as before.
//
// Thread safety: none; the engine thread owns it.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "server/log_command.h"

namespace natcd::server {

class ProposedCommands {
 public:
  // `commands` were appended to the log at first_index, first_index + 1,
  // ..., in `term`. A batch that does not follow the last one kept (a new
  // term, or entries proposed in between without being kept) replaces
  // everything kept.
  void Add(uint64_t first_index, uint64_t term, std::vector<LogCommand> commands);

  // The command proposed at `index` in `term`, if kept; forgets it and every
  // command before it (entries are applied in order).
  std::optional<LogCommand> Take(uint64_t index, uint64_t term);

  void Clear();
  size_t size() const { return kept_.size(); }

 private:
  struct Kept {
    uint64_t term;
    LogCommand command;
  };
  uint64_t first_index_ = 0;  // the index of kept_.front()
  std::deque<Kept> kept_;
};

}  // namespace natcd::server
