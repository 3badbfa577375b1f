#include "adapters/grpc/etcd_error.h"

#include <string_view>

namespace natcd::etcd_api {
namespace {

struct EtcdError {
  std::string_view name;
  grpc::StatusCode code;
  std::string_view message;
};

// etcd's errors by the name natcd's Status carries.
constexpr EtcdError kEtcdErrors[] = {
    {"ErrEmptyKey", grpc::INVALID_ARGUMENT, "etcdserver: key is not provided"},
    {"ErrKeyNotFound", grpc::INVALID_ARGUMENT, "etcdserver: key not found"},
    {"ErrValueProvided", grpc::INVALID_ARGUMENT, "etcdserver: value is provided"},
    {"ErrLeaseProvided", grpc::INVALID_ARGUMENT, "etcdserver: lease is provided"},
    {"ErrTooManyOps", grpc::INVALID_ARGUMENT, "etcdserver: too many operations in txn request"},
    {"ErrDuplicateKey", grpc::INVALID_ARGUMENT, "etcdserver: duplicate key given in txn request"},
    {"ErrInvalidSortOption", grpc::INVALID_ARGUMENT, "etcdserver: invalid sort option"},
    {"ErrCompacted", grpc::OUT_OF_RANGE, "etcdserver: mvcc: required revision has been compacted"},
    {"ErrFutureRev", grpc::OUT_OF_RANGE,
     "etcdserver: mvcc: required revision is a future revision"},
    {"ErrNoSpace", grpc::RESOURCE_EXHAUSTED, "etcdserver: mvcc: database space exceeded"},
    {"ErrLeaseNotFound", grpc::NOT_FOUND, "etcdserver: requested lease not found"},
    {"ErrLeaseExist", grpc::FAILED_PRECONDITION, "etcdserver: lease already exists"},
    {"ErrLeaseTTLTooLarge", grpc::OUT_OF_RANGE, "etcdserver: too large lease TTL"},
    {"ErrWatchCanceled", grpc::CANCELLED, "etcdserver: watch canceled"},
    {"ErrMemberExist", grpc::FAILED_PRECONDITION, "etcdserver: member ID already exist"},
    {"ErrPeerURLExist", grpc::FAILED_PRECONDITION, "etcdserver: Peer URLs already exists"},
    {"ErrMemberNotEnoughStarted", grpc::FAILED_PRECONDITION,
     "etcdserver: re-configuration failed due to not enough started members"},
    {"ErrMemberBadURLs", grpc::INVALID_ARGUMENT, "etcdserver: given member URLs are invalid"},
    {"ErrMemberNotFound", grpc::NOT_FOUND, "etcdserver: member not found"},
    {"ErrMemberNotLearner", grpc::FAILED_PRECONDITION,
     "etcdserver: can only promote a learner member"},
    {"ErrLearnerNotReady", grpc::FAILED_PRECONDITION,
     "etcdserver: can only promote a learner member which is in sync with leader"},
    {"ErrTooManyLearners", grpc::FAILED_PRECONDITION,
     "etcdserver: too many learner members in cluster"},
    {"ErrRequestTooLarge", grpc::INVALID_ARGUMENT, "etcdserver: request is too large"},
    {"ErrTooManyRequests", grpc::RESOURCE_EXHAUSTED, "etcdserver: too many requests"},
    {"ErrNoLeader", grpc::UNAVAILABLE, "etcdserver: no leader"},
    {"ErrNotLeader", grpc::FAILED_PRECONDITION, "etcdserver: not leader"},
    {"ErrLeaderChanged", grpc::UNAVAILABLE, "etcdserver: leader changed"},
    {"ErrStopped", grpc::UNAVAILABLE, "etcdserver: server stopped"},
    {"ErrTimeout", grpc::UNAVAILABLE, "etcdserver: request timed out"},
    {"ErrTimeoutDueToLeaderFail", grpc::UNAVAILABLE,
     "etcdserver: request timed out, possibly due to previous leader failure"},
    {"ErrTimeoutDueToConnectionLost", grpc::UNAVAILABLE,
     "etcdserver: request timed out, possibly due to connection lost"},
    {"ErrTimeoutLeaderTransfer", grpc::UNAVAILABLE,
     "etcdserver: request timed out, leader transfer took too long"},
    {"ErrUnhealthy", grpc::UNAVAILABLE, "etcdserver: unhealthy cluster"},
    {"ErrCorrupt", grpc::DATA_LOSS, "etcdserver: corrupt cluster"},
    {"ErrNotSupportedForLearner", grpc::UNAVAILABLE, "etcdserver: rpc not supported for learner"},
    {"ErrBadLeaderTransferee", grpc::FAILED_PRECONDITION, "etcdserver: bad leader transferee"},
    {"ErrPermissionDenied", grpc::PERMISSION_DENIED, "etcdserver: permission denied"},
    {"ErrInvalidAuthToken", grpc::UNAUTHENTICATED, "etcdserver: invalid auth token"},
    {"ErrAuthFailed", grpc::INVALID_ARGUMENT,
     "etcdserver: authentication failed, invalid user ID or password"},
    {"ErrNoPasswordUser", grpc::UNKNOWN,
     "auth: authentication failed, password was given for no password user"},
    {"ErrAuthNotEnabled", grpc::FAILED_PRECONDITION, "etcdserver: authentication is not enabled"},
    {"ErrRootUserNotExist", grpc::FAILED_PRECONDITION, "etcdserver: root user does not exist"},
    {"ErrRootRoleNotExist", grpc::FAILED_PRECONDITION,
     "etcdserver: root user does not have root role"},
    {"ErrUserAlreadyExist", grpc::FAILED_PRECONDITION, "etcdserver: user name already exists"},
    {"ErrUserEmpty", grpc::INVALID_ARGUMENT, "etcdserver: user name is empty"},
    {"ErrUserNotFound", grpc::FAILED_PRECONDITION, "etcdserver: user name not found"},
    {"ErrRoleAlreadyExist", grpc::FAILED_PRECONDITION, "etcdserver: role name already exists"},
    {"ErrRoleNotFound", grpc::FAILED_PRECONDITION, "etcdserver: role name not found"},
    {"ErrRoleEmpty", grpc::INVALID_ARGUMENT, "etcdserver: role name is empty"},
    {"ErrRoleNotGranted", grpc::FAILED_PRECONDITION, "etcdserver: role is not granted to the user"},
    {"ErrPermissionNotGranted", grpc::FAILED_PRECONDITION,
     "etcdserver: permission is not granted to the role"},
    {"ErrInvalidAuthMgmt", grpc::INVALID_ARGUMENT, "etcdserver: invalid auth management"},
    {"ErrAuthOldRevision", grpc::INVALID_ARGUMENT, "etcdserver: revision of auth store is old"},
};

// A Status etcd has no name for, by its code.
grpc::StatusCode CodeOf(Status::Code code) {
  using Code = Status::Code;
  switch (code) {
    case Code::kOk:
      return grpc::OK;
    case Code::kInvalidArgument:
    case Code::kNotFound:
    case Code::kTooLarge:
      return grpc::INVALID_ARGUMENT;
    case Code::kCompacted:
    case Code::kFutureRevision:
    case Code::kLeaseTTLTooLarge:
      return grpc::OUT_OF_RANGE;
    case Code::kLeaseNotFound:
      return grpc::NOT_FOUND;
    case Code::kLeaseExists:
    case Code::kNotLeader:
      return grpc::FAILED_PRECONDITION;
    case Code::kTooManyRequests:
    case Code::kNoSpace:
      return grpc::RESOURCE_EXHAUSTED;
    case Code::kUnavailable:
    case Code::kBusy:
    case Code::kTimeout:
      return grpc::UNAVAILABLE;
    case Code::kCorruption:
      return grpc::DATA_LOSS;
    case Code::kIOError:
    case Code::kInternal:
    case Code::kLogCompacted:
      return grpc::INTERNAL;
  }
  return grpc::UNKNOWN;
}

}  // namespace

grpc::Status ToGrpcStatus(const Status& status) {
  if (status.ok()) return grpc::Status::OK;
  for (const EtcdError& e : kEtcdErrors) {
    if (e.name == status.name()) return grpc::Status(e.code, std::string(e.message));
  }
  return grpc::Status(CodeOf(status.code()), std::string(status.message()));
}

}  // namespace natcd::etcd_api
