#include "plugin/natcd-bench/workload.h"

#include <cstdio>
#include <cstring>
#include <sstream>

namespace natcd::bench {

std::string KeyIndex(uint64_t i) {
  char buf[24];
  snprintf(buf, sizeof buf, "%06llu", static_cast<unsigned long long>(i));
  return buf;
}

std::string KeyOf(Op op, uint64_t i) {
  switch (op) {
    case Op::kPut:
    case Op::kGet:
    case Op::kGetSerializable:
      return "k/" + KeyIndex(i % kDataKeys);
    case Op::kWatchPut:
      return "w/" + KeyIndex(i % kWatchKeys);
    case Op::kPutLeased:
    case Op::kLeaseGrant:
      return "l/" + KeyIndex(i);
    case Op::kFill:
      return "f/" + KeyIndex(i);
    case Op::kRange100:
    case Op::kKeepAlive:
      break;
  }
  return "";
}

std::string SlashKey(const std::string& key) { return "/bench/" + key; }

std::string DotKey(const std::string& key) {
  std::string out = key;
  for (char& c : out) {
    if (c == '/') c = '.';
  }
  return out;
}

KeyRange RangeOf(uint64_t i) {
  // Block b holds data keys b*100 .. b*100+99, i.e. "00bb00".."00bb99".
  char prefix[32];
  snprintf(prefix, sizeof prefix, "/bench/k/00%02llu",
           static_cast<unsigned long long>(i % (kDataKeys / kRangeKeys)));
  return {prefix, PrefixEnd(prefix)};
}

std::string PrefixEnd(std::string prefix) {
  while (!prefix.empty()) {
    auto& last = reinterpret_cast<unsigned char&>(prefix.back());
    if (last < 0xff) {
      ++last;
      return prefix;
    }
    prefix.pop_back();
  }
  return std::string(1, '\0');
}

std::string ValueOf(uint64_t i) {
  // Varies with i so that no layer can deduplicate identical values.
  std::string value(kValueBytes, 'v');
  const std::string tag = std::to_string(i);
  value.replace(0, tag.size(), tag);
  return value;
}

std::string TimestampedValue(int64_t now_ns) {
  std::string value(kValueBytes, 'w');
  for (int b = 0; b < 8; ++b)
    value[b] = static_cast<char>((static_cast<uint64_t>(now_ns) >> (8 * b)) & 0xff);
  return value;
}

std::optional<int64_t> TimestampOf(const void* data, size_t len) {
  if (data == nullptr || len < 8) return std::nullopt;
  const auto* p = static_cast<const unsigned char*>(data);
  uint64_t v = 0;
  for (int b = 7; b >= 0; --b) v = (v << 8) | p[b];
  return static_cast<int64_t>(v);
}

Scale FullScale() {
  return Scale{.load_ms = 5'000,
               .load_requests_max = 2'000'000,
               .watchers = {1, 100, 1'000},
               .watch_ms = 4'000,
               .expiry_leases = 100'000,
               .expiry_ttl_s = 20,
               .expiry_wait_s_max = 150,
               .footprint_keys = 100'000,
               .fsync_ms = 3'000};
}

Scale QuickScale() {
  return Scale{.load_ms = 800,
               .load_requests_max = 200'000,
               .watchers = {1, 100},
               .watch_ms = 800,
               .expiry_leases = 5'000,
               .expiry_ttl_s = 4,
               .expiry_wait_s_max = 20,
               .footprint_keys = 10'000,
               .fsync_ms = 500};
}

const std::vector<Workload>& AllWorkloads() {
  static const std::vector<Workload> all = {
      {1, "put-seq", Kind::kLoad, Op::kPut, 1},
      {2, "put-64", Kind::kLoad, Op::kPut, 64},
      {2, "put-256", Kind::kLoad, Op::kPut, 256},
      {3, "get-256", Kind::kLoad, Op::kGet, 256},
      {3, "get-256-serializable", Kind::kLoad, Op::kGetSerializable, 256},
      {4, "range100-64", Kind::kLoad, Op::kRange100, 64},
      {5, "cas-16", Kind::kCas, Op::kPut, 16},
      {6, "watch", Kind::kFanout, Op::kWatchPut, 64},
      {7, "lease-grant-256", Kind::kLoad, Op::kLeaseGrant, 256},
      {7, "keepalive-256", Kind::kLoad, Op::kKeepAlive, 256},
      {7, "lease-expiry", Kind::kExpiry, Op::kPutLeased, 256},
      {8, "footprint", Kind::kFootprint, Op::kFill, 256},
  };
  return all;
}

std::optional<std::vector<Workload>> SelectWorkloads(const std::string& csv, std::string* unknown) {
  std::vector<bool> chosen(AllWorkloads().size(), false);
  std::stringstream list(csv);
  std::string name;
  while (std::getline(list, name, ',')) {
    if (name.empty()) continue;
    bool found = false;
    for (size_t w = 0; w < AllWorkloads().size(); ++w) {
      if (name == "all" || AllWorkloads()[w].name == name) {
        chosen[w] = true;
        found = true;
      }
    }
    if (!found) {
      if (unknown != nullptr) *unknown = name;
      return std::nullopt;
    }
  }
  std::vector<Workload> out;
  for (size_t w = 0; w < chosen.size(); ++w) {
    if (chosen[w]) out.push_back(AllWorkloads()[w]);
  }
  return out;
}

}  // namespace natcd::bench
