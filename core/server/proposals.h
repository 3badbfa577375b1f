// Proposals: the requests this member proposed, by proposal number, until
// their log entry is applied here (the member answers them then) or their
// deadline passes (ErrTimeout: the entry may still be applied later, which
// is why clients retry with the same request id).
//
// A proposal is answered only by an entry of the term it was proposed in:
// numbers start again at 1 when the member restarts, and entries of its
// earlier life (same member, same numbers, an earlier term: a member leads
// again only in a later term) must not answer the new requests.
//
// Thread safety: none; the member thread owns it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "server/request.h"

namespace natcd::server {

class Proposals {
 public:
  // The number for the next proposal (persisted in the log entry as its
  // origin_seq, with this member's ID as origin_member).
  uint64_t Next() { return ++last_seq_; }
  void Add(uint64_t seq, uint64_t term, std::unique_ptr<Request> request, int64_t deadline_ms);
  // The request proposed as seq in `term`, or null (answered, timed out, or
  // an entry proposed before a restart).
  std::unique_ptr<Request> Take(uint64_t seq, uint64_t term);
  // The request proposed as seq, whatever its term (a batch Raft refused).
  std::unique_ptr<Request> TakeAnyTerm(uint64_t seq);
  // Those whose deadline is not after now_ms.
  std::vector<std::unique_ptr<Request>> TakeExpired(int64_t now_ms);
  std::vector<std::unique_ptr<Request>> TakeAll();
  size_t size() const { return pending_.size(); }

 private:
  struct Pending {
    std::unique_ptr<Request> request;
    uint64_t term = 0;
    int64_t deadline_ms = 0;
  };
  uint64_t last_seq_ = 0;
  std::map<uint64_t, Pending> pending_;
};

}  // namespace natcd::server
