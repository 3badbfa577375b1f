// Membership changes and leadership moves (simulation_impl.h).
#include "raft/sim/simulation_impl.h"

namespace natcd::raft::sim {

// ---------------------------------------------------------------------------
// Membership and leadership

void Simulation::Believe(const std::vector<server::MemberInfo>& members) {
  believed_.clear();
  for (const server::MemberInfo& m : members) believed_[m.id] = m.is_learner;
}

void Simulation::RunAdmin() {
  if (admin_.busy && now_ >= admin_.deadline) admin_.busy = false;
  if (admin_.busy) return;
  server::RequestPayload payload;
  std::string what;
  NodeId target = 0;
  if (Chance(transfer_p_)) {
    std::vector<NodeId> voters;
    for (const auto& [id, learner] : believed_) {
      if (!learner) voters.push_back(id);
    }
    if (voters.empty()) return;
    target = voters[Rand(0, voters.size() - 1)];
    payload = server::MoveLeaderRequest{target};
    what = "move leader";
  } else if (Chance(conf_p_)) {
    int voters = 0;
    NodeId learner = 0;
    for (const auto& [id, is_learner] : believed_) {
      if (is_learner) {
        learner = id;
      } else {
        voters++;
      }
    }
    if (learner != 0) {
      target = learner;
      payload = server::MemberPromoteRequest{learner};
      what = "promote";
    } else if (voters < max_voters_ && Chance(0.6)) {
      std::vector<std::string> cluster;
      for (const auto& [id, m] : members_) {
        if (believed_.count(id)) cluster.push_back(m->name);
      }
      const std::string name = "natcd-" + std::to_string(next_name_++);
      cluster.push_back(name);
      // It starts empty, waiting to be added; the leader catches it up.
      SimMember& joiner = NewMember(name, /*founder=*/false, cluster);
      Start(joiner);
      target = joiner.id;
      payload = server::MemberAddRequest{name, true};
      what = "add learner";
    } else if (voters >= 4 || (learner == 0 && Chance(0.1) && voters >= 3)) {
      std::vector<NodeId> ids;
      for (const auto& [id, is_learner] : believed_) ids.push_back(id);
      target = ids[Rand(0, ids.size() - 1)];
      if (voters < 4 && !believed_[target]) return;  // keep three voters at least
      payload = server::MemberRemoveRequest{target};
      what = "remove";
    } else {
      return;
    }
  } else {
    return;
  }
  SimMember* to = RandomMember();
  admin_.busy = true;
  admin_.serial = ++next_serial_;
  admin_.deadline = now_ + kClientTimeoutMs;
  const uint64_t serial = admin_.serial;
  auto it = members_.find(target);
  Trace("admin: %s %s via %s", what.c_str(), it != members_.end() ? it->second->name.c_str() : "?",
        to->name.c_str());
  Call(to->id, std::move(payload), "", [this, serial, what, target](Result<Response> answer) {
    if (!finished_) OnAdminAnswer(serial, what, target, std::move(answer));
  });
}

void Simulation::OnAdminAnswer(uint64_t serial, const std::string& what, NodeId target,
                               Result<Response> answer) {
  if (serial == admin_.serial) admin_.busy = false;
  if (!answer.ok()) {
    Trace("admin: %s failed: %s", what.c_str(), answer.status().ToString().c_str());
    return;
  }
  Trace("admin: %s done", what.c_str());
  if (auto* added = std::get_if<server::MemberAddResponse>(&answer.value())) {
    Believe(added->members);
    result_.stats.conf_changes++;
  } else if (auto* changed = std::get_if<server::MembershipResponse>(&answer.value())) {
    Believe(changed->members);
    result_.stats.conf_changes++;
    if (what == "remove") removals_.push_back(target);
  } else if (std::holds_alternative<server::MoveLeaderResponse>(answer.value())) {
    result_.stats.transfers++;
  }
}

}  // namespace natcd::raft::sim
