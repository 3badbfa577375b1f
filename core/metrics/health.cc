#include "metrics/health.h"

namespace natcd::metrics {

std::string HealthVerdict::Json() const {
  // The reasons are fixed ASCII texts chosen here and by the source; escape
  // the two characters JSON requires anyway.
  std::string out = healthy ? R"({"health":"true","reason":")" : R"({"health":"false","reason":")";
  for (char c : reason) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) out += c;
  }
  out += "\"}";
  return out;
}

HealthVerdict EvaluateHealth(HealthProbe probe, const HealthState& state,
                             const HealthQuery& query) {
  for (const std::string& alarm : state.alarms) {
    if (query.excluded_alarms.count(alarm)) continue;
    if (probe == HealthProbe::kLivez && alarm == "NOSPACE") continue;
    if (alarm == "NOSPACE" || alarm == "CORRUPT") return {false, "ALARM " + alarm};
    return {false, "ALARM UNKNOWN"};
  }
  if (!state.api_error.empty()) return {false, state.api_error};
  if (!query.serializable && !state.has_leader) return {false, "RAFT NO LEADER"};
  return {true, ""};
}

std::vector<std::string> AlarmsFromStatusErrors(const std::vector<std::string>& errors) {
  constexpr std::string_view kTag = "alarm:";
  std::vector<std::string> alarms;
  for (const std::string& e : errors) {
    size_t at = e.find(kTag);
    if (at == std::string::npos) continue;
    size_t start = at + kTag.size();
    size_t end = e.find_first_of(" \t\n", start);
    std::string name = e.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (!name.empty()) alarms.push_back(name);
  }
  return alarms;
}

}  // namespace natcd::metrics
