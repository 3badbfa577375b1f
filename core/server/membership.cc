#include "server/membership.h"

#include <algorithm>
#include <cstdio>

#include "server/member_identity.h"

namespace natcd::server {
namespace {

// Configurations remembered: a snapshot copied before more changes than
// this cannot be shipped (it is copied again).
constexpr size_t kHistoryMax = 16;

bool IsIn(const std::vector<NodeId>& ids, NodeId id) {
  return std::count(ids.begin(), ids.end(), id) > 0;
}

}  // namespace

std::vector<MemberInfo> Membership::Members(const raft::ConfState& cs) const {
  std::vector<MemberInfo> out;
  auto add = [&](NodeId id, bool learner) {
    auto it = names_.find(id);
    std::string name;
    if (it != names_.end()) {
      name = it->second;
    } else {
      char hex[17];
      snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(id));
      name = hex;
    }
    out.push_back(MemberInfo{id, std::move(name), learner, client_urls(id), peer_urls(id)});
  };
  for (NodeId id : cs.voters) add(id, false);
  for (NodeId id : cs.learners) add(id, true);
  return out;
}

const std::vector<std::string>& Membership::client_urls(NodeId id) const {
  static const std::vector<std::string> kNone;
  auto it = client_urls_.find(id);
  return it != client_urls_.end() ? it->second : kNone;
}

const std::vector<std::string>& Membership::peer_urls(NodeId id) const {
  static const std::vector<std::string> kNone;
  auto it = peer_urls_.find(id);
  return it != peer_urls_.end() ? it->second : kNone;
}

Status Membership::CheckPeerUrls(NodeId id, const std::vector<std::string>& urls,
                                 const raft::ConfState& cs) const {
  if (!IsIn(cs.voters, id) && !IsIn(cs.learners, id)) {
    return Status::NotFound("ErrMemberNotFound", "etcdserver: member not found");
  }
  return CheckPeerUrlsFree(id, urls, cs);
}

Status Membership::CheckPeerUrlsFree(NodeId id, const std::vector<std::string>& urls,
                                     const raft::ConfState& cs) const {
  for (const auto& [other, taken] : peer_urls_) {
    if (other == id || (!IsIn(cs.voters, other) && !IsIn(cs.learners, other))) continue;
    for (const std::string& url : urls) {
      if (std::count(taken.begin(), taken.end(), url) > 0) {
        return Status::InvalidArgument("ErrPeerURLExist", "etcdserver: Peer URLs already exists");
      }
    }
  }
  return Status::OK();
}

void Membership::Record(uint64_t index, raft::ConfState cs) {
  history_[index] = std::move(cs);
  while (history_.size() > kHistoryMax) history_.erase(history_.begin());
}

Result<raft::ConfChange> Membership::Prepare(const RequestPayload& payload, const raft::Raft& raft,
                                             std::string* name) {
  const raft::ConfState cs = raft.conf_state();
  raft::ConfChange cc;
  if (auto* add = std::get_if<MemberAddRequest>(&payload)) {
    *name = add->name;
    if (name->empty()) return Status::InvalidArgument("ErrInvalidArgument", "member name required");
    cc.node_id = MemberIdOf(*name);
    if (IsIn(cs.voters, cc.node_id) || IsIn(cs.learners, cc.node_id)) {
      return Status::InvalidArgument("ErrMemberExist", "etcdserver: member ID already exist");
    }
    cc.type =
        add->is_learner ? raft::ConfChangeType::kAddLearnerNode : raft::ConfChangeType::kAddNode;
    return cc;
  }
  if (auto* remove = std::get_if<MemberRemoveRequest>(&payload)) {
    cc.node_id = remove->id;
    if (!IsIn(cs.voters, cc.node_id) && !IsIn(cs.learners, cc.node_id)) {
      return Status::NotFound("ErrMemberNotFound", "etcdserver: member not found");
    }
    cc.type = raft::ConfChangeType::kRemoveNode;
    return cc;
  }
  cc.node_id = std::get<MemberPromoteRequest>(payload).id;
  if (!IsIn(cs.learners, cc.node_id)) {
    return Status::InvalidArgument("ErrMemberNotLearner",
                                   "etcdserver: can only promote a learner member");
  }
  // etcd's rule: only a learner that has caught up may vote. (A learner that
  // never answered has match 0: not in sync, even while the log is shorter
  // than 100 entries.)
  const raft::Progress* pr = raft.progress(cc.node_id);
  if (pr == nullptr || pr->match == 0 || pr->match + 100 < raft.committed()) {
    return Status::InvalidArgument(
        "ErrLearnerNotReady",
        "etcdserver: can only promote a learner member which is in sync with leader");
  }
  cc.type = raft::ConfChangeType::kAddNode;
  return cc;
}

Status Membership::CheckTransferee(NodeId target, const raft::ConfState& cs) {
  if (!IsIn(cs.voters, target)) {
    return Status::InvalidArgument("ErrBadLeaderTransferee", "etcdserver: bad leader transferee");
  }
  return Status::OK();
}

}  // namespace natcd::server
