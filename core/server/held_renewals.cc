#include "server/held_renewals.h"

namespace natcd::server {

std::vector<HeldRenewals::Held> HeldRenewals::TakeIf(const std::function<bool(const Held&)>& take) {
  std::vector<Held> taken;
  std::vector<Held> kept;
  for (Held& h : held_) (take(h) ? taken : kept).push_back(std::move(h));
  held_ = std::move(kept);
  return taken;
}

std::vector<std::unique_ptr<Request>> HeldRenewals::TakeAll() {
  std::vector<std::unique_ptr<Request>> all;
  all.reserve(held_.size());
  for (Held& h : held_) all.push_back(std::move(h.request));
  held_.clear();
  return all;
}

}  // namespace natcd::server
