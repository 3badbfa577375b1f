#include "server/proposals.h"

namespace natcd::server {

void Proposals::Add(uint64_t seq, uint64_t term, std::unique_ptr<Request> request,
                    int64_t deadline_ms) {
  pending_.emplace(seq, Pending{std::move(request), term, deadline_ms});
}

std::unique_ptr<Request> Proposals::Take(uint64_t seq, uint64_t term) {
  auto it = pending_.find(seq);
  if (it == pending_.end() || it->second.term != term) return nullptr;
  std::unique_ptr<Request> request = std::move(it->second.request);
  pending_.erase(it);
  return request;
}

std::unique_ptr<Request> Proposals::TakeAnyTerm(uint64_t seq) {
  auto it = pending_.find(seq);
  if (it == pending_.end()) return nullptr;
  std::unique_ptr<Request> request = std::move(it->second.request);
  pending_.erase(it);
  return request;
}

std::vector<std::unique_ptr<Request>> Proposals::TakeExpired(int64_t now_ms) {
  std::vector<std::unique_ptr<Request>> out;
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (now_ms >= it->second.deadline_ms) {
      out.push_back(std::move(it->second.request));
      it = pending_.erase(it);
    } else {
      ++it;
    }
  }
  return out;
}

std::vector<std::unique_ptr<Request>> Proposals::TakeAll() {
  std::vector<std::unique_ptr<Request>> out;
  for (auto& [seq, pending] : pending_) out.push_back(std::move(pending.request));
  pending_.clear();
  return out;
}

}  // namespace natcd::server
