#include "server/proto_wire.h"

namespace natcd::server::wire {

void Writer::RawVarint(uint64_t value) {
  while (value >= 0x80) {
    out_.push_back(static_cast<char>(value | 0x80));
    value >>= 7;
  }
  out_.push_back(static_cast<char>(value));
}

void Writer::Tag(uint32_t field, WireType type) {
  RawVarint((static_cast<uint64_t>(field) << 3) | static_cast<uint64_t>(type));
}

void Writer::Varint(uint32_t field, uint64_t value) {
  Tag(field, WireType::kVarint);
  RawVarint(value);
}

void Writer::Bytes(uint32_t field, std::string_view value) {
  Tag(field, WireType::kLengthDelimited);
  RawVarint(value.size());
  out_.append(value);
}

bool ReadVarint(std::string_view data, size_t* pos, uint64_t* value, int max_bytes) {
  uint64_t v = 0;
  for (int i = 0; i < max_bytes; i++) {
    if (*pos >= data.size()) return false;
    const auto b = static_cast<uint8_t>(data[(*pos)++]);
    if (i < 10) v |= static_cast<uint64_t>(b & 0x7F) << (7 * i);
    if ((b & 0x80) == 0) {
      *value = v;
      return true;
    }
  }
  return false;
}

bool Reader::Next(Field* f) {
  if (!ok_ || pos_ >= data_.size()) return false;
  ok_ = false;
  uint64_t tag;
  // protobuf-c reads a tag of at most 5 bytes.
  if (!ReadVarint(data_, &pos_, &tag, 5)) return false;
  const uint64_t number = tag >> 3;
  if (number == 0 || number > 0x1FFFFFFF) return false;
  f->number = static_cast<uint32_t>(number);
  const size_t start = pos_;
  switch (tag & 7) {
    case 0:
      f->type = WireType::kVarint;
      if (!ReadVarint(data_, &pos_, &f->value)) return false;
      break;
    case 1:
      f->type = WireType::kFixed64;
      if (data_.size() - pos_ < 8) return false;
      f->value = 0;
      for (int i = 7; i >= 0; i--)
        f->value = (f->value << 8) | static_cast<uint8_t>(data_[pos_ + i]);
      pos_ += 8;
      break;
    case 5:
      f->type = WireType::kFixed32;
      if (data_.size() - pos_ < 4) return false;
      f->value = 0;
      for (int i = 3; i >= 0; i--)
        f->value = (f->value << 8) | static_cast<uint8_t>(data_[pos_ + i]);
      pos_ += 4;
      break;
    case 2: {
      f->type = WireType::kLengthDelimited;
      uint64_t size;
      // protobuf-c reads a length prefix of at most 5 bytes.
      if (!ReadVarint(data_, &pos_, &size, 5)) return false;
      if (size > data_.size() - pos_) return false;
      f->payload = data_.substr(pos_, static_cast<size_t>(size));
      pos_ += static_cast<size_t>(size);
      break;
    }
    default:  // groups (3, 4) are not proto3; 6 and 7 do not exist
      return false;
  }
  f->raw = data_.substr(start, pos_ - start);
  ok_ = true;
  return true;
}

bool AsUint64(const Field& f, uint64_t* out) {
  if (f.type != WireType::kVarint) return false;
  *out = f.value;
  return true;
}

bool AsInt64(const Field& f, int64_t* out) {
  if (f.type != WireType::kVarint) return false;
  *out = static_cast<int64_t>(f.value);
  return true;
}

bool AsUint32(const Field& f, uint32_t* out) {
  if (f.type != WireType::kVarint) return false;
  *out = static_cast<uint32_t>(f.value);
  return true;
}

bool AsInt32(const Field& f, int32_t* out) {
  if (f.type != WireType::kVarint) return false;
  *out = static_cast<int32_t>(static_cast<uint32_t>(f.value));
  return true;
}

bool AsBytes(const Field& f, std::string_view* out) {
  if (f.type != WireType::kLengthDelimited) return false;
  *out = f.payload;
  return true;
}

bool AsBool(const Field& f) {
  for (char c : f.raw) {
    if ((static_cast<uint8_t>(c) & 0x7F) != 0) return true;
  }
  return false;
}

bool AppendVarints(const Field& f, std::vector<uint64_t>* out) {
  if (f.type == WireType::kVarint) {
    out->push_back(f.value);
    return true;
  }
  if (f.type != WireType::kLengthDelimited) return false;
  size_t pos = 0;
  while (pos < f.payload.size()) {
    uint64_t v;
    if (!ReadVarint(f.payload, &pos, &v)) return false;
    out->push_back(v);
  }
  return true;
}

namespace {

bool Walk(std::string_view data, const MessageShape& shape, int depth, int depth_max) {
  if (depth > depth_max) return false;
  size_t pos = 0;
  while (pos < data.size()) {
    uint64_t tag;
    if (!ReadVarint(data, &pos, &tag)) return false;
    const uint64_t number = tag >> 3;
    if (number == 0 || number > 0x1FFFFFFF) return false;
    switch (tag & 7) {
      case 0: {
        uint64_t ignored;
        if (!ReadVarint(data, &pos, &ignored)) return false;
        break;
      }
      case 1:
        if (data.size() - pos < 8) return false;
        pos += 8;
        break;
      case 5:
        if (data.size() - pos < 4) return false;
        pos += 4;
        break;
      case 2: {
        uint64_t size;
        if (!ReadVarint(data, &pos, &size)) return false;
        if (size > data.size() - pos) return false;
        for (size_t i = 0; i < shape.n_children; i++) {
          if (shape.children[i].field == number &&
              !Walk(data.substr(pos, static_cast<size_t>(size)), *shape.children[i].shape,
                    depth + 1, depth_max)) {
            return false;
          }
        }
        pos += static_cast<size_t>(size);
        break;
      }
      default:
        return false;
    }
  }
  return true;
}

}  // namespace

bool WellFormed(std::string_view data, const MessageShape& shape, int depth_max) {
  return Walk(data, shape, 1, depth_max);
}

}  // namespace natcd::server::wire
