// NATS JetStream KV on the nats-server natcd uses, through nats.c's
// kvStore API. The bucket, the counter (kvStore_Get / kvStore_Update) and
// the checks are the kvStore API itself. Its puts and gets are synchronous
// (one blocked thread per request in flight), so the pipelined loads send
// exactly the messages kvStore_Put and kvStore_Get send — a JetStream
// publish to "$KV.<bucket>.<key>" and a direct get of the subject's last
// message — from one thread, as natcd's and etcd's loads do; a test checks
// that kvStore_Get reads back what they wrote. Watchers are the ordered
// consumers kvStore_Watch creates, with a callback (nats.c 3.4's kvWatcher
// only has a blocking Next, a thread per watcher).
//
// JetStream KV has no leases and no range reads: those workloads are n/a.
#pragma once

#include <nats/nats.h>

#include <mutex>
#include <string>
#include <vector>

#include "plugin/natcd-bench/nats_requests.h"
#include "plugin/natcd-bench/target.h"

namespace natcd::bench {

class JetStreamTarget final : public Target {
 public:
  JetStreamTarget(std::string label, std::string url, std::string bucket = "natcdbench");
  ~JetStreamTarget() override;

  // Connects and creates the bucket (file storage, history 1); false with a
  // message on stderr if either fails.
  bool Open();

  std::string name() const override { return label_; }
  bool Supports(Op op) const override;
  bool BeginLoad(int slots, ReplySink* sink) override;
  void Issue(int slot, Op op, uint64_t i) override;
  void EndLoad() override;
  bool ResetCounter() override;
  bool ReadCounter(Counter* out) override;
  CasOutcome SwapCounter(const Counter& seen, Counter* now, bool* now_known) override;
  bool OpenWatchers(int watchers, EventSink* sink) override;
  void CloseWatchers() override;

  kvStore* kv() { return kv_; }
  const std::string& bucket() const { return bucket_; }

 private:
  static void OnWatchMessage(natsConnection*, natsSubscription*, natsMsg* msg, void* closure);

  const std::string label_;
  const std::string url_;
  const std::string bucket_;
  natsConnection* nc_ = nullptr;
  jsCtx* js_ = nullptr;
  kvStore* kv_ = nullptr;
  NatsRequests requests_;
  // Watchers: their own connection, whose subscriptions share one delivery
  // thread.
  natsConnection* watch_nc_ = nullptr;
  jsCtx* watch_js_ = nullptr;
  std::vector<natsSubscription*> watch_subs_;
  std::mutex sink_mu_;               // held while an event is handed over, so none does after Close
  EventSink* event_sink_ = nullptr;  // protected by sink_mu_
};

}  // namespace natcd::bench
