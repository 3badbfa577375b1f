// What a front end hands the member and what it gets back: requests made of
// engine values (a front end decodes its own wire format at its edge), and a
// Responder the member calls exactly once with the response or a Status.
//
// Thread safety: a Request is built on a front end's thread, handed over
// whole (Member::Submit) and from then on touched by the member thread only,
// until the responder has been called (on the member thread) or the request
// was given to the peer transport (Forward), which then owns it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "natcd/alarm.h"
#include "natcd/auth.h"
#include "natcd/engine.h"
#include "natcd/status.h"
#include "natcd/types.h"

namespace natcd::server {

using NodeId = uint64_t;

// ---- member-level requests beyond the engine's ----

struct LeaseLeasesRequest {};

// HashKVRequest, HashRequest and DefragmentRequest (natcd/types.h) are
// served by the member that receives them, never forwarded: as etcd's,
// each is about one member's own database.

struct StatusRequest {};
struct StatusResponse {
  ResponseHeader header;
  int64_t db_size = 0;
  int64_t db_size_in_use = 0;
  NodeId leader = 0;
  uint64_t raft_index = 0;
  uint64_t raft_applied_index = 0;
  uint64_t raft_term = 0;
  bool is_learner = false;
  // etcd's: one AlarmText (natcd/alarm.h) per raised alarm.
  std::vector<std::string> errors;
};

// etcd's Maintenance.Alarm, served by the leader: GET lists every raised
// alarm; ACTIVATE and DEACTIVATE go through the log and answer the alarm
// they changed (none when deactivating one that is not raised).
struct AlarmRequest {
  AlarmAction action = AlarmAction::kGet;
  NodeId member_id = 0;
  AlarmType alarm = AlarmType::kNone;
};
struct AlarmResponse {
  ResponseHeader header;
  std::vector<AlarmMember> alarms;
};

// A member as the cluster knows it.
struct MemberInfo {
  NodeId id = 0;
  std::string name;
  bool is_learner = false;
  // Its advertised client URLs (etcd's API), once it has published them.
  std::vector<std::string> client_urls;
  // Its peer URLs as a MemberUpdate set them; empty: none was set, and the
  // front end reports the member's Raft endpoint.
  std::vector<std::string> peer_urls;
};

struct MemberListRequest {};
struct MemberListResponse {
  ResponseHeader header;
  std::vector<MemberInfo> members;
};
struct MemberAddRequest {
  std::string name;
  bool is_learner = false;
  std::vector<std::string> peer_urls = {};  // recorded as MemberUpdate's are
};
struct MemberAddResponse {
  ResponseHeader header;
  MemberInfo member;  // the one added
  std::vector<MemberInfo> members;
};
struct MemberRemoveRequest {
  NodeId id = 0;
};
struct MemberPromoteRequest {
  NodeId id = 0;
};
// etcd's MemberUpdate: the member's peer URLs, replicated through the log
// (natcd's peers reach each other by Raft subjects derived from their IDs,
// so the URLs are recorded and listed, not dialed). Answered with a
// MembershipResponse.
struct MemberUpdateRequest {
  NodeId id = 0;
  std::vector<std::string> peer_urls;
};
// Remove, promote and update answer the membership after the change.
struct MembershipResponse {
  ResponseHeader header;
  std::vector<MemberInfo> members;
};
struct MoveLeaderRequest {
  NodeId target = 0;
};
struct MoveLeaderResponse {
  ResponseHeader header;
};

// ---- etcd's Auth service ----

enum class AuthOp : uint8_t {
  kEnable,
  kDisable,
  kStatus,
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

// One call of the Auth service. A password never reaches the member: the
// front end hashes it (UserAdd, UserChangePassword) or checks it
// (Authenticate, against Member::PasswordHash) on its own thread, because
// bcrypt takes about 0.1 s, and sends the hash.
struct AuthRequest {
  AuthOp op = AuthOp::kStatus;
  std::string user;
  std::string role;
  // UserAdd, UserChangePassword: the new hash. Authenticate: the hash the
  // password was found to match (empty: it matched none); the member
  // issues a token only if it is still the user's.
  std::string password_hash;
  bool no_password = false;  // UserAdd
  Permission permission;     // RoleGrantPermission; RoleRevokePermission: key, range_end
};

struct AuthResponse {
  ResponseHeader header;
  AuthOp op = AuthOp::kStatus;
  std::string token;                    // Authenticate
  bool enabled = false;                 // Status
  uint64_t auth_revision = 0;           // Status
  std::vector<std::string> names;       // UserGet: its roles; UserList: users; RoleList: roles
  std::vector<Permission> permissions;  // RoleGet
};

using RequestPayload =
    std::variant<RangeRequest, PutRequest, DeleteRangeRequest, TxnRequest, CompactionRequest,
                 LeaseGrantRequest, LeaseRevokeRequest, LeaseKeepAliveRequest,
                 LeaseTimeToLiveRequest, LeaseLeasesRequest, StatusRequest, MemberListRequest,
                 MemberAddRequest, MemberRemoveRequest, MemberPromoteRequest, MemberUpdateRequest,
                 MoveLeaderRequest, HashKVRequest, HashRequest, DefragmentRequest, AuthRequest,
                 AlarmRequest>;

using Response =
    std::variant<RangeResponse, PutResponse, DeleteRangeResponse, TxnResponse, CompactionResponse,
                 LeaseGrantResponse, LeaseRevokeResponse, LeaseKeepAliveResponse,
                 LeaseTimeToLiveResponse, LeaseLeasesResponse, StatusResponse, MemberListResponse,
                 MemberAddResponse, MembershipResponse, MoveLeaderResponse, HashKVResponse,
                 HashResponse, DefragmentResponse, AuthResponse, AlarmResponse>;

// Facts of the moment a response is sent that a front end puts in its
// response header or uses to send it.
struct ResponseContext {
  uint64_t raft_term = 0;
  // Many responses leave in this turn: a front end may buffer them and
  // write them out together instead of one system call each.
  bool busy_turn = false;
};

class Responder {
 public:
  virtual ~Responder() = default;
  // Called exactly once, on the member thread (or by the peer transport
  // that took the request over).
  virtual void Respond(Result<Response> response, const ResponseContext& context) = 0;
};

struct Request {
  RequestPayload payload;
  // Natcd-Request-Id or the like: a write carrying one is applied once and a
  // repeat is answered with the first outcome (within the memory window).
  std::string request_id;
  // When it arrived, on the member's monotonic clock: requests waiting for
  // a leader time out from here.
  int64_t received_ms = 0;
  // Members it passed through (forwarded by a follower): bounded so that a
  // request never bounces for ever between members that disagree.
  int hops = 0;
  // etcd's auth token (gRPC's "token" metadata, NATS's Natcd-Auth-Token
  // header); empty: none. While auth is enabled the member checks the
  // request against the permissions of the token's user.
  std::string token;
  // No check: a member that checked it forwarded it (P.fwd.*, a subject
  // only members may use), or it came through a front end the operator
  // declared trusted. The member sets it once the request passed its check.
  bool auth_checked = false;
  // The auth store's revision at that check (0: none against a user). It
  // travels with a forward and into the log entry, where the apply refuses
  // it if the store has moved on since (ErrAuthOldRevision).
  uint64_t auth_revision = 0;
  // From a front end that carries no token (NATS, unless declared
  // trusted): while auth is enabled, such a request that needs a user is
  // refused with a clear error (auth::ErrTokenlessFrontEnd), never served
  // unchecked.
  bool tokenless = false;
  // The leader a forward to found unreachable; the request waits for
  // another or retries after a pause (Member::Resubmit).
  NodeId unreachable_leader = 0;
  int64_t retry_at_ms = 0;
  std::unique_ptr<Responder> responder;
};

// Requests only the leader serves: writes go through its log, lease
// deadlines live on the leader, and it knows the latest membership.
bool IsWrite(const RequestPayload& payload);
bool IsMembershipChange(const RequestPayload& payload);
bool LeaderOnly(const RequestPayload& payload);

}  // namespace natcd::server
