// The protobuf wire format, as far as the member's persisted formats need
// it: a writer and a reader of tagged fields, no schema, no reflection.
//
// Why not a protobuf library: core/ links no protobuf runtime, and these
// formats are frozen (log commands, Raft messages, remembered outcomes), so
// what matters is that every byte is visible here and pinned by tests.
//
// The reader follows protobuf-c 1.4 (the codec that wrote every existing
// data directory) wherever the two could differ, so that bytes it accepted
// still decode and bytes it refused are still refused:
//  - a tag is at most 5 bytes, a length prefix at most 5 bytes, any other
//    varint at most 10; field number 0 and numbers above 2^29-1 are refused;
//  - wire types 0 (varint), 1 (64-bit), 2 (length-delimited) and 5 (32-bit)
//    are read or skipped; groups (3, 4) and 6, 7 are refused (proto3 has no
//    groups; protobuf-c and natcd's depth guard both refuse them);
//  - a length that runs past the end is refused, never allocated.
// The caller decides what a field means; the helpers below check the wire
// type the way protobuf-c does for each field type.
//
// Thread safety: plain values; a Reader is used by one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace natcd::server::wire {

enum class WireType : uint8_t {
  kVarint = 0,
  kFixed64 = 1,
  kLengthDelimited = 2,
  kFixed32 = 5,
};

// Appends fields to a string. proto3 leaves out fields that hold their
// default; the *Field helpers below do the same, the plain ones always write
// (a oneof member, a present sub-message).
class Writer {
 public:
  void Tag(uint32_t field, WireType type);
  void RawVarint(uint64_t value);

  // Always written.
  void Varint(uint32_t field, uint64_t value);
  void Bytes(uint32_t field, std::string_view value);
  // Written unless 0 / false / empty, as proto3 does. int64 and enum values
  // below 0 take 10 bytes (two's complement), as in every protobuf codec.
  void VarintField(uint32_t field, uint64_t value) {
    if (value != 0) Varint(field, value);
  }
  void Int64Field(uint32_t field, int64_t value) {
    VarintField(field, static_cast<uint64_t>(value));
  }
  void BoolField(uint32_t field, bool value) { VarintField(field, value ? 1 : 0); }
  void BytesField(uint32_t field, std::string_view value) {
    if (!value.empty()) Bytes(field, value);
  }
  // A packed repeated varint field; nothing when empty.
  template <typename Int>
  void PackedVarints(uint32_t field, const std::vector<Int>& values);

  std::string& out() { return out_; }
  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
};

// One field as read. `raw` is everything after the tag (the varint bytes,
// the 4 or 8 fixed bytes, or the length prefix and payload): protobuf-c
// reads a bool from it whatever the wire type.
struct Field {
  uint32_t number = 0;
  WireType type = WireType::kVarint;
  uint64_t value = 0;        // kVarint, kFixed64, kFixed32
  std::string_view payload;  // kLengthDelimited
  std::string_view raw;
};

// Reads fields in order. Next() returns false at the end of the input or at
// the first malformed field; ok() tells which.
class Reader {
 public:
  explicit Reader(std::string_view data) : data_(data) {}
  bool Next(Field* field);
  bool ok() const { return ok_; }

 private:
  std::string_view data_;
  size_t pos_ = 0;
  bool ok_ = true;
};

// Reads a varint of at most max_bytes bytes at data[*pos]; false when it is
// truncated or longer. Bits beyond 64 are dropped, as protobuf-c does.
bool ReadVarint(std::string_view data, size_t* pos, uint64_t* value, int max_bytes = 10);

// Field values as protobuf-c reads them. False: the wire type does not fit
// the field type (protobuf-c refuses the whole message).
bool AsUint64(const Field& f, uint64_t* out);  // int64, uint64: a varint
bool AsInt64(const Field& f, int64_t* out);
bool AsUint32(const Field& f, uint32_t* out);  // uint32: the low 32 bits
bool AsInt32(const Field& f, int32_t* out);    // int32, enums: the low 32 bits
bool AsBytes(const Field& f, std::string_view* out);
// A bool accepts every wire type: true when any byte after the tag has a
// non-zero low 7 bits (protobuf-c's parse_boolean).
bool AsBool(const Field& f);
// A repeated int64/uint64: one varint, or a packed run of them (appended).
bool AppendVarints(const Field& f, std::vector<uint64_t>* out);

// Which fields of a message are messages themselves, for the depth check.
struct MessageShape;
struct ChildShape {
  uint32_t field;
  const MessageShape* shape;
};
struct MessageShape {
  const char* name;  // the protobuf full name, for error messages
  const ChildShape* children;
  size_t n_children;
};

// Deepest nesting accepted, counting the top-level message as 1 (natcd's
// wire guard, adapters/nats/codec/wire_guard.h, uses the same 64).
inline constexpr int kDepthMax = 64;

// True when data is well-formed as far as the wire format goes (tags,
// varints of up to 10 bytes, lengths, no groups) and its messages nest at
// most depth_max levels. Allocates nothing; recursion is bounded by
// depth_max. This is the check natcd ran before protobuf-c saw any bytes,
// so it decides which of the two errors an input gets.
bool WellFormed(std::string_view data, const MessageShape& shape, int depth_max = kDepthMax);

template <typename Int>
void Writer::PackedVarints(uint32_t field, const std::vector<Int>& values) {
  if (values.empty()) return;
  Writer inner;
  for (Int v : values) inner.RawVarint(static_cast<uint64_t>(v));
  Bytes(field, inner.out());
}

}  // namespace natcd::server::wire
