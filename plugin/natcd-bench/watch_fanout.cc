#include "plugin/natcd-bench/watch_fanout.h"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

#include "adapters/nats/natcd.pb-c.h"
#include "plugin/natcd-bench/load.h"

namespace natcd::bench {
namespace {

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string Pack(const ProtobufCMessage* m) {
  std::string out(protobuf_c_message_get_packed_size(m), '\0');
  protobuf_c_message_pack(m, reinterpret_cast<uint8_t*>(out.data()));
  return out;
}

ProtobufCBinaryData View(const std::string& s) {
  return {s.size(), reinterpret_cast<uint8_t*>(const_cast<char*>(s.data()))};
}

struct Fanout {
  natsConnection* nc;
  std::string ack_subject;
  std::string inbox;  // deliver subjects are inbox + index
  std::vector<int64_t> watch_ids;
  std::atomic<uint64_t> delivered{0};
  std::mutex mu;
  std::vector<int64_t> lag;  // guarded by mu
  uint64_t sample_every = 1;

  static void OnMessage(natsConnection*, natsSubscription*, natsMsg* msg, void* closure) {
    auto* f = static_cast<Fanout*>(closure);
    int64_t now = NowNs();
    auto* response =
        natcd__v1__watch_response__unpack(nullptr, natsMsg_GetDataLength(msg),
                                          reinterpret_cast<const uint8_t*>(natsMsg_GetData(msg)));
    natsMsg_Destroy(msg);
    if (response == nullptr) return;
    uint64_t before = f->delivered.fetch_add(response->n_events);
    for (size_t i = 0; i < response->n_events; ++i) {
      const Natcd__V1__KeyValue* kv = response->events[i]->kv;
      if ((before + i) % f->sample_every != 0 || kv == nullptr || kv->value.len < 8) continue;
      int64_t written = 0;
      memcpy(&written, kv->value.data, sizeof written);
      std::lock_guard<std::mutex> lock(f->mu);
      f->lag.push_back(now - written);
    }
    Natcd__V1__WatchAckRequest ack;
    natcd__v1__watch_ack_request__init(&ack);
    ack.watch_id = response->watch_id;
    ack.seq = response->seq;
    std::string body = Pack(&ack.base);
    natsConnection_Publish(f->nc, f->ack_subject.c_str(), body.data(),
                           static_cast<int>(body.size()));
    natcd__v1__watch_response__free_unpacked(response, nullptr);
  }
};

}  // namespace

FanoutResult RunWatchFanout(natsConnection* nc, const std::string& prefix, int watchers,
                            int inflight, int64_t duration_ms) {
  FanoutResult result;
  result.watchers = watchers;
  Fanout f;
  f.nc = nc;
  f.ack_subject = prefix + ".watch.ack";
  f.sample_every = static_cast<uint64_t>(watchers);
  char* inbox = nullptr;
  natsInbox_Create(&inbox);
  f.inbox = std::string(inbox) + ".";
  free(inbox);
  // One wildcard subscription serves every watcher: one delivery thread.
  natsSubscription* sub = nullptr;
  natsConnection_Subscribe(&sub, nc, (f.inbox + "*").c_str(), &Fanout::OnMessage, &f);
  natsSubscription_SetPendingLimits(sub, -1, -1);

  const std::string watch_prefix = "/bench/watch/";
  const std::string watch_end = "/bench/watch0";  // prefix with '/' + 1
  for (int i = 0; i < watchers; ++i) {
    std::string deliver = f.inbox + std::to_string(i);
    Natcd__V1__WatchCreateRequest create;
    natcd__v1__watch_create_request__init(&create);
    create.key = View(watch_prefix);
    create.range_end = View(watch_end);
    create.deliver_subject = const_cast<char*>(deliver.c_str());
    std::string body = Pack(&create.base);
    natsMsg* reply = nullptr;
    if (natsConnection_Request(&reply, nc, (prefix + ".watch.create").c_str(), body.data(),
                               static_cast<int>(body.size()), 5'000) != NATS_OK) {
      fprintf(stderr, "watch.create failed\n");
      break;
    }
    auto* r =
        natcd__v1__watch_response__unpack(nullptr, natsMsg_GetDataLength(reply),
                                          reinterpret_cast<const uint8_t*>(natsMsg_GetData(reply)));
    if (r) f.watch_ids.push_back(r->watch_id);
    natcd__v1__watch_response__free_unpacked(r, nullptr);
    natsMsg_Destroy(reply);
  }

  LoadSpec writes;
  writes.subject = prefix + ".kv.put";
  writes.inflight = inflight;
  writes.total = UINT64_MAX;
  writes.max_ms = duration_ms;
  writes.body = [&](uint64_t i) {
    std::string key = watch_prefix + std::to_string(i % 1'000);
    std::string value(100, 'w');
    int64_t now = NowNs();
    memcpy(value.data(), &now, sizeof now);
    Natcd__V1__PutRequest put;
    natcd__v1__put_request__init(&put);
    put.key = View(key);
    put.value = View(value);
    return Pack(&put.base);
  };
  int64_t start = NowNs();
  LoadResult written = RunLoad(nc, writes);
  result.writes = written.completed;
  const uint64_t expected = written.completed * f.watch_ids.size();
  int64_t give_up = NowNs() + 10'000'000'000;
  while (f.delivered.load() < expected && NowNs() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  result.seconds = (NowNs() - start) / 1e9;
  result.delivered = f.delivered.load();

  for (int64_t id : f.watch_ids) {
    Natcd__V1__WatchCancelRequest cancel;
    natcd__v1__watch_cancel_request__init(&cancel);
    cancel.watch_id = id;
    std::string body = Pack(&cancel.base);
    natsMsg* reply = nullptr;
    if (natsConnection_Request(&reply, nc, (prefix + ".watch.cancel").c_str(), body.data(),
                               static_cast<int>(body.size()), 5'000) == NATS_OK) {
      natsMsg_Destroy(reply);
    }
  }
  natsSubscription_Drain(sub);
  natsSubscription_WaitForDrainCompletion(sub, 5'000);
  natsSubscription_Destroy(sub);
  std::lock_guard<std::mutex> lock(f.mu);
  result.lag_ns = std::move(f.lag);
  return result;
}

}  // namespace natcd::bench
