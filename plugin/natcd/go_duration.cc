#include "plugin/natcd/go_duration.h"

#include <string>

namespace natcd {
namespace {

// Nanoseconds per unit; 0: not a unit.
double UnitNs(std::string_view unit) {
  if (unit == "ns") return 1;
  if (unit == "us" || unit == "\xc2\xb5s" || unit == "\xce\xbcs") return 1e3;
  if (unit == "ms") return 1e6;
  if (unit == "s") return 1e9;
  if (unit == "m") return 60e9;
  if (unit == "h") return 3600e9;
  return 0;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

Result<int64_t> ParseGoDurationMs(std::string_view text) {
  const Status invalid =
      Status::InvalidArgument("ErrConfig", "time: invalid duration \"" + std::string(text) + "\"");
  std::string_view s = text;
  bool negative = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s == "0") return int64_t{0};
  if (s.empty()) return invalid;
  double total_ns = 0;
  while (!s.empty()) {
    // A number: digits, optionally a fraction; at least one digit.
    size_t i = 0;
    while (i < s.size() && IsDigit(s[i])) ++i;
    size_t digits = i;
    if (i < s.size() && s[i] == '.') {
      ++i;
      while (i < s.size() && IsDigit(s[i])) ++i, ++digits;
    }
    if (digits == 0) return invalid;
    const double value = std::stod(std::string(s.substr(0, i)) + (s[i - 1] == '.' ? "0" : ""));
    s.remove_prefix(i);
    size_t u = 0;
    while (u < s.size() && s[u] != '.' && !IsDigit(s[u])) ++u;
    const std::string quoted = "\"" + std::string(text) + "\"";
    if (u == 0) {
      return Status::InvalidArgument("ErrConfig", "time: missing unit in duration " + quoted);
    }
    const double per = UnitNs(s.substr(0, u));
    if (per == 0) {
      return Status::InvalidArgument(
          "ErrConfig",
          "time: unknown unit \"" + std::string(s.substr(0, u)) + "\" in duration " + quoted);
    }
    s.remove_prefix(u);
    total_ns += value * per;
  }
  if (total_ns > 9.2e18) return invalid;  // Go: "invalid duration" past int64 nanoseconds
  const int64_t ms = static_cast<int64_t>(total_ns / 1e6);
  return negative ? -ms : ms;
}

}  // namespace natcd
