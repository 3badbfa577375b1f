#include "plugin/natcd-bench/jetstream_target.h"

#include <cstdio>
#include <cstring>

#include "plugin/natcd-bench/clock.h"

namespace natcd::bench {
namespace {

std::string LastError() {
  natsStatus s = NATS_OK;
  const char* text = nats_GetLastError(&s);
  return text != nullptr ? text : natsStatus_GetText(s);
}

}  // namespace

JetStreamTarget::JetStreamTarget(std::string label, std::string url, std::string bucket)
    : label_(std::move(label)), url_(std::move(url)), bucket_(std::move(bucket)) {}

JetStreamTarget::~JetStreamTarget() {
  CloseWatchers();
  kvStore_Destroy(kv_);
  jsCtx_Destroy(js_);
  natsConnection_Destroy(nc_);
}

bool JetStreamTarget::Open() {
  nc_ = ConnectNats(url_);
  if (nc_ == nullptr || natsConnection_JetStream(&js_, nc_, nullptr) != NATS_OK) return false;
  kvConfig cfg;
  kvConfig_Init(&cfg);
  cfg.Bucket = bucket_.c_str();
  cfg.History = 1;
  cfg.StorageType = js_FileStorage;
  if (js_CreateKeyValue(&kv_, js_, &cfg) != NATS_OK) {
    fprintf(stderr, "natcd-bench: create JetStream KV bucket %s: %s\n", bucket_.c_str(),
            LastError().c_str());
    return false;
  }
  return true;
}

bool JetStreamTarget::Supports(Op op) const {
  switch (op) {
    case Op::kPut:
    case Op::kGet:
    case Op::kWatchPut:
    case Op::kFill:
      return true;
    default:
      return false;
  }
}

bool JetStreamTarget::BeginLoad(int slots, ReplySink* sink) {
  return requests_.Begin(nc_, slots, sink, [](int, natsMsg* reply) {
    // A put's reply is a JSON PubAck, {"error":...} when refused; a direct
    // get's reply carries the message's headers, or a Status header with
    // no message.
    const char* value = nullptr;
    if (natsMsgHeader_Get(reply, "Nats-Sequence", &value) == NATS_OK) return true;
    if (natsMsgHeader_Get(reply, "Status", &value) == NATS_OK) return false;
    const char* data = natsMsg_GetData(reply);
    const int len = natsMsg_GetDataLength(reply);
    return len > 0 && memmem(data, len, "\"error\"", 7) == nullptr &&
           memmem(data, len, "\"seq\"", 5) != nullptr;
  });
}

void JetStreamTarget::Issue(int slot, Op op, uint64_t i) {
  const std::string subject = "$KV." + bucket_ + "." + DotKey(KeyOf(op, i));
  if (op == Op::kGet) {
    // What kvStore_Get sends on a bucket with direct get (nats.c creates
    // buckets with allow_direct): the last message of the key's subject.
    const std::string body = "{\"last_by_subj\":\"" + subject + "\"}";
    const std::string api = "$JS.API.DIRECT.GET.KV_" + bucket_;
    requests_.Send(slot, api.c_str(), body.data(), static_cast<int>(body.size()));
    return;
  }
  const std::string value = op == Op::kWatchPut ? TimestampedValue(NowNs()) : ValueOf(i);
  requests_.Send(slot, subject.c_str(), value.data(), static_cast<int>(value.size()));
}

void JetStreamTarget::EndLoad() { requests_.End(); }

bool JetStreamTarget::ResetCounter() {
  uint64_t rev = 0;
  return kvStore_PutString(&rev, kv_, DotKey("c/" + KeyIndex(0)).c_str(), "0") == NATS_OK;
}

bool JetStreamTarget::ReadCounter(Counter* out) {
  kvEntry* e = nullptr;
  const natsStatus s = kvStore_Get(&e, kv_, DotKey("c/" + KeyIndex(0)).c_str());
  if (s != NATS_OK) return false;
  out->revision = static_cast<int64_t>(kvEntry_Revision(e));
  out->value = strtoll(kvEntry_ValueString(e), nullptr, 10);
  kvEntry_Destroy(e);
  return true;
}

CasOutcome JetStreamTarget::SwapCounter(const Counter& seen, Counter* now, bool* now_known) {
  const std::string next = std::to_string(seen.value + 1);
  uint64_t rev = 0;
  const natsStatus s = kvStore_UpdateString(&rev, kv_, DotKey("c/" + KeyIndex(0)).c_str(),
                                            next.c_str(), static_cast<uint64_t>(seen.revision));
  if (s == NATS_OK) {
    *now = Counter{static_cast<int64_t>(rev), seen.value + 1};
    *now_known = true;
    return CasOutcome::kSwapped;
  }
  *now_known = false;
  // JetStream refuses an update whose expected sequence is stale with
  // "wrong last sequence" (error 10071): a lost race, not a failure.
  return LastError().find("wrong last sequence") != std::string::npos ? CasOutcome::kConflict
                                                                      : CasOutcome::kError;
}

void JetStreamTarget::OnWatchMessage(natsConnection*, natsSubscription*, natsMsg* msg,
                                     void* closure) {
  auto* self = static_cast<JetStreamTarget*>(closure);
  std::lock_guard<std::mutex> lock(self->sink_mu_);
  if (self->event_sink_ != nullptr) {
    self->event_sink_->OnEvent(natsMsg_GetData(msg), natsMsg_GetDataLength(msg));
  }
  natsMsg_Destroy(msg);
}

bool JetStreamTarget::OpenWatchers(int watchers, EventSink* sink) {
  {
    std::lock_guard<std::mutex> lock(sink_mu_);
    event_sink_ = sink;
  }
  watch_nc_ = ConnectNats(url_, /*global_delivery=*/true);
  if (watch_nc_ == nullptr || natsConnection_JetStream(&watch_js_, watch_nc_, nullptr) != NATS_OK) {
    return false;
  }
  const std::string subject = "$KV." + bucket_ + ".w.>";
  const std::string stream = "KV_" + bucket_;
  for (int w = 0; w < watchers; ++w) {
    jsSubOptions so;
    jsSubOptions_Init(&so);
    so.Ordered = true;
    so.Stream = stream.c_str();
    // New updates only: the writer starts after every watcher exists.
    so.Config.DeliverPolicy = js_DeliverNew;
    natsSubscription* sub = nullptr;
    if (js_Subscribe(&sub, watch_js_, subject.c_str(), &JetStreamTarget::OnWatchMessage, this,
                     nullptr, &so, nullptr) != NATS_OK) {
      fprintf(stderr, "natcd-bench: JetStream watcher %d: %s\n", w, LastError().c_str());
      return false;
    }
    natsSubscription_SetPendingLimits(sub, -1, -1);
    watch_subs_.push_back(sub);
  }
  return natsConnection_Flush(watch_nc_) == NATS_OK;
}

void JetStreamTarget::CloseWatchers() {
  {
    std::lock_guard<std::mutex> lock(sink_mu_);
    event_sink_ = nullptr;
  }
  for (natsSubscription* sub : watch_subs_) {
    natsSubscription_Unsubscribe(sub);
    natsSubscription_Destroy(sub);
  }
  watch_subs_.clear();
  jsCtx_Destroy(watch_js_);
  watch_js_ = nullptr;
  // Closing the connection waits for its delivery thread: no event after.
  if (watch_nc_ != nullptr) {
    natsConnection_Close(watch_nc_);
    natsConnection_Destroy(watch_nc_);
    watch_nc_ = nullptr;
  }
}

}  // namespace natcd::bench
