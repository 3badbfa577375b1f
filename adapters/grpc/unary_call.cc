#include "adapters/grpc/unary_call.h"

#include "adapters/grpc/auth_codec.h"
#include "adapters/grpc/auth_token.h"
#include "adapters/grpc/call_responder.h"
#include "adapters/grpc/etcd_error.h"
#include "adapters/grpc/etcd_rpc.pb-c.h"
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

grpc::ServerGenericBidiReactor* UnaryCall::Start(grpc::GenericCallbackServerContext* context,
                                                 const MethodInfo* method,
                                                 const CallContext* calls) {
  std::shared_ptr<UnaryCall> call(new UnaryCall(context, method, calls));
  call->Begin();
  return call.get();
}

bool UnaryCall::OnMessage(std::string bytes) {
  received_ = true;
  if (bytes.size() > calls_->request_bytes_max) {
    End(ToGrpcStatus(Status::TooLarge("ErrRequestTooLarge", "etcdserver: request is too large")));
    return false;
  }
  grpc::Status error;
  Message message = DecodeMessage(method_->request, bytes, &error);
  if (message == nullptr) {
    End(error);
    return false;
  }
  const ResponseInfo* info = &calls_->response;
  ResponseEncoder encode = [info](const server::Response& r, uint64_t term) {
    return EncodeResponse(r, *info, term);
  };
  server::RequestPayload payload;
  switch (method_->method) {
    case Method::kHealthCheck: {
      auto* in = reinterpret_cast<const Natcd__Grpc__HealthCheckRequest*>(message.get());
      if (in->service != nullptr && in->service[0] != '\0') {
        End(grpc::Status(grpc::StatusCode::NOT_FOUND, "unknown service"));
        return false;
      }
      payload = server::StatusRequest{};
      encode = [](const server::Response& r, uint64_t) { return HealthResponse(r); };
      break;
    }
    default: {
      if (IsAuthMethod(method_->method)) {
        DecodedAuth auth = DecodeAuthRequest(method_->method, *message);
        if (Status s = PreparePassword(*calls_->member, calls_->bcrypt_cost, &auth); !s.ok()) {
          End(ToGrpcStatus(s));
          return false;
        }
        payload = std::move(auth.request);
        encode = [info](const server::Response& r, uint64_t term) {
          return EncodeAuthResponse(std::get<server::AuthResponse>(r), *info, term);
        };
        break;
      }
      Result<server::RequestPayload> decoded = DecodeRequest(method_->method, *message);
      if (!decoded.ok()) {
        End(ToGrpcStatus(decoded.status()));
        return false;
      }
      payload = std::move(decoded).value();
    }
  }
  auto request = std::make_unique<server::Request>();
  request->payload = std::move(payload);
  request->received_ms = calls_->clock->MonotonicMs();
  request->token = AuthTokenOf(*context());
  request->responder =
      std::make_unique<CallResponder>(shared_from_this(), std::move(encode), /*last=*/true);
  calls_->member->Submit(std::move(request));
  return false;  // the one message
}

void UnaryCall::OnReadsEnded() {
  if (!received_) End(grpc::Status(grpc::StatusCode::INTERNAL, "no request message"));
}

}  // namespace natcd::etcd_api
