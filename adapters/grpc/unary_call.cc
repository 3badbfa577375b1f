#include "adapters/grpc/unary_call.h"

#include <utility>

#include "adapters/grpc/auth_codec.h"
#include "adapters/grpc/auth_token.h"
#include "adapters/grpc/byte_buffers.h"
#include "adapters/grpc/call_responder.h"
#include "adapters/grpc/etcd_error.h"
#include "adapters/grpc/etcd_rpc.pb-c.h"
#include "adapters/grpc/leader_monitor.h"
#include "adapters/grpc/message_decoder.h"
#include "auth/password.h"

namespace natcd::etcd_api {
namespace {

std::string HealthResponse(const server::Response& response) {
  Natcd__Grpc__HealthCheckResponse out;
  natcd__grpc__health_check_response__init(&out);
  out.status = std::get<server::StatusResponse>(response).leader != 0
                   ? NATCD__GRPC__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVING
                   : NATCD__GRPC__HEALTH_CHECK_RESPONSE__SERVING_STATUS__NOT_SERVING;
  return Pack(out.base);
}

// What the member must not do (it would stall Raft for a bcrypt's 0.1 s),
// done here on the call's thread before submitting, as etcd's v3 server
// does before proposing: hash a new password; check an Authenticate's
// password against the user's hash as last applied, and send the hash it
// matched (the member issues a token only while it is still the user's).
Status PreparePassword(const server::Member& member, int bcrypt_cost, DecodedAuth* auth) {
  server::AuthRequest& r = auth->request;
  switch (r.op) {
    case server::AuthOp::kAuthenticate: {
      std::optional<std::string> hash = member.PasswordHash(r.user);
      if (hash && auth::CheckPassword(auth->password, *hash)) r.password_hash = *hash;
      return Status::OK();
    }
    case server::AuthOp::kUserAdd:
    case server::AuthOp::kUserChangePassword: {
      if (r.no_password) return Status::OK();
      // etcd 3.5 clients may send the hash themselves.
      if (!auth->hashed_password.empty()) {
        r.password_hash = auth->hashed_password;
        return Status::OK();
      }
      Result<std::string> hash = auth::HashPassword(auth->password, bcrypt_cost);
      if (!hash.ok()) return hash.status();
      r.password_hash = std::move(hash).value();
      return Status::OK();
    }
    default:
      return Status::OK();
  }
}

}  // namespace

// The member's answer to a unary call: the response message, or etcd's
// status, then the call's end.
class UnaryResponder final : public server::Responder {
 public:
  UnaryResponder(UnaryCall* call, ResponseEncoder encode)
      : call_(call), encode_(std::move(encode)) {}
  void Respond(Result<server::Response> response, const server::ResponseContext& context) override {
    UnaryCall* call = std::exchange(call_, nullptr);
    if (!response.ok()) {
      call->Finish(ToGrpcStatus(response.status()));
      return;
    }
    *call->response_ = ToBuffer(encode_(response.value(), context.raft_term));
    call->Finish(grpc::Status::OK);
  }

 private:
  UnaryCall* call_;  // until answered (Respond runs once)
  const ResponseEncoder encode_;
};

grpc::ServerUnaryReactor* UnaryCall::Start(grpc::CallbackServerContext* context,
                                           const MethodInfo* method, const CallContext* calls,
                                           const grpc::ByteBuffer* request,
                                           grpc::ByteBuffer* response) {
  auto* call = new UnaryCall(response);
  call->Begin(context, method, calls, *request);
  return call;
}

void UnaryCall::Begin(grpc::CallbackServerContext* context, const MethodInfo* method,
                      const CallContext* calls, const grpc::ByteBuffer& request) {
  // clientv3's WithRequireLeader, as for every call (etcd's interceptor).
  if (RequiresLeader(*context) && calls->member->leader() == 0) {
    Finish(grpc::Status(grpc::StatusCode::UNAVAILABLE, "etcdserver: no leader"));
    return;
  }
  if (!request.Valid()) {
    Finish(grpc::Status(grpc::StatusCode::INTERNAL, "no request message"));
    return;
  }
  const std::string bytes = Flatten(request);
  if (bytes.size() > calls->request_bytes_max) {
    Finish(
        ToGrpcStatus(Status::TooLarge("ErrRequestTooLarge", "etcdserver: request is too large")));
    return;
  }
  grpc::Status error;
  Message message = DecodeMessage(method->request, bytes, &error);
  if (message == nullptr) {
    Finish(error);
    return;
  }
  const ResponseInfo* info = &calls->response;
  ResponseEncoder encode = [info](const server::Response& r, uint64_t term) {
    return EncodeResponse(r, *info, term);
  };
  server::RequestPayload payload;
  switch (method->method) {
    case Method::kHealthCheck: {
      auto* in = reinterpret_cast<const Natcd__Grpc__HealthCheckRequest*>(message.get());
      if (in->service != nullptr && in->service[0] != '\0') {
        Finish(grpc::Status(grpc::StatusCode::NOT_FOUND, "unknown service"));
        return;
      }
      payload = server::StatusRequest{};
      encode = [](const server::Response& r, uint64_t) { return HealthResponse(r); };
      break;
    }
    default: {
      if (IsAuthMethod(method->method)) {
        DecodedAuth auth = DecodeAuthRequest(method->method, *message);
        if (Status s = PreparePassword(*calls->member, calls->bcrypt_cost, &auth); !s.ok()) {
          Finish(ToGrpcStatus(s));
          return;
        }
        payload = std::move(auth.request);
        encode = [info](const server::Response& r, uint64_t term) {
          return EncodeAuthResponse(std::get<server::AuthResponse>(r), *info, term);
        };
        break;
      }
      Result<server::RequestPayload> decoded = DecodeRequest(method->method, *message);
      if (!decoded.ok()) {
        Finish(ToGrpcStatus(decoded.status()));
        return;
      }
      payload = std::move(decoded).value();
    }
  }
  auto submitted = std::make_unique<server::Request>();
  submitted->payload = std::move(payload);
  submitted->received_ms = calls->clock->MonotonicMs();
  submitted->token = AuthTokenOf(*context);
  submitted->responder = std::make_unique<UnaryResponder>(this, std::move(encode));
  calls->member->Submit(std::move(submitted));
}

}  // namespace natcd::etcd_api
