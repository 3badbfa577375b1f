#include "adapters/nats/peer/raft_transport.h"

#include <cstdio>
#include <cstdlib>

#include "adapters/nats/codec/wire.h"

namespace natcd::nats {

std::string MemberHex(raft::NodeId id) {
  char buf[17];
  snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(id));
  return buf;
}

std::string RaftSubject(std::string_view prefix, std::string_view cluster, raft::NodeId id) {
  return std::string(prefix) + ".raft." + std::string(cluster) + "." + MemberHex(id);
}

std::string PublishedSubject(std::string_view prefix, std::string_view cluster) {
  return std::string(prefix) + ".raft." + std::string(cluster) + ".published";
}

std::string ForwardPrefix(std::string_view prefix, raft::NodeId id) {
  return std::string(prefix) + ".fwd." + MemberHex(id) + ".";
}

std::string DirectPrefix(std::string_view prefix, raft::NodeId id) {
  return std::string(prefix) + ".to." + MemberHex(id) + ".";
}

std::string_view RequestSuffix(std::string_view subject, std::string_view prefix) {
  if (subject.size() <= prefix.size() + 1 || subject.substr(0, prefix.size()) != prefix ||
      subject[prefix.size()] != '.') {
    return {};
  }
  std::string_view rest = subject.substr(prefix.size() + 1);
  const size_t addressed = rest.starts_with("fwd.") ? 4 : rest.starts_with("to.") ? 3 : 0;
  if (addressed > 0) {
    size_t dot = rest.find('.', addressed);
    return dot == std::string_view::npos ? std::string_view() : rest.substr(dot + 1);
  }
  return rest;
}

namespace {

// A copy of msg's body and headers (but the hop count) on a new subject.
natsStatus Copy(natsMsg* msg, const char* subject, const char* reply, natsMsg** out) {
  natsMsg* copy = nullptr;
  natsStatus s =
      natsMsg_Create(&copy, subject, reply, natsMsg_GetData(msg), natsMsg_GetDataLength(msg));
  const char** keys = nullptr;
  int count = 0;
  if (s == NATS_OK && natsMsgHeader_Keys(msg, &keys, &count) == NATS_OK) {
    for (int i = 0; s == NATS_OK && i < count; i++) {
      if (std::string_view(keys[i]) == kForwardedHeader) continue;
      const char** values = nullptr;
      int n = 0;
      if (natsMsgHeader_Values(msg, keys[i], &values, &n) != NATS_OK) continue;
      for (int j = 0; s == NATS_OK && j < n; j++) s = natsMsgHeader_Add(copy, keys[i], values[j]);
      free(values);
    }
    free(keys);
  }
  if (s != NATS_OK) {
    natsMsg_Destroy(copy);
    return s;
  }
  *out = copy;
  return NATS_OK;
}

natsStatus SetForwardHeaders(natsMsg* msg, const ForwardedBy& by) {
  natsStatus s = natsMsgHeader_Set(msg, kForwardedHeader, std::to_string(by.hops).c_str());
  if (s == NATS_OK && by.auth_revision != 0) {
    s = natsMsgHeader_Set(msg, kAuthRevisionHeader, std::to_string(by.auth_revision).c_str());
  }
  return s;
}

}  // namespace

natsStatus ForwardRequest(natsConnection* nc, natsMsg* request, const std::string& subject,
                          const std::string& reply, const ForwardedBy& by) {
  natsMsg* copy = nullptr;
  natsStatus s = Copy(request, subject.c_str(), reply.c_str(), &copy);
  if (s == NATS_OK) s = SetForwardHeaders(copy, by);
  if (s == NATS_OK) s = natsConnection_PublishMsg(nc, copy);
  natsMsg_Destroy(copy);
  return s;
}

natsStatus ForwardEncoded(natsConnection* nc, const std::string& subject, const std::string& reply,
                          const std::string& body, const std::string& request_id,
                          const ForwardedBy& by) {
  natsMsg* msg = nullptr;
  natsStatus s = natsMsg_Create(&msg, subject.c_str(), reply.c_str(), body.data(),
                                static_cast<int>(body.size()));
  if (s == NATS_OK && !request_id.empty()) {
    s = natsMsgHeader_Set(msg, kRequestIdHeader, request_id.c_str());
  }
  if (s == NATS_OK) s = SetForwardHeaders(msg, by);
  if (s == NATS_OK) s = natsConnection_PublishMsg(nc, msg);
  natsMsg_Destroy(msg);
  return s;
}

natsStatus RelayReply(natsConnection* nc, natsMsg* answer, const char* client_reply) {
  if (client_reply == nullptr || *client_reply == '\0') return NATS_OK;
  natsMsg* copy = nullptr;
  natsStatus s = Copy(answer, client_reply, nullptr, &copy);
  if (s == NATS_OK) s = natsConnection_PublishMsg(nc, copy);
  natsMsg_Destroy(copy);
  return s;
}

int ForwardHops(natsMsg* request) {
  const char* value = nullptr;
  if (natsMsgHeader_Get(request, kForwardedHeader, &value) != NATS_OK || value == nullptr) return 0;
  return atoi(value);
}

}  // namespace natcd::nats
