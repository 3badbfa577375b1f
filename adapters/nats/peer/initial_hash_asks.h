// etcd's --experimental-initial-corrupt-check over NATS: before a member
// that already has data serves (Node::Start, between Member::Open and
// Member::Start), it asks every other member of the cluster its HashKV at
// this member's current revision on P.fwd.<member ID>.maint.hashkv, where
// each member answers for itself, one after another with the request
// timeout each (etcd's getPeerHashKVs), and judges the answers as etcd
// does (core/alarm/initial_hash_check.h). A member that does not answer
// (no responders: it is down) is passed over at once.
//
// Thread safety: runs on the caller's thread, before the member starts.
#pragma once

#include <nats/nats.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "natcd/status.h"
#include "server/member.h"

namespace natcd::nats {

// OK, or ErrCorrupt "<ID> found data inconsistency with peers" (the member
// must not start). Writes etcd's lines to stderr, tagged with `name`.
Status InitialCorruptCheck(natsConnection* nc, std::string_view prefix, const std::string& name,
                           server::Member& member, int64_t timeout_ms);

}  // namespace natcd::nats
