#include "server/linearizable_reads.h"

namespace natcd::server {

void LinearizableReads::Ask(raft::Raft& raft, int64_t now_ms,
                            std::vector<std::unique_ptr<Request>>* no_leader,
                            std::vector<std::unique_ptr<Request>>* refused, Status* refusal) {
  if (to_ask_.empty()) return;
  std::string ctx = std::to_string(member_id_) + "/" + std::to_string(++seq_);
  Status s = raft.ReadIndex(ctx);
  if (!s.ok()) {
    auto* out = raft.lead() == raft::kNoNode ? no_leader : refused;
    for (auto& request : to_ask_) out->push_back(std::move(request));
    to_ask_.clear();
    *refusal = s;
    return;
  }
  asked_[ctx] = Asked{std::move(to_ask_), raft.lead(), now_ms};
  to_ask_.clear();
}

void LinearizableReads::OnReadStates(const std::vector<raft::ReadState>& states) {
  for (const raft::ReadState& rs : states) {
    auto it = asked_.find(rs.request_ctx);
    if (it == asked_.end()) continue;
    confirmed_.push_back(Confirmed{rs.index, std::move(it->second.requests)});
    asked_.erase(it);
  }
}

std::vector<std::unique_ptr<Request>> LinearizableReads::TakeServable(uint64_t applied_index) {
  std::vector<std::unique_ptr<Request>> out;
  for (auto it = confirmed_.begin(); it != confirmed_.end();) {
    if (it->index > applied_index) {
      ++it;
      continue;
    }
    for (auto& request : it->requests) out.push_back(std::move(request));
    it = confirmed_.erase(it);
  }
  return out;
}

std::vector<std::unique_ptr<Request>> LinearizableReads::Retry(NodeId lead, int64_t now_ms,
                                                               int64_t retry_ms,
                                                               int64_t request_timeout_ms) {
  std::vector<std::unique_ptr<Request>> timed_out;
  for (auto it = asked_.begin(); it != asked_.end();) {
    Asked& asked = it->second;
    if (asked.lead == lead && now_ms - asked.asked_ms < retry_ms) {
      ++it;
      continue;
    }
    for (auto& request : asked.requests) {
      if (now_ms - request->received_ms > request_timeout_ms) {
        timed_out.push_back(std::move(request));
      } else {
        to_ask_.push_back(std::move(request));
      }
    }
    it = asked_.erase(it);
  }
  return timed_out;
}

std::vector<std::unique_ptr<Request>> LinearizableReads::TakeAll() {
  std::vector<std::unique_ptr<Request>> out;
  for (auto& request : to_ask_) out.push_back(std::move(request));
  to_ask_.clear();
  for (auto& [ctx, asked] : asked_) {
    for (auto& request : asked.requests) out.push_back(std::move(request));
  }
  asked_.clear();
  for (auto& confirmed : confirmed_) {
    for (auto& request : confirmed.requests) out.push_back(std::move(request));
  }
  confirmed_.clear();
  return out;
}

}  // namespace natcd::server
