#include "plugin/natcd-bench/key_loader.h"

#include <cstdio>

#include "plugin/natcd-bench/etcd_messages.h"
#include "plugin/natcd-bench/workload.h"

namespace natcd::bench {

std::string LoadKey(uint64_t i) {
  char buf[32];
  snprintf(buf, sizeof buf, "/load/k%07llu", static_cast<unsigned long long>(i));
  return buf;
}

KeyLoader::KeyLoader(natsConnection* nc, std::string prefix)
    : nc_(nc), subject_(std::move(prefix) + ".kv.put") {}

bool KeyLoader::BeginLoad(int slots, ReplySink* sink) {
  return requests_.Begin(nc_, slots, sink,
                         [](int, natsMsg* reply) { return NoServiceError(reply); });
}

void KeyLoader::Issue(int slot, Op, uint64_t i) {
  const std::string body = PutBody(LoadKey(i), ValueOf(i), 0);
  requests_.Send(slot, subject_.c_str(), body.data(), static_cast<int>(body.size()));
}

void KeyLoader::EndLoad() { requests_.End(); }

LoadResult LoadKeys(natsConnection* nc, const std::string& prefix, uint64_t keys, int in_flight,
                    int64_t max_ms) {
  KeyLoader loader(nc, prefix);
  return RunLoad(
      loader,
      {.op = Op::kFill, .inflight = in_flight, .first = 0, .total = keys, .max_ms = max_ms});
}

}  // namespace natcd::bench
