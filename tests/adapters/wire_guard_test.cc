// ProtobufDepthWithin (adapters/nats/codec/wire_guard.h): deep binary input is
// refused before protobuf-c's unbounded recursion can overflow the stack.

#include "adapters/nats/codec/wire_guard.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "adapters/nats/codec/json_codec.h"
#include "adapters/nats/natcd.pb-c.h"
#include "proto_testutil.h"

namespace natcd::nats {
namespace {

using testutil::AllMessageDescriptors;
using testutil::Pack;
using testutil::RandomMessageGenerator;

std::string Varint(uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
  return out;
}

// A TxnRequest nesting `txns` transactions below it: each level is
// TxnRequest.success (field 2) holding RequestOp.request_txn (field 4).
// Message depth: 1 + 2 * txns.
std::string NestedTxn(int txns) {
  std::string inner;  // the innermost, empty TxnRequest
  for (int i = 0; i < txns; ++i) {
    const std::string op = "\x22" + Varint(inner.size()) + inner;
    inner = "\x12" + Varint(op.size()) + op;
  }
  return inner;
}

bool Within(const ProtobufCMessageDescriptor* d, const std::string& bytes,
            int depth_max = kWireDepthMax) {
  return ProtobufDepthWithin(d, reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(),
                             depth_max);
}

TEST(WireGuard, RefusesDeepNesting) {
  const auto* txn = &natcd__v1__txn_request__descriptor;
  // 1 + 2 * 31 = 63 levels, 1 + 2 * 32 = 65.
  EXPECT_TRUE(Within(txn, NestedTxn(31)));
  EXPECT_FALSE(Within(txn, NestedTxn(32)));
  EXPECT_TRUE(Within(txn, NestedTxn(32), 65));
  // The input that crashes protobuf_c_message_unpack (about 150 KB).
  const std::string deep = NestedTxn(20000);
  EXPECT_LT(deep.size(), 200u * 1024);
  EXPECT_FALSE(Within(txn, deep));

  // Within the bound, protobuf-c unpacks it.
  const std::string ok = NestedTxn(31);
  UniqueMessage m(protobuf_c_message_unpack(txn, nullptr, ok.size(),
                                            reinterpret_cast<const uint8_t*>(ok.data())));
  ASSERT_NE(m, nullptr);
}

TEST(WireGuard, AcceptsEveryValidMessage) {
  RandomMessageGenerator gen(99);
  for (const ProtobufCMessageDescriptor* d : AllMessageDescriptors()) {
    for (int i = 0; i < 20; ++i) {
      UniqueMessage m(gen.New(d, 5));
      EXPECT_TRUE(Within(d, Pack(m.get()))) << d->name;
    }
  }
  EXPECT_TRUE(ProtobufDepthWithin(&natcd__v1__put_request__descriptor, nullptr, 0));
}

TEST(WireGuard, MalformedWireData) {
  const auto* put = &natcd__v1__put_request__descriptor;
  EXPECT_FALSE(Within(put, "\x0a"));                      // truncated length
  EXPECT_FALSE(Within(put, "\x0a\x05zz"));                // length past the end
  EXPECT_FALSE(Within(put, "\x18"));                      // truncated varint
  EXPECT_FALSE(Within(put, std::string(11, '\xff')));     // over-long varint
  EXPECT_FALSE(Within(put, std::string("\x00\x00", 2)));  // field number 0
  EXPECT_FALSE(Within(put, "\x0b"));                      // start group
  EXPECT_FALSE(Within(put, "\x09\x01"));                  // 64-bit, truncated
  EXPECT_FALSE(Within(put, "\x0d\x01"));                  // 32-bit, truncated
  // Unknown fields of every wire type are skipped.
  EXPECT_TRUE(Within(put, std::string("\xf8\x01\x05", 3)));  // 31: varint
  EXPECT_TRUE(Within(put, std::string("\xf9\x01"
                                      "12345678",
                                      10)));  // 31: 64-bit
  EXPECT_TRUE(Within(put, std::string("\xfa\x01\x02"
                                      "ab",
                                      5)));  // 31: bytes
  EXPECT_TRUE(Within(put, std::string("\xfd\x01"
                                      "1234",
                                      6)));  // 31: 32-bit
}

// Random bytes and mutated valid encodings: the guard never crashes, and
// whatever it accepts protobuf-c unpacks without crashing either.
TEST(WireGuard, Fuzz) {
  std::mt19937_64 rng(1234);
  RandomMessageGenerator gen(1234);
  const auto& all = AllMessageDescriptors();
  for (int i = 0; i < 5000; ++i) {
    const ProtobufCMessageDescriptor* d = all[rng() % all.size()];
    std::string bytes;
    if (i % 2 == 0) {
      UniqueMessage m(gen.New(d, 4));
      bytes = Pack(m.get());
      const int flips = 1 + static_cast<int>(rng() % 3);
      for (int k = 0; k < flips && !bytes.empty(); ++k) {
        bytes[rng() % bytes.size()] = static_cast<char>(rng());
      }
      if (!bytes.empty() && rng() % 3 == 0) bytes.resize(rng() % bytes.size());
    } else {
      const size_t n = rng() % 64;
      for (size_t k = 0; k < n; ++k) bytes.push_back(static_cast<char>(rng()));
    }
    if (Within(d, bytes)) {
      UniqueMessage m(protobuf_c_message_unpack(d, nullptr, bytes.size(),
                                                reinterpret_cast<const uint8_t*>(bytes.data())));
      if (m != nullptr) (void)MessageToJson(m.get());
    }
  }
}

}  // namespace
}  // namespace natcd::nats
