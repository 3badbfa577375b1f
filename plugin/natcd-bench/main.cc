// natcd-bench: load over NATS against a running natcd.
//
// RUN:    natcd-bench --nats-url nats://127.0.0.1:4222 [--workloads put-seq,put-256,...]
// OUTPUT: one line per workload: requests/s, p50 and p99 latency, errors.
//
// Workloads (100-byte values over 10,000 distinct keys):
//   put-seq       one put at a time
//   put-64, put-256          puts with 64 / 256 requests in flight
//   range-1, range-256       point reads, 1 / 256 in flight
//   range100-64   ranges of 100 keys under a prefix, 64 in flight
//   keepalive-256 lease keepalives, 256 in flight
//   watch-1, watch-100, watch-1000   one writer (64 puts in flight), N
//                 watchers of one prefix: events delivered/s, p50/p99 lag
#include <CLI/CLI.hpp>
#include <cstdio>
#include <sstream>
#include <string>

#include "adapters/nats/natcd.pb-c.h"
#include "plugin/natcd-bench/load.h"
#include "plugin/natcd-bench/watch_fanout.h"

namespace {

using natcd::bench::LoadResult;
using natcd::bench::LoadSpec;
using natcd::bench::Percentile;

std::string Pack(const ProtobufCMessage* m) {
  std::string out(protobuf_c_message_get_packed_size(m), '\0');
  protobuf_c_message_pack(m, reinterpret_cast<uint8_t*>(out.data()));
  return out;
}

ProtobufCBinaryData View(const std::string& s) {
  return {s.size(), reinterpret_cast<uint8_t*>(const_cast<char*>(s.data()))};
}

std::string Key(uint64_t i) {
  char buf[32];
  snprintf(buf, sizeof buf, "/bench/k%05llu", static_cast<unsigned long long>(i % 10'000));
  return buf;
}

std::string PutBody(uint64_t i) {
  static const std::string value(100, 'v');
  std::string key = Key(i);
  Natcd__V1__PutRequest put;
  natcd__v1__put_request__init(&put);
  put.key = View(key);
  put.value = View(value);
  return Pack(&put.base);
}

std::string GetBody(uint64_t i) {
  std::string key = Key(i);
  Natcd__V1__RangeRequest range;
  natcd__v1__range_request__init(&range);
  range.key = View(key);
  return Pack(&range.base);
}

std::string Range100Body(uint64_t i) {
  // 100 consecutive keys: /bench/kNNN00 .. /bench/kNNN99
  char start[32], end[32];
  unsigned long long block = (i % 100) * 100;
  snprintf(start, sizeof start, "/bench/k%05llu", block);
  snprintf(end, sizeof end, "/bench/k%05llu", block + 100);
  std::string s(start), e(end);
  Natcd__V1__RangeRequest range;
  natcd__v1__range_request__init(&range);
  range.key = View(s);
  range.range_end = View(e);
  return Pack(&range.base);
}

void Print(const std::string& name, const LoadResult& r) {
  printf("%-14s %10.0f req/s  p50 %8.1f us  p99 %8.1f us  n=%llu errors=%llu timeouts=%llu\n",
         name.c_str(), r.per_second(), Percentile(r.latencies_ns, 50) / 1e3,
         Percentile(r.latencies_ns, 99) / 1e3, static_cast<unsigned long long>(r.completed),
         static_cast<unsigned long long>(r.errors), static_cast<unsigned long long>(r.timeouts));
  fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  std::string url = "nats://127.0.0.1:4222";
  std::string prefix = "natcd";
  std::string workloads =
      "put-seq,put-64,put-256,range-1,range-256,range100-64,keepalive-256,watch-1,watch-1000";
  uint64_t total = 50'000;
  int64_t max_ms = 10'000;
  CLI::App app{"natcd-bench: request load over NATS against a running natcd"};
  app.add_option("--nats-url", url, "NATS URL of the natcd deployment")->capture_default_str();
  app.add_option("--prefix", prefix, "natcd subject prefix")->capture_default_str();
  app.add_option("--workloads", workloads, "comma-separated workloads")->capture_default_str();
  app.add_option("--requests", total, "requests per workload (bounded by --max-ms)")
      ->capture_default_str();
  app.add_option("--max-ms", max_ms, "longest run per workload")->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  natsOptions* opts = nullptr;
  natsOptions_Create(&opts);
  natsOptions_SetURL(opts, url.c_str());
  natsOptions_SetSendAsap(opts, true);
  natsConnection* nc = nullptr;
  natsStatus s = natsConnection_Connect(&nc, opts);
  natsOptions_Destroy(opts);
  if (s != NATS_OK) {
    fprintf(stderr, "connect %s: %s\n", url.c_str(), natsStatus_GetText(s));
    return 1;
  }

  // A lease to keep alive, and the keys the reads need.
  int64_t lease = 0;
  {
    Natcd__V1__LeaseGrantRequest grant;
    natcd__v1__lease_grant_request__init(&grant);
    grant.ttl = 600;
    std::string body = Pack(&grant.base);
    natsMsg* reply = nullptr;
    if (natsConnection_Request(&reply, nc, (prefix + ".lease.grant").c_str(), body.data(),
                               static_cast<int>(body.size()), 5'000) == NATS_OK) {
      auto* r = natcd__v1__lease_grant_response__unpack(
          nullptr, natsMsg_GetDataLength(reply),
          reinterpret_cast<const uint8_t*>(natsMsg_GetData(reply)));
      if (r) lease = r->id;
      natcd__v1__lease_grant_response__free_unpacked(r, nullptr);
      natsMsg_Destroy(reply);
    }
  }
  LoadSpec fill{prefix + ".kv.put", PutBody, {}, 256, 10'000, 60'000};
  LoadResult filled = natcd::bench::RunLoad(nc, fill);
  printf("filled %llu keys in %.2f s\n", static_cast<unsigned long long>(filled.completed),
         filled.seconds);

  std::stringstream list(workloads);
  std::string name;
  while (std::getline(list, name, ',')) {
    if (name.rfind("watch-", 0) == 0) {
      int n = std::stoi(name.substr(6));
      natcd::bench::FanoutResult r =
          natcd::bench::RunWatchFanout(nc, prefix, n, 64, std::min<int64_t>(max_ms, 5'000));
      printf("%-14s %10.0f ev/s   lag p50 %8.1f us  p99 %8.1f us  writes=%llu delivered=%llu\n",
             name.c_str(), r.per_second(), Percentile(r.lag_ns, 50) / 1e3,
             Percentile(r.lag_ns, 99) / 1e3, static_cast<unsigned long long>(r.writes),
             static_cast<unsigned long long>(r.delivered));
      fflush(stdout);
      continue;
    }
    LoadSpec spec;
    spec.total = total;
    spec.max_ms = max_ms;
    auto dash = name.rfind('-');
    std::string kind = name.substr(0, dash);
    spec.inflight = name.substr(dash + 1) == "seq" ? 1 : std::stoi(name.substr(dash + 1));
    if (kind == "put") {
      spec.subject = prefix + ".kv.put";
      spec.body = PutBody;
    } else if (kind == "range") {
      spec.subject = prefix + ".kv.range";
      spec.body = GetBody;
    } else if (kind == "range100") {
      spec.subject = prefix + ".kv.range";
      spec.body = Range100Body;
    } else if (kind == "keepalive") {
      char hex[32];
      snprintf(hex, sizeof hex, "%llx", static_cast<unsigned long long>(lease));
      spec.subject = prefix + ".lease.keepalive." + hex;
      spec.body = [](uint64_t) { return std::string(); };
    } else {
      fprintf(stderr, "unknown workload %s\n", name.c_str());
      return 2;
    }
    Print(name, natcd::bench::RunLoad(nc, spec));
  }
  natsConnection_Destroy(nc);
  nats_Close();
  return 0;
}
