#include "plugin/natcd-bench/cluster_admin.h"

#include <chrono>
#include <thread>

#include "adapters/nats/natcd.pb-c.h"
#include "plugin/natcd-bench/clock.h"
#include "plugin/natcd-bench/proto_pack.h"

namespace natcd::bench {
namespace {

const uint8_t* Bytes(const std::string& s) { return reinterpret_cast<const uint8_t*>(s.data()); }

}  // namespace

bool ClusterAdmin::Ask(const std::string& suffix, const std::string& body, std::string* reply,
                       std::string* error) const {
  const std::string subject = prefix_ + "." + suffix;
  natsMsg* msg = nullptr;
  const natsStatus s = natsConnection_Request(&msg, nc_, subject.c_str(), body.data(),
                                              static_cast<int>(body.size()), request_timeout_ms_);
  if (s != NATS_OK) {
    *error = subject + ": " + natsStatus_GetText(s);
    return false;
  }
  const char* text = nullptr;
  if (natsMsgHeader_Get(msg, "Nats-Service-Error", &text) == NATS_OK) {
    *error = subject + ": " + (text != nullptr ? text : "error");
    natsMsg_Destroy(msg);
    return false;
  }
  reply->assign(natsMsg_GetData(msg), natsMsg_GetDataLength(msg));
  natsMsg_Destroy(msg);
  return true;
}

bool ClusterAdmin::Status(MemberStatus* out, std::string* error) const {
  Natcd__V1__StatusRequest req = NATCD__V1__STATUS_REQUEST__INIT;
  std::string reply;
  if (!Ask("maint.status", Pack(&req.base), &reply, error)) return false;
  Natcd__V1__StatusResponse* r =
      natcd__v1__status_response__unpack(nullptr, reply.size(), Bytes(reply));
  if (r == nullptr) {
    *error = "maint.status: bad reply";
    return false;
  }
  out->member_id = r->header != nullptr ? r->header->member_id : 0;
  out->leader = r->leader;
  out->db_bytes = r->dbsize;
  out->learner = r->islearner != 0;
  natcd__v1__status_response__free_unpacked(r, nullptr);
  return true;
}

bool ClusterAdmin::ListMembers(std::vector<MemberInfo>* out, std::string* error) const {
  Natcd__V1__MemberListRequest req = NATCD__V1__MEMBER_LIST_REQUEST__INIT;
  std::string reply;
  if (!Ask("cluster.member.list", Pack(&req.base), &reply, error)) return false;
  Natcd__V1__MemberListResponse* r =
      natcd__v1__member_list_response__unpack(nullptr, reply.size(), Bytes(reply));
  if (r == nullptr) {
    *error = "cluster.member.list: bad reply";
    return false;
  }
  out->clear();
  for (size_t i = 0; i < r->n_members; ++i) {
    const Natcd__V1__Member* m = r->members[i];
    out->push_back(
        {.id = m->id, .name = m->name != nullptr ? m->name : "", .learner = m->islearner != 0});
  }
  natcd__v1__member_list_response__free_unpacked(r, nullptr);
  return true;
}

bool ClusterAdmin::AddMember(const std::string& name, bool learner, uint64_t* id,
                             std::string* error) const {
  Natcd__V1__MemberAddRequest req = NATCD__V1__MEMBER_ADD_REQUEST__INIT;
  req.name = const_cast<char*>(name.c_str());
  req.islearner = learner;
  std::string reply;
  if (!Ask("cluster.member.add", Pack(&req.base), &reply, error)) return false;
  Natcd__V1__MemberAddResponse* r =
      natcd__v1__member_add_response__unpack(nullptr, reply.size(), Bytes(reply));
  if (r == nullptr || r->member == nullptr) {
    if (r != nullptr) natcd__v1__member_add_response__free_unpacked(r, nullptr);
    *error = "cluster.member.add: bad reply";
    return false;
  }
  *id = r->member->id;
  natcd__v1__member_add_response__free_unpacked(r, nullptr);
  return true;
}

bool ClusterAdmin::PromoteMember(uint64_t id, std::string* error) const {
  Natcd__V1__MemberPromoteRequest req = NATCD__V1__MEMBER_PROMOTE_REQUEST__INIT;
  req.id = id;
  std::string reply;
  return Ask("cluster.member.promote", Pack(&req.base), &reply, error);
}

bool ClusterAdmin::WaitForLeader(int64_t timeout_ms, uint64_t* leader, std::string* error) const {
  const int64_t give_up = NowNs() + timeout_ms * 1'000'000;
  std::string last = "no member answered";
  while (true) {
    MemberStatus status;
    std::string e;
    if (Status(&status, &e)) {
      if (status.leader != 0) {
        *leader = status.leader;
        return true;
      }
      last = "no leader known yet";
    } else {
      last = e;
    }
    if (NowNs() > give_up) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  *error = "no leader after " + std::to_string(timeout_ms) + " ms: " + last;
  return false;
}

bool ClusterAdmin::LeaderName(std::string* name, std::string* error) const {
  MemberStatus status;
  std::vector<MemberInfo> members;
  if (!Status(&status, error) || !ListMembers(&members, error)) return false;
  for (const MemberInfo& m : members) {
    if (m.id == status.leader && status.leader != 0) {
      *name = m.name;
      return true;
    }
  }
  *error = "the leader is not in the member list (no leader known?)";
  return false;
}

}  // namespace natcd::bench
