// Maintenance.Snapshot: etcd's server stream of a backup. The member's
// database is copied on a copier thread (server/online_backups.h), then
// streamed as etcd's server does: chunks of the database, each with the
// bytes of the database still to come (remaining_bytes), then one last
// message holding the 32-byte SHA-256 of the database (remaining_bytes 0),
// which etcdctl's `snapshot save` writes at the end of the file.
//
// Flow control: one message in flight. The next chunk is read from the
// copy only when grpc++ has written the previous one, so a slow client
// holds the member to one chunk of memory; the copy waits on disk.
//
// Thread safety: as StreamCall; the first chunk goes out from the copier
// thread, the others from grpc++'s threads as writes complete (one at a
// time: each follows the previous write).
#pragma once

#include <memory>
#include <string>

#include "adapters/grpc/call_context.h"
#include "adapters/grpc/etcd_methods.h"
#include "adapters/grpc/stream_call.h"
#include "natcd/mutex.h"

namespace natcd::etcd_api {

class SnapshotCall final : public StreamCall {
 public:
  static grpc::ServerGenericBidiReactor* Start(grpc::GenericCallbackServerContext* context,
                                               const MethodInfo* method, const CallContext* calls);

 private:
  SnapshotCall(grpc::GenericCallbackServerContext* context, const MethodInfo* method,
               const CallContext* calls)
      : StreamCall(context), method_(method), calls_(calls) {}
  bool OnMessage(std::string bytes) override;
  void OnReadsEnded() override;
  void OnWriteCompleted() override { SendNext(); }
  void OnCallEnded() override;
  // Reads the next message from the copy and sends it (the last one ends
  // the call and the backup).
  void SendNext();

  const MethodInfo* const method_;
  const CallContext* const calls_;
  bool received_ = false;  // grpc++ thread only

  Mutex mu_;
  uint64_t backup_id_ GUARDED_BY(mu_) = 0;  // 0: no copy yet
  uint64_t database_bytes_ GUARDED_BY(mu_) = 0;
  uint64_t next_offset_ GUARDED_BY(mu_) = 0;
  bool finished_ GUARDED_BY(mu_) = false;  // the last message went, or the call ended
};

}  // namespace natcd::etcd_api
