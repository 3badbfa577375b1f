#include "server/member_identity.h"

#include <algorithm>
#include <cstdlib>

namespace natcd::server {

uint64_t NameHash(std::string_view bytes) {
  // Not FNV's offset basis (14695981039346656037): its first 19 digits, as
  // node.cc's Fnv1a has always had it. Persisted IDs depend on it; keep it.
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;  // FNV-1a 64-bit prime
  }
  return h == 0 ? 1 : h;
}

uint64_t ClusterIdOf(std::string_view subject_prefix, std::string_view cluster_name) {
  std::string s(subject_prefix);
  s += '/';
  s += cluster_name;
  return NameHash(s);
}

std::string EncodeConfChangeContext(const ConfChangeContext& context) {
  std::string out = std::to_string(context.origin_member) + ":" +
                    std::to_string(context.origin_seq) + ":" + context.member_name;
  for (const std::string& url : context.peer_urls) {
    out += '\0';
    out += url;
  }
  return out;
}

ConfChangeContext DecodeConfChangeContext(std::string_view context) {
  ConfChangeContext out;
  if (size_t nul = context.find('\0'); nul != std::string_view::npos) {
    for (size_t start = nul + 1;;) {
      const size_t end = std::min(context.find('\0', start), context.size());
      out.peer_urls.emplace_back(context.substr(start, end - start));
      if (end == context.size()) break;
      start = end + 1;
    }
    context = context.substr(0, nul);
  }
  const size_t a = context.find(':');
  const size_t b = a == std::string_view::npos ? a : context.find(':', a + 1);
  if (b == std::string_view::npos) {
    out.member_name = std::string(context);
    return out;
  }
  // strtoull, as node.cc did: the same answer for every input (leading
  // spaces, a sign, junk after the digits).
  out.origin_member = std::strtoull(std::string(context.substr(0, a)).c_str(), nullptr, 10);
  out.origin_seq =
      std::strtoull(std::string(context.substr(a + 1, b - a - 1)).c_str(), nullptr, 10);
  out.member_name = std::string(context.substr(b + 1));
  return out;
}

}  // namespace natcd::server
