#include "plugin/common/nats_servers.h"

#include <algorithm>
#include <vector>

namespace natcd {

natsStatus SetNatsServers(natsOptions* opts, const std::string& urls) {
  std::vector<std::string> list;
  for (size_t start = 0; start <= urls.size();) {
    const size_t comma = std::min(urls.find(',', start), urls.size());
    if (comma > start) list.push_back(urls.substr(start, comma - start));
    start = comma + 1;
  }
  if (list.empty()) return NATS_INVALID_ARG;
  std::vector<const char*> servers;
  for (const std::string& url : list) servers.push_back(url.c_str());
  return natsOptions_SetServers(opts, servers.data(), static_cast<int>(servers.size()));
}

}  // namespace natcd
