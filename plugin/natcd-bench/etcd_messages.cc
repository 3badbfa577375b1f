#include "plugin/natcd-bench/etcd_messages.h"

#include <cstdlib>
#include <string>

#include "adapters/nats/natcd.pb-c.h"
#include "plugin/natcd-bench/clock.h"
#include "plugin/natcd-bench/proto_pack.h"

namespace natcd::bench {
namespace {

ProtobufCBinaryData View(const std::string& s) {
  return {s.size(), reinterpret_cast<uint8_t*>(const_cast<char*>(s.data()))};
}

const uint8_t* Bytes(const void* data) { return static_cast<const uint8_t*>(data); }

std::string RangeBody(const std::string& key, const std::string& range_end, bool serializable,
                      bool count_only) {
  Natcd__V1__RangeRequest range = NATCD__V1__RANGE_REQUEST__INIT;
  range.key = View(key);
  range.range_end = View(range_end);
  range.serializable = serializable;
  range.count_only = count_only;
  return Pack(&range.base);
}

}  // namespace

std::string PutBody(const std::string& key, const std::string& value, int64_t lease) {
  Natcd__V1__PutRequest put = NATCD__V1__PUT_REQUEST__INIT;
  put.key = View(key);
  put.value = View(value);
  put.lease = lease;
  return Pack(&put.base);
}

EtcdRequest BuildRequest(Op op, uint64_t i, int64_t lease, int64_t ttl_s) {
  switch (op) {
    case Op::kPut:
    case Op::kFill:
      return {Call::kPut, PutBody(SlashKey(KeyOf(op, i)), ValueOf(i), 0)};
    case Op::kWatchPut:
      return {Call::kPut, PutBody(SlashKey(KeyOf(op, i)), TimestampedValue(NowNs()), 0)};
    case Op::kPutLeased:
      return {Call::kPut, PutBody(SlashKey(KeyOf(op, i)), ValueOf(i), lease)};
    case Op::kGet:
    case Op::kGetSerializable:
      return {Call::kRange,
              RangeBody(SlashKey(KeyOf(op, i)), "", op == Op::kGetSerializable, false)};
    case Op::kRange100: {
      const KeyRange r = RangeOf(i);
      return {Call::kRange, RangeBody(r.key, r.range_end, false, false)};
    }
    case Op::kLeaseGrant: {
      Natcd__V1__LeaseGrantRequest grant = NATCD__V1__LEASE_GRANT_REQUEST__INIT;
      grant.ttl = ttl_s;
      return {Call::kLeaseGrant, Pack(&grant.base)};
    }
    case Op::kKeepAlive: {
      Natcd__V1__LeaseKeepAliveRequest keep = NATCD__V1__LEASE_KEEP_ALIVE_REQUEST__INIT;
      keep.id = lease;
      return {Call::kLeaseKeepAlive, Pack(&keep.base)};
    }
  }
  return {Call::kPut, ""};
}

std::string CounterKey() { return SlashKey("c/" + KeyIndex(0)); }

std::string PutCounterBody(int64_t value) {
  return PutBody(CounterKey(), std::to_string(value), 0);
}

std::string ReadCounterBody() { return RangeBody(CounterKey(), "", false, false); }

std::string SwapCounterBody(const Counter& seen) {
  const std::string key = CounterKey();
  const std::string next = std::to_string(seen.value + 1);
  Natcd__V1__Compare compare = NATCD__V1__COMPARE__INIT;
  compare.result = NATCD__V1__COMPARE__COMPARE_RESULT__EQUAL;
  compare.target = NATCD__V1__COMPARE__COMPARE_TARGET__MOD;
  compare.key = View(key);
  compare.target_union_case = NATCD__V1__COMPARE__TARGET_UNION_MOD_REVISION;
  compare.mod_revision = seen.revision;
  Natcd__V1__PutRequest put = NATCD__V1__PUT_REQUEST__INIT;
  put.key = View(key);
  put.value = View(next);
  Natcd__V1__RangeRequest range = NATCD__V1__RANGE_REQUEST__INIT;
  range.key = View(key);
  Natcd__V1__RequestOp success = NATCD__V1__REQUEST_OP__INIT;
  success.request_case = NATCD__V1__REQUEST_OP__REQUEST_REQUEST_PUT;
  success.request_put = &put;
  Natcd__V1__RequestOp failure = NATCD__V1__REQUEST_OP__INIT;
  failure.request_case = NATCD__V1__REQUEST_OP__REQUEST_REQUEST_RANGE;
  failure.request_range = &range;
  Natcd__V1__Compare* compares[] = {&compare};
  Natcd__V1__RequestOp* successes[] = {&success};
  Natcd__V1__RequestOp* failures[] = {&failure};
  Natcd__V1__TxnRequest txn = NATCD__V1__TXN_REQUEST__INIT;
  txn.n_compare = 1;
  txn.compare = compares;
  txn.n_success = 1;
  txn.success = successes;
  txn.n_failure = 1;
  txn.failure = failures;
  return Pack(&txn.base);
}

std::string CountBody(const std::string& space) {
  const std::string prefix = SlashKey(space + "/");
  return RangeBody(prefix, PrefixEnd(prefix), false, true);
}

bool ParseLeaseGrant(const void* data, size_t len, int64_t* id) {
  auto* r = natcd__v1__lease_grant_response__unpack(nullptr, len, Bytes(data));
  if (r == nullptr) return false;
  const bool ok = r->id != 0 && r->error[0] == '\0';
  *id = r->id;
  natcd__v1__lease_grant_response__free_unpacked(r, nullptr);
  return ok;
}

bool ParseKeepAlive(const void* data, size_t len, int64_t* ttl) {
  auto* r = natcd__v1__lease_keep_alive_response__unpack(nullptr, len, Bytes(data));
  if (r == nullptr) return false;
  *ttl = r->ttl;
  natcd__v1__lease_keep_alive_response__free_unpacked(r, nullptr);
  return true;
}

namespace {

bool CounterFrom(const Natcd__V1__RangeResponse* range, Counter* out) {
  if (range == nullptr) return false;
  if (range->n_kvs == 0) {
    *out = Counter{};
    return true;
  }
  const Natcd__V1__KeyValue* kv = range->kvs[0];
  out->revision = kv->mod_revision;
  out->value =
      strtoll(std::string(reinterpret_cast<const char*>(kv->value.data), kv->value.len).c_str(),
              nullptr, 10);
  return true;
}

}  // namespace

bool ParseCounter(const void* data, size_t len, Counter* out) {
  auto* r = natcd__v1__range_response__unpack(nullptr, len, Bytes(data));
  if (r == nullptr) return false;
  const bool ok = CounterFrom(r, out);
  natcd__v1__range_response__free_unpacked(r, nullptr);
  return ok;
}

bool ParseSwap(const void* data, size_t len, const Counter& seen, bool* swapped, Counter* now) {
  auto* r = natcd__v1__txn_response__unpack(nullptr, len, Bytes(data));
  if (r == nullptr) return false;
  bool ok = true;
  *swapped = r->succeeded;
  if (r->succeeded) {
    now->revision = r->header != nullptr ? r->header->revision : 0;
    now->value = seen.value + 1;
    ok = r->header != nullptr;
  } else {
    ok = r->n_responses == 1 &&
         r->responses[0]->response_case == NATCD__V1__RESPONSE_OP__RESPONSE_RESPONSE_RANGE &&
         CounterFrom(r->responses[0]->response_range, now);
  }
  natcd__v1__txn_response__free_unpacked(r, nullptr);
  return ok;
}

bool ParseCount(const void* data, size_t len, int64_t* count) {
  auto* r = natcd__v1__range_response__unpack(nullptr, len, Bytes(data));
  if (r == nullptr) return false;
  *count = r->count;
  natcd__v1__range_response__free_unpacked(r, nullptr);
  return true;
}

bool ParseWatchResponse(const void* data, size_t len, EventSink* sink, int64_t* watch_id,
                        bool* created, bool* canceled, uint64_t* seq) {
  auto* r = natcd__v1__watch_response__unpack(nullptr, len, Bytes(data));
  if (r == nullptr) return false;
  *watch_id = r->watch_id;
  *created = r->created;
  *canceled = r->canceled;
  *seq = r->seq;
  for (size_t e = 0; e < r->n_events; ++e) {
    const Natcd__V1__KeyValue* kv = r->events[e]->kv;
    if (kv != nullptr && sink != nullptr) sink->OnEvent(kv->value.data, kv->value.len);
  }
  natcd__v1__watch_response__free_unpacked(r, nullptr);
  return true;
}

}  // namespace natcd::bench
