#include "server/proposed_commands.h"

#include <utility>

namespace natcd::server {

void ProposedCommands::Add(uint64_t first_index, uint64_t term, std::vector<LogCommand> commands) {
  if (commands.empty()) return;
  if (kept_.empty() || first_index != first_index_ + kept_.size()) {
    kept_.clear();
    first_index_ = first_index;
  }
  for (LogCommand& command : commands) kept_.push_back(Kept{term, std::move(command)});
}

std::optional<LogCommand> ProposedCommands::Take(uint64_t index, uint64_t term) {
  while (!kept_.empty() && first_index_ < index) {
    kept_.pop_front();
    ++first_index_;
  }
  if (kept_.empty() || first_index_ != index) return std::nullopt;
  Kept front = std::move(kept_.front());
  kept_.pop_front();
  ++first_index_;
  if (front.term != term) return std::nullopt;
  return std::move(front.command);
}

void ProposedCommands::Clear() { kept_.clear(); }

}  // namespace natcd::server
