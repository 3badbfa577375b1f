#include "adapters/nats/front_end/discovery.h"

#include <time.h>

#include <cstdio>

namespace natcd::nats {
namespace {

std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

std::string Common(const char* type, const ServiceIdentity& identity) {
  std::string out = "{\"type\":" + Quote(type) + ",\"name\":" + Quote(identity.name) +
                    ",\"id\":" + Quote(identity.id) + ",\"version\":" + Quote(identity.version) +
                    ",\"metadata\":{";
  for (size_t i = 0; i < identity.metadata.size(); ++i) {
    if (i) out += ",";
    out += Quote(identity.metadata[i].first) + ":" + Quote(identity.metadata[i].second);
  }
  return out + "}";
}

}  // namespace

std::vector<std::string> DiscoverySubjects(const ServiceIdentity& identity) {
  std::vector<std::string> out;
  for (const char* verb : {"PING", "INFO", "STATS"}) {
    std::string base = std::string("$SRV.") + verb;
    out.push_back(base);
    out.push_back(base + "." + identity.name);
    out.push_back(base + "." + identity.name + "." + identity.id);
  }
  return out;
}

bool DiscoveryResponse(const std::string& subject, const ServiceIdentity& identity,
                       const std::vector<const Endpoint*>& endpoints, std::string* json) {
  auto verb_of = [&](const char* verb) {
    std::string base = std::string("$SRV.") + verb;
    return subject == base || subject == base + "." + identity.name ||
           subject == base + "." + identity.name + "." + identity.id;
  };
  if (verb_of("PING")) {
    *json = Common("io.nats.micro.v1.ping_response", identity) + "}";
    return true;
  }
  if (verb_of("INFO")) {
    std::string out = Common("io.nats.micro.v1.info_response", identity);
    out += ",\"description\":" + Quote(identity.description) + ",\"endpoints\":[";
    for (size_t i = 0; i < endpoints.size(); ++i) {
      const Endpoint& e = *endpoints[i];
      if (i) out += ",";
      out += "{\"name\":" + Quote(e.name()) + ",\"subject\":" + Quote(e.subject()) +
             ",\"queue_group\":" + Quote(e.queue_group()) + ",\"metadata\":null}";
    }
    *json = out + "]}";
    return true;
  }
  if (verb_of("STATS")) {
    std::string out = Common("io.nats.micro.v1.stats_response", identity);
    out += ",\"started\":" + Quote(identity.started) + ",\"endpoints\":[";
    for (size_t i = 0; i < endpoints.size(); ++i) {
      const Endpoint& e = *endpoints[i];
      EndpointStats stats = e.stats();
      int64_t average = stats.num_requests
                            ? stats.processing_time_ns / static_cast<int64_t>(stats.num_requests)
                            : 0;
      if (i) out += ",";
      out += "{\"name\":" + Quote(e.name()) + ",\"subject\":" + Quote(e.subject()) +
             ",\"queue_group\":" + Quote(e.queue_group()) +
             ",\"num_requests\":" + std::to_string(stats.num_requests) +
             ",\"num_errors\":" + std::to_string(stats.num_errors) +
             ",\"last_error\":" + Quote(stats.last_error) + ",\"data\":null" +
             ",\"processing_time\":" + std::to_string(stats.processing_time_ns) +
             ",\"average_processing_time\":" + std::to_string(average) + "}";
    }
    *json = out + "]}";
    return true;
  }
  return false;
}

std::string Iso8601Now() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  tm utc;
  gmtime_r(&ts.tv_sec, &utc);
  char buf[64];
  snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%09ldZ", utc.tm_year + 1900,
           utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, ts.tv_nsec);
  return buf;
}

}  // namespace natcd::nats
