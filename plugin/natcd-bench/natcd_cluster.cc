#include "plugin/natcd-bench/natcd_cluster.h"

namespace natcd::bench {

bool NatcdCluster::StartMember(const std::string& name, const NatcdMember& spec,
                               std::string* error) {
  auto member = std::make_unique<Member>();
  member->name = name;
  member->dir = name.empty() ? stem_ : stem_ + "-" + name;
  if (!deployment_.StartNatcd(member->process, url_, member->dir, spec)) {
    // Deployment has printed why, with the end of its log.
    *error = "natcd" + (name.empty() ? "" : " " + name) + " did not start";
    return false;
  }
  members_.push_back(std::move(member));
  return true;
}

bool NatcdCluster::Start(int members, int64_t leader_timeout_ms, std::string* error) {
  if (members < 1 || members > kMembersMax) {
    *error = "members must be 1.." + std::to_string(kMembersMax);
    return false;
  }
  // The members serve the subjects the workloads and admin requests use.
  const std::string& prefix = admin_.prefix();
  if (members == 1) {
    return StartMember("",
                       {.name = "",
                        .initial_cluster = "",
                        .join_existing = false,
                        .prefix = prefix,
                        .client_url = ""},
                       error);
  }
  std::string all;
  for (int k = 1; k <= members; ++k) all += (k > 1 ? "," : "") + ("m" + std::to_string(k));
  for (int k = 1; k <= members; ++k) {
    const std::string name = "m" + std::to_string(k);
    if (!StartMember(name,
                     {.name = name,
                      .initial_cluster = all,
                      .join_existing = false,
                      .prefix = prefix,
                      .client_url = ""},
                     error)) {
      Stop();
      return false;
    }
  }
  uint64_t leader = 0;
  if (!admin_.WaitForLeader(leader_timeout_ms, &leader, error)) {
    Stop();
    return false;
  }
  return true;
}

bool NatcdCluster::AddLearner(const std::string& name, uint64_t* id, std::string* error) {
  if (!admin_.AddMember(name, /*learner=*/true, id, error)) return false;
  return StartMember(name,
                     {.name = name,
                      .initial_cluster = "",
                      .join_existing = true,
                      .prefix = admin_.prefix(),
                      .client_url = ""},
                     error);
}

void NatcdCluster::Stop() {
  for (auto it = members_.rbegin(); it != members_.rend(); ++it) (*it)->process.Stop();
  members_.clear();
}

std::string NatcdCluster::DataDir(size_t i) const {
  return deployment_.root() + "/" + members_[i]->dir;
}

bool NatcdCluster::LeaderIndex(size_t* index, std::string* error) const {
  if (members_.size() == 1 && members_[0]->name.empty()) {
    *index = 0;
    return true;
  }
  std::string leader;
  if (!admin_.LeaderName(&leader, error)) return false;
  for (size_t i = 0; i < members_.size(); ++i) {
    if (members_[i]->name == leader) {
      *index = i;
      return true;
    }
  }
  *error = "the leader (" + leader + ") is no member natcd-bench started";
  return false;
}

std::string NatcdCluster::Describe(int members) {
  if (members == 1) return "a single member";
  return std::to_string(members) + " members (m1..m" + std::to_string(members) + ")";
}

}  // namespace natcd::bench
