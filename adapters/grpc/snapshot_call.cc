#include "adapters/grpc/snapshot_call.h"

#include <algorithm>

#include "adapters/grpc/etcd_codec.h"
#include "adapters/grpc/etcd_error.h"
#include "adapters/grpc/live_calls.h"
#include "adapters/grpc/message_decoder.h"
#include "adapters/nats/natcd.pb-c.h"
#include "storage/backup_file.h"

namespace natcd::etcd_api {
namespace {

// Database bytes per message (etcd sends 32 KiB; fewer, larger messages
// cost less here, and clients take up to 2 GiB).
constexpr size_t kChunkBytes = 1 << 20;

std::string Encode(const server::BackupChunk& chunk, uint64_t remaining, const ResponseInfo& info,
                   uint64_t raft_term) {
  nats::HeaderInfo header = info.header;
  header.raft_term = raft_term;
  nats::ProtoArena arena;
  Natcd__V1__SnapshotResponse out;
  natcd__v1__snapshot_response__init(&out);
  ResponseHeader h;
  h.revision = chunk.revision;
  out.header = nats::ToProto(h, header, &arena);
  out.remaining_bytes = remaining;
  out.blob.data = reinterpret_cast<uint8_t*>(const_cast<char*>(chunk.blob.data()));
  out.blob.len = chunk.blob.size();
  return Pack(out.base);
}

}  // namespace

grpc::ServerGenericBidiReactor* SnapshotCall::Start(grpc::GenericCallbackServerContext* context,
                                                    const MethodInfo* method,
                                                    const CallContext* calls) {
  std::shared_ptr<SnapshotCall> call(new SnapshotCall(context, method, calls));
  call->Begin();
  // A slow reader's stream is ended at once when the server stops.
  calls->live->Add(call);
  return call.get();
}

bool SnapshotCall::OnMessage(std::string bytes) {
  received_ = true;
  grpc::Status error;
  Message message = DecodeMessage(method_->request, bytes, &error);
  if (message == nullptr) {
    End(error);
    return false;
  }
  std::shared_ptr<SnapshotCall> self = std::static_pointer_cast<SnapshotCall>(shared_from_this());
  calls_->member->BeginBackup(kChunkBytes, [self](Result<server::BackupChunk> first) {
    if (!first.ok()) {
      self->End(ToGrpcStatus(first.status()));
      return;
    }
    bool gone = false;
    {
      MutexLock lock(&self->mu_);
      self->backup_id_ = first->backup_id;
      self->database_bytes_ = first->total_bytes - kBackupTrailerBytes;
      gone = self->finished_;  // the client went away while the copy was taken
    }
    if (gone) {
      self->calls_->member->backups().End(first->backup_id);
      return;
    }
    self->SendNext();
  });
  return false;  // the one request message
}

void SnapshotCall::OnReadsEnded() {
  if (!received_) End(grpc::Status(grpc::StatusCode::INTERNAL, "no request message"));
}

void SnapshotCall::SendNext() {
  std::string message;
  bool last = false;
  uint64_t id = 0;
  Status failed;
  {
    MutexLock lock(&mu_);
    if (finished_ || backup_id_ == 0) return;
    id = backup_id_;
    const uint64_t offset = next_offset_;
    // The database in chunks, then the trailer alone, as etcd sends them.
    const size_t want =
        offset < database_bytes_
            ? static_cast<size_t>(std::min<uint64_t>(kChunkBytes, database_bytes_ - offset))
            : static_cast<size_t>(kBackupTrailerBytes);
    Result<server::BackupChunk> chunk = calls_->member->backups().Read(id, offset, want);
    if (!chunk.ok()) {
      finished_ = true;
      failed = chunk.status();
    } else {
      next_offset_ = offset + chunk->blob.size();
      last = chunk->remaining_bytes == 0;
      const uint64_t remaining =
          next_offset_ < database_bytes_ ? database_bytes_ - next_offset_ : 0;
      message = Encode(*chunk, remaining, calls_->response, calls_->member->raft_term());
      if (last) finished_ = true;
    }
  }
  // grpc++ is called without mu_: a reaction may run inline.
  if (!failed.ok()) {
    calls_->member->backups().End(id);
    End(ToGrpcStatus(failed));
  } else if (last) {
    SendLast(std::move(message));
    calls_->member->backups().End(id);
  } else if (!Send(std::move(message))) {
    calls_->member->backups().End(id);
  }
}

void SnapshotCall::OnCallEnded() {
  uint64_t id = 0;
  {
    MutexLock lock(&mu_);
    finished_ = true;
    id = backup_id_;
  }
  if (id != 0) calls_->member->backups().End(id);
}

}  // namespace natcd::etcd_api
