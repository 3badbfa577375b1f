#include "adapters/grpc/stream_call.h"

#include <vector>

namespace natcd::etcd_api {
namespace {

// The bytes move into the slice: no copy on the way out.
grpc::ByteBuffer ToBuffer(std::string bytes) {
  auto* owned = new std::string(std::move(bytes));
  grpc::Slice slice(
      owned->data(), owned->size(), [](void* s) { delete static_cast<std::string*>(s); }, owned);
  return grpc::ByteBuffer(&slice, 1);
}

std::string Flatten(const grpc::ByteBuffer& buffer) {
  std::string out;
  std::vector<grpc::Slice> slices;
  if (!buffer.Dump(&slices).ok()) return out;
  size_t n = 0;
  for (const grpc::Slice& s : slices) n += s.size();
  out.reserve(n);
  for (const grpc::Slice& s : slices)
    out.append(reinterpret_cast<const char*>(s.begin()), s.size());
  return out;
}

class Rejected final : public grpc::ServerGenericBidiReactor {
 public:
  explicit Rejected(grpc::Status status) { Finish(std::move(status)); }
  void OnDone() override { delete this; }
};

}  // namespace

grpc::ServerGenericBidiReactor* RejectedCall(grpc::Status status) {
  return new Rejected(std::move(status));
}

void StreamCall::Begin() {
  self_ = shared_from_this();
  {
    MutexLock lock(&mu_);
    reading_ = true;
  }
  StartRead(&read_);
}

bool StreamCall::Send(std::string bytes) { return Send(ToBuffer(std::move(bytes))); }

bool StreamCall::Send(grpc::ByteBuffer message) {
  {
    MutexLock lock(&mu_);
    if (ended_ || final_) return false;
    if (writing_) {
      queued_bytes_ += message.Length();
      // ByteBuffer has no move: a swap spares copying its slice list.
      queue_.emplace_back();
      queue_.back().Swap(&message);
      return true;
    }
    writing_ = true;
    writing_buffer_.Swap(&message);
  }
  // The buffer stays untouched until OnWriteDone.
  StartWrite(&writing_buffer_);
  return true;
}

void StreamCall::SendLast(std::string bytes) {
  {
    MutexLock lock(&mu_);
    if (ended_ || final_) return;
    final_ = grpc::Status::OK;
    if (writing_) {
      queued_bytes_ += bytes.size();
      queue_.push_back(ToBuffer(std::move(bytes)));
      return;
    }
    writing_ = true;
    finished_ = true;
    writing_buffer_ = ToBuffer(std::move(bytes));
  }
  StartWriteAndFinish(&writing_buffer_, grpc::WriteOptions(), grpc::Status::OK);
}

void StreamCall::End(grpc::Status status) {
  {
    MutexLock lock(&mu_);
    if (final_) return;
    final_ = status;
    // A write outstanding finishes the call when it completes.
    if (writing_ || finished_) return;
    finished_ = true;
  }
  Finish(std::move(status));
}

void StreamCall::ResumeReading() {
  {
    MutexLock lock(&mu_);
    if (!read_paused_) {
      resume_pending_ = true;  // OnMessage is deciding right now
      return;
    }
    if (reads_ended_) return;
    read_paused_ = false;
    reading_ = true;
  }
  StartRead(&read_);
}

size_t StreamCall::queued_bytes() const {
  MutexLock lock(&mu_);
  return queued_bytes_;
}

bool StreamCall::ended() const {
  MutexLock lock(&mu_);
  return ended_ || final_.has_value();
}

void StreamCall::OnReadDone(bool ok) {
  if (!ok) {
    {
      MutexLock lock(&mu_);
      reading_ = false;
      reads_ended_ = true;
    }
    OnReadsEnded();
    return;
  }
  std::string bytes = Flatten(read_);
  read_.Clear();
  const bool more = OnMessage(std::move(bytes));
  {
    MutexLock lock(&mu_);
    if (!more && !resume_pending_) {
      reading_ = false;
      read_paused_ = true;
      return;
    }
    resume_pending_ = false;
  }
  StartRead(&read_);
}

StreamCall::Next StreamCall::TakeNext(grpc::Status* status) {
  if (finished_) return Next::kNothing;
  if (!queue_.empty()) {
    queued_bytes_ -= queue_.front().Length();
    writing_buffer_.Clear();
    writing_buffer_.Swap(&queue_.front());
    queue_.pop_front();
    writing_ = true;
    return Next::kWrite;
  }
  if (final_) {
    finished_ = true;
    *status = *final_;
    return Next::kFinish;
  }
  return Next::kNothing;
}

void StreamCall::Start(Next next, grpc::Status status) {
  if (next == Next::kWrite) StartWrite(&writing_buffer_);
  if (next == Next::kFinish) Finish(std::move(status));
}

void StreamCall::OnWriteDone(bool ok) {
  Next next;
  grpc::Status status;
  {
    MutexLock lock(&mu_);
    writing_ = false;
    if (!ok) {
      // The stream is broken: nothing more can be written.
      ended_ = true;
      queue_.clear();
      queued_bytes_ = 0;
      if (!final_) final_ = grpc::Status(grpc::StatusCode::CANCELLED, "stream broken");
    }
    next = TakeNext(&status);
  }
  Start(next, std::move(status));
  if (ok) OnWriteCompleted();
}

void StreamCall::OnCancel() {
  bool finish = false;
  bool notify = false;
  grpc::Status status;
  {
    MutexLock lock(&mu_);
    ended_ = true;
    queue_.clear();
    queued_bytes_ = 0;
    if (!final_) final_ = grpc::Status::CANCELLED;
    if (!writing_ && !finished_) {
      finished_ = true;
      finish = true;
      status = *final_;
    }
    notify = !ended_notified_;
    ended_notified_ = true;
  }
  if (notify) OnCallEnded();
  if (finish) Finish(std::move(status));
}

void StreamCall::OnDone() {
  bool notify;
  {
    MutexLock lock(&mu_);
    ended_ = true;
    notify = !ended_notified_;
    ended_notified_ = true;
  }
  if (notify) OnCallEnded();
  // The last reference may be this one: nothing after it.
  std::shared_ptr<StreamCall> self = std::move(self_);
}

}  // namespace natcd::etcd_api
