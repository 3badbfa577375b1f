#include "plugin/natcdctl/format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace natcdctl {
namespace {

// Length of the valid UTF-8 sequence at s[i] (>= 2 bytes), or 0.
size_t Utf8Len(std::string_view s, size_t i) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  size_t n = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c <= 0xdf ? 2 : 0;
  if (n == 0 || c >= 0xf5 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) return 0;
  }
  return n;
}

}  // namespace

std::string GoQuote(std::string_view s) {
  std::string out = "\"";
  char buf[8];
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '\a':
        out += "\\a";
        continue;
      case '\b':
        out += "\\b";
        continue;
      case '\f':
        out += "\\f";
        continue;
      case '\n':
        out += "\\n";
        continue;
      case '\r':
        out += "\\r";
        continue;
      case '\t':
        out += "\\t";
        continue;
      case '\v':
        out += "\\v";
        continue;
      case '\\':
        out += "\\\\";
        continue;
      case '"':
        out += "\\\"";
        continue;
      default:
        break;
    }
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else if (size_t n = c >= 0x80 ? Utf8Len(s, i) : 0; n > 0) {
      out.append(s.substr(i, n));
      i += n - 1;
    } else {
      snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  return out + "\"";
}

bool GoUnquote(std::string_view q, std::string* out) {
  if (q.size() < 2 || q.front() != '"' || q.back() != '"') return false;
  out->clear();
  for (size_t i = 1; i + 1 < q.size(); ++i) {
    char c = q[i];
    if (c != '\\') {
      if (c == '"') return false;
      *out += c;
      continue;
    }
    if (++i + 1 >= q.size()) return false;
    switch (q[i]) {
      case 'a':
        *out += '\a';
        break;
      case 'b':
        *out += '\b';
        break;
      case 'f':
        *out += '\f';
        break;
      case 'n':
        *out += '\n';
        break;
      case 'r':
        *out += '\r';
        break;
      case 't':
        *out += '\t';
        break;
      case 'v':
        *out += '\v';
        break;
      case '\\':
        *out += '\\';
        break;
      case '"':
        *out += '"';
        break;
      case '\'':
        *out += '\'';
        break;
      case 'x': {
        if (i + 3 >= q.size()) return false;
        std::string hex(q.substr(i + 1, 2));
        char* end = nullptr;
        long v = strtol(hex.c_str(), &end, 16);
        if (end != hex.c_str() + 2) return false;
        *out += static_cast<char>(v);
        i += 2;
        break;
      }
      default:
        return false;
    }
  }
  return true;
}

std::string Base64(std::string_view s) {
  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < s.size(); i += 3) {
    uint32_t v = (static_cast<unsigned char>(s[i]) << 16) |
                 (static_cast<unsigned char>(s[i + 1]) << 8) | static_cast<unsigned char>(s[i + 2]);
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  if (size_t rest = s.size() - i; rest > 0) {
    uint32_t v = static_cast<unsigned char>(s[i]) << 16;
    if (rest == 2) v |= static_cast<unsigned char>(s[i + 1]) << 8;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += rest == 2 ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

std::string JsonString(std::string_view s) {
  std::string out = "\"";
  char buf[8];
  for (char ch : s) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20) {
      snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

std::string HumanBytes(uint64_t n) {
  if (n < 10) return std::to_string(n) + " B";
  static const char* kUnits[] = {"B", "kB", "MB", "GB", "TB", "PB", "EB"};
  double e = std::floor(std::log(static_cast<double>(n)) / std::log(1000.0));
  int unit = std::min(static_cast<int>(e), 6);
  double val = std::floor(static_cast<double>(n) / std::pow(1000.0, unit) * 10 + 0.5) / 10;
  char buf[64];
  snprintf(buf, sizeof buf, val < 10 ? "%.1f %s" : "%.0f %s", val, kUnits[unit]);
  return buf;
}

namespace {
// Columns a UTF-8 string takes on a terminal: its code points (tablewriter
// measures "µs" as two columns, not three bytes).
size_t DisplayWidth(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xc0) != 0x80;
  return n;
}
}  // namespace

std::string Table(const std::vector<std::string>& header,
                  const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width(header.size());
  for (size_t c = 0; c < header.size(); ++c) {
    width[c] = DisplayWidth(header[c]);
    for (const auto& row : rows) {
      if (c < row.size()) width[c] = std::max(width[c], DisplayWidth(row[c]));
    }
  }
  std::string line = "+";
  for (size_t w : width) line += std::string(w + 2, '-') + "+";
  line += "\n";
  std::string out = line + "|";
  for (size_t c = 0; c < header.size(); ++c) {
    std::string h = header[c];
    for (char& ch : h) ch = static_cast<char>(toupper(static_cast<unsigned char>(ch)));
    size_t pad = width[c] - DisplayWidth(h);
    out += " " + std::string(pad / 2, ' ') + h + std::string(pad - pad / 2, ' ') + " |";
  }
  out += "\n" + line;
  for (const auto& row : rows) {
    out += "|";
    for (size_t c = 0; c < header.size(); ++c) {
      std::string cell = c < row.size() ? row[c] : "";
      out += " " + std::string(width[c] - DisplayWidth(cell), ' ') + cell + " |";
    }
    out += "\n";
  }
  return out + line;
}

int64_t ParseDurationMs(std::string_view s) {
  if (s.empty()) return -1;
  std::string str(s);
  char* end = nullptr;
  double v = strtod(str.c_str(), &end);
  if (end == str.c_str() || v < 0) return -1;
  std::string unit(end);
  double mult = unit == "" || unit == "s" ? 1000
                : unit == "ms"            ? 1
                : unit == "m"             ? 60'000
                : unit == "h"             ? 3'600'000
                : unit == "us"            ? 0.001
                                          : -1;
  if (mult < 0) return -1;
  return static_cast<int64_t>(v * mult);
}

std::vector<std::string> Argify(std::string_view line) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && isspace(static_cast<unsigned char>(line[i]))) ++i;
    if (i >= line.size()) break;
    if (line[i] == '"') {
      size_t j = i + 1;
      while (j < line.size() && line[j] != '"') j += line[j] == '\\' ? 2 : 1;
      size_t end = std::min(j + 1, line.size());
      std::string word;
      if (!GoUnquote(line.substr(i, end - i), &word)) word = std::string(line.substr(i, end - i));
      out.push_back(word);
      i = end;
    } else {
      size_t j = i;
      while (j < line.size() && !isspace(static_cast<unsigned char>(line[j]))) ++j;
      out.emplace_back(line.substr(i, j - i));
      i = j;
    }
  }
  return out;
}

namespace {
// Go's fmtFrac: the `prec` low decimal digits of v as ".ddd" without
// trailing zeros (nothing when they are all zero); *rest gets the others.
std::string GoFraction(uint64_t v, int prec, uint64_t* rest) {
  std::string out;
  bool print = false;
  for (int i = 0; i < prec; ++i) {
    char digit = static_cast<char>('0' + v % 10);
    print = print || digit != '0';
    if (print) out.insert(out.begin(), digit);
    v /= 10;
  }
  if (print) out.insert(out.begin(), '.');
  *rest = v;
  return out;
}
}  // namespace

std::string GoDuration(int64_t ns) {
  const bool negative = ns < 0;
  const uint64_t u = negative ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  std::string out;
  uint64_t rest = 0;
  if (u == 0) return "0s";
  if (u < 1000000000) {
    // Below a second: one unit, as many decimals as it has.
    const int prec = u < 1000 ? 0 : u < 1000000 ? 3 : 6;
    const char* unit = u < 1000 ? "ns" : u < 1000000 ? "\u00b5s" : "ms";
    std::string fraction = GoFraction(u, prec, &rest);
    out = std::to_string(rest) + fraction + unit;
  } else {
    std::string fraction = GoFraction(u, 9, &rest);
    out = std::to_string(rest % 60) + fraction + "s";
    rest /= 60;
    if (rest > 0) {
      out = std::to_string(rest % 60) + "m" + out;
      rest /= 60;
      if (rest > 0) out = std::to_string(rest) + "h" + out;
    }
  }
  return negative ? "-" + out : out;
}

}  // namespace natcdctl
