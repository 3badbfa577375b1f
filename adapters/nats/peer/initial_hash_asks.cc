#include "adapters/nats/peer/initial_hash_asks.h"

#include <cstdio>
#include <vector>

#include "adapters/nats/codec/payload_codec.h"
#include "adapters/nats/codec/service_error.h"
#include "adapters/nats/front_end/reply.h"
#include "adapters/nats/peer/raft_transport.h"
#include "alarm/initial_hash_check.h"

namespace natcd::nats {
namespace {

Result<HashKVResponse> AskHash(natsConnection* nc, std::string_view prefix, server::NodeId peer,
                               int64_t revision, int64_t timeout_ms) {
  const server::RequestPayload asked = HashKVRequest{revision};
  WireRequest wire = EncodeWireRequest(asked);
  const std::string subject = ForwardPrefix(prefix, peer) + wire.suffix;
  natsMsg* msg = nullptr;
  natsStatus s = natsMsg_Create(&msg, subject.c_str(), nullptr, wire.body.data(),
                                static_cast<int>(wire.body.size()));
  // As a member hands it on: P.fwd.* takes only what members send.
  if (s == NATS_OK) s = natsMsgHeader_Set(msg, kForwardedHeader, "1");
  natsMsg* reply = nullptr;
  if (s == NATS_OK) s = natsConnection_RequestMsg(&reply, nc, msg, timeout_ms);
  natsMsg_Destroy(msg);
  if (s == NATS_NO_RESPONDERS) {
    return Status::Unavailable("ErrUnavailable", "no member answers on " + subject);
  }
  if (s == NATS_TIMEOUT) return Status(Status::Code::kTimeout, "ErrTimeout", "no answer in time");
  if (s != NATS_OK) return Status::Unavailable("ErrNats", natsStatus_GetText(s));
  ServiceError error;
  uint64_t raft_term = 0;
  Result<server::Response> response =
      ReadErrorReply(reply, &error)
          ? Result<server::Response>(FromServiceError(error))
          : DecodeWireResponse(asked,
                               std::string_view(natsMsg_GetData(reply),
                                                static_cast<size_t>(natsMsg_GetDataLength(reply))),
                               &raft_term);
  natsMsg_Destroy(reply);
  if (!response.ok()) return response.status();
  if (auto* hash = std::get_if<HashKVResponse>(&response.value())) return *hash;
  return Status::Internal("not a HashKV answer");
}

}  // namespace

Status InitialCorruptCheck(natsConnection* nc, std::string_view prefix, const std::string& name,
                           server::Member& member, int64_t timeout_ms) {
  fprintf(stderr, "natcd %s: starting initial corruption check (timeout %lld ms)\n", name.c_str(),
          static_cast<long long>(timeout_ms));
  Result<HashKVResponse> own = member.HashKVBeforeStart();
  if (!own.ok()) {
    return Status::Corruption("failed to fetch hash (" + own.status().ToString() + ")");
  }
  std::vector<alarm::PeerHashAnswer> answers;
  for (server::NodeId peer : member.PeersBeforeStart()) {
    answers.push_back({peer, AskHash(nc, prefix, peer, own->hash_revision, timeout_ms)});
  }
  std::vector<std::string> log;
  Status verdict = alarm::JudgeInitialHashes(member.id(), *own, answers, &log);
  for (const std::string& line : log) fprintf(stderr, "natcd %s: %s\n", name.c_str(), line.c_str());
  return verdict;
}

}  // namespace natcd::nats
