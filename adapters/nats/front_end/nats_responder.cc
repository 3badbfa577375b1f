#include "adapters/nats/front_end/nats_responder.h"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "adapters/nats/codec/service_error.h"
#include "adapters/nats/codec/wire.h"
#include "adapters/nats/front_end/reply.h"
#include "adapters/nats/peer/raft_transport.h"

namespace natcd::nats {
namespace {

// A string that lives as long as the arena.
char* Keep(ProtoArena* arena, const std::string& s) {
  auto* kept = arena->New<std::string>([](std::string*) {});
  *kept = s;
  return const_cast<char*>(kept->c_str());
}

Natcd__V1__Member** MembersProto(const std::vector<server::MemberInfo>& members,
                                 const ReplyContext& context, size_t* n, ProtoArena* arena) {
  *n = members.size();
  Natcd__V1__Member** out = arena->Array<Natcd__V1__Member>(members.size());
  for (size_t i = 0; i < members.size(); i++) {
    Natcd__V1__Member* m = arena->New(natcd__v1__member__init);
    m->id = members[i].id;
    m->name = Keep(arena, members[i].name);
    // The URLs a MemberUpdate set, else where its peers reach it.
    const std::vector<std::string>& peer = members[i].peer_urls;
    char** urls = arena->Array<char>(std::max<size_t>(1, peer.size()));
    if (peer.empty()) {
      urls[0] = Keep(arena, RaftSubject(context.prefix, context.cluster_name, members[i].id));
    }
    for (size_t k = 0; k < peer.size(); k++) urls[k] = Keep(arena, peer[k]);
    m->n_peerurls = std::max<size_t>(1, peer.size());
    m->peerurls = urls;
    char** client = arena->Array<char>(members[i].client_urls.size());
    for (size_t k = 0; k < members[i].client_urls.size(); k++) {
      client[k] = Keep(arena, members[i].client_urls[k]);
    }
    m->n_clienturls = members[i].client_urls.size();
    m->clienturls = client;
    m->islearner = members[i].is_learner;
    out[i] = m;
  }
  return out;
}

}  // namespace

int64_t StatsNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string EncodeResponse(const server::Response& response, const ReplyContext& context,
                           uint64_t raft_term, bool json) {
  HeaderInfo info = context.header;
  info.raft_term = raft_term;
  ProtoArena arena;
  const ProtobufCMessage* message = std::visit(
      [&](const auto& r) -> const ProtobufCMessage* {
        using T = std::decay_t<decltype(r)>;
        if constexpr (std::is_same_v<T, server::StatusResponse>) {
          auto* m = arena.New(natcd__v1__status_response__init);
          m->header = ToProto(r.header, info, &arena);
          m->version = Keep(&arena, context.version);
          m->dbsize = r.db_size;
          m->dbsizeinuse = r.db_size_in_use;
          m->leader = r.leader;
          m->raftindex = r.raft_index;
          m->raftappliedindex = r.raft_applied_index;
          m->raftterm = r.raft_term;
          m->islearner = r.is_learner;
          m->n_errors = r.errors.size();
          m->errors = arena.Array<char>(r.errors.size());
          for (size_t i = 0; i < r.errors.size(); i++) m->errors[i] = Keep(&arena, r.errors[i]);
          return &m->base;
        } else if constexpr (std::is_same_v<T, server::AlarmResponse>) {
          auto* m = arena.New(natcd__v1__alarm_response__init);
          m->header = ToProto(r.header, info, &arena);
          m->n_alarms = r.alarms.size();
          m->alarms = arena.Array<Natcd__V1__AlarmMember>(r.alarms.size());
          for (size_t i = 0; i < r.alarms.size(); i++) {
            auto* a = arena.New(natcd__v1__alarm_member__init);
            a->memberid = r.alarms[i].member_id;
            a->alarm = static_cast<Natcd__V1__AlarmType>(r.alarms[i].alarm);
            m->alarms[i] = a;
          }
          return &m->base;
        } else if constexpr (std::is_same_v<T, server::MemberListResponse>) {
          auto* m = arena.New(natcd__v1__member_list_response__init);
          m->header = ToProto(r.header, info, &arena);
          m->members = MembersProto(r.members, context, &m->n_members, &arena);
          return &m->base;
        } else if constexpr (std::is_same_v<T, server::MemberAddResponse>) {
          auto* m = arena.New(natcd__v1__member_add_response__init);
          m->header = ToProto(r.header, info, &arena);
          m->members = MembersProto(r.members, context, &m->n_members, &arena);
          for (size_t i = 0; i < m->n_members; i++) {
            if (m->members[i]->id == r.member.id) m->member = m->members[i];
          }
          return &m->base;
        } else if constexpr (std::is_same_v<T, server::MembershipResponse>) {
          // Remove, promote and update answer alike (the same fields).
          auto* m = arena.New(natcd__v1__member_remove_response__init);
          m->header = ToProto(r.header, info, &arena);
          m->members = MembersProto(r.members, context, &m->n_members, &arena);
          return &m->base;
        } else if constexpr (std::is_same_v<T, server::AuthResponse>) {
          // Only Authenticate comes over NATS (etcd's gRPC API encodes the
          // other auth responses itself: adapters/grpc/auth_codec.h).
          auto* m = arena.New(natcd__v1__authenticate_response__init);
          m->header = ToProto(r.header, info, &arena);
          m->token = Keep(&arena, r.token);
          return &m->base;
        } else if constexpr (std::is_same_v<T, server::MoveLeaderResponse>) {
          auto* m = arena.New(natcd__v1__move_leader_response__init);
          m->header = ToProto(r.header, info, &arena);
          return &m->base;
        } else {
          return &ToProto(r, info, &arena)->base;
        }
      },
      response);
  return EncodeMessage(message, json);
}

void NatsResponder::Record(const std::string* error) {
  // Counted before the reply: a client that reads $SRV.STATS after its
  // reply sees its request. A forwarded request is counted by the member
  // it arrived at.
  if (hops_ == 0) endpoint_->Record(StatsNowNs() - received_ns_, error);
}

void NatsResponder::Send(natsConnection* via, const std::string* body, const Status& status) {
  const char* reply = natsMsg_GetReply(msg_);
  if (!status.ok()) {
    ServiceError error = ToServiceError(status);
    Record(&error.text);
    (void)RespondError(via, reply, error);
    return;
  }
  Record(nullptr);
  (void)nats::Respond(via, reply, *body, json_);
}

void NatsResponder::Respond(Result<server::Response> response,
                            const server::ResponseContext& context) {
  natsConnection* via = context.busy_turn ? context_->buffered_nc : context_->nc;
  if (!response.ok()) {
    Send(via, nullptr, response.status());
    return;
  }
  const std::string body = EncodeResponse(response.value(), *context_, context.raft_term, json_);
  Send(via, &body, Status::OK());
}

void NatsResponder::Relay(natsMsg* answer) {
  const char* error = nullptr;
  std::string error_text;
  if (natsMsgHeader_Get(answer, kServiceErrorHeader, &error) == NATS_OK && error != nullptr) {
    error_text = error;
  }
  Record(error != nullptr ? &error_text : nullptr);
  (void)RelayReply(context_->nc, answer, natsMsg_GetReply(msg_));
}

}  // namespace natcd::nats
