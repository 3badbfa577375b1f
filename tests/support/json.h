// A small JSON reader for tests: checking JSON replies, discovery answers
// and the JSON lines that client scripts (nats.js, etcd3) print.
// Header-only; test code only.
#pragma once

#include <cctype>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace natcd::testing {

// A parsed JSON value. Numbers keep their text.
struct Json {
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject };
  Type type = Type::kNull;
  bool boolean = false;
  std::string text;  // string value, or the number as written
  std::vector<Json> items;
  std::vector<std::pair<std::string, Json>> members;

  bool is_string() const { return type == Type::kString; }
  bool is_number() const { return type == Type::kNumber; }
  bool is_object() const { return type == Type::kObject; }
  bool is_array() const { return type == Type::kArray; }
  // The member, or a null value when missing (or this is not an object).
  const Json& operator[](const std::string& name) const {
    static const Json kNull;
    for (const auto& [k, v] : members) {
      if (k == name) return v;
    }
    return kNull;
  }
  const Json& operator[](size_t i) const {
    static const Json kNull;
    return i < items.size() ? items[i] : kNull;
  }
  bool has(const std::string& name) const {
    for (const auto& m : members) {
      if (m.first == name) return true;
    }
    return false;
  }
  size_t size() const { return type == Type::kArray ? items.size() : members.size(); }

  // Parses one JSON document; nullopt when it is not well-formed JSON.
  static std::optional<Json> Parse(std::string_view s) {
    size_t pos = 0;
    Json out;
    if (!ParseValue(s, &pos, &out, 0)) return std::nullopt;
    SkipSpace(s, &pos);
    if (pos != s.size()) return std::nullopt;
    return out;
  }

 private:
  static void SkipSpace(std::string_view s, size_t* pos) {
    while (*pos < s.size() &&
           (s[*pos] == ' ' || s[*pos] == '\t' || s[*pos] == '\n' || s[*pos] == '\r')) {
      ++*pos;
    }
  }
  static bool ParseString(std::string_view s, size_t* pos, std::string* out) {
    if (*pos >= s.size() || s[*pos] != '"') return false;
    ++*pos;
    while (*pos < s.size()) {
      char c = s[(*pos)++];
      if (c == '"') return true;
      if (static_cast<unsigned char>(c) < 0x20) return false;
      if (c != '\\') {
        out->push_back(c);
        continue;
      }
      if (*pos >= s.size()) return false;
      char e = s[(*pos)++];
      switch (e) {
        case '"':
        case '\\':
        case '/':
          out->push_back(e);
          break;
        case 'b':
          out->push_back('\b');
          break;
        case 'f':
          out->push_back('\f');
          break;
        case 'n':
          out->push_back('\n');
          break;
        case 'r':
          out->push_back('\r');
          break;
        case 't':
          out->push_back('\t');
          break;
        case 'u': {
          if (*pos + 4 > s.size()) return false;
          unsigned v = std::stoul(std::string(s.substr(*pos, 4)), nullptr, 16);
          *pos += 4;
          if (v < 0x80) {
            out->push_back(static_cast<char>(v));
          } else if (v < 0x800) {
            out->push_back(static_cast<char>(0xC0 | (v >> 6)));
            out->push_back(static_cast<char>(0x80 | (v & 63)));
          } else {
            out->push_back(static_cast<char>(0xE0 | (v >> 12)));
            out->push_back(static_cast<char>(0x80 | ((v >> 6) & 63)));
            out->push_back(static_cast<char>(0x80 | (v & 63)));
          }
          break;
        }
        default:
          return false;
      }
    }
    return false;
  }
  static bool ParseValue(std::string_view s, size_t* pos, Json* out, int depth) {
    if (depth > 64) return false;
    SkipSpace(s, pos);
    if (*pos >= s.size()) return false;
    char c = s[*pos];
    if (c == '{') {
      out->type = Type::kObject;
      ++*pos;
      SkipSpace(s, pos);
      if (*pos < s.size() && s[*pos] == '}') {
        ++*pos;
        return true;
      }
      for (;;) {
        SkipSpace(s, pos);
        std::string key;
        if (!ParseString(s, pos, &key)) return false;
        SkipSpace(s, pos);
        if (*pos >= s.size() || s[*pos] != ':') return false;
        ++*pos;
        Json value;
        if (!ParseValue(s, pos, &value, depth + 1)) return false;
        out->members.emplace_back(std::move(key), std::move(value));
        SkipSpace(s, pos);
        if (*pos >= s.size()) return false;
        if (s[*pos] == ',') {
          ++*pos;
          continue;
        }
        if (s[*pos] == '}') {
          ++*pos;
          return true;
        }
        return false;
      }
    }
    if (c == '[') {
      out->type = Type::kArray;
      ++*pos;
      SkipSpace(s, pos);
      if (*pos < s.size() && s[*pos] == ']') {
        ++*pos;
        return true;
      }
      for (;;) {
        Json value;
        if (!ParseValue(s, pos, &value, depth + 1)) return false;
        out->items.push_back(std::move(value));
        SkipSpace(s, pos);
        if (*pos >= s.size()) return false;
        if (s[*pos] == ',') {
          ++*pos;
          continue;
        }
        if (s[*pos] == ']') {
          ++*pos;
          return true;
        }
        return false;
      }
    }
    if (c == '"') {
      out->type = Type::kString;
      return ParseString(s, pos, &out->text);
    }
    for (const char* word : {"true", "false", "null"}) {
      if (s.substr(*pos, strlen(word)) == word) {
        *pos += strlen(word);
        out->type = word[0] == 'n' ? Type::kNull : Type::kBool;
        out->boolean = word[0] == 't';
        return true;
      }
    }
    size_t start = *pos;
    if (*pos < s.size() && s[*pos] == '-') ++*pos;
    while (*pos < s.size() &&
           (isdigit(static_cast<unsigned char>(s[*pos])) || s[*pos] == '.' || s[*pos] == 'e' ||
            s[*pos] == 'E' || s[*pos] == '+' || s[*pos] == '-')) {
      ++*pos;
    }
    if (*pos == start) return false;
    out->type = Type::kNumber;
    out->text = std::string(s.substr(start, *pos - start));
    return true;
  }
};

}  // namespace natcd::testing
