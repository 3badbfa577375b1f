// Member-to-member traffic in a cluster, on the same NATS deployment as the
// clients (no extra ports): Raft messages on P.raft.<cluster>.<member>, and
// client requests a follower hands to the leader on P.fwd.<member>.<suffix>
// (suffix = the endpoint's own, e.g. kv.put). The follower asks with its own
// reply subject and relays the answer: if the leader it knew is gone, NATS
// tells the follower (no responders), which then waits for the next leader
// instead of leaving the client to time out.
#pragma once

#include <nats/nats.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "raft/types.h"

namespace natcd::nats {

// Carries how many members a request has passed through: a request that
// keeps bouncing between members that each think another leads is answered
// with "no leader" instead of looping.
inline constexpr const char* kForwardedHeader = "Natcd-Forwarded";
inline constexpr int kMaxForwardHops = 3;

// 16 lowercase hex digits, as member IDs appear in subjects.
std::string MemberHex(raft::NodeId id);
std::string RaftSubject(std::string_view prefix, std::string_view cluster, raft::NodeId id);
// P.fwd.<id>.: what members hand to member <id> (a follower to its leader),
// checked already by the member that received it. Members only: NATS
// permissions keep it, as P.raft.*, from clients (docs/PROTOCOL.md, "Auth").
std::string ForwardPrefix(std::string_view prefix, raft::NodeId id);
// P.to.<id>.: what clients address to member <id> (a write to the leader
// they know, one member's status or hash), checked on entry as on P.<suffix>.
std::string DirectPrefix(std::string_view prefix, raft::NodeId id);
// Where the leader says how far P.ev.* reached the server (a decimal
// revision): P.raft.<cluster>.published.
std::string PublishedSubject(std::string_view prefix, std::string_view cluster);

// The endpoint suffix of a request's subject: what follows "P." or, for a
// request addressed to one member, "P.fwd.<id>." or "P.to.<id>.". Empty
// when the subject is none of these.
std::string_view RequestSuffix(std::string_view subject, std::string_view prefix);

// What a forward says besides the request: how many members it passed
// through, and the auth store revision its permissions were checked at
// (0: not checked; no header).
struct ForwardedBy {
  int hops = 0;
  uint64_t auth_revision = 0;
};

// Publishes a copy of `request` (body and headers) to `subject` with reply
// subject `reply`, and the forward's headers set.
natsStatus ForwardRequest(natsConnection* nc, natsMsg* request, const std::string& subject,
                          const std::string& reply, const ForwardedBy& by);
// Publishes a request a member encoded itself (a request that did not
// arrive over NATS) to `subject` with reply subject `reply`: protobuf body,
// the Natcd-Request-Id header when request_id is not empty, and the
// forward's headers.
natsStatus ForwardEncoded(natsConnection* nc, const std::string& subject, const std::string& reply,
                          const std::string& body, const std::string& request_id,
                          const ForwardedBy& by);
// Publishes the leader's answer (body and headers) to the client.
natsStatus RelayReply(natsConnection* nc, natsMsg* answer, const char* client_reply);
// The hop count of a request (0 when it came from a client).
int ForwardHops(natsMsg* request);

}  // namespace natcd::nats
