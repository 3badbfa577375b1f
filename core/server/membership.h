// Membership: who the members are (their names, recorded in the database
// with each applied change so they survive restarts and compaction), the
// configuration as of recent log indexes (a snapshot at index i carries the
// one in force at i), and the checks etcd makes before a membership change
// or a leadership transfer is proposed, with etcd's errors.
//
// Thread safety: none; the member thread owns it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "natcd/status.h"
#include "raft/raft.h"
#include "server/request.h"

namespace natcd::server {

class Membership {
 public:
  void SetName(NodeId id, std::string name) { names_[id] = std::move(name); }
  const std::map<NodeId, std::string>& names() const { return names_; }
  void SetClientUrls(NodeId id, std::vector<std::string> urls) {
    client_urls_[id] = std::move(urls);
  }
  // What the cluster recorded for `id` (empty: nothing).
  const std::vector<std::string>& client_urls(NodeId id) const;
  // Peer URLs (etcd's MemberUpdate); none recorded: the front end names
  // the member's peer endpoint itself (its Raft subject).
  void SetPeerUrls(NodeId id, std::vector<std::string> urls) { peer_urls_[id] = std::move(urls); }
  const std::vector<std::string>& peer_urls(NodeId id) const;
  // A removed member's client and peer URLs go (its name stays).
  void ForgetUrls(NodeId id) {
    client_urls_.erase(id);
    peer_urls_.erase(id);
  }
  // The members of `cs`, voters first, each with its name (its ID in hex
  // when none is known).
  std::vector<MemberInfo> Members(const raft::ConfState& cs) const;

  // The configuration from `index` on: ResetHistory when Raft starts over
  // (open, snapshot install), Record for each applied change.
  void ResetHistory(uint64_t index, raft::ConfState cs) { history_ = {{index, std::move(cs)}}; }
  void Record(uint64_t index, raft::ConfState cs);
  const std::map<uint64_t, raft::ConfState>& history() const { return history_; }
  const raft::ConfState& now() const { return history_.rbegin()->second; }
  // More than one member (voters and learners).
  bool is_cluster() const { return now().voters.size() + now().learners.size() > 1; }

  // The change a MemberAdd/Remove/Promote request asks for, checked against
  // the membership Raft has now (a learner is promoted only once in sync:
  // within 100 entries of the commit index, as etcd). *name: the name an
  // added member goes by.
  static Result<raft::ConfChange> Prepare(const RequestPayload& payload, const raft::Raft& raft,
                                          std::string* name);
  // A leadership transfer to `target`: only to a voter (etcd's answer for
  // an unknown member and for a learner alike).
  static Status CheckTransferee(NodeId target, const raft::ConfState& cs);
  // Whether member `id` of `cs` may take peer URLs `urls`, as etcd checks a
  // ConfChangeUpdateNode when it is applied: NotFound ErrMemberNotFound for
  // a member not in `cs`, ErrPeerURLExist (InvalidArgument, by name etcd's
  // FailedPrecondition) for a URL another member of `cs` has recorded.
  Status CheckPeerUrls(NodeId id, const std::vector<std::string>& urls,
                       const raft::ConfState& cs) const;
  // ErrPeerURLExist when a member of `cs` other than `id` has recorded one
  // of `urls` (etcd's check of a MemberAdd's URLs too).
  Status CheckPeerUrlsFree(NodeId id, const std::vector<std::string>& urls,
                           const raft::ConfState& cs) const;

 private:
  std::map<NodeId, std::string> names_;
  std::map<NodeId, std::vector<std::string>> client_urls_;
  std::map<NodeId, std::vector<std::string>> peer_urls_;
  std::map<uint64_t, raft::ConfState> history_;
};

}  // namespace natcd::server
