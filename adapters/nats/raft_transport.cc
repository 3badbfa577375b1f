#include "adapters/nats/raft_transport.h"

#include <cstdio>
#include <cstdlib>

namespace natcd::nats {

std::string MemberHex(raft::NodeId id) {
  char buf[17];
  snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(id));
  return buf;
}

std::string RaftSubject(std::string_view prefix, std::string_view cluster, raft::NodeId id) {
  return std::string(prefix) + ".raft." + std::string(cluster) + "." + MemberHex(id);
}

std::string ForwardPrefix(std::string_view prefix, raft::NodeId id) {
  return std::string(prefix) + ".fwd." + MemberHex(id) + ".";
}

std::string_view RequestSuffix(std::string_view subject, std::string_view prefix) {
  if (subject.size() <= prefix.size() + 1 || subject.substr(0, prefix.size()) != prefix ||
      subject[prefix.size()] != '.') {
    return {};
  }
  std::string_view rest = subject.substr(prefix.size() + 1);
  if (rest.substr(0, 4) == "fwd.") {
    size_t dot = rest.find('.', 4);
    return dot == std::string_view::npos ? std::string_view() : rest.substr(dot + 1);
  }
  return rest;
}

natsStatus ForwardRequest(natsConnection* nc, natsMsg* request, const std::string& subject,
                          int hops) {
  natsMsg* copy = nullptr;
  natsStatus s = natsMsg_Create(&copy, subject.c_str(), natsMsg_GetReply(request),
                                natsMsg_GetData(request), natsMsg_GetDataLength(request));
  const char** keys = nullptr;
  int count = 0;
  if (s == NATS_OK && natsMsgHeader_Keys(request, &keys, &count) == NATS_OK) {
    for (int i = 0; s == NATS_OK && i < count; i++) {
      if (std::string_view(keys[i]) == kForwardedHeader) continue;
      const char** values = nullptr;
      int n = 0;
      if (natsMsgHeader_Values(request, keys[i], &values, &n) != NATS_OK) continue;
      for (int j = 0; s == NATS_OK && j < n; j++) s = natsMsgHeader_Add(copy, keys[i], values[j]);
      free(values);
    }
    free(keys);
  }
  if (s == NATS_OK) s = natsMsgHeader_Set(copy, kForwardedHeader, std::to_string(hops).c_str());
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
