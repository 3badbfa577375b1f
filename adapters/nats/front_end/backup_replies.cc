#include "adapters/nats/front_end/backup_replies.h"

#include <algorithm>

#include "adapters/nats/codec/convert.h"
#include "adapters/nats/codec/wire.h"

namespace natcd::nats {
namespace {

// Room for the reply's headers and its fields besides the blob.
constexpr int64_t kReplyOverheadBytes = 8 << 10;
constexpr size_t kChunkBytesMin = 4 << 10;

std::string Encode(const server::BackupChunk& chunk, const HeaderInfo& info, bool json) {
  ProtoArena arena;
  Natcd__V1__SnapshotResponse response;
  natcd__v1__snapshot_response__init(&response);
  ResponseHeader header;
  header.revision = chunk.revision;
  response.header = ToProto(header, info, &arena);
  response.remaining_bytes = chunk.remaining_bytes;
  response.blob.data = reinterpret_cast<uint8_t*>(const_cast<char*>(chunk.blob.data()));
  response.blob.len = chunk.blob.size();
  response.snapshot_id = chunk.backup_id;
  response.offset = chunk.offset;
  response.total_bytes = chunk.total_bytes;
  return EncodeMessage(&response.base, json);
}

}  // namespace

size_t BackupChunkBytes(int64_t max_payload, bool json) {
  const int64_t room = max_payload - kReplyOverheadBytes;
  const int64_t bytes = json ? room / 4 * 3 : room;
  return static_cast<size_t>(std::max<int64_t>(bytes, kChunkBytesMin));
}

void ServeBackupRequest(server::Member& member, const Natcd__V1__SnapshotRequest& request,
                        std::unique_ptr<NatsResponder> responder, HeaderInfo header,
                        size_t chunk_bytes) {
  if (request.snapshot_id == 0) {
    if (request.done || request.offset != 0) {
      responder->RespondStatus(Status::InvalidArgument(
          "ErrInvalidArgument", "offset and done need the snapshot_id of a backup"));
      return;
    }
    // The responder travels to the member thread, then to the copier
    // thread; one of them answers, once.
    std::shared_ptr<NatsResponder> r(responder.release());
    member.BeginBackup(chunk_bytes, [r, header](Result<server::BackupChunk> first) {
      if (!first.ok()) {
        r->RespondStatus(first.status());
        return;
      }
      r->RespondBody(Encode(*first, header, r->json()));
    });
    return;
  }
  if (request.done) {
    member.backups().End(request.snapshot_id);
    ProtoArena arena;
    Natcd__V1__SnapshotResponse response;
    natcd__v1__snapshot_response__init(&response);
    response.header = ToProto(ResponseHeader{}, header, &arena);
    response.snapshot_id = request.snapshot_id;
    responder->RespondBody(EncodeMessage(&response.base, responder->json()));
    return;
  }
  Result<server::BackupChunk> chunk =
      member.backups().Read(request.snapshot_id, request.offset, chunk_bytes);
  if (!chunk.ok()) {
    responder->RespondStatus(chunk.status());
    return;
  }
  responder->RespondBody(Encode(*chunk, header, responder->json()));
}

}  // namespace natcd::nats
