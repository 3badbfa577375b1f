// Proto3 canonical JSON for protobuf-c messages; see json_codec.h.
//
// Decoding is two passes: a strict recursive-descent JSON parser builds a
// small document tree (owned by C++, so an error anywhere frees it), then the
// tree is walked against the message descriptor to fill a protobuf-c message.
// The message is kept freeable by protobuf_c_message_free_unpacked() at every
// step: an allocation is stored into the message (and counted, for repeated
// fields) before anything that can fail touches it, so on error the decoder
// simply frees the whole message.
//
// protobuf-c's rules this relies on (protobuf-c.c, free_unpacked):
//   - a repeated field is a malloc'd array of `n_<field>` elements (a size_t
//     at quantifier_offset); strings, bytes data and sub-messages inside it
//     are freed one by one, so each is its own malloc block and none may be
//     the shared empty string;
//   - a singular string is freed unless it equals the descriptor's
//     default_value (protobuf_c_empty_string for proto3), so "" stays the
//     shared default;
//   - bytes data is freed when not NULL; empty bytes are {0, NULL} (a
//     non-NULL pointer with len 0 would also be packed on the wire);
//   - a oneof's members share a union; only the member whose id equals the
//     case (a uint32 at quantifier_offset) is freed;
//   - enums and protobuf_c_boolean are int-sized.
// The default allocator is malloc/free, so malloc here matches it.

#include "adapters/nats/codec/json_codec.h"

#include <cfloat>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace natcd::nats {
namespace {

// ---------------------------------------------------------------------------
// Small helpers on raw message memory. memcpy keeps the accesses free of
// aliasing and alignment assumptions.
// ---------------------------------------------------------------------------

template <typename T>
T Load(const void* base, unsigned offset) {
  T value;
  std::memcpy(&value, static_cast<const char*>(base) + offset, sizeof(T));
  return value;
}

template <typename T>
void Store(void* base, unsigned offset, T value) {
  std::memcpy(static_cast<char*>(base) + offset, &value, sizeof(T));
}

// Size of one element of a repeated field's array, as protobuf-c lays it out.
size_t ElementSize(ProtobufCType type) {
  switch (type) {
    case PROTOBUF_C_TYPE_INT32:
    case PROTOBUF_C_TYPE_SINT32:
    case PROTOBUF_C_TYPE_SFIXED32:
    case PROTOBUF_C_TYPE_UINT32:
    case PROTOBUF_C_TYPE_FIXED32:
      return 4;
    case PROTOBUF_C_TYPE_FLOAT:
      return sizeof(float);
    case PROTOBUF_C_TYPE_ENUM:
      return sizeof(int);
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64:
      return 8;
    case PROTOBUF_C_TYPE_DOUBLE:
      return sizeof(double);
    case PROTOBUF_C_TYPE_BOOL:
      return sizeof(protobuf_c_boolean);
    case PROTOBUF_C_TYPE_STRING:
      return sizeof(char*);
    case PROTOBUF_C_TYPE_BYTES:
      return sizeof(ProtobufCBinaryData);
    case PROTOBUF_C_TYPE_MESSAGE:
      return sizeof(ProtobufCMessage*);
  }
  return 0;
}

bool IsOneof(const ProtobufCFieldDescriptor* field) {
  return (field->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) != 0;
}

// Pointer-typed fields (string, message) carry presence in the pointer;
// the others use a has_ flag when the label is OPTIONAL.
bool IsPointerType(ProtobufCType type) {
  return type == PROTOBUF_C_TYPE_STRING || type == PROTOBUF_C_TYPE_MESSAGE;
}

// A freshly allocated and initialised message, or null when out of memory.
ProtobufCMessage* NewMessage(const ProtobufCMessageDescriptor* descriptor) {
  auto* message = static_cast<ProtobufCMessage*>(std::malloc(descriptor->sizeof_message));
  if (message != nullptr) protobuf_c_message_init(descriptor, message);
  return message;
}

// Does `key` equal the JSON name of the .proto field `name`?
bool JsonNameEquals(const char* name, std::string_view key) {
  size_t k = 0;
  bool upper_next = false;
  for (const char* p = name; *p != '\0'; ++p) {
    if (*p == '_') {
      upper_next = true;
      continue;
    }
    char c = *p;
    if (upper_next && c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    upper_next = false;
    if (k >= key.size() || key[k] != c) return false;
    ++k;
  }
  return k == key.size();
}

// ---------------------------------------------------------------------------
// UTF-8
// ---------------------------------------------------------------------------

// Length of the well-formed UTF-8 sequence at s[0..n) (1-4), or 0 if the
// bytes there are not one (overlong forms, surrogates and code points above
// U+10FFFF are rejected, as RFC 3629 requires).
size_t Utf8SequenceLength(const unsigned char* s, size_t n) {
  if (n == 0) return 0;
  const unsigned char c = s[0];
  if (c < 0x80) return 1;
  size_t len;
  unsigned char lo = 0x80, hi = 0xBF;  // bounds of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (n < len) return 0;
  if (s[1] < lo || s[1] > hi) return 0;
  for (size_t i = 2; i < len; ++i) {
    if (s[i] < 0x80 || s[i] > 0xBF) return 0;
  }
  return len;
}

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// ---------------------------------------------------------------------------
// Base64 (RFC 4648)
// ---------------------------------------------------------------------------

constexpr char kBase64Std[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void Base64Encode(const uint8_t* data, size_t len, std::string* out) {
  size_t i = 0;
  for (; i + 3 <= len; i += 3) {
    const uint32_t v = (uint32_t{data[i]} << 16) | (uint32_t{data[i + 1]} << 8) | data[i + 2];
    out->push_back(kBase64Std[(v >> 18) & 63]);
    out->push_back(kBase64Std[(v >> 12) & 63]);
    out->push_back(kBase64Std[(v >> 6) & 63]);
    out->push_back(kBase64Std[v & 63]);
  }
  if (len - i == 1) {
    const uint32_t v = uint32_t{data[i]} << 16;
    out->push_back(kBase64Std[(v >> 18) & 63]);
    out->push_back(kBase64Std[(v >> 12) & 63]);
    out->append("==");
  } else if (len - i == 2) {
    const uint32_t v = (uint32_t{data[i]} << 16) | (uint32_t{data[i + 1]} << 8);
    out->push_back(kBase64Std[(v >> 18) & 63]);
    out->push_back(kBase64Std[(v >> 12) & 63]);
    out->push_back(kBase64Std[(v >> 6) & 63]);
    out->push_back('=');
  }
}

int Base64Digit(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+' || c == '-') return 62;
  if (c == '/' || c == '_') return 63;
  return -1;
}

// Accepts the standard and the URL-safe alphabet, with or without padding.
bool Base64Decode(std::string_view in, std::string* out) {
  size_t n = in.size();
  size_t pad = 0;
  while (n > 0 && pad < 2 && in[n - 1] == '=') {
    --n;
    ++pad;
  }
  if (pad > 0 && in.size() % 4 != 0) return false;
  if (n % 4 == 1) return false;
  out->clear();
  out->reserve(n / 4 * 3 + 2);
  uint32_t acc = 0;
  int bits = 0;
  for (size_t i = 0; i < n; ++i) {
    const int d = Base64Digit(in[i]);
    if (d < 0) return false;
    acc = (acc << 6) | static_cast<uint32_t>(d);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out->push_back(static_cast<char>((acc >> bits) & 0xFF));
    }
  }
  return true;
}

// ---------------------------------------------------------------------------
// JSON document tree and parser
// ---------------------------------------------------------------------------

struct JsonValue {
  enum class Kind : uint8_t { kNull, kFalse, kTrue, kNumber, kString, kArray, kObject };
  Kind kind = Kind::kNull;
  // kString: the decoded (valid UTF-8) text. kNumber: the literal as written.
  std::string text;
  // kArray: the elements. kObject: the member values, parallel to `keys`.
  std::vector<JsonValue> items;
  std::vector<std::string> keys;
};

const char* KindName(JsonValue::Kind kind) {
  switch (kind) {
    case JsonValue::Kind::kNull:
      return "null";
    case JsonValue::Kind::kFalse:
    case JsonValue::Kind::kTrue:
      return "a boolean";
    case JsonValue::Kind::kNumber:
      return "a number";
    case JsonValue::Kind::kString:
      return "a string";
    case JsonValue::Kind::kArray:
      return "an array";
    case JsonValue::Kind::kObject:
      return "an object";
  }
  return "?";
}

// Is `s` a number as RFC 8259 writes one?
//   -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?
// Returns its length when it starts s, 0 when s does not start with one.
size_t JsonNumberLength(std::string_view s) {
  size_t i = 0;
  auto digit = [&](size_t j) { return j < s.size() && s[j] >= '0' && s[j] <= '9'; };
  if (i < s.size() && s[i] == '-') ++i;
  if (!digit(i)) return 0;
  if (s[i] == '0') {
    ++i;
  } else {
    while (digit(i)) ++i;
  }
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (!digit(i)) return 0;
    while (digit(i)) ++i;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (!digit(i)) return 0;
    while (digit(i)) ++i;
  }
  return i;
}

class JsonParser {
 public:
  explicit JsonParser(std::string_view in) : in_(in) {}

  // Parses the whole input as one JSON value.
  bool Parse(JsonValue* out, std::string* error) {
    SkipSpace();
    bool ok = ParseValue(out, 0);
    if (ok) {
      SkipSpace();
      if (pos_ != in_.size()) ok = Fail("trailing characters after the JSON value");
    }
    if (!ok) *error = error_;
    return ok;
  }

 private:
  bool Fail(std::string_view what) {
    error_ = "malformed JSON at offset " + std::to_string(pos_) + ": " + std::string(what);
    return false;
  }

  void SkipSpace() {
    while (pos_ < in_.size() &&
           (in_[pos_] == ' ' || in_[pos_] == '\t' || in_[pos_] == '\n' || in_[pos_] == '\r')) {
      ++pos_;
    }
  }

  // `depth`: how many arrays/objects enclose this value.
  bool ParseValue(JsonValue* out, int depth) {
    if (pos_ >= in_.size()) return Fail("unexpected end of input");
    const char c = in_[pos_];
    switch (c) {
      case '{':
      case '[':
        if (depth >= kJsonDepthMax) {
          return Fail("nesting deeper than " + std::to_string(kJsonDepthMax) + " levels");
        }
        return c == '{' ? ParseObject(out, depth + 1) : ParseArray(out, depth + 1);
      case '"':
        out->kind = JsonValue::Kind::kString;
        return ParseString(&out->text);
      case 't':
        return ParseLiteral("true", JsonValue::Kind::kTrue, out);
      case 'f':
        return ParseLiteral("false", JsonValue::Kind::kFalse, out);
      case 'n':
        return ParseLiteral("null", JsonValue::Kind::kNull, out);
      default: {
        const size_t len = JsonNumberLength(in_.substr(pos_));
        if (len == 0) return Fail("expected a JSON value");
        out->kind = JsonValue::Kind::kNumber;
        out->text.assign(in_.substr(pos_, len));
        pos_ += len;
        return true;
      }
    }
  }

  bool ParseLiteral(std::string_view word, JsonValue::Kind kind, JsonValue* out) {
    if (in_.substr(pos_, word.size()) != word) return Fail("expected a JSON value");
    pos_ += word.size();
    out->kind = kind;
    return true;
  }

  bool ParseObject(JsonValue* out, int depth) {
    out->kind = JsonValue::Kind::kObject;
    ++pos_;  // '{'
    SkipSpace();
    if (pos_ < in_.size() && in_[pos_] == '}') {
      ++pos_;
      return true;
    }
    for (;;) {
      SkipSpace();
      if (pos_ >= in_.size() || in_[pos_] != '"') return Fail("expected a string key");
      out->keys.emplace_back();
      if (!ParseString(&out->keys.back())) return false;
      SkipSpace();
      if (pos_ >= in_.size() || in_[pos_] != ':') return Fail("expected ':'");
      ++pos_;
      SkipSpace();
      out->items.emplace_back();
      if (!ParseValue(&out->items.back(), depth)) return false;
      SkipSpace();
      if (pos_ >= in_.size()) return Fail("unterminated object");
      if (in_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (in_[pos_] == '}') {
        ++pos_;
        return true;
      }
      return Fail("expected ',' or '}'");
    }
  }

  bool ParseArray(JsonValue* out, int depth) {
    out->kind = JsonValue::Kind::kArray;
    ++pos_;  // '['
    SkipSpace();
    if (pos_ < in_.size() && in_[pos_] == ']') {
      ++pos_;
      return true;
    }
    for (;;) {
      SkipSpace();
      out->items.emplace_back();
      if (!ParseValue(&out->items.back(), depth)) return false;
      SkipSpace();
      if (pos_ >= in_.size()) return Fail("unterminated array");
      if (in_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (in_[pos_] == ']') {
        ++pos_;
        return true;
      }
      return Fail("expected ',' or ']'");
    }
  }

  bool ParseHex4(uint32_t* out) {
    if (in_.size() - pos_ < 4) return Fail("truncated \\u escape");
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = in_[pos_ + i];
      v <<= 4;
      if (c >= '0' && c <= '9') {
        v |= static_cast<uint32_t>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        v |= static_cast<uint32_t>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        v |= static_cast<uint32_t>(c - 'A' + 10);
      } else {
        return Fail("bad hex digit in \\u escape");
      }
    }
    pos_ += 4;
    *out = v;
    return true;
  }

  bool ParseString(std::string* out) {
    ++pos_;  // '"'
    for (;;) {
      if (pos_ >= in_.size()) return Fail("unterminated string");
      const auto c = static_cast<unsigned char>(in_[pos_]);
      if (c == '"') {
        ++pos_;
        return true;
      }
      if (c < 0x20) return Fail("control character in string");
      if (c == '\\') {
        ++pos_;
        if (pos_ >= in_.size()) return Fail("unterminated string");
        const char e = in_[pos_++];
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
            uint32_t cp = 0;
            if (!ParseHex4(&cp)) return false;
            if (cp >= 0xDC00 && cp <= 0xDFFF) return Fail("lone low surrogate in \\u escape");
            if (cp >= 0xD800 && cp <= 0xDBFF) {
              if (in_.substr(pos_, 2) != "\\u") return Fail("lone high surrogate in \\u escape");
              pos_ += 2;
              uint32_t lo = 0;
              if (!ParseHex4(&lo)) return false;
              if (lo < 0xDC00 || lo > 0xDFFF) return Fail("bad surrogate pair in \\u escape");
              cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            }
            AppendUtf8(cp, out);
            break;
          }
          default:
            --pos_;
            return Fail("bad escape in string");
        }
        continue;
      }
      const size_t len = Utf8SequenceLength(
          reinterpret_cast<const unsigned char*>(in_.data()) + pos_, in_.size() - pos_);
      if (len == 0) return Fail("invalid UTF-8 in string");
      out->append(in_.substr(pos_, len));
      pos_ += len;
    }
  }

  std::string_view in_;
  size_t pos_ = 0;
  std::string error_;
};

// ---------------------------------------------------------------------------
// Numbers
// ---------------------------------------------------------------------------

// The number text of a JSON value given for a numeric field: a JSON number,
// or a JSON string holding exactly one. Returns false if there is none.
bool NumberText(const JsonValue& v, std::string_view* text) {
  if (v.kind != JsonValue::Kind::kNumber && v.kind != JsonValue::Kind::kString) return false;
  *text = v.text;
  return !text->empty() && JsonNumberLength(*text) == text->size();
}

bool IsPlainInteger(std::string_view text) {
  return text.find_first_of(".eE") == std::string_view::npos;
}

bool ParseDouble(std::string_view text, double* out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size() && std::isfinite(*out);
}

// Integers: exact for plain integer literals; a literal with a fraction or
// an exponent is accepted when its value is an integer (within double
// precision).
bool ParseSigned(std::string_view text, int64_t min, int64_t max, int64_t* out, std::string* why) {
  int64_t v;
  if (IsPlainInteger(text)) {
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec == std::errc::result_out_of_range) {
      *why = "integer out of range";
      return false;
    }
    if (ec != std::errc() || end != text.data() + text.size()) {
      *why = "not an integer";
      return false;
    }
  } else {
    double d;
    if (!ParseDouble(text, &d)) {
      *why = "integer out of range";
      return false;
    }
    if (std::trunc(d) != d) {
      *why = "not an integer";
      return false;
    }
    // 2^63 is exactly representable; every double below it converts safely.
    if (d < -9223372036854775808.0 || d >= 9223372036854775808.0) {
      *why = "integer out of range";
      return false;
    }
    v = static_cast<int64_t>(d);
  }
  if (v < min || v > max) {
    *why = "integer out of range";
    return false;
  }
  *out = v;
  return true;
}

bool ParseUnsigned(std::string_view text, uint64_t max, uint64_t* out, std::string* why) {
  uint64_t v;
  if (IsPlainInteger(text)) {
    if (!text.empty() && text[0] == '-') {
      if (text == "-0") {
        *out = 0;
        return true;
      }
      *why = "negative value for an unsigned field";
      return false;
    }
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec == std::errc::result_out_of_range) {
      *why = "integer out of range";
      return false;
    }
    if (ec != std::errc() || end != text.data() + text.size()) {
      *why = "not an integer";
      return false;
    }
  } else {
    double d;
    if (!ParseDouble(text, &d)) {
      *why = "integer out of range";
      return false;
    }
    if (std::trunc(d) != d) {
      *why = "not an integer";
      return false;
    }
    if (d < 0) {
      *why = "negative value for an unsigned field";
      return false;
    }
    if (d >= 18446744073709551616.0) {
      *why = "integer out of range";
      return false;
    }
    v = static_cast<uint64_t>(d);
  }
  if (v > max) {
    *why = "integer out of range";
    return false;
  }
  *out = v;
  return true;
}

// ---------------------------------------------------------------------------
// JSON tree -> protobuf-c message
// ---------------------------------------------------------------------------

class Decoder {
 public:
  // Fills `message` (initialised, of type `descriptor`) from `v`.
  bool DecodeMessage(const ProtobufCMessageDescriptor* descriptor, const JsonValue& v,
                     ProtobufCMessage* message) {
    if (v.kind != JsonValue::Kind::kObject) {
      return Fail(std::string("expected an object (") + descriptor->name + "), got " +
                  KindName(v.kind));
    }
    // Which fields were given (to reject duplicates) and, per oneof, which
    // member was set (keyed by the oneof's shared quantifier offset).
    std::vector<bool> seen(descriptor->n_fields, false);
    std::vector<const ProtobufCFieldDescriptor*> oneofs_set;
    for (size_t i = 0; i < v.keys.size(); ++i) {
      const ProtobufCFieldDescriptor* field = FindField(descriptor, v.keys[i]);
      // Unknown fields are ignored: the proto3 JSON mapping lets parsers
      // accept them, and a newer client may send fields we do not know.
      if (field == nullptr) continue;
      const size_t index = static_cast<size_t>(field - descriptor->fields);
      const size_t path_size = PushField(field);
      if (seen[index]) return Fail("field given more than once");
      seen[index] = true;
      const JsonValue& value = v.items[i];
      if (value.kind != JsonValue::Kind::kNull) {
        if (IsOneof(field)) {
          for (const ProtobufCFieldDescriptor* other : oneofs_set) {
            if (other->quantifier_offset == field->quantifier_offset) {
              return Fail("oneof already has member " + JsonName(other->name) + " set");
            }
          }
          oneofs_set.push_back(field);
        }
        if (!DecodeField(message, field, value)) return false;
      }
      path_.resize(path_size);
    }
    return true;
  }

  std::string Error() const {
    if (path_.empty()) return error_;
    return path_.substr(path_[0] == '.' ? 1 : 0) + ": " + error_;
  }

 private:
  bool Fail(std::string what) {
    error_ = std::move(what);
    return false;
  }

  // Appends ".jsonName" to the path; returns the size to restore.
  size_t PushField(const ProtobufCFieldDescriptor* field) {
    const size_t size = path_.size();
    path_ += '.';
    path_ += JsonName(field->name);
    return size;
  }

  static const ProtobufCFieldDescriptor* FindField(const ProtobufCMessageDescriptor* descriptor,
                                                   std::string_view key) {
    for (unsigned i = 0; i < descriptor->n_fields; ++i) {
      if (JsonNameEquals(descriptor->fields[i].name, key)) return &descriptor->fields[i];
    }
    for (unsigned i = 0; i < descriptor->n_fields; ++i) {
      if (std::string_view(descriptor->fields[i].name) == key) return &descriptor->fields[i];
    }
    return nullptr;
  }

  bool DecodeField(ProtobufCMessage* message, const ProtobufCFieldDescriptor* field,
                   const JsonValue& v) {
    if (field->label == PROTOBUF_C_LABEL_REPEATED) return DecodeRepeated(message, field, v);

    if (field->type == PROTOBUF_C_TYPE_MESSAGE) {
      const auto* sub_descriptor =
          static_cast<const ProtobufCMessageDescriptor*>(field->descriptor);
      ProtobufCMessage* sub = NewMessage(sub_descriptor);
      if (sub == nullptr) return Fail("out of memory");
      // Owned by the message from here on, even if filling it fails.
      Store(message, field->offset, sub);
      if (IsOneof(field)) Store<uint32_t>(message, field->quantifier_offset, field->id);
      return DecodeMessage(sub_descriptor, v, sub);
    }

    // Allocates only as its last step, so nothing leaks before the store.
    const bool keep_empty_string = IsOneof(field);
    if (!DecodeSingular(field, v, reinterpret_cast<char*>(message) + field->offset,
                        keep_empty_string)) {
      return false;
    }
    if (IsOneof(field)) {
      Store<uint32_t>(message, field->quantifier_offset, field->id);
    } else if (field->label == PROTOBUF_C_LABEL_OPTIONAL && !IsPointerType(field->type)) {
      Store<protobuf_c_boolean>(message, field->quantifier_offset, 1);
    }
    return true;
  }

  bool DecodeRepeated(ProtobufCMessage* message, const ProtobufCFieldDescriptor* field,
                      const JsonValue& v) {
    if (v.kind != JsonValue::Kind::kArray) {
      return Fail(std::string("expected an array, got ") + KindName(v.kind));
    }
    const size_t n = v.items.size();
    if (n == 0) return true;
    const size_t element_size = ElementSize(field->type);
    char* array = static_cast<char*>(std::calloc(n, element_size));
    if (array == nullptr) return Fail("out of memory");
    Store(message, field->offset, array);
    Store<size_t>(message, field->quantifier_offset, 0);
    const size_t path_size = path_.size();
    for (size_t i = 0; i < n; ++i) {
      path_ += '[' + std::to_string(i) + ']';
      const JsonValue& item = v.items[i];
      if (item.kind == JsonValue::Kind::kNull) return Fail("null is not allowed in a list");
      char* slot = array + i * element_size;
      if (field->type == PROTOBUF_C_TYPE_MESSAGE) {
        const auto* sub_descriptor =
            static_cast<const ProtobufCMessageDescriptor*>(field->descriptor);
        ProtobufCMessage* sub = NewMessage(sub_descriptor);
        if (sub == nullptr) return Fail("out of memory");
        std::memcpy(slot, &sub, sizeof sub);
        Store<size_t>(message, field->quantifier_offset, i + 1);
        if (!DecodeMessage(sub_descriptor, item, sub)) return false;
      } else {
        // Every string in an array is its own allocation, even "".
        if (!DecodeSingular(field, item, slot, /*keep_empty_string=*/true)) return false;
        Store<size_t>(message, field->quantifier_offset, i + 1);
      }
      path_.resize(path_size);
    }
    return true;
  }

  // Decodes one non-message value of `field`'s type into `slot`. A string
  // or bytes buffer is allocated only once the value is known good, so a
  // failure allocates nothing. An empty string is stored as a new "" only
  // when `keep_empty_string` (array elements, oneof members); otherwise the
  // slot keeps protobuf-c's shared default.
  bool DecodeSingular(const ProtobufCFieldDescriptor* field, const JsonValue& v, void* slot,
                      bool keep_empty_string) {
    std::string why;
    switch (field->type) {
      case PROTOBUF_C_TYPE_INT32:
      case PROTOBUF_C_TYPE_SINT32:
      case PROTOBUF_C_TYPE_SFIXED32: {
        std::string_view text;
        if (!NumberText(v, &text)) return WrongType("an integer", v);
        int64_t x;
        if (!ParseSigned(text, INT32_MIN, INT32_MAX, &x, &why)) return Fail(why);
        const auto x32 = static_cast<int32_t>(x);
        std::memcpy(slot, &x32, sizeof x32);
        return true;
      }
      case PROTOBUF_C_TYPE_INT64:
      case PROTOBUF_C_TYPE_SINT64:
      case PROTOBUF_C_TYPE_SFIXED64: {
        std::string_view text;
        if (!NumberText(v, &text)) return WrongType("an integer", v);
        int64_t x;
        if (!ParseSigned(text, INT64_MIN, INT64_MAX, &x, &why)) return Fail(why);
        std::memcpy(slot, &x, sizeof x);
        return true;
      }
      case PROTOBUF_C_TYPE_UINT32:
      case PROTOBUF_C_TYPE_FIXED32: {
        std::string_view text;
        if (!NumberText(v, &text)) return WrongType("an integer", v);
        uint64_t x;
        if (!ParseUnsigned(text, UINT32_MAX, &x, &why)) return Fail(why);
        const auto x32 = static_cast<uint32_t>(x);
        std::memcpy(slot, &x32, sizeof x32);
        return true;
      }
      case PROTOBUF_C_TYPE_UINT64:
      case PROTOBUF_C_TYPE_FIXED64: {
        std::string_view text;
        if (!NumberText(v, &text)) return WrongType("an integer", v);
        uint64_t x;
        if (!ParseUnsigned(text, UINT64_MAX, &x, &why)) return Fail(why);
        std::memcpy(slot, &x, sizeof x);
        return true;
      }
      case PROTOBUF_C_TYPE_FLOAT:
      case PROTOBUF_C_TYPE_DOUBLE: {
        double d;
        if (v.kind == JsonValue::Kind::kString && v.text == "NaN") {
          d = std::nan("");
        } else if (v.kind == JsonValue::Kind::kString && v.text == "Infinity") {
          d = HUGE_VAL;
        } else if (v.kind == JsonValue::Kind::kString && v.text == "-Infinity") {
          d = -HUGE_VAL;
        } else {
          std::string_view text;
          if (!NumberText(v, &text)) return WrongType("a number", v);
          if (!ParseDouble(text, &d)) return Fail("number out of range");
        }
        if (field->type == PROTOBUF_C_TYPE_DOUBLE) {
          std::memcpy(slot, &d, sizeof d);
        } else {
          if (std::isfinite(d) && std::fabs(d) > FLT_MAX) return Fail("number out of range");
          const auto f = static_cast<float>(d);
          std::memcpy(slot, &f, sizeof f);
        }
        return true;
      }
      case PROTOBUF_C_TYPE_BOOL: {
        if (v.kind != JsonValue::Kind::kTrue && v.kind != JsonValue::Kind::kFalse) {
          return WrongType("true or false", v);
        }
        const protobuf_c_boolean b = v.kind == JsonValue::Kind::kTrue;
        std::memcpy(slot, &b, sizeof b);
        return true;
      }
      case PROTOBUF_C_TYPE_ENUM: {
        const auto* enum_descriptor =
            static_cast<const ProtobufCEnumDescriptor*>(field->descriptor);
        int value;
        if (v.kind == JsonValue::Kind::kString) {
          const ProtobufCEnumValue* found = nullptr;
          for (unsigned i = 0; i < enum_descriptor->n_values; ++i) {
            if (v.text == enum_descriptor->values[i].name) {
              found = &enum_descriptor->values[i];
              break;
            }
          }
          if (found == nullptr) {
            return Fail("unknown value \"" + Printable(v.text) + "\" for enum " +
                        enum_descriptor->name);
          }
          value = found->value;
        } else if (v.kind == JsonValue::Kind::kNumber) {
          // Proto3 enums are open: any int32 is a valid value.
          int64_t x;
          if (!ParseSigned(v.text, INT32_MIN, INT32_MAX, &x, &why)) return Fail(why);
          value = static_cast<int>(x);
        } else {
          return WrongType("an enum name or number", v);
        }
        std::memcpy(slot, &value, sizeof value);
        return true;
      }
      case PROTOBUF_C_TYPE_STRING: {
        if (v.kind != JsonValue::Kind::kString) return WrongType("a string", v);
        if (v.text.find('\0') != std::string::npos) {
          return Fail("string contains U+0000, which protobuf-c strings cannot hold");
        }
        if (v.text.empty() && !keep_empty_string) return true;
        char* s = static_cast<char*>(std::malloc(v.text.size() + 1));
        if (s == nullptr) return Fail("out of memory");
        std::memcpy(s, v.text.c_str(), v.text.size() + 1);
        std::memcpy(slot, &s, sizeof s);
        return true;
      }
      case PROTOBUF_C_TYPE_BYTES: {
        if (v.kind != JsonValue::Kind::kString) return WrongType("a base64 string", v);
        std::string raw;
        if (!Base64Decode(v.text, &raw)) return Fail("invalid base64");
        ProtobufCBinaryData bd{0, nullptr};
        if (!raw.empty()) {
          bd.data = static_cast<uint8_t*>(std::malloc(raw.size()));
          if (bd.data == nullptr) return Fail("out of memory");
          std::memcpy(bd.data, raw.data(), raw.size());
          bd.len = raw.size();
        }
        std::memcpy(slot, &bd, sizeof bd);
        return true;
      }
      case PROTOBUF_C_TYPE_MESSAGE:
        break;  // handled by the callers
    }
    return Fail("unsupported field type");
  }

  bool WrongType(const char* expected, const JsonValue& v) {
    return Fail(std::string("expected ") + expected + ", got " + KindName(v.kind));
  }

  // `s` shortened and with non-printable bytes dropped, for error messages.
  static std::string Printable(std::string_view s) {
    std::string out;
    for (char c : s.substr(0, 64)) {
      if (c >= 0x20 && c < 0x7F && c != '"' && c != '\\') out.push_back(c);
    }
    if (s.size() > 64) out += "...";
    return out;
  }

  std::string path_;
  std::string error_;
};

// ---------------------------------------------------------------------------
// protobuf-c message -> JSON
// ---------------------------------------------------------------------------

class Encoder {
 public:
  explicit Encoder(std::string* out) : out_(out) {}

  void Message(const ProtobufCMessage* message) {
    const ProtobufCMessageDescriptor* descriptor = message->descriptor;
    out_->push_back('{');
    bool first = true;
    for (unsigned i = 0; i < descriptor->n_fields; ++i) {
      const ProtobufCFieldDescriptor* field = &descriptor->fields[i];
      if (!IsPresent(message, field)) continue;
      if (!first) out_->push_back(',');
      first = false;
      out_->push_back('"');
      out_->append(JsonName(field->name));
      out_->append("\":");
      const char* member = reinterpret_cast<const char*>(message) + field->offset;
      if (field->label == PROTOBUF_C_LABEL_REPEATED) {
        const auto n = Load<size_t>(message, field->quantifier_offset);
        const char* array = Load<const char*>(member, 0);
        const size_t element_size = ElementSize(field->type);
        out_->push_back('[');
        for (size_t j = 0; j < n; ++j) {
          if (j > 0) out_->push_back(',');
          Value(field, array + j * element_size);
        }
        out_->push_back(']');
      } else {
        Value(field, member);
      }
    }
    out_->push_back('}');
  }

 private:
  // Whether the field is written: set oneof members always; otherwise
  // anything but the proto3 default.
  static bool IsPresent(const ProtobufCMessage* message, const ProtobufCFieldDescriptor* field) {
    const char* member = reinterpret_cast<const char*>(message) + field->offset;
    if (field->label == PROTOBUF_C_LABEL_REPEATED) {
      return Load<size_t>(message, field->quantifier_offset) > 0 &&
             Load<const void*>(member, 0) != nullptr;
    }
    if (IsOneof(field) || field->label == PROTOBUF_C_LABEL_OPTIONAL) {
      if (IsOneof(field) && Load<uint32_t>(message, field->quantifier_offset) != field->id) {
        return false;
      }
      if (IsPointerType(field->type)) {
        // As protobuf-c's packer: a null or default pointer is "not set".
        const void* p = Load<const void*>(member, 0);
        return p != nullptr && p != field->default_value;
      }
      if (IsOneof(field)) return true;
      return Load<protobuf_c_boolean>(message, field->quantifier_offset) != 0;
    }
    if (field->label == PROTOBUF_C_LABEL_REQUIRED) {
      return !IsPointerType(field->type) || Load<const void*>(member, 0) != nullptr;
    }
    // PROTOBUF_C_LABEL_NONE: proto3 implicit presence.
    switch (field->type) {
      case PROTOBUF_C_TYPE_STRING: {
        const char* s = Load<const char*>(member, 0);
        return s != nullptr && s[0] != '\0';
      }
      case PROTOBUF_C_TYPE_MESSAGE:
        return Load<const void*>(member, 0) != nullptr;
      case PROTOBUF_C_TYPE_BYTES:
        return Load<ProtobufCBinaryData>(member, 0).len > 0;
      default: {
        // Every other type is 4 or 8 bytes; all-zero bits is the default.
        const size_t size = ElementSize(field->type);
        for (size_t i = 0; i < size; ++i) {
          if (member[i] != 0) return true;
        }
        return false;
      }
    }
  }

  template <typename T>
  void Number(T value) {
    char buf[64];
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
    (void)ec;  // 64 bytes hold any integer or shortest float/double
    out_->append(buf, end);
  }

  template <typename T>
  void Floating(T value) {
    if (std::isnan(value)) {
      out_->append("\"NaN\"");
    } else if (std::isinf(value)) {
      out_->append(value > 0 ? "\"Infinity\"" : "\"-Infinity\"");
    } else {
      Number(value);
    }
  }

  void Value(const ProtobufCFieldDescriptor* field, const void* p) {
    switch (field->type) {
      case PROTOBUF_C_TYPE_INT32:
      case PROTOBUF_C_TYPE_SINT32:
      case PROTOBUF_C_TYPE_SFIXED32:
        Number(Load<int32_t>(p, 0));
        return;
      case PROTOBUF_C_TYPE_UINT32:
      case PROTOBUF_C_TYPE_FIXED32:
        Number(Load<uint32_t>(p, 0));
        return;
      case PROTOBUF_C_TYPE_INT64:
      case PROTOBUF_C_TYPE_SINT64:
      case PROTOBUF_C_TYPE_SFIXED64:
        out_->push_back('"');
        Number(Load<int64_t>(p, 0));
        out_->push_back('"');
        return;
      case PROTOBUF_C_TYPE_UINT64:
      case PROTOBUF_C_TYPE_FIXED64:
        out_->push_back('"');
        Number(Load<uint64_t>(p, 0));
        out_->push_back('"');
        return;
      case PROTOBUF_C_TYPE_FLOAT:
        Floating(Load<float>(p, 0));
        return;
      case PROTOBUF_C_TYPE_DOUBLE:
        Floating(Load<double>(p, 0));
        return;
      case PROTOBUF_C_TYPE_BOOL:
        out_->append(Load<protobuf_c_boolean>(p, 0) ? "true" : "false");
        return;
      case PROTOBUF_C_TYPE_ENUM: {
        const int value = Load<int>(p, 0);
        const ProtobufCEnumValue* named = protobuf_c_enum_descriptor_get_value(
            static_cast<const ProtobufCEnumDescriptor*>(field->descriptor), value);
        if (named != nullptr) {
          out_->push_back('"');
          out_->append(named->name);
          out_->push_back('"');
        } else {
          Number(value);
        }
        return;
      }
      case PROTOBUF_C_TYPE_STRING: {
        const char* s = Load<const char*>(p, 0);
        String(s == nullptr ? std::string_view() : std::string_view(s));
        return;
      }
      case PROTOBUF_C_TYPE_BYTES: {
        const auto bd = Load<ProtobufCBinaryData>(p, 0);
        out_->push_back('"');
        if (bd.data != nullptr) Base64Encode(bd.data, bd.len, out_);
        out_->push_back('"');
        return;
      }
      case PROTOBUF_C_TYPE_MESSAGE: {
        const auto* sub = Load<const ProtobufCMessage*>(p, 0);
        if (sub == nullptr) {
          out_->append("{}");
        } else {
          Message(sub);
        }
        return;
      }
    }
    out_->append("null");
  }

  void String(std::string_view s) {
    static constexpr char kHex[] = "0123456789abcdef";
    out_->push_back('"');
    const auto* bytes = reinterpret_cast<const unsigned char*>(s.data());
    size_t i = 0;
    while (i < s.size()) {
      const unsigned char c = bytes[i];
      if (c >= 0x80) {
        const size_t len = Utf8SequenceLength(bytes + i, s.size() - i);
        if (len == 0) {
          out_->append("\xEF\xBF\xBD");  // U+FFFD REPLACEMENT CHARACTER
          ++i;
        } else {
          out_->append(s.substr(i, len));
          i += len;
        }
        continue;
      }
      switch (c) {
        case '"':
          out_->append("\\\"");
          break;
        case '\\':
          out_->append("\\\\");
          break;
        case '\b':
          out_->append("\\b");
          break;
        case '\f':
          out_->append("\\f");
          break;
        case '\n':
          out_->append("\\n");
          break;
        case '\r':
          out_->append("\\r");
          break;
        case '\t':
          out_->append("\\t");
          break;
        default:
          if (c < 0x20) {
            out_->append("\\u00");
            out_->push_back(kHex[c >> 4]);
            out_->push_back(kHex[c & 15]);
          } else {
            out_->push_back(static_cast<char>(c));
          }
      }
      ++i;
    }
    out_->push_back('"');
  }

  std::string* out_;
};

}  // namespace

std::string JsonName(std::string_view proto_field_name) {
  std::string out;
  out.reserve(proto_field_name.size());
  bool upper_next = false;
  for (char c : proto_field_name) {
    if (c == '_') {
      upper_next = true;
      continue;
    }
    if (upper_next && c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    upper_next = false;
    out.push_back(c);
  }
  return out;
}

bool JsonToMessage(const ProtobufCMessageDescriptor* descriptor, std::string_view json,
                   ProtobufCMessage** out, std::string* error) {
  std::string local_error;
  std::string* err = error != nullptr ? error : &local_error;
  JsonValue root;
  JsonParser parser(json);
  if (!parser.Parse(&root, err)) return false;
  ProtobufCMessage* message = NewMessage(descriptor);
  if (message == nullptr) {
    *err = "out of memory";
    return false;
  }
  Decoder decoder;
  if (!decoder.DecodeMessage(descriptor, root, message)) {
    *err = decoder.Error();
    protobuf_c_message_free_unpacked(message, nullptr);
    return false;
  }
  *out = message;
  return true;
}

UniqueMessage JsonToMessage(const ProtobufCMessageDescriptor* descriptor, std::string_view json,
                            std::string* error) {
  ProtobufCMessage* message = nullptr;
  if (!JsonToMessage(descriptor, json, &message, error)) return nullptr;
  return UniqueMessage(message);
}

std::string MessageToJson(const ProtobufCMessage* message) {
  std::string out;
  Encoder(&out).Message(message);
  return out;
}

}  // namespace natcd::nats
