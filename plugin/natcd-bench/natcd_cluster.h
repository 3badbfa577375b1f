// The natcd members of one run, on one nats-server. One member is started
// exactly as natcd-bench always started natcd (no cluster flags, data in
// <root>/<stem>), so single-member figures stay comparable with earlier
// reports. N > 1 members are named m1..mN and found the cluster together
// (--initial-cluster m1,..,mN, data in <root>/<stem>-mK); clients need not
// know: every member takes the service subjects in one NATS queue group.
// A member can be added later as a learner (AddLearner), as `natcdctl
// member add --learner` and a natcd with --initial-cluster-state existing
// do it.
//
// Thread safety: none; one thread starts and stops members.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "plugin/natcd-bench/cluster_admin.h"
#include "plugin/natcd-bench/deployment.h"
#include "plugin/natcd-bench/process.h"

namespace natcd::bench {

// The most members --members takes: etcd's advice for a cluster's size,
// and as many natcd processes as two cores can still run usefully.
inline constexpr int kMembersMax = 7;

class NatcdCluster {
 public:
  // deployment and admin are borrowed and must outlive the cluster.
  NatcdCluster(const Deployment& deployment, const ClusterAdmin& admin, std::string url,
               std::string stem)
      : deployment_(deployment), admin_(admin), url_(std::move(url)), stem_(std::move(stem)) {}
  ~NatcdCluster() { Stop(); }
  NatcdCluster(const NatcdCluster&) = delete;
  NatcdCluster& operator=(const NatcdCluster&) = delete;

  // Starts `members` (1..kMembersMax) members one after the other; for
  // more than one, waits up to leader_timeout_ms until a member names a
  // leader. False with *error (the members started are stopped).
  bool Start(int members, int64_t leader_timeout_ms, std::string* error);
  // Adds member `name` as a learner (P.cluster.member.add) and starts it
  // with an empty data folder; *id is its member ID. The learner still has
  // to catch up before it can be promoted.
  bool AddLearner(const std::string& name, uint64_t* id, std::string* error);
  // Stops every member (SIGTERM: natcd shuts down cleanly), the last
  // started first.
  void Stop();

  size_t size() const { return members_.size(); }
  const std::string& name(size_t i) const { return members_[i]->name; }
  const Process& process(size_t i) const { return members_[i]->process; }
  // Where member i keeps its data (natcd.db).
  std::string DataDir(size_t i) const;
  // The member that leads now: 0 for a member alone; for a cluster, asked
  // of natcd (status and member list). False with *error if none is known.
  bool LeaderIndex(size_t* index, std::string* error) const;
  // What a run of `members` members measured, for the report: "a single
  // member" or "3 members (m1..m3)".
  static std::string Describe(int members);

 private:
  struct Member {
    std::string name;  // "" for a member alone
    std::string dir;   // under the deployment's root
    Process process;
  };
  bool StartMember(const std::string& name, const NatcdMember& spec, std::string* error);

  const Deployment& deployment_;
  const ClusterAdmin& admin_;
  const std::string url_;
  const std::string stem_;
  std::vector<std::unique_ptr<Member>> members_;
};

}  // namespace natcd::bench
