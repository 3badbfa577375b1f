#include "adapters/grpc/etcd_methods.h"

#include "adapters/grpc/etcd_concurrency.pb-c.h"
#include "adapters/grpc/etcd_rpc.pb-c.h"
#include "adapters/nats/natcd.pb-c.h"

namespace natcd::etcd_api {
namespace {

constexpr Shape U = Shape::kUnary;
constexpr Shape S = Shape::kServerStream;
constexpr Shape B = Shape::kBidiStream;

const MethodInfo kMethods[] = {
    {"/etcdserverpb.KV/Range", Method::kRange, U, &natcd__v1__range_request__descriptor},
    {"/etcdserverpb.KV/Put", Method::kPut, U, &natcd__v1__put_request__descriptor},
    {"/etcdserverpb.KV/DeleteRange", Method::kDeleteRange, U,
     &natcd__v1__delete_range_request__descriptor},
    {"/etcdserverpb.KV/Txn", Method::kTxn, U, &natcd__v1__txn_request__descriptor},
    {"/etcdserverpb.KV/Compact", Method::kCompact, U, &natcd__v1__compaction_request__descriptor},
    {"/etcdserverpb.Watch/Watch", Method::kWatch, B, &natcd__grpc__watch_request__descriptor},
    {"/etcdserverpb.Lease/LeaseGrant", Method::kLeaseGrant, U,
     &natcd__v1__lease_grant_request__descriptor},
    {"/etcdserverpb.Lease/LeaseRevoke", Method::kLeaseRevoke, U,
     &natcd__v1__lease_revoke_request__descriptor},
    {"/etcdserverpb.Lease/LeaseKeepAlive", Method::kLeaseKeepAlive, B,
     &natcd__v1__lease_keep_alive_request__descriptor},
    {"/etcdserverpb.Lease/LeaseTimeToLive", Method::kLeaseTimeToLive, U,
     &natcd__v1__lease_time_to_live_request__descriptor},
    {"/etcdserverpb.Lease/LeaseLeases", Method::kLeaseLeases, U,
     &natcd__v1__lease_leases_request__descriptor},
    {"/etcdserverpb.Cluster/MemberAdd", Method::kMemberAdd, U,
     &natcd__v1__member_add_request__descriptor},
    {"/etcdserverpb.Cluster/MemberRemove", Method::kMemberRemove, U,
     &natcd__v1__member_remove_request__descriptor},
    {"/etcdserverpb.Cluster/MemberList", Method::kMemberList, U,
     &natcd__v1__member_list_request__descriptor},
    {"/etcdserverpb.Cluster/MemberPromote", Method::kMemberPromote, U,
     &natcd__v1__member_promote_request__descriptor},
    {"/etcdserverpb.Cluster/MemberUpdate", Method::kMemberUpdate, U,
     &natcd__v1__member_update_request__descriptor},
    {"/etcdserverpb.Maintenance/Alarm", Method::kAlarm, U, &natcd__v1__alarm_request__descriptor},
    {"/etcdserverpb.Maintenance/Status", Method::kStatus, U,
     &natcd__v1__status_request__descriptor},
    {"/etcdserverpb.Maintenance/HashKV", Method::kHashKV, U,
     &natcd__v1__hash_kvrequest__descriptor},
    {"/etcdserverpb.Maintenance/Hash", Method::kHash, U, &natcd__v1__hash_request__descriptor},
    {"/etcdserverpb.Maintenance/Defragment", Method::kDefragment, U,
     &natcd__v1__defragment_request__descriptor},
    {"/etcdserverpb.Maintenance/MoveLeader", Method::kMoveLeader, U,
     &natcd__v1__move_leader_request__descriptor},
    {"/grpc.health.v1.Health/Check", Method::kHealthCheck, U,
     &natcd__grpc__health_check_request__descriptor},
    {"/grpc.health.v1.Health/Watch", Method::kHealthWatch, S,
     &natcd__grpc__health_check_request__descriptor},
    {"/v3lockpb.Lock/Lock", Method::kLock, U, &natcd__grpc__lock_request__descriptor},
    {"/v3lockpb.Lock/Unlock", Method::kUnlock, U, &natcd__grpc__unlock_request__descriptor},
    {"/v3electionpb.Election/Campaign", Method::kCampaign, U,
     &natcd__grpc__campaign_request__descriptor},
    {"/v3electionpb.Election/Proclaim", Method::kProclaim, U,
     &natcd__grpc__proclaim_request__descriptor},
    {"/v3electionpb.Election/Leader", Method::kLeader, U, &natcd__grpc__leader_request__descriptor},
    {"/v3electionpb.Election/Observe", Method::kObserve, S,
     &natcd__grpc__leader_request__descriptor},
    {"/v3electionpb.Election/Resign", Method::kResign, U, &natcd__grpc__resign_request__descriptor},
    {"/etcdserverpb.Maintenance/Snapshot", Method::kSnapshot, S,
     &natcd__v1__snapshot_request__descriptor},
    {"/etcdserverpb.Auth/AuthEnable", Method::kAuthEnable, U,
     &natcd__grpc__auth_enable_request__descriptor},
    {"/etcdserverpb.Auth/AuthDisable", Method::kAuthDisable, U,
     &natcd__grpc__auth_disable_request__descriptor},
    {"/etcdserverpb.Auth/AuthStatus", Method::kAuthStatus, U,
     &natcd__grpc__auth_status_request__descriptor},
    {"/etcdserverpb.Auth/Authenticate", Method::kAuthenticate, U,
     &natcd__grpc__authenticate_request__descriptor},
    {"/etcdserverpb.Auth/UserAdd", Method::kUserAdd, U,
     &natcd__grpc__auth_user_add_request__descriptor},
    {"/etcdserverpb.Auth/UserGet", Method::kUserGet, U,
     &natcd__grpc__auth_user_get_request__descriptor},
    {"/etcdserverpb.Auth/UserList", Method::kUserList, U,
     &natcd__grpc__auth_user_list_request__descriptor},
    {"/etcdserverpb.Auth/UserDelete", Method::kUserDelete, U,
     &natcd__grpc__auth_user_delete_request__descriptor},
    {"/etcdserverpb.Auth/UserChangePassword", Method::kUserChangePassword, U,
     &natcd__grpc__auth_user_change_password_request__descriptor},
    {"/etcdserverpb.Auth/UserGrantRole", Method::kUserGrantRole, U,
     &natcd__grpc__auth_user_grant_role_request__descriptor},
    {"/etcdserverpb.Auth/UserRevokeRole", Method::kUserRevokeRole, U,
     &natcd__grpc__auth_user_revoke_role_request__descriptor},
    {"/etcdserverpb.Auth/RoleAdd", Method::kRoleAdd, U,
     &natcd__grpc__auth_role_add_request__descriptor},
    {"/etcdserverpb.Auth/RoleGet", Method::kRoleGet, U,
     &natcd__grpc__auth_role_get_request__descriptor},
    {"/etcdserverpb.Auth/RoleList", Method::kRoleList, U,
     &natcd__grpc__auth_role_list_request__descriptor},
    {"/etcdserverpb.Auth/RoleDelete", Method::kRoleDelete, U,
     &natcd__grpc__auth_role_delete_request__descriptor},
    {"/etcdserverpb.Auth/RoleGrantPermission", Method::kRoleGrantPermission, U,
     &natcd__grpc__auth_role_grant_permission_request__descriptor},
    {"/etcdserverpb.Auth/RoleRevokePermission", Method::kRoleRevokePermission, U,
     &natcd__grpc__auth_role_revoke_permission_request__descriptor},
};

}  // namespace

const MethodInfo* FindMethod(std::string_view path) {
  for (const MethodInfo& m : kMethods) {
    if (m.path == path) return &m;
  }
  return nullptr;
}

}  // namespace natcd::etcd_api
