// ReadOnly: a leader's linearizable reads in flight (Raft thesis §6.4,
// etcd's ReadOnlySafe). Each read records the commit index at its arrival;
// it may be served once a quorum of voters has acknowledged a heartbeat
// sent after it, proving the leader was still the leader.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "raft/types.h"

namespace natcd::raft {

class ReadOnly {
 public:
  struct Status {
    Message req;
    uint64_t index = 0;
    std::set<NodeId> acks;
  };

  void AddRequest(uint64_t index, const Message& m);
  // Records id's acknowledgement of ctx; returns the acks so far (nullptr
  // when ctx is unknown).
  const std::set<NodeId>* RecvAck(NodeId id, const std::string& ctx);
  // Every read up to and including ctx, in arrival order; they leave the
  // queue (a heartbeat acknowledged for ctx confirms the earlier ones too).
  std::vector<Status> Advance(const std::string& ctx);
  std::string LastPendingRequestCtx() const;
  void Reset() {
    pending_.clear();
    queue_.clear();
  }

 private:
  std::map<std::string, Status> pending_;
  std::vector<std::string> queue_;
};

}  // namespace natcd::raft
