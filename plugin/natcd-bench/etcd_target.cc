#include "plugin/natcd-bench/etcd_target.h"

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <absl/synchronization/mutex.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <mutex>

#include "plugin/natcd-bench/clock.h"
#include "plugin/natcd-bench/etcd_messages.h"

namespace natcd::bench {
namespace {

// The longest a unary call may take: far beyond any load's latency, short
// enough that a stuck etcd cannot hold a run for long.
constexpr int kCallDeadlineS = 30;

const char* MethodOf(Call call) {
  switch (call) {
    case Call::kPut:
      return "/etcdserverpb.KV/Put";
    case Call::kRange:
      return "/etcdserverpb.KV/Range";
    case Call::kTxn:
      return "/etcdserverpb.KV/Txn";
    case Call::kLeaseGrant:
      return "/etcdserverpb.Lease/LeaseGrant";
    case Call::kLeaseKeepAlive:
      return "/etcdserverpb.Lease/LeaseKeepAlive";
  }
  return "";
}

grpc::ByteBuffer ToBuffer(const std::string& bytes) {
  grpc::Slice slice(bytes);
  return grpc::ByteBuffer(&slice, 1);
}

std::string FromBuffer(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  std::string out;
  if (!buffer.Dump(&slices).ok()) return out;
  for (const grpc::Slice& s : slices)
    out.append(reinterpret_cast<const char*>(s.begin()), s.size());
  return out;
}

// etcd's WatchRequest is a oneof around the create request (field 1):
// wrap the encoded WatchCreateRequest as a length-delimited field 1.
std::string WatchCreate(const std::string& key, const std::string& range_end) {
  auto field = [](int number, const std::string& bytes) {
    std::string out(1, static_cast<char>(number << 3 | 2));
    size_t n = bytes.size();
    while (n >= 0x80) {
      out.push_back(static_cast<char>((n & 0x7f) | 0x80));
      n >>= 7;
    }
    out.push_back(static_cast<char>(n));
    return out + bytes;
  };
  return field(1, field(1, key) + field(2, range_end));
}

// A bidirectional stream: writes queued one at a time (gRPC allows one
// outstanding write), every message read handed to on_message.
class Stream final : public grpc::ClientBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  Stream(grpc::GenericStub* stub, const char* method,
         std::function<void(const std::string&)> on_message)
      : on_message_(std::move(on_message)) {
    stub->PrepareBidiStreamingCall(&ctx_, method, grpc::StubOptions(), this);
    StartRead(&read_);
    StartCall();
  }

  void Send(const std::string& bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    writes_.push_back(ToBuffer(bytes));
    if (writes_.size() == 1) StartWrite(&writes_.front());
  }

  // Cancels the stream and waits (bounded) until gRPC is done with it;
  // false if it is not, and then the stream must not be destroyed.
  bool Finish() {
    ctx_.TryCancel();
    std::unique_lock<std::mutex> lock(mu_);
    return done_cv_.wait_for(lock, std::chrono::seconds(kCallDeadlineS), [&] { return done_; });
  }

  void OnReadDone(bool ok) override {
    if (!ok) return;
    on_message_(FromBuffer(read_));
    StartRead(&read_);
  }

  void OnWriteDone(bool ok) override {
    std::lock_guard<std::mutex> lock(mu_);
    writes_.pop_front();
    if (ok && !writes_.empty()) StartWrite(&writes_.front());
  }

  void OnDone(const grpc::Status&) override {
    std::lock_guard<std::mutex> lock(mu_);
    done_ = true;
    done_cv_.notify_all();
  }

 private:
  grpc::ClientContext ctx_;
  std::function<void(const std::string&)> on_message_;
  grpc::ByteBuffer read_;
  std::mutex mu_;
  std::deque<grpc::ByteBuffer> writes_;  // front is being written; protected by mu_
  std::condition_variable done_cv_;
  bool done_ = false;  // protected by mu_
};

}  // namespace

struct EtcdTarget::Impl {
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<grpc::GenericStub> stub;
  ReplySink* sink = nullptr;
  std::vector<int64_t> leases;
  int64_t keepalive_lease = 0;
  int64_t lease_ttl_s = kGrantTtlS;
  // One LeaseKeepAlive stream per slot, opened by its first keep-alive.
  std::vector<std::unique_ptr<Stream>> keepalive_streams;
  std::unique_ptr<Stream> watch_stream;
  EventSink* event_sink = nullptr;
  std::mutex watch_mu;
  std::condition_variable watch_cv;
  int watches_created = 0;  // protected by watch_mu

  // One unary call; its state lives until its completion has run.
  struct UnaryState {
    grpc::ClientContext ctx;
    grpc::ByteBuffer request;
    grpc::ByteBuffer response;
  };

  // Unary calls not yet completed; EndLoad waits for none.
  std::mutex calls_mu;
  std::condition_variable calls_cv;
  int64_t calls_outstanding = 0;  // protected by calls_mu

  void Unary(Call call, const std::string& body,
             std::function<void(bool, const std::string&)> done) {
    {
      std::lock_guard<std::mutex> lock(calls_mu);
      ++calls_outstanding;
    }
    auto* state = new UnaryState;
    // Every call ends, answered or not, so its state is always freed.
    state->ctx.set_deadline(std::chrono::system_clock::now() +
                            std::chrono::seconds(kCallDeadlineS));
    state->request = ToBuffer(body);
    stub->UnaryCall(&state->ctx, MethodOf(call), grpc::StubOptions(), &state->request,
                    &state->response, [this, state, done = std::move(done)](grpc::Status status) {
                      const std::string reply = status.ok() ? FromBuffer(state->response) : "";
                      done(status.ok(), reply);
                      delete state;
                      std::lock_guard<std::mutex> lock(calls_mu);
                      if (--calls_outstanding == 0) calls_cv.notify_all();
                    });
  }

  bool Sync(Call call, const std::string& body, std::string* reply) {
    // Shared with the completion, which may outlive a caller that gave up.
    auto promise = std::make_shared<std::promise<std::pair<bool, std::string>>>();
    auto future = promise->get_future();
    Unary(call, body, [promise](bool ok, const std::string& r) { promise->set_value({ok, r}); });
    if (future.wait_for(std::chrono::seconds(kCallDeadlineS + 5)) != std::future_status::ready) {
      return false;
    }
    auto [ok, r] = future.get();
    *reply = std::move(r);
    return ok;
  }
};

EtcdTarget::EtcdTarget(const std::string& endpoint, std::string name)
    : impl_(std::make_unique<Impl>()), name_(std::move(name)) {
  // As natcd's gRPC server does (adapters/grpc/etcd_grpc_server.cc): Debian's
  // Abseil checks every grpc++ lock for deadlocks under one global lock,
  // which would make the client the bottleneck of the measurement.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  grpc::ChannelArguments args;
  // etcd's default limit on a request is 1.5 MiB; replies may be larger.
  args.SetMaxReceiveMessageSize(64 << 20);
  impl_->channel = grpc::CreateCustomChannel(endpoint, grpc::InsecureChannelCredentials(), args);
  impl_->stub = std::make_unique<grpc::GenericStub>(impl_->channel);
}

EtcdTarget::~EtcdTarget() {
  CloseWatchers();
  EndLoad();
}

bool EtcdTarget::WaitReady(int64_t timeout_ms) {
  const int64_t give_up = NowNs() + timeout_ms * 1'000'000;
  while (NowNs() < give_up) {
    std::string reply;
    int64_t count = 0;
    if (impl_->Sync(Call::kRange, CountBody("k"), &reply) &&
        ParseCount(reply.data(), reply.size(), &count)) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

bool EtcdTarget::BeginLoad(int slots, ReplySink* sink) {
  impl_->sink = sink;
  impl_->keepalive_streams.clear();
  impl_->keepalive_streams.resize(slots);
  return true;
}

void EtcdTarget::Issue(int slot, Op op, uint64_t i) {
  Impl& impl = *impl_;
  int64_t lease = 0;
  if (op == Op::kKeepAlive) lease = impl.keepalive_lease;
  if (op == Op::kPutLeased) lease = i < impl.leases.size() ? impl.leases[i] : 0;
  const EtcdRequest request = BuildRequest(op, i, lease, impl.lease_ttl_s);
  if (op == Op::kKeepAlive) {
    auto& stream = impl.keepalive_streams[slot];
    if (stream == nullptr) {
      stream = std::make_unique<Stream>(
          impl.stub.get(), MethodOf(Call::kLeaseKeepAlive), [&impl, slot](const std::string& r) {
            int64_t ttl = 0;
            impl.sink->OnReply(slot, ParseKeepAlive(r.data(), r.size(), &ttl) && ttl > 0);
          });
    }
    stream->Send(request.body);
    return;
  }
  impl.Unary(request.call, request.body, [&impl, slot, op, i](bool ok, const std::string& r) {
    if (ok && op == Op::kLeaseGrant) {
      int64_t id = 0;
      ok = ParseLeaseGrant(r.data(), r.size(), &id);
      if (i < impl.leases.size()) impl.leases[i] = id;
    }
    impl.sink->OnReply(slot, ok);
  });
}

void EtcdTarget::EndLoad() {
  Impl& impl = *impl_;
  for (auto& stream : impl.keepalive_streams) {
    // A stream gRPC is not done with must outlive it: leak it, not crash.
    if (stream != nullptr && !stream->Finish()) (void)stream.release();
  }
  impl.keepalive_streams.clear();
  // No reply may reach the sink after this: every unary call has a
  // deadline, so this wait ends.
  std::unique_lock<std::mutex> lock(impl.calls_mu);
  impl.calls_cv.wait_for(lock, std::chrono::seconds(kCallDeadlineS + 5),
                         [&] { return impl.calls_outstanding == 0; });
}

bool EtcdTarget::PrepareKeepAlive() {
  std::string reply;
  return impl_->Sync(Call::kLeaseGrant, BuildRequest(Op::kLeaseGrant, 0, 0, 600).body, &reply) &&
         ParseLeaseGrant(reply.data(), reply.size(), &impl_->keepalive_lease);
}

void EtcdTarget::ReserveLeases(uint64_t leases) { impl_->leases.assign(leases, 0); }
void EtcdTarget::SetLeaseTtl(int64_t seconds) { impl_->lease_ttl_s = seconds; }

bool EtcdTarget::ResetCounter() {
  std::string reply;
  return impl_->Sync(Call::kPut, PutCounterBody(0), &reply);
}

bool EtcdTarget::ReadCounter(Counter* out) {
  std::string reply;
  return impl_->Sync(Call::kRange, ReadCounterBody(), &reply) &&
         ParseCounter(reply.data(), reply.size(), out);
}

CasOutcome EtcdTarget::SwapCounter(const Counter& seen, Counter* now, bool* now_known) {
  std::string reply;
  bool swapped = false;
  if (!impl_->Sync(Call::kTxn, SwapCounterBody(seen), &reply) ||
      !ParseSwap(reply.data(), reply.size(), seen, &swapped, now)) {
    return CasOutcome::kError;
  }
  *now_known = true;
  return swapped ? CasOutcome::kSwapped : CasOutcome::kConflict;
}

int64_t EtcdTarget::CountKeys(const std::string& space) {
  std::string reply;
  int64_t count = -1;
  if (!impl_->Sync(Call::kRange, CountBody(space), &reply) ||
      !ParseCount(reply.data(), reply.size(), &count)) {
    return -1;
  }
  return count;
}

bool EtcdTarget::OpenWatchers(int watchers, EventSink* sink) {
  Impl& impl = *impl_;
  {
    std::lock_guard<std::mutex> lock(impl.watch_mu);
    impl.event_sink = sink;
    impl.watches_created = 0;
  }
  impl.watch_stream = std::make_unique<Stream>(
      impl.stub.get(), "/etcdserverpb.Watch/Watch", [&impl](const std::string& r) {
        std::lock_guard<std::mutex> lock(impl.watch_mu);
        int64_t id = 0;
        bool created = false, canceled = false;
        uint64_t seq = 0;
        if (!ParseWatchResponse(r.data(), r.size(), impl.event_sink, &id, &created, &canceled,
                                &seq)) {
          return;
        }
        if (created) {
          ++impl.watches_created;
          impl.watch_cv.notify_all();
        }
      });
  const std::string key = SlashKey("w/");
  const std::string create = WatchCreate(key, PrefixEnd(key));
  for (int w = 0; w < watchers; ++w) impl.watch_stream->Send(create);
  std::unique_lock<std::mutex> lock(impl.watch_mu);
  return impl.watch_cv.wait_for(lock, std::chrono::seconds(60),
                                [&] { return impl.watches_created >= watchers; });
}

void EtcdTarget::CloseWatchers() {
  Impl& impl = *impl_;
  {
    std::lock_guard<std::mutex> lock(impl.watch_mu);
    impl.event_sink = nullptr;
  }
  if (impl.watch_stream != nullptr) {
    if (!impl.watch_stream->Finish()) (void)impl.watch_stream.release();
    impl.watch_stream.reset();
  }
}

}  // namespace natcd::bench
