// P.maint.snapshot on NATS: a client pulls a backup of the member's database
// (server/online_backups.h) one chunk per request, so it sets the pace and
// the member holds nothing for it but the copy on disk. The first request
// starts the backup and is answered, once the copy is taken (on a copier
// thread, not the member's), with the first chunk; each later one, sent to
// P.fwd.<member ID>.maint.snapshot, names the backup and the offset it
// wants, so a lost reply is asked for again. docs/PROTOCOL.md has the
// contract.
//
// Thread safety: called on the nats.c thread that received the request; a
// start is answered from the copier thread.
#pragma once

#include <cstddef>
#include <memory>

#include "adapters/nats/front_end/nats_responder.h"
#include "adapters/nats/natcd.pb-c.h"
#include "server/member.h"

namespace natcd::nats {

// Blob bytes per reply for a connection whose server takes messages of up
// to max_payload bytes (JSON replies carry the blob as base64).
size_t BackupChunkBytes(int64_t max_payload, bool json);

// Answers one SnapshotRequest through `responder` (now or from the copier).
void ServeBackupRequest(server::Member& member, const Natcd__V1__SnapshotRequest& request,
                        std::unique_ptr<NatsResponder> responder, HeaderInfo header,
                        size_t chunk_bytes);

}  // namespace natcd::nats
