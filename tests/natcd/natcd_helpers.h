// Helpers for the natcd integration tests: synchronous NATS subscriptions,
// a watch client that speaks the watch stream (seq, acks), base64, and
// builders for the protobuf requests (the JSON reader is support/json.h).
// Header-only; test code only.
#pragma once

#include <gtest/gtest.h>
#include <nats/nats.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "adapters/nats/natcd.pb-c.h"
#include "support/json.h"
#include "support/wire_client.h"

namespace natcd::testing {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

inline std::string Str(const ProtobufCBinaryData& b) {
  return b.len ? std::string(reinterpret_cast<const char*>(b.data), b.len) : std::string();
}

// ---------------------------------------------------------------------------
// NATS messages
// ---------------------------------------------------------------------------

// A received message, copied out of nats.c.
struct Received {
  std::string subject;
  std::string reply;
  std::string data;
  std::map<std::string, std::string> headers;
  std::string Header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? std::string() : it->second;
  }
  bool HasHeader(const std::string& name) const { return headers.count(name) != 0; }
};

inline Received CopyMessage(natsMsg* msg) {
  Received out;
  out.subject = natsMsg_GetSubject(msg);
  if (const char* reply = natsMsg_GetReply(msg)) out.reply = reply;
  out.data.assign(natsMsg_GetData(msg), natsMsg_GetDataLength(msg));
  const char** keys = nullptr;
  int count = 0;
  if (natsMsgHeader_Keys(msg, &keys, &count) == NATS_OK) {
    for (int i = 0; i < count; ++i) {
      const char* value = nullptr;
      if (natsMsgHeader_Get(msg, keys[i], &value) == NATS_OK) {
        out.headers[keys[i]] = value ? value : "";
      }
    }
    free(keys);
  }
  return out;
}

// A synchronous subscription (on an inbox when subject is empty). The
// subscription is in place on the server when the constructor returns.
class Sub {
 public:
  Sub(natsConnection* nc, std::string subject = "") : subject_(std::move(subject)) {
    if (subject_.empty()) {
      natsInbox* inbox = nullptr;
      natsInbox_Create(&inbox);
      subject_ = inbox;
      natsInbox_Destroy(inbox);
    }
    EXPECT_EQ(natsConnection_SubscribeSync(&sub_, nc, subject_.c_str()), NATS_OK);
    natsSubscription_SetPendingLimits(sub_, -1, -1);
    EXPECT_EQ(natsConnection_FlushTimeout(nc, 5000), NATS_OK);
  }
  ~Sub() { natsSubscription_Destroy(sub_); }
  Sub(const Sub&) = delete;
  Sub& operator=(const Sub&) = delete;

  const std::string& subject() const { return subject_; }
  natsSubscription* sub() const { return sub_; }

  std::optional<Received> Next(int timeout_ms = 3000) {
    natsMsg* msg = nullptr;
    if (natsSubscription_NextMsg(&msg, sub_, timeout_ms) != NATS_OK) return std::nullopt;
    Received out = CopyMessage(msg);
    natsMsg_Destroy(msg);
    return out;
  }
  // Collects messages until none arrives for quiet_ms.
  std::vector<Received> Drain(int quiet_ms = 200) {
    std::vector<Received> out;
    while (auto m = Next(quiet_ms)) out.push_back(std::move(*m));
    return out;
  }
  // Collects exactly n messages (fewer on timeout).
  std::vector<Received> Take(size_t n, int timeout_ms = 5000) {
    std::vector<Received> out;
    auto deadline = Clock::now() + milliseconds(timeout_ms);
    while (out.size() < n) {
      int left = static_cast<int>(
          std::chrono::duration_cast<milliseconds>(deadline - Clock::now()).count());
      if (left <= 0) break;
      auto m = Next(left);
      if (!m) break;
      out.push_back(std::move(*m));
    }
    return out;
  }
  void Unsubscribe() { natsSubscription_Unsubscribe(sub_); }

 private:
  std::string subject_;
  natsSubscription* sub_ = nullptr;
};

// ---------------------------------------------------------------------------
// Base64 and a small JSON reader
// ---------------------------------------------------------------------------

inline std::string B64(std::string_view in) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    uint32_t v = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8) | uint8_t(in[i + 2]);
    out += kAlphabet[v >> 18];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  if (i + 1 == in.size()) {
    uint32_t v = uint8_t(in[i]) << 16;
    out += kAlphabet[v >> 18];
    out += kAlphabet[(v >> 12) & 63];
    out += "==";
  } else if (i + 2 == in.size()) {
    uint32_t v = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8);
    out += kAlphabet[v >> 18];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += '=';
  }
  return out;
}

// ---------------------------------------------------------------------------
// Requests
// ---------------------------------------------------------------------------

inline const std::vector<std::pair<std::string, std::string>> kJsonHeaders = {
    {"Content-Type", "application/json"}};

// A JSON request to P.suffix; the reply parsed (a failed test on bad JSON).
struct JsonReply {
  WireReply reply;
  Json json;
};
inline JsonReply CallJson(WireClient* client, const std::string& suffix, const std::string& body,
                          std::vector<std::pair<std::string, std::string>> headers = {}) {
  headers.insert(headers.begin(), kJsonHeaders.begin(), kJsonHeaders.end());
  JsonReply out;
  out.reply = client->Raw(client->Subject(suffix), body, headers);
  if (out.reply.ok()) {
    EXPECT_EQ(out.reply.content_type, "application/json") << suffix;
    auto parsed = Json::Parse(out.reply.body);
    EXPECT_TRUE(parsed.has_value()) << suffix << " replied invalid JSON: " << out.reply.body;
    if (parsed) out.json = std::move(*parsed);
  }
  return out;
}

// A protobuf request that must succeed; its reply decoded as T.
template <typename T>
Unpacked<T> CallOk(WireClient* client, const std::string& suffix, const ProtobufCMessage* request,
                   const ProtobufCMessageDescriptor* response, const std::string& request_id = "") {
  WireReply reply = client->Call(suffix, request, request_id);
  EXPECT_TRUE(reply.ok()) << suffix << ": " << reply.code << " " << reply.error;
  EXPECT_EQ(reply.content_type, "") << suffix << ": a protobuf request gets a protobuf reply";
  if (!reply.ok()) return nullptr;
  auto out = WireClient::Decode<T>(response, reply);
  EXPECT_TRUE(out) << suffix << ": reply does not decode";
  return out;
}

// Current store revision (via a range of a key nobody uses).
inline int64_t Revision(WireClient* client) {
  auto r = client->Range("/__revision_probe__");
  return r && r->header ? r->header->revision : -1;
}

inline WireReply PutReply(WireClient* client, const std::string& key, const std::string& value,
                          int64_t lease = 0, bool prev_kv = false, bool ignore_value = false,
                          const std::string& request_id = "") {
  Natcd__V1__PutRequest put;
  natcd__v1__put_request__init(&put);
  put.key = Bytes(key);
  put.value = Bytes(value);
  put.lease = lease;
  put.prev_kv = prev_kv;
  put.ignore_value = ignore_value;
  return client->Call("kv.put", &put.base, request_id);
}

inline Unpacked<Natcd__V1__LeaseTimeToLiveResponse> TimeToLive(WireClient* client, int64_t id,
                                                               bool keys = false) {
  Natcd__V1__LeaseTimeToLiveRequest req;
  natcd__v1__lease_time_to_live_request__init(&req);
  req.id = id;
  req.keys = keys;
  WireReply reply = client->Call("lease.timetolive", &req.base);
  EXPECT_TRUE(reply.ok()) << reply.code << " " << reply.error;
  return WireClient::Decode<Natcd__V1__LeaseTimeToLiveResponse>(
      &natcd__v1__lease_time_to_live_response__descriptor, reply);
}

inline std::string LeaseHex(int64_t id) {
  char buf[32];
  snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(id));
  return buf;
}

// Waits (bounded) until pred() holds; returns whether it did.
template <typename Pred>
bool WaitFor(Pred pred, int timeout_ms = 5000, int step_ms = 20) {
  auto deadline = Clock::now() + milliseconds(timeout_ms);
  for (;;) {
    if (pred()) return true;
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(milliseconds(step_ms));
  }
}

// ---------------------------------------------------------------------------
// Watches
// ---------------------------------------------------------------------------

struct WatchSpec {
  std::string key;
  std::string range_end;
  int64_t start_revision = 0;
  bool prev_kv = false;
  bool no_put = false;
  bool no_delete = false;
  bool progress_notify = false;
  int64_t watch_id = 0;
};

inline WatchSpec On(const std::string& key, const std::string& range_end = "",
                    int64_t start_revision = 0) {
  WatchSpec spec;
  spec.key = key;
  spec.range_end = range_end;
  spec.start_revision = start_revision;
  return spec;
}

using WatchMsg = Unpacked<Natcd__V1__WatchResponse>;

// One watch over NATS: subscribes an inbox, creates the watch with that
// inbox as deliver_subject, then reads the stream checking that seq goes
// 1, 2, 3... and (when auto_ack) acknowledging every message.
class WatchClient {
 public:
  WatchClient(WireClient* client, const WatchSpec& spec, bool auto_ack = true)
      : client_(client), inbox_(client->nc()), auto_ack_(auto_ack) {
    Natcd__V1__WatchCreateRequest req;
    natcd__v1__watch_create_request__init(&req);
    req.key = Bytes(spec.key);
    req.range_end = Bytes(spec.range_end);
    req.start_revision = spec.start_revision;
    req.prev_kv = spec.prev_kv;
    req.progress_notify = spec.progress_notify;
    req.watch_id = spec.watch_id;
    Natcd__V1__WatchCreateRequest__FilterType filters[2];
    size_t n = 0;
    if (spec.no_put) filters[n++] = NATCD__V1__WATCH_CREATE_REQUEST__FILTER_TYPE__NOPUT;
    if (spec.no_delete) filters[n++] = NATCD__V1__WATCH_CREATE_REQUEST__FILTER_TYPE__NODELETE;
    req.n_filters = n;
    req.filters = filters;
    req.deliver_subject = const_cast<char*>(inbox_.subject().c_str());
    create_reply = client->Call("watch.create", &req.base);
    if (create_reply.ok()) {
      created = WireClient::Decode<Natcd__V1__WatchResponse>(&natcd__v1__watch_response__descriptor,
                                                             create_reply);
      if (created) id = created->watch_id;
    }
  }

  bool ok() const { return created && created->created && !created->canceled; }

  // The next stream message (null on timeout). Checks seq continuity and
  // acknowledges it when auto_ack.
  WatchMsg Next(int timeout_ms = 3000) {
    auto m = inbox_.Next(timeout_ms);
    if (!m) return nullptr;
    auto* raw =
        protobuf_c_message_unpack(&natcd__v1__watch_response__descriptor, nullptr, m->data.size(),
                                  reinterpret_cast<const uint8_t*>(m->data.data()));
    EXPECT_NE(raw, nullptr) << "watch stream message does not decode";
    if (raw == nullptr) return nullptr;
    WatchMsg out(reinterpret_cast<Natcd__V1__WatchResponse*>(raw));
    EXPECT_EQ(out->watch_id, id);
    EXPECT_EQ(out->seq, last_seq + 1) << "seq gap or repeat on the watch stream";
    last_seq = out->seq;
    ++messages;
    if (auto_ack_) Ack(out->seq);
    return out;
  }

  // Reads until `count` events were seen (progress messages are skipped),
  // returning the events' (revision, key, type) in arrival order.
  struct Ev {
    int64_t revision;
    std::string key;
    std::string value;
    bool put;
    int64_t prev_mod_revision;  // 0: no prev_kv
    std::string prev_value;
  };
  std::vector<Ev> Events(size_t count, int timeout_ms = 5000, WatchMsg* cancel = nullptr) {
    std::vector<Ev> out;
    auto deadline = Clock::now() + milliseconds(timeout_ms);
    while (out.size() < count) {
      int left = static_cast<int>(
          std::chrono::duration_cast<milliseconds>(deadline - Clock::now()).count());
      if (left <= 0) break;
      WatchMsg m = Next(left);
      if (!m) break;
      Append(*m, &out);
      if (m->canceled) {
        if (cancel) *cancel = std::move(m);
        break;
      }
    }
    return out;
  }
  static void Append(const Natcd__V1__WatchResponse& m, std::vector<Ev>* out) {
    for (size_t i = 0; i < m.n_events; ++i) {
      const Natcd__V1__Event* e = m.events[i];
      Ev ev{e->kv ? e->kv->mod_revision : 0,
            e->kv ? Str(e->kv->key) : "",
            e->kv ? Str(e->kv->value) : "",
            e->type == NATCD__V1__EVENT__EVENT_TYPE__PUT,
            e->prev_kv ? e->prev_kv->mod_revision : 0,
            e->prev_kv ? Str(e->prev_kv->value) : ""};
      out->push_back(std::move(ev));
    }
  }

  void Ack(uint64_t seq) {
    Natcd__V1__WatchAckRequest ack;
    natcd__v1__watch_ack_request__init(&ack);
    ack.watch_id = id;
    ack.seq = seq;
    std::string body(protobuf_c_message_get_packed_size(&ack.base), '\0');
    protobuf_c_message_pack(&ack.base, reinterpret_cast<uint8_t*>(body.data()));
    std::string subject = client_->Subject("watch.ack");
    natsConnection_Publish(client_->nc(), subject.c_str(), body.data(),
                           static_cast<int>(body.size()));
  }

  WireReply Cancel() {
    Natcd__V1__WatchCancelRequest req;
    natcd__v1__watch_cancel_request__init(&req);
    req.watch_id = id;
    return client_->Call("watch.cancel", &req.base);
  }
  WireReply Progress() {
    Natcd__V1__WatchProgressRequest req;
    natcd__v1__watch_progress_request__init(&req);
    req.watch_id = id;
    return client_->Call("watch.progress", &req.base);
  }

  Sub& inbox() { return inbox_; }
  void set_auto_ack(bool on) { auto_ack_ = on; }

  WireReply create_reply;
  WatchMsg created;
  int64_t id = 0;
  uint64_t last_seq = 0;
  size_t messages = 0;

 private:
  WireClient* client_;
  Sub inbox_;
  bool auto_ack_;
};

}  // namespace natcd::testing
