#include "server/request_permissions.h"

#include "auth/auth_errors.h"

namespace natcd::server {
namespace {

class Checker {
 public:
  Checker(Engine& engine, const std::string& user)
      : engine_(engine), store_(engine.auth()), user_(user) {}

  bool Read(const std::string& key, const std::string& range_end) const {
    return store_.Permitted(user_, PermissionType::kRead, key, range_end);
  }
  bool Write(const std::string& key, const std::string& range_end) const {
    return store_.Permitted(user_, PermissionType::kWrite, key, range_end);
  }
  // Every key attached to the lease (none for lease 0 or a lease gone).
  bool WriteLeaseKeys(int64_t lease) const {
    if (lease == 0) return true;
    LeaseTimeToLiveResponse attached = engine_.LeaseTimeToLive(LeaseTimeToLiveRequest{lease, true});
    for (const std::string& key : attached.keys) {
      if (!Write(key, "")) return false;
    }
    return true;
  }
  bool Allowed(const RangeRequest& r) const { return Read(r.key, r.range_end); }
  bool Allowed(const PutRequest& r) const {
    return Write(r.key, "") && (!r.prev_kv || Read(r.key, "")) && WriteLeaseKeys(r.lease);
  }
  bool Allowed(const DeleteRangeRequest& r) const {
    return Write(r.key, r.range_end) && (!r.prev_kv || Read(r.key, r.range_end));
  }
  bool Allowed(const TxnRequest& t) const {
    for (const Compare& c : t.compare) {
      if (!Read(c.key, c.range_end)) return false;
    }
    for (const auto* branch : {&t.success, &t.failure}) {
      for (const RequestOp& op : *branch) {
        const bool ok = std::visit(
            [this](const auto& r) {
              using T = std::decay_t<decltype(r)>;
              if constexpr (std::is_same_v<T, std::shared_ptr<TxnRequest>>) {
                return r == nullptr || Allowed(*r);
              } else {
                return Allowed(r);
              }
            },
            op.op);
        if (!ok) return false;
      }
    }
    return true;
  }
  bool Admin() const { return store_.IsAdmin(user_); }

 private:
  Engine& engine_;
  const AuthStore& store_;
  const std::string& user_;
};

}  // namespace

bool RequiresUser(const RequestPayload& p) {
  return std::holds_alternative<RangeRequest>(p) || std::holds_alternative<PutRequest>(p) ||
         std::holds_alternative<DeleteRangeRequest>(p) || std::holds_alternative<TxnRequest>(p) ||
         std::holds_alternative<LeaseRevokeRequest>(p) ||
         std::holds_alternative<MemberAddRequest>(p) ||
         std::holds_alternative<MemberRemoveRequest>(p) ||
         std::holds_alternative<MemberPromoteRequest>(p) ||
         std::holds_alternative<MemberUpdateRequest>(p) ||
         std::holds_alternative<MoveLeaderRequest>(p) || std::holds_alternative<HashKVRequest>(p) ||
         std::holds_alternative<HashRequest>(p) || std::holds_alternative<DefragmentRequest>(p);
}

Status CheckRequestPermissions(Engine& engine, const std::string& user,
                               const RequestPayload& payload) {
  const Checker check(engine, user);
  const bool allowed = std::visit(
      [&](const auto& r) {
        using T = std::decay_t<decltype(r)>;
        if constexpr (std::is_same_v<T, RangeRequest> || std::is_same_v<T, PutRequest> ||
                      std::is_same_v<T, DeleteRangeRequest> || std::is_same_v<T, TxnRequest>) {
          return check.Allowed(r);
        } else if constexpr (std::is_same_v<T, LeaseRevokeRequest>) {
          return check.WriteLeaseKeys(r.id);
        } else if constexpr (std::is_same_v<T, MemberAddRequest> ||
                             std::is_same_v<T, MemberRemoveRequest> ||
                             std::is_same_v<T, MemberPromoteRequest> ||
                             std::is_same_v<T, MemberUpdateRequest> ||
                             std::is_same_v<T, MoveLeaderRequest> ||
                             std::is_same_v<T, HashKVRequest> || std::is_same_v<T, HashRequest> ||
                             std::is_same_v<T, DefragmentRequest>) {
          return check.Admin();
        } else {
          // LeaseGrant, keepalives, TimeToLive, Leases, Compaction, Status,
          // MemberList: any user (auth requests are checked apart).
          return true;
        }
      },
      payload);
  return allowed ? Status::OK() : auth::ErrPermissionDenied();
}

}  // namespace natcd::server
