#include "metrics/text_format.h"

#include <charconv>
#include <cmath>
#include <cstdint>

namespace natcd::metrics {
namespace {

bool IsNameStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

bool IsValidMetricName(std::string_view name) {
  if (name.empty() || !(IsNameStart(name[0]) || name[0] == ':')) return false;
  for (char c : name) {
    if (!(IsNameStart(c) || IsDigit(c) || c == ':')) return false;
  }
  return true;
}

bool IsValidLabelName(std::string_view name) {
  if (name.empty() || !IsNameStart(name[0]) || name.substr(0, 2) == "__") return false;
  for (char c : name) {
    if (!(IsNameStart(c) || IsDigit(c))) return false;
  }
  return true;
}

void AppendEscapedHelp(std::string* out, std::string_view help) {
  for (char c : help) {
    if (c == '\\') {
      *out += "\\\\";
    } else if (c == '\n') {
      *out += "\\n";
    } else {
      *out += c;
    }
  }
}

void AppendEscapedLabelValue(std::string* out, std::string_view value) {
  for (char c : value) {
    if (c == '\\') {
      *out += "\\\\";
    } else if (c == '"') {
      *out += "\\\"";
    } else if (c == '\n') {
      *out += "\\n";
    } else {
      *out += c;
    }
  }
}

void AppendValue(std::string* out, double value) {
  if (std::isnan(value)) {
    *out += "NaN";
    return;
  }
  if (std::isinf(value)) {
    *out += value > 0 ? "+Inf" : "-Inf";
    return;
  }
  char buf[32];
  // Byte counts and revisions read better in full than as 4.096e+06.
  constexpr double kExactIntegerMax = 9007199254740992.0;  // 2^53
  std::to_chars_result r;
  if (value == std::trunc(value) && std::fabs(value) < kExactIntegerMax) {
    r = std::to_chars(buf, buf + sizeof buf, static_cast<int64_t>(value));
  } else {
    r = std::to_chars(buf, buf + sizeof buf, value);
  }
  out->append(buf, r.ptr);
}

}  // namespace natcd::metrics
