#include "raft/read_only.h"

#include <algorithm>

namespace natcd::raft {

void ReadOnly::AddRequest(uint64_t index, const Message& m) {
  if (pending_.count(m.context) > 0) return;
  pending_[m.context] = Status{m, index, {}};
  queue_.push_back(m.context);
}

const std::set<NodeId>* ReadOnly::RecvAck(NodeId id, const std::string& ctx) {
  auto it = pending_.find(ctx);
  if (it == pending_.end()) return nullptr;
  it->second.acks.insert(id);
  return &it->second.acks;
}

std::vector<ReadOnly::Status> ReadOnly::Advance(const std::string& ctx) {
  auto pos = std::find(queue_.begin(), queue_.end(), ctx);
  if (pos == queue_.end()) return {};
  std::vector<Status> out;
  for (auto it = queue_.begin(); it != pos + 1; ++it) {
    auto node = pending_.extract(*it);
    out.push_back(std::move(node.mapped()));
  }
  queue_.erase(queue_.begin(), pos + 1);
  return out;
}

std::string ReadOnly::LastPendingRequestCtx() const {
  return queue_.empty() ? std::string() : queue_.back();
}

}  // namespace natcd::raft
