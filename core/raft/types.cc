#include "raft/types.h"

namespace natcd::raft {

// Layout: type (1 byte), node id (8 bytes, little-endian), context.
std::string EncodeConfChange(const ConfChange& cc) {
  std::string out;
  out.reserve(9 + cc.context.size());
  out.push_back(static_cast<char>(cc.type));
  for (int i = 0; i < 8; i++) out.push_back(static_cast<char>((cc.node_id >> (8 * i)) & 0xff));
  out += cc.context;
  return out;
}

bool DecodeConfChange(const std::string& data, ConfChange* cc) {
  if (data.size() < 9) return false;
  auto type = static_cast<uint8_t>(data[0]);
  if (type > static_cast<uint8_t>(ConfChangeType::kAddLearnerNode)) return false;
  cc->type = static_cast<ConfChangeType>(type);
  cc->node_id = 0;
  for (int i = 0; i < 8; i++) {
    cc->node_id |= static_cast<uint64_t>(static_cast<uint8_t>(data[1 + i])) << (8 * i);
  }
  cc->context = data.substr(9);
  return true;
}

const char* MessageTypeName(MessageType type) {
  switch (type) {
    case MessageType::kHup:
      return "MsgHup";
    case MessageType::kBeat:
      return "MsgBeat";
    case MessageType::kProp:
      return "MsgProp";
    case MessageType::kApp:
      return "MsgApp";
    case MessageType::kAppResp:
      return "MsgAppResp";
    case MessageType::kVote:
      return "MsgVote";
    case MessageType::kVoteResp:
      return "MsgVoteResp";
    case MessageType::kSnap:
      return "MsgSnap";
    case MessageType::kHeartbeat:
      return "MsgHeartbeat";
    case MessageType::kHeartbeatResp:
      return "MsgHeartbeatResp";
    case MessageType::kUnreachable:
      return "MsgUnreachable";
    case MessageType::kSnapStatus:
      return "MsgSnapStatus";
    case MessageType::kCheckQuorum:
      return "MsgCheckQuorum";
    case MessageType::kTransferLeader:
      return "MsgTransferLeader";
    case MessageType::kTimeoutNow:
      return "MsgTimeoutNow";
    case MessageType::kReadIndex:
      return "MsgReadIndex";
    case MessageType::kReadIndexResp:
      return "MsgReadIndexResp";
    case MessageType::kPreVote:
      return "MsgPreVote";
    case MessageType::kPreVoteResp:
      return "MsgPreVoteResp";
  }
  return "MsgUnknown";
}

bool IsLocalMessage(MessageType type) {
  return type == MessageType::kHup || type == MessageType::kBeat ||
         type == MessageType::kUnreachable || type == MessageType::kSnapStatus ||
         type == MessageType::kCheckQuorum;
}

bool IsResponseMessage(MessageType type) {
  return type == MessageType::kAppResp || type == MessageType::kVoteResp ||
         type == MessageType::kHeartbeatResp || type == MessageType::kUnreachable ||
         type == MessageType::kPreVoteResp;
}

const char* RoleName(Role role) {
  switch (role) {
    case Role::kFollower:
      return "follower";
    case Role::kCandidate:
      return "candidate";
    case Role::kPreCandidate:
      return "pre-candidate";
    case Role::kLeader:
      return "leader";
  }
  return "unknown";
}

}  // namespace natcd::raft
