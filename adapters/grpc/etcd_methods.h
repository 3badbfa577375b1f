// The methods of etcd's gRPC API (etcd 3.5's services, by their paths as a
// client sends them: "/etcdserverpb.KV/Range", "/v3lockpb.Lock/Lock") and what natcd does with
// each: serve it through the member, serve it on this front end alone, or
// answer UNIMPLEMENTED (a method natcd does not offer yet, or a newer
// etcd's that a client may probe, such as KV/RangeStream).
//
// Thread safety: immutable.
#pragma once

#include <protobuf-c/protobuf-c.h>

#include <string_view>

namespace natcd::etcd_api {

enum class Method {
  kRange,
  kPut,
  kDeleteRange,
  kTxn,
  kCompact,
  kWatch,
  kLeaseGrant,
  kLeaseRevoke,
  kLeaseKeepAlive,
  kLeaseTimeToLive,
  kLeaseLeases,
  kMemberAdd,
  kMemberRemove,
  kMemberList,
  kMemberPromote,
  kMemberUpdate,
  kAlarm,
  kStatus,
  kHashKV,
  kHash,
  kDefragment,
  kMoveLeader,
  kHealthCheck,
  kHealthWatch,
  // The server-side concurrency services (v3lockpb, v3electionpb).
  kLock,
  kUnlock,
  kCampaign,
  kProclaim,
  kLeader,
  kObserve,
  kResign,
  kSnapshot,
  kAuthEnable,
  kAuthDisable,
  kAuthStatus,
  kAuthenticate,
  kUserAdd,
  kUserGet,
  kUserList,
  kUserDelete,
  kUserChangePassword,
  kUserGrantRole,
  kUserRevokeRole,
  kRoleAdd,
  kRoleGet,
  kRoleList,
  kRoleDelete,
  kRoleGrantPermission,
  kRoleRevokePermission,
};

// How a method's messages flow: one request and one response, or streams.
enum class Shape { kUnary, kServerStream, kBidiStream };

struct MethodInfo {
  std::string_view path;
  Method method;
  Shape shape;
  // What a request message (each message, for a stream) decodes as.
  const ProtobufCMessageDescriptor* request;
};

// The method at `path`; null for one natcd does not serve.
const MethodInfo* FindMethod(std::string_view path);

}  // namespace natcd::etcd_api
