// Test helpers for protobuf-c messages of natcd.proto: the list of every
// message descriptor, a seeded random message generator driven by the
// descriptors, and packing to bytes.
#pragma once

#include <protobuf-c/protobuf-c.h>

#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "adapters/nats/natcd.pb-c.h"

namespace natcd::nats::testutil {

// Every message of natcd.proto. Add new messages here.
inline const std::vector<const ProtobufCMessageDescriptor*>& AllMessageDescriptors() {
  static const std::vector<const ProtobufCMessageDescriptor*> kAll = {
      &natcd__v1__key_value__descriptor,
      &natcd__v1__event__descriptor,
      &natcd__v1__response_header__descriptor,
      &natcd__v1__range_request__descriptor,
      &natcd__v1__range_response__descriptor,
      &natcd__v1__put_request__descriptor,
      &natcd__v1__put_response__descriptor,
      &natcd__v1__delete_range_request__descriptor,
      &natcd__v1__delete_range_response__descriptor,
      &natcd__v1__request_op__descriptor,
      &natcd__v1__response_op__descriptor,
      &natcd__v1__compare__descriptor,
      &natcd__v1__txn_request__descriptor,
      &natcd__v1__txn_response__descriptor,
      &natcd__v1__compaction_request__descriptor,
      &natcd__v1__compaction_response__descriptor,
      &natcd__v1__watch_create_request__descriptor,
      &natcd__v1__watch_cancel_request__descriptor,
      &natcd__v1__watch_progress_request__descriptor,
      &natcd__v1__watch_ack_request__descriptor,
      &natcd__v1__watch_response__descriptor,
      &natcd__v1__lease_grant_request__descriptor,
      &natcd__v1__lease_grant_response__descriptor,
      &natcd__v1__lease_revoke_request__descriptor,
      &natcd__v1__lease_revoke_response__descriptor,
      &natcd__v1__lease_keep_alive_request__descriptor,
      &natcd__v1__lease_keep_alive_response__descriptor,
      &natcd__v1__lease_time_to_live_request__descriptor,
      &natcd__v1__lease_time_to_live_response__descriptor,
      &natcd__v1__lease_leases_request__descriptor,
      &natcd__v1__lease_status__descriptor,
      &natcd__v1__lease_leases_response__descriptor,
      &natcd__v1__status_request__descriptor,
      &natcd__v1__status_response__descriptor,
      &natcd__v1__member__descriptor,
      &natcd__v1__member_list_request__descriptor,
      &natcd__v1__member_list_response__descriptor,
      &natcd__v1__member_add_request__descriptor,
      &natcd__v1__member_add_response__descriptor,
      &natcd__v1__member_remove_request__descriptor,
      &natcd__v1__member_remove_response__descriptor,
      &natcd__v1__member_promote_request__descriptor,
      &natcd__v1__member_promote_response__descriptor,
  };
  return kAll;
}

inline std::string Pack(const ProtobufCMessage* message) {
  std::string out(protobuf_c_message_get_packed_size(message), '\0');
  protobuf_c_message_pack(message, reinterpret_cast<uint8_t*>(out.data()));
  return out;
}

inline std::string Pack(const void* message) {
  return Pack(static_cast<const ProtobufCMessage*>(message));
}

// Builds random messages laid out as protobuf-c's unpacker would (each
// buffer its own malloc), so protobuf_c_message_free_unpacked frees them.
class RandomMessageGenerator {
 public:
  explicit RandomMessageGenerator(uint64_t seed) : rng_(seed) {}

  // A new message of type `descriptor`; sub-messages nest at most
  // `depth` levels.
  ProtobufCMessage* New(const ProtobufCMessageDescriptor* descriptor, int depth) {
    auto* m = static_cast<ProtobufCMessage*>(std::malloc(descriptor->sizeof_message));
    protobuf_c_message_init(descriptor, m);
    Fill(m, depth);
    return m;
  }

  uint64_t Next() { return rng_(); }
  bool OneIn(uint64_t n) { return rng_() % n == 0; }

  // Random valid UTF-8 without NUL, with characters JSON must escape.
  std::string Utf8String() {
    static const char* const kPieces[] = {"a",
                                          "Z",
                                          "0",
                                          " ",
                                          "\"",
                                          "\\",
                                          "/",
                                          "\n",
                                          "\t",
                                          "\x01",
                                          "\x1f",
                                          "\x7f",
                                          "\xc3\xa9",
                                          "\xe2\x82\xac",
                                          "\xf0\x9f\x98\x80",
                                          "\xe2\x80\xa8",
                                          "<",
                                          "%"};
    std::string s;
    const size_t n = rng_() % 12;
    for (size_t i = 0; i < n; ++i) s += kPieces[rng_() % (sizeof kPieces / sizeof kPieces[0])];
    return s;
  }

 private:
  int64_t Int64() {
    static const int64_t kSpecial[] = {1, -1, INT64_MIN, INT64_MAX, 1LL << 53, (1LL << 53) + 1};
    if (OneIn(2)) return kSpecial[rng_() % 6];
    return static_cast<int64_t>(rng_());
  }
  int32_t Int32() {
    static const int32_t kSpecial[] = {1, -1, INT32_MIN, INT32_MAX};
    if (OneIn(2)) return kSpecial[rng_() % 4];
    return static_cast<int32_t>(rng_());
  }

  void Fill(ProtobufCMessage* m, int depth) {
    const ProtobufCMessageDescriptor* d = m->descriptor;
    // Pick at most one member per oneof (identified by the shared case
    // offset) before filling.
    std::vector<unsigned> chosen_oneof_fields;
    std::vector<unsigned> seen_offsets;
    for (unsigned i = 0; i < d->n_fields; ++i) {
      const ProtobufCFieldDescriptor* f = &d->fields[i];
      if (!(f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)) continue;
      bool seen = false;
      for (unsigned off : seen_offsets) seen = seen || off == f->quantifier_offset;
      if (seen) continue;
      seen_offsets.push_back(f->quantifier_offset);
      std::vector<unsigned> members;
      for (unsigned j = i; j < d->n_fields; ++j) {
        if ((d->fields[j].flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
            d->fields[j].quantifier_offset == f->quantifier_offset) {
          members.push_back(j);
        }
      }
      const size_t pick = rng_() % (members.size() + 1);
      if (pick < members.size()) chosen_oneof_fields.push_back(members[pick]);
    }
    for (unsigned i = 0; i < d->n_fields; ++i) {
      const ProtobufCFieldDescriptor* f = &d->fields[i];
      char* base = reinterpret_cast<char*>(m);
      if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
        bool chosen = false;
        for (unsigned c : chosen_oneof_fields) chosen = chosen || c == i;
        if (!chosen) continue;
        uint32_t id = f->id;
        std::memcpy(base + f->quantifier_offset, &id, sizeof id);
        // A oneof member keeps its presence even with a default value.
        FillValue(f, base + f->offset, depth, /*may_be_default=*/true, /*own_empty=*/true);
        continue;
      }
      if (f->label == PROTOBUF_C_LABEL_REPEATED) {
        size_t n = rng_() % 4;
        if (f->type == PROTOBUF_C_TYPE_MESSAGE && depth <= 0) n = 0;
        if (n == 0) continue;
        const size_t elt = ElementSize(f->type);
        char* array = static_cast<char*>(std::calloc(n, elt));
        std::memcpy(base + f->offset, &array, sizeof array);
        std::memcpy(base + f->quantifier_offset, &n, sizeof n);
        for (size_t k = 0; k < n; ++k) {
          FillValue(f, array + k * elt, depth, /*may_be_default=*/true, /*own_empty=*/true);
        }
        continue;
      }
      if (OneIn(4)) continue;  // leave at the default
      FillValue(f, base + f->offset, depth, /*may_be_default=*/false, /*own_empty=*/false);
    }
  }

  static size_t ElementSize(ProtobufCType type) {
    switch (type) {
      case PROTOBUF_C_TYPE_INT64:
      case PROTOBUF_C_TYPE_SINT64:
      case PROTOBUF_C_TYPE_SFIXED64:
      case PROTOBUF_C_TYPE_UINT64:
      case PROTOBUF_C_TYPE_FIXED64:
      case PROTOBUF_C_TYPE_DOUBLE:
        return 8;
      case PROTOBUF_C_TYPE_STRING:
        return sizeof(char*);
      case PROTOBUF_C_TYPE_MESSAGE:
        return sizeof(ProtobufCMessage*);
      case PROTOBUF_C_TYPE_BYTES:
        return sizeof(ProtobufCBinaryData);
      default:
        return 4;
    }
  }

  // Writes one value. `own_empty`: an empty string must still be its own
  // allocation (array elements, oneof members).
  void FillValue(const ProtobufCFieldDescriptor* f, char* slot, int depth, bool may_be_default,
                 bool own_empty) {
    switch (f->type) {
      case PROTOBUF_C_TYPE_INT64:
      case PROTOBUF_C_TYPE_SINT64:
      case PROTOBUF_C_TYPE_SFIXED64:
      case PROTOBUF_C_TYPE_UINT64:
      case PROTOBUF_C_TYPE_FIXED64: {
        int64_t v = (may_be_default && OneIn(3)) ? 0 : Int64();
        std::memcpy(slot, &v, sizeof v);
        return;
      }
      case PROTOBUF_C_TYPE_INT32:
      case PROTOBUF_C_TYPE_SINT32:
      case PROTOBUF_C_TYPE_SFIXED32:
      case PROTOBUF_C_TYPE_UINT32:
      case PROTOBUF_C_TYPE_FIXED32: {
        int32_t v = (may_be_default && OneIn(3)) ? 0 : Int32();
        std::memcpy(slot, &v, sizeof v);
        return;
      }
      case PROTOBUF_C_TYPE_FLOAT: {
        float v = static_cast<float>(Int32()) / 7.0f;
        std::memcpy(slot, &v, sizeof v);
        return;
      }
      case PROTOBUF_C_TYPE_DOUBLE: {
        double v = static_cast<double>(Int64()) / 7.0;
        std::memcpy(slot, &v, sizeof v);
        return;
      }
      case PROTOBUF_C_TYPE_BOOL: {
        protobuf_c_boolean v = (may_be_default && OneIn(2)) ? 0 : 1;
        std::memcpy(slot, &v, sizeof v);
        return;
      }
      case PROTOBUF_C_TYPE_ENUM: {
        const auto* ed = static_cast<const ProtobufCEnumDescriptor*>(f->descriptor);
        int v;
        if (OneIn(8)) {
          v = 1000 + static_cast<int>(rng_() % 1000);  // open enum: unnamed value
        } else {
          v = ed->values[rng_() % ed->n_values].value;
          if (!may_be_default && v == 0) v = ed->values[ed->n_values - 1].value;
        }
        std::memcpy(slot, &v, sizeof v);
        return;
      }
      case PROTOBUF_C_TYPE_STRING: {
        std::string s = Utf8String();
        if (s.empty() && !may_be_default) s = "x";
        if (s.empty() && !own_empty) return;  // keep protobuf-c's default ""
        char* p = static_cast<char*>(std::malloc(s.size() + 1));
        std::memcpy(p, s.c_str(), s.size() + 1);
        std::memcpy(slot, &p, sizeof p);
        return;
      }
      case PROTOBUF_C_TYPE_BYTES: {
        size_t n = rng_() % 40;
        if (n == 0 && !may_be_default) n = 1;
        ProtobufCBinaryData bd{0, nullptr};
        if (n > 0) {
          bd.data = static_cast<uint8_t*>(std::malloc(n));
          for (size_t i = 0; i < n; ++i) bd.data[i] = static_cast<uint8_t>(rng_());
          bd.len = n;
        }
        std::memcpy(slot, &bd, sizeof bd);
        return;
      }
      case PROTOBUF_C_TYPE_MESSAGE: {
        if (depth <= 0) {
          // No room to nest: an empty message (still present).
          depth = 0;
        }
        const auto* md = static_cast<const ProtobufCMessageDescriptor*>(f->descriptor);
        auto* sub = static_cast<ProtobufCMessage*>(std::malloc(md->sizeof_message));
        protobuf_c_message_init(md, sub);
        if (depth > 0) Fill(sub, depth - 1);
        std::memcpy(slot, &sub, sizeof sub);
        return;
      }
    }
  }

  std::mt19937_64 rng_;
};

}  // namespace natcd::nats::testutil
