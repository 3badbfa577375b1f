// Proto3 canonical JSON for any protobuf-c message.
//
// The codec is driven only by protobuf-c's descriptors
// (ProtobufCMessageDescriptor / ProtobufCFieldDescriptor), so every message
// of natcd.proto (and any other protobuf-c message) gets JSON for free. It
// follows the proto3 JSON mapping:
//
//   - Field names: lowerCamelCase json_name on output (computed from the
//     .proto field name the way protoc does: drop '_' and upper-case the next
//     letter, so create_revision -> createRevision, TTL -> TTL); both the json
//     name and the original field name are accepted on input.
//   - int64, uint64, sint64, fixed64, sfixed64: decimal strings on output;
//     strings or numbers on input. 32-bit integers: numbers on output,
//     numbers or strings on input. An integer given as a number or string
//     with a fraction or exponent is accepted if it is exactly an integer
//     within range ("1e3", "5.0").
//   - bytes: standard base64 with padding on output; standard or URL-safe
//     alphabet, with or without padding, on input.
//   - enums: the value's name on output (its number when the number has no
//     name, as proto3 enums are open); name or number on input. Unknown
//     names are rejected.
//   - float/double: numbers, or "NaN", "Infinity", "-Infinity".
//   - Fields with their default value (0, false, "", empty bytes, empty
//     repeated, unset message) are omitted on output, except a oneof member
//     that is set, which is always written (its presence is information).
//   - null for any field means "leave it at its default" (an unset oneof).
//   - Unknown fields are ignored on input, as the proto3 mapping allows
//     parsers to; their values must still be well-formed JSON.
//
// Input is untrusted. JsonToMessage never crashes on any byte string: it
// rejects malformed JSON, a wrong JSON type for a field, unknown enum names,
// integers out of range, invalid UTF-8, strings containing U+0000 (protobuf-c
// strings are NUL-terminated, so such a string cannot be represented), a
// field given twice, two members of one oneof, trailing garbage after the
// value, and nesting deeper than kJsonDepthMax, each with an error message
// that names the field path (e.g. "success[0].requestPut.key: invalid
// base64").
//
// Not supported (natcd.proto uses none): map fields (protobuf-c represents
// them as repeated entry messages; they would be JSON arrays here), the
// well-known types' special JSON forms, and custom json_name options
// (protobuf-c's descriptors do not carry them).
//
// Cost: the input is first parsed into a tree, about 100 bytes per JSON
// value, before the message is built; callers bound the input size (a 1 MB
// body of small values can take 50-100 MB while it is decoded).
//
// Thread safety: every function is reentrant; no shared state.
#pragma once

#include <protobuf-c/protobuf-c.h>

#include <memory>
#include <string>
#include <string_view>

namespace natcd::nats {

// Deepest nesting of JSON objects and arrays JsonToMessage accepts (a bound
// on its recursion). A nested TxnRequest costs three levels per txn.
inline constexpr int kJsonDepthMax = 64;

// Frees a message as protobuf-c's unpacker allocated it.
struct ProtobufCMessageDeleter {
  void operator()(ProtobufCMessage* message) const noexcept {
    protobuf_c_message_free_unpacked(message, nullptr);
  }
};
using UniqueMessage = std::unique_ptr<ProtobufCMessage, ProtobufCMessageDeleter>;

// Parses `json` (one JSON object, optionally surrounded by whitespace) as a
// message of type `descriptor`.
//
// On success returns true and stores a new message in *out. The caller owns
// it and frees it with protobuf_c_message_free_unpacked(*out, NULL): every
// string, bytes buffer, repeated-field array and sub-message is a separate
// malloc() block, exactly as protobuf_c_message_unpack() with the default
// allocator lays a message out. Empty strings are left pointing at
// protobuf-c's shared default (never freed), empty bytes are {0, NULL}.
//
// On failure returns false, leaves *out untouched and, if `error` is not
// null, stores a one-line description of the first problem in *error.
[[nodiscard]] bool JsonToMessage(const ProtobufCMessageDescriptor* descriptor,
                                 std::string_view json, ProtobufCMessage** out, std::string* error);

// As above, returning the message owned by a UniqueMessage (null on error).
[[nodiscard]] UniqueMessage JsonToMessage(const ProtobufCMessageDescriptor* descriptor,
                                          std::string_view json, std::string* error);

// The canonical JSON of `message` (not null): one line, no insignificant whitespace,
// fields in field-number order. Never fails. A string field holding invalid
// UTF-8 (protobuf-c does not validate strings it unpacks) is written with
// each invalid byte replaced by U+FFFD. Recursion follows the message's
// nesting, so a message unpacked from untrusted bytes must have passed
// ProtobufDepthWithin (wire_guard.h) first.
std::string MessageToJson(const ProtobufCMessage* message);

// The proto3 JSON name of a .proto field name (lowerCamelCase, as protoc
// computes json_name).
std::string JsonName(std::string_view proto_field_name);

}  // namespace natcd::nats
