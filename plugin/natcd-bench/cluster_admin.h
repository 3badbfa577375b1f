// natcd's maintenance and membership requests, as natcdctl's `endpoint
// status` and `member list|add|promote` send them: one synchronous NATS
// request each, on a borrowed connection, to P.maint.status and
// P.cluster.member.*. Any member answers (a follower hands membership
// calls to the leader). Failures are values: false, with what went wrong
// (natcd's error text when it answered with one) in *error.
//
// Thread safety: any thread; nats.c serializes the requests.
#pragma once

#include <nats/nats.h>

#include <cstdint>
#include <string>
#include <vector>

namespace natcd::bench {

// What one member says of itself and the cluster (StatusResponse).
struct MemberStatus {
  uint64_t member_id = 0;  // the member that answered
  uint64_t leader = 0;     // 0: it knows no leader
  int64_t db_bytes = 0;    // its database file
  bool learner = false;
};

struct MemberInfo {
  uint64_t id = 0;
  std::string name;
  bool learner = false;
};

class ClusterAdmin {
 public:
  // nc is borrowed and must outlive this; prefix: natcd's subject prefix.
  ClusterAdmin(natsConnection* nc, std::string prefix, int64_t request_timeout_ms = 5'000)
      : nc_(nc), prefix_(std::move(prefix)), request_timeout_ms_(request_timeout_ms) {}
  const std::string& prefix() const { return prefix_; }

  bool Status(MemberStatus* out, std::string* error) const;
  bool ListMembers(std::vector<MemberInfo>* out, std::string* error) const;
  // Adds member `name` (a learner if `learner`); *id is the ID it gets.
  bool AddMember(const std::string& name, bool learner, uint64_t* id, std::string* error) const;
  // Fails (ErrLearnerNotReady) while the learner is behind the leader.
  bool PromoteMember(uint64_t id, std::string* error) const;
  // Asks P.maint.status every 100 ms until a member names a leader, for up
  // to timeout_ms; *leader is its ID.
  bool WaitForLeader(int64_t timeout_ms, uint64_t* leader, std::string* error) const;
  // The leader's name, from a member's status and the member list.
  bool LeaderName(std::string* name, std::string* error) const;

 private:
  // The reply's body, or false with *error (no reply, or natcd's error).
  bool Ask(const std::string& suffix, const std::string& body, std::string* reply,
           std::string* error) const;

  natsConnection* const nc_;
  const std::string prefix_;
  const int64_t request_timeout_ms_;
};

}  // namespace natcd::bench
