// A grpc++ generic client for natcd's gRPC API in tests: protobuf-c
// messages packed into byte buffers, unary calls (synchronous, or started
// and awaited later), and a bidirectional stream driven synchronously.
#pragma once

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <protobuf-c/protobuf-c.h>

#include <chrono>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace natcd::testing {

inline std::string Pack(const ProtobufCMessage* m) {
  std::string out(protobuf_c_message_get_packed_size(m), '\0');
  protobuf_c_message_pack(m, reinterpret_cast<uint8_t*>(out.data()));
  return out;
}

inline grpc::ByteBuffer Buffer(const std::string& bytes) {
  grpc::Slice slice(bytes);
  return grpc::ByteBuffer(&slice, 1);
}

inline std::string Bytes(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  std::string out;
  if (buffer.Dump(&slices).ok()) {
    for (const auto& s : slices) out.append(reinterpret_cast<const char*>(s.begin()), s.size());
  }
  return out;
}

inline ProtobufCBinaryData BinaryOf(const std::string& s) {
  return {s.size(), reinterpret_cast<uint8_t*>(const_cast<char*>(s.data()))};
}

// A unary call started now and awaited later (a Lock or Campaign that waits).
class PendingCall {
 public:
  PendingCall(grpc::GenericStub* stub, const std::string& method, const std::string& request,
              std::chrono::milliseconds deadline = std::chrono::seconds(30))
      : in_(Buffer(request)) {
    context_.set_deadline(std::chrono::system_clock::now() + deadline);
    stub->UnaryCall(&context_, method, grpc::StubOptions(), &in_, &out_,
                    [this](grpc::Status s) { done_.set_value(std::move(s)); });
    result_ = done_.get_future();
  }
  ~PendingCall() {
    context_.TryCancel();
    result_.wait();
  }
  // True when the call ended within `timeout`.
  bool Wait(std::chrono::milliseconds timeout) {
    return result_.wait_for(timeout) == std::future_status::ready;
  }
  grpc::Status status() { return result_.get(); }
  std::string response() const { return Bytes(out_); }
  void Cancel() { context_.TryCancel(); }

 private:
  grpc::ClientContext context_;
  grpc::ByteBuffer in_, out_;
  std::promise<grpc::Status> done_;
  std::shared_future<grpc::Status> result_;
};

inline grpc::Status UnaryCall(grpc::GenericStub* stub, const std::string& method,
                              const std::string& request, std::string* response) {
  PendingCall call(stub, method, request, std::chrono::seconds(10));
  grpc::Status s = call.status();
  if (response != nullptr) *response = call.response();
  return s;
}

// A bidirectional stream driven synchronously over a completion queue.
class SyncStream {
 public:
  SyncStream(grpc::GenericStub* stub, const std::string& method,
             const std::multimap<std::string, std::string>& metadata = {}) {
    for (const auto& [key, value] : metadata) context_.AddMetadata(key, value);
    call_ = stub->PrepareCall(&context_, method, &cq_);
    call_->StartCall(Tag(1));
    ok_ = Await(1);
  }
  ~SyncStream() {
    context_.TryCancel();
    if (!finished_) Finish();
    cq_.Shutdown();
    void* tag;
    bool ok;
    while (cq_.Next(&tag, &ok)) {
    }
  }
  bool ok() const { return ok_; }
  bool Write(const std::string& bytes) {
    grpc::ByteBuffer buffer = Buffer(bytes);
    call_->Write(buffer, Tag(2));
    return Await(2);
  }
  // The status the server ended the stream with (once Read returned false).
  grpc::Status Finish() {
    finished_ = true;
    grpc::Status status;
    call_->Finish(&status, Tag(9));
    Await(9);
    return status;
  }
  // Half-closes: the client sends no more (a server-streaming call's one request sent).
  bool WritesDone() {
    call_->WritesDone(Tag(4));
    return Await(4);
  }
  // The next message, or false when the stream ended or `timeout` passed
  // (a read that timed out stays outstanding: the next Read waits for it).
  bool Read(std::string* bytes, std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    if (!reading_) {
      read_buffer_.Clear();
      call_->Read(&read_buffer_, Tag(3));
      reading_ = true;
    }
    if (!Await(3, timeout)) return false;
    reading_ = false;
    *bytes = Bytes(read_buffer_);
    return true;
  }

 private:
  static void* Tag(intptr_t n) { return reinterpret_cast<void*>(n); }
  // Waits for the operation tagged `want`; others that complete meanwhile
  // are remembered for their own Await.
  bool Await(intptr_t want, std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    auto deadline = std::chrono::system_clock::now() + timeout;
    while (true) {
      auto it = completed_.find(want);
      if (it != completed_.end()) {
        const bool ok = it->second;
        completed_.erase(it);
        return ok;
      }
      void* tag = nullptr;
      bool ok = false;
      if (cq_.AsyncNext(&tag, &ok, deadline) != grpc::CompletionQueue::GOT_EVENT) return false;
      completed_[reinterpret_cast<intptr_t>(tag)] = ok;
    }
  }
  std::map<intptr_t, bool> completed_;
  grpc::ClientContext context_;
  grpc::CompletionQueue cq_;
  std::unique_ptr<grpc::GenericClientAsyncReaderWriter> call_;
  bool ok_ = false;
  bool finished_ = false;
  grpc::ByteBuffer read_buffer_;
  bool reading_ = false;
};

}  // namespace natcd::testing
