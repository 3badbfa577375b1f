// The requests of every operation in etcd's v3 messages, encoded with
// natcd.proto's protobuf-c code: natcd.proto keeps etcd's field numbers, so
// the same bytes are a natcd request on a NATS subject and an etcd request
// on a gRPC method. natcd and etcd targets differ only in transport.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "plugin/natcd-bench/target.h"
#include "plugin/natcd-bench/workload.h"

namespace natcd::bench {

// Which of etcd's calls a request is.
enum class Call { kPut, kRange, kTxn, kLeaseGrant, kLeaseKeepAlive };

struct EtcdRequest {
  Call call;
  std::string body;
};

// A PutRequest of key (as is: no prefix added) and value, attached to
// lease (0: none).
std::string PutBody(const std::string& key, const std::string& value, int64_t lease);

// Request i of op. `lease` is the lease a kPutLeased attaches and a
// kKeepAlive renews; `ttl_s` the TTL a kLeaseGrant asks for.
EtcdRequest BuildRequest(Op op, uint64_t i, int64_t lease, int64_t ttl_s);

// The compare-and-swap counter's key, and the requests on it.
std::string CounterKey();
std::string PutCounterBody(int64_t value);
std::string ReadCounterBody();
// Txn: if the counter's mod revision is still seen.revision, put
// seen.value + 1; else read it.
std::string SwapCounterBody(const Counter& seen);
// A count-only range of every key under /bench/<space>/.
std::string CountBody(const std::string& space);

// Reply parsers; false when the bytes are not the expected response.
bool ParseLeaseGrant(const void* data, size_t len, int64_t* id);
bool ParseKeepAlive(const void* data, size_t len, int64_t* ttl);
bool ParseCounter(const void* data, size_t len, Counter* out);  // from a RangeResponse
// From the swap txn's response: *swapped, and the counter's state after it.
bool ParseSwap(const void* data, size_t len, const Counter& seen, bool* swapped, Counter* now);
bool ParseCount(const void* data, size_t len, int64_t* count);
// A WatchResponse's events: calls sink with each event's value; sets
// *created / *canceled as the message says.
bool ParseWatchResponse(const void* data, size_t len, EventSink* sink, int64_t* watch_id,
                        bool* created, bool* canceled, uint64_t* seq);

}  // namespace natcd::bench
