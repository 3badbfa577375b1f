// StreamCall: one call of etcd's API as grpc++'s generic callback service
// runs every method, a bidirectional stream of byte buffers. It reads one
// message at a time (OnMessage), writes what Send queues one at a time
// (grpc++ allows one outstanding write per stream, so the call keeps its
// own queue), and finishes once, after what was queued before.
//
// Lifetime: shared. The call holds itself until grpc++ is done with it
// (OnDone); whoever answers it later (a responder on the member thread, a
// watch registry) holds a shared_ptr, so the object outlives every use.
// Once done, Send and End do nothing.
//
// Thread safety: Send, End, ResumeReading and the observers are
// thread-safe; the On* reactions run on grpc++'s threads and must not block.
#pragma once

#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/support/server_callback.h>

#include <cstddef>
#include <deque>
#include <memory>
#include <optional>
#include <string>

#include "natcd/mutex.h"

namespace natcd::etcd_api {

class StreamCall : public grpc::ServerGenericBidiReactor,
                   public std::enable_shared_from_this<StreamCall> {
 public:
  ~StreamCall() override = default;
  StreamCall(const StreamCall&) = delete;
  StreamCall& operator=(const StreamCall&) = delete;

  // Starts reading (grpc++ thread, from CreateReactor): call once, right
  // after make_shared.
  void Begin();

  // Queues a message. False when the call has ended (nothing is sent).
  bool Send(std::string bytes);
  // The same for a message already in slices (a watch response shared by
  // many streams: its slices are shared, not copied).
  bool Send(grpc::ByteBuffer message);
  // Sends `bytes` as the last message and finishes with OK.
  void SendLast(std::string bytes);
  // Finishes with `status` once what is queued has gone. The first End wins.
  void End(grpc::Status status);
  // Reading paused by OnMessage returning false starts again.
  void ResumeReading();

  // Bytes queued and not yet written (for a bound on slow streams).
  size_t queued_bytes() const;
  // The client went away or the call was ended.
  bool ended() const;

  grpc::GenericCallbackServerContext* context() const { return context_; }

 protected:
  explicit StreamCall(grpc::GenericCallbackServerContext* context) : context_(context) {}

  // A message arrived. Return true to read the next one at once, false to
  // pause (ResumeReading) or stop reading.
  virtual bool OnMessage(std::string bytes) = 0;
  // No more messages will arrive: the client closed its side (half-close)
  // or the call is over.
  virtual void OnReadsEnded() {}
  // The call is over (canceled by the client or by the server's shutdown,
  // or ended): release what refers to it. Called once.
  virtual void OnCallEnded() {}
  // A write completed and the next queued one (if any) has started: a
  // call that produces its messages as they are taken sends more here.
  virtual void OnWriteCompleted() {}

 private:
  void OnReadDone(bool ok) override;
  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;
  // With mu_ held: what to start next, now that no write is outstanding.
  enum class Next { kNothing, kWrite, kFinish };
  Next TakeNext(grpc::Status* status) REQUIRES(mu_);
  void Start(Next next, grpc::Status status);

  grpc::GenericCallbackServerContext* const context_;
  std::shared_ptr<StreamCall> self_;  // until OnDone
  grpc::ByteBuffer read_;             // grpc++ thread only (one read at a time)

  mutable Mutex mu_;
  std::deque<grpc::ByteBuffer> queue_ GUARDED_BY(mu_);
  size_t queued_bytes_ GUARDED_BY(mu_) = 0;
  // Set under mu_ while no write is outstanding; the outstanding write owns
  // it until OnWriteDone.
  grpc::ByteBuffer writing_buffer_;
  bool writing_ GUARDED_BY(mu_) = false;
  bool reading_ GUARDED_BY(mu_) = false;
  bool reads_ended_ GUARDED_BY(mu_) = false;
  bool read_paused_ GUARDED_BY(mu_) = false;
  bool resume_pending_ GUARDED_BY(mu_) = false;
  std::optional<grpc::Status> final_ GUARDED_BY(mu_);
  bool finished_ GUARDED_BY(mu_) = false;  // Finish issued
  bool ended_ GUARDED_BY(mu_) = false;     // canceled or ended: Send refuses
  bool ended_notified_ GUARDED_BY(mu_) = false;
};

// A call answered at once with `status` (an unknown method, a call refused
// while stopping); it deletes itself when done.
grpc::ServerGenericBidiReactor* RejectedCall(grpc::Status status);

}  // namespace natcd::etcd_api
