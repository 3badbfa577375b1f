// Key <-> subject token / header escaping; see subject.h.

#include "adapters/nats/codec/subject.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace natcd::nats {
namespace {

constexpr char kUpperHex[] = "0123456789ABCDEF";

// Bytes that stand as themselves inside a subject token.
bool IsTokenLiteral(unsigned char c) {
  return c >= 0x21 && c <= 0x7E && c != '.' && c != '*' && c != '>' && c != '%';
}

// Bytes that stand as themselves in the Natcd-Key header value.
bool IsHeaderLiteral(unsigned char c) { return c >= 0x21 && c <= 0x7E && c != '%'; }

void AppendEscaped(unsigned char c, std::string* out) {
  out->push_back('%');
  out->push_back(kUpperHex[c >> 4]);
  out->push_back(kUpperHex[c & 15]);
}

// Value of an uppercase hex digit, or -1 (lowercase is not canonical).
int UpperHexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Decodes a "%XX" at s[i] (s[i] == '%'), storing the byte; false if the
// escape is not two uppercase hex digits.
bool DecodeEscape(std::string_view s, size_t i, unsigned char* byte) {
  if (s.size() - i < 3) return false;
  const int hi = UpperHexValue(s[i + 1]);
  const int lo = UpperHexValue(s[i + 2]);
  if (hi < 0 || lo < 0) return false;
  *byte = static_cast<unsigned char>(hi * 16 + lo);
  return true;
}

// Appends the decoded segment of one token to *out; false if the token is
// not canonical.
bool DecodeToken(std::string_view token, std::string* out) {
  if (token.empty()) return false;
  if (token == "%") return true;  // the empty segment
  for (size_t i = 0; i < token.size(); ++i) {
    const auto c = static_cast<unsigned char>(token[i]);
    if (c == '%') {
      unsigned char byte;
      if (!DecodeEscape(token, i, &byte) || IsTokenLiteral(byte)) return false;
      out->push_back(static_cast<char>(byte));
      i += 2;
    } else if (IsTokenLiteral(c)) {
      out->push_back(static_cast<char>(c));
    } else {
      return false;
    }
  }
  return true;
}

}  // namespace

std::string KeyToSubjectTokens(std::string_view key) {
  if (!key.empty() && key[0] == '/') key.remove_prefix(1);
  std::string out;
  out.reserve(key.size() + 8);
  size_t segment_start = 0;
  for (size_t i = 0; i <= key.size(); ++i) {
    if (i < key.size() && key[i] != '/') continue;
    // key[segment_start, i) is one segment.
    if (segment_start > 0) out.push_back('.');
    if (i == segment_start) {
      out.push_back('%');
    } else {
      for (size_t j = segment_start; j < i; ++j) {
        const auto c = static_cast<unsigned char>(key[j]);
        if (IsTokenLiteral(c)) {
          out.push_back(static_cast<char>(c));
        } else {
          AppendEscaped(c, &out);
        }
      }
    }
    segment_start = i + 1;
  }
  return out;
}

std::string EventSubject(std::string_view prefix, std::string_view key) {
  std::string subject(prefix);
  subject += ".ev.";
  subject += KeyToSubjectTokens(key);
  return subject;
}

bool SubjectTokensToKey(std::string_view tokens, std::string* key) {
  if (tokens.empty()) return false;
  std::string out = "/";
  size_t start = 0;
  for (;;) {
    const size_t dot = tokens.find('.', start);
    const std::string_view token =
        tokens.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (!DecodeToken(token, &out)) return false;
    if (dot == std::string_view::npos) break;
    out.push_back('/');
    start = dot + 1;
  }
  *key = std::move(out);
  return true;
}

std::string LeaseIdHex(int64_t id) {
  static constexpr char kLowerHex[] = "0123456789abcdef";
  auto bits = static_cast<uint64_t>(id);
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i) {
    out[static_cast<size_t>(i)] = kLowerHex[bits & 15];
    bits >>= 4;
  }
  return out;
}

std::string WatchGroupSubject(std::string_view prefix, uint64_t member_id, int64_t group_id) {
  std::string out(prefix);
  out += ".watch.group.";
  out += LeaseIdHex(static_cast<int64_t>(member_id));
  out += '.';
  out += LeaseIdHex(group_id);
  return out;
}

bool ParseLeaseIdHex(std::string_view hex, int64_t* id) {
  if (hex.empty() || hex.size() > 16) return false;
  uint64_t bits = 0;
  for (char c : hex) {
    int digit;
    if (c >= '0' && c <= '9') {
      digit = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      digit = c - 'a' + 10;
    } else if (c >= 'A' && c <= 'F') {
      digit = c - 'A' + 10;
    } else {
      return false;
    }
    bits = (bits << 4) | static_cast<uint64_t>(digit);
  }
  *id = static_cast<int64_t>(bits);
  return true;
}

std::string KeyToHeaderValue(std::string_view key) {
  std::string out;
  out.reserve(key.size());
  for (char ch : key) {
    const auto c = static_cast<unsigned char>(ch);
    if (IsHeaderLiteral(c)) {
      out.push_back(ch);
    } else {
      AppendEscaped(c, &out);
    }
  }
  return out;
}

bool HeaderValueToKey(std::string_view value, std::string* key) {
  std::string out;
  out.reserve(value.size());
  for (size_t i = 0; i < value.size(); ++i) {
    const auto c = static_cast<unsigned char>(value[i]);
    if (c == '%') {
      unsigned char byte;
      if (!DecodeEscape(value, i, &byte) || IsHeaderLiteral(byte)) return false;
      out.push_back(static_cast<char>(byte));
      i += 2;
    } else if (IsHeaderLiteral(c)) {
      out.push_back(static_cast<char>(c));
    } else {
      return false;
    }
  }
  *key = std::move(out);
  return true;
}

}  // namespace natcd::nats
