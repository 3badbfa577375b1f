// LinearizableReads: reads served once this member has applied everything
// the leader had committed when they arrived (Raft's ReadIndex, Raft thesis
// 6.4). Each turn's reads share one read-index request; a request whose
// leader changed, or that got no answer within the retry interval (the
// request or its answer was lost), is asked again, until the read's own
// deadline.
//
// Thread safety: none; the member thread owns it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "raft/raft.h"
#include "server/request.h"

namespace natcd::server {

class LinearizableReads {
 public:
  explicit LinearizableReads(NodeId member_id) : member_id_(member_id) {}

  // A read that arrived this turn.
  void Add(std::unique_ptr<Request> request) { to_ask_.push_back(std::move(request)); }
  // Asks Raft one read index for this turn's reads. When Raft refuses,
  // they come back: in *no_leader when no leader is known (they wait for
  // one), else in *refused with Raft's status.
  void Ask(raft::Raft& raft, int64_t now_ms, std::vector<std::unique_ptr<Request>>* no_leader,
           std::vector<std::unique_ptr<Request>>* refused, Status* refusal);
  // The read indexes Raft answered (a Ready's read_states).
  void OnReadStates(const std::vector<raft::ReadState>& states);
  // Reads whose read index is applied: serve them now.
  std::vector<std::unique_ptr<Request>> TakeServable(uint64_t applied_index);
  // Asks again what the leader change or the silence made stale (next
  // Ask); returns the reads past their deadline instead.
  std::vector<std::unique_ptr<Request>> Retry(NodeId lead, int64_t now_ms, int64_t retry_ms,
                                              int64_t request_timeout_ms);
  std::vector<std::unique_ptr<Request>> TakeAll();

 private:
  struct Asked {
    std::vector<std::unique_ptr<Request>> requests;
    NodeId lead = 0;
    int64_t asked_ms = 0;
  };
  struct Confirmed {
    uint64_t index = 0;
    std::vector<std::unique_ptr<Request>> requests;
  };
  const NodeId member_id_;
  uint64_t seq_ = 0;
  std::vector<std::unique_ptr<Request>> to_ask_;  // this turn's
  std::map<std::string, Asked> asked_;            // by read-index context
  std::vector<Confirmed> confirmed_;
};

}  // namespace natcd::server
