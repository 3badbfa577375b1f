#include "adapters/grpc/auth_codec.h"

#include "adapters/grpc/etcd_rpc.pb-c.h"

namespace natcd::etcd_api {
namespace {

using server::AuthOp;

std::string Str(const char* s) { return s != nullptr ? s : ""; }
std::string Bytes(const ProtobufCBinaryData& b) {
  return std::string(reinterpret_cast<const char*>(b.data), b.len);
}
ProtobufCBinaryData Binary(const std::string& s) {
  return ProtobufCBinaryData{s.size(), reinterpret_cast<uint8_t*>(const_cast<char*>(s.data()))};
}

// The member's view of an authpb.Permission.Type (an unknown value reads
// as READ, the least permission, as etcd's Go enum would keep the number).
PermissionType TypeOf(Natcd__Grpc__Permission__Type t) {
  switch (t) {
    case NATCD__GRPC__PERMISSION__TYPE__WRITE:
      return PermissionType::kWrite;
    case NATCD__GRPC__PERMISSION__TYPE__READWRITE:
      return PermissionType::kReadWrite;
    default:
      return PermissionType::kRead;
  }
}

Natcd__Grpc__Permission__Type ProtoType(PermissionType t) {
  switch (t) {
    case PermissionType::kWrite:
      return NATCD__GRPC__PERMISSION__TYPE__WRITE;
    case PermissionType::kReadWrite:
      return NATCD__GRPC__PERMISSION__TYPE__READWRITE;
    case PermissionType::kRead:
      break;
  }
  return NATCD__GRPC__PERMISSION__TYPE__READ;
}

// Repeated strings of a response, pointing into `names`.
char** StringArray(const std::vector<std::string>& names, std::vector<char*>* holder) {
  holder->clear();
  for (const std::string& n : names) holder->push_back(const_cast<char*>(n.c_str()));
  return holder->data();
}

}  // namespace

bool IsAuthMethod(Method method) {
  switch (method) {
    case Method::kAuthEnable:
    case Method::kAuthDisable:
    case Method::kAuthStatus:
    case Method::kAuthenticate:
    case Method::kUserAdd:
    case Method::kUserGet:
    case Method::kUserList:
    case Method::kUserDelete:
    case Method::kUserChangePassword:
    case Method::kUserGrantRole:
    case Method::kUserRevokeRole:
    case Method::kRoleAdd:
    case Method::kRoleGet:
    case Method::kRoleList:
    case Method::kRoleDelete:
    case Method::kRoleGrantPermission:
    case Method::kRoleRevokePermission:
      return true;
    default:
      return false;
  }
}

DecodedAuth DecodeAuthRequest(Method method, const ProtobufCMessage& message) {
  DecodedAuth out;
  server::AuthRequest& r = out.request;
  switch (method) {
    case Method::kAuthEnable:
      r.op = AuthOp::kEnable;
      break;
    case Method::kAuthDisable:
      r.op = AuthOp::kDisable;
      break;
    case Method::kAuthStatus:
      r.op = AuthOp::kStatus;
      break;
    case Method::kAuthenticate: {
      auto* in = reinterpret_cast<const Natcd__Grpc__AuthenticateRequest*>(&message);
      r.op = AuthOp::kAuthenticate;
      r.user = Str(in->name);
      out.password = Str(in->password);
      break;
    }
    case Method::kUserAdd: {
      auto* in = reinterpret_cast<const Natcd__Grpc__AuthUserAddRequest*>(&message);
      r.op = AuthOp::kUserAdd;
      r.user = Str(in->name);
      r.no_password = in->options != nullptr && in->options->no_password;
      out.password = Str(in->password);
      out.hashed_password = Str(in->hashedpassword);
      break;
    }
    case Method::kUserGet:
      r.op = AuthOp::kUserGet;
      r.user = Str(reinterpret_cast<const Natcd__Grpc__AuthUserGetRequest*>(&message)->name);
      break;
    case Method::kUserList:
      r.op = AuthOp::kUserList;
      break;
    case Method::kUserDelete:
      r.op = AuthOp::kUserDelete;
      r.user = Str(reinterpret_cast<const Natcd__Grpc__AuthUserDeleteRequest*>(&message)->name);
      break;
    case Method::kUserChangePassword: {
      auto* in = reinterpret_cast<const Natcd__Grpc__AuthUserChangePasswordRequest*>(&message);
      r.op = AuthOp::kUserChangePassword;
      r.user = Str(in->name);
      out.password = Str(in->password);
      out.hashed_password = Str(in->hashedpassword);
      break;
    }
    case Method::kUserGrantRole: {
      auto* in = reinterpret_cast<const Natcd__Grpc__AuthUserGrantRoleRequest*>(&message);
      r.op = AuthOp::kUserGrantRole;
      r.user = Str(in->user);
      r.role = Str(in->role);
      break;
    }
    case Method::kUserRevokeRole: {
      auto* in = reinterpret_cast<const Natcd__Grpc__AuthUserRevokeRoleRequest*>(&message);
      r.op = AuthOp::kUserRevokeRole;
      r.user = Str(in->name);
      r.role = Str(in->role);
      break;
    }
    case Method::kRoleAdd:
      r.op = AuthOp::kRoleAdd;
      r.role = Str(reinterpret_cast<const Natcd__Grpc__AuthRoleAddRequest*>(&message)->name);
      break;
    case Method::kRoleGet:
      r.op = AuthOp::kRoleGet;
      r.role = Str(reinterpret_cast<const Natcd__Grpc__AuthRoleGetRequest*>(&message)->role);
      break;
    case Method::kRoleList:
      r.op = AuthOp::kRoleList;
      break;
    case Method::kRoleDelete:
      r.op = AuthOp::kRoleDelete;
      r.role = Str(reinterpret_cast<const Natcd__Grpc__AuthRoleDeleteRequest*>(&message)->role);
      break;
    case Method::kRoleGrantPermission: {
      auto* in = reinterpret_cast<const Natcd__Grpc__AuthRoleGrantPermissionRequest*>(&message);
      r.op = AuthOp::kRoleGrantPermission;
      r.role = Str(in->name);
      if (in->perm != nullptr) {
        r.permission = Permission{TypeOf(in->perm->permtype), Bytes(in->perm->key),
                                  Bytes(in->perm->range_end)};
      }
      break;
    }
    case Method::kRoleRevokePermission:
    default: {
      auto* in = reinterpret_cast<const Natcd__Grpc__AuthRoleRevokePermissionRequest*>(&message);
      r.op = AuthOp::kRoleRevokePermission;
      r.role = Str(in->role);
      r.permission.key = Bytes(in->key);
      r.permission.range_end = Bytes(in->range_end);
      break;
    }
  }
  return out;
}

std::string EncodeAuthResponse(const server::AuthResponse& response, const ResponseInfo& info,
                               uint64_t raft_term) {
  nats::HeaderInfo header_info = info.header;
  header_info.raft_term = raft_term;
  nats::ProtoArena arena;
  Natcd__V1__ResponseHeader* header = nats::ToProto(response.header, header_info, &arena);
  std::vector<char*> names;
  switch (response.op) {
    case AuthOp::kStatus: {
      Natcd__Grpc__AuthStatusResponse out;
      natcd__grpc__auth_status_response__init(&out);
      out.header = header;
      out.enabled = response.enabled;
      out.authrevision = response.auth_revision;
      return Pack(out.base);
    }
    case AuthOp::kAuthenticate: {
      Natcd__Grpc__AuthenticateResponse out;
      natcd__grpc__authenticate_response__init(&out);
      out.header = header;
      out.token = const_cast<char*>(response.token.c_str());
      return Pack(out.base);
    }
    case AuthOp::kUserGet: {
      Natcd__Grpc__AuthUserGetResponse out;
      natcd__grpc__auth_user_get_response__init(&out);
      out.header = header;
      out.n_roles = response.names.size();
      out.roles = StringArray(response.names, &names);
      return Pack(out.base);
    }
    case AuthOp::kUserList: {
      Natcd__Grpc__AuthUserListResponse out;
      natcd__grpc__auth_user_list_response__init(&out);
      out.header = header;
      out.n_users = response.names.size();
      out.users = StringArray(response.names, &names);
      return Pack(out.base);
    }
    case AuthOp::kRoleList: {
      Natcd__Grpc__AuthRoleListResponse out;
      natcd__grpc__auth_role_list_response__init(&out);
      out.header = header;
      out.n_roles = response.names.size();
      out.roles = StringArray(response.names, &names);
      return Pack(out.base);
    }
    case AuthOp::kRoleGet: {
      std::vector<Natcd__Grpc__Permission> perms(response.permissions.size());
      std::vector<Natcd__Grpc__Permission*> pointers;
      for (size_t i = 0; i < perms.size(); ++i) {
        const Permission& p = response.permissions[i];
        natcd__grpc__permission__init(&perms[i]);
        perms[i].permtype = ProtoType(p.type);
        perms[i].key = Binary(p.key);
        perms[i].range_end = Binary(p.range_end);
        pointers.push_back(&perms[i]);
      }
      Natcd__Grpc__AuthRoleGetResponse out;
      natcd__grpc__auth_role_get_response__init(&out);
      out.header = header;
      out.n_perm = pointers.size();
      out.perm = pointers.data();
      return Pack(out.base);
    }
    default: {
      Natcd__Grpc__AuthHeaderResponse out;
      natcd__grpc__auth_header_response__init(&out);
      out.header = header;
      return Pack(out.base);
    }
  }
}

}  // namespace natcd::etcd_api
