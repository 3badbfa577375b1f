// The wire-format reader and writer: protobuf's encodings, and protobuf-c's
// limits where a reader has a choice.
#include "server/proto_wire.h"

#include <gtest/gtest.h>

#include "core/server/codec_examples.h"

namespace natcd::server::wire {
namespace {

using testing::Hex;
using testing::Unhex;

TEST(ProtoWire, WritesVarintsBytesAndPackedFields) {
  Writer w;
  w.Varint(1, 0);
  w.Varint(1, 300);
  w.Int64Field(2, -1);  // ten bytes
  w.Int64Field(2, 0);   // left out
  w.BoolField(3, true);
  w.BytesField(4, "");  // left out
  w.Bytes(4, "");
  w.Bytes(536870911, "x");  // the largest field number
  w.PackedVarints(5, std::vector<int64_t>{});
  w.PackedVarints(5, std::vector<uint64_t>{1, 128});
  EXPECT_EQ(Hex(w.out()),
            "080008ac0210ffffffffffffffffff01180122"
            "00"
            "faffffff0f0178"
            "2a03018001");
}

std::vector<std::string> Fields(const std::string& hex, bool* ok) {
  const std::string bytes = Unhex(hex);
  Reader r(bytes);
  Field f;
  std::vector<std::string> out;
  while (r.Next(&f)) {
    out.push_back(
        std::to_string(f.number) + ":" + std::to_string(static_cast<int>(f.type)) + ":" +
        (f.type == WireType::kLengthDelimited ? Hex(f.payload) : std::to_string(f.value)));
  }
  *ok = r.ok();
  return out;
}

TEST(ProtoWire, ReadsEveryWireTypeAndRefusesGroupsAndTruncations) {
  bool ok;
  EXPECT_EQ(Fields("0801"
                   "11"
                   "0100000000000000"
                   "1a026869"
                   "2502000000",
                   &ok),
            (std::vector<std::string>{"1:0:1", "2:1:1", "3:2:6869", "4:5:2"}));
  EXPECT_TRUE(ok);
  for (const char* bad : {"0b", "0c", "0e", "0f", "08", "0880", "11010203", "1a02ff", "2501", "00",
                          "888080808000", "0a8080808080", "f8ffffff7f00"}) {
    Fields(bad, &ok);
    EXPECT_FALSE(ok) << bad;
  }
  // A 5-byte tag and a 5-byte length are the longest protobuf-c reads.
  EXPECT_EQ(Fields("8880808000"
                   "01",
                   &ok),
            (std::vector<std::string>{"1:0:1"}));
  EXPECT_TRUE(ok);
  EXPECT_EQ(Fields("0a8180808000"
                   "ff",
                   &ok),
            (std::vector<std::string>{"1:2:ff"}));
  EXPECT_TRUE(ok);
  // A varint of 10 bytes keeps its low 64 bits.
  EXPECT_EQ(Fields("08ffffffffffffffffff7f", &ok),
            (std::vector<std::string>{"1:0:18446744073709551615"}));
  EXPECT_TRUE(ok);
  Fields("08ffffffffffffffffffff01", &ok);  // 11 bytes
  EXPECT_FALSE(ok);
}

TEST(ProtoWire, FieldValuesFollowProtobufC) {
  const std::string bytes = Unhex(
      "08ffffffff1f"
      "1201"
      "00"
      "1a00"
      "2500000080"
      "0880808080f0ffffffff01");
  Reader r(bytes);
  Field f;
  ASSERT_TRUE(r.Next(&f));
  uint32_t u32;
  int32_t i32;
  ASSERT_TRUE(AsUint32(f, &u32));
  EXPECT_EQ(u32, 0xffffffffu);
  ASSERT_TRUE(AsInt32(f, &i32));
  EXPECT_EQ(i32, -1);
  EXPECT_TRUE(AsBool(f));
  ASSERT_TRUE(r.Next(&f));  // bytes "\0"
  EXPECT_FALSE(AsUint32(f, &u32));
  EXPECT_TRUE(AsBool(f));   // a bool reads the length prefix too
  ASSERT_TRUE(r.Next(&f));  // empty bytes
  EXPECT_FALSE(AsBool(f));
  ASSERT_TRUE(r.Next(&f));  // fixed32 0x80000000
  EXPECT_FALSE(AsBool(f));  // 0x80: no low 7 bits set anywhere
  ASSERT_TRUE(r.Next(&f));
  ASSERT_TRUE(AsUint32(f, &u32));
  EXPECT_EQ(u32, 0u);  // only the low 32 bits
  EXPECT_FALSE(r.Next(&f));
  EXPECT_TRUE(r.ok());
}

TEST(ProtoWire, ReadsRepeatedVarintsPackedAndUnpacked) {
  const std::string bytes = Unhex(
      "0801"
      "0a03028001"
      "0a00"
      "0b");
  Reader r(bytes);
  Field f;
  std::vector<uint64_t> values;
  for (int i = 0; i < 3; i++) {
    ASSERT_TRUE(r.Next(&f));
    ASSERT_TRUE(AppendVarints(f, &values));
  }
  EXPECT_EQ(values, (std::vector<uint64_t>{1, 2, 128}));
  EXPECT_FALSE(r.Next(&f));
  EXPECT_FALSE(r.ok());
  const std::string cut = Unhex("0280");
  Field truncated{1, WireType::kLengthDelimited, 0, cut, {}};
  EXPECT_FALSE(AppendVarints(truncated, &values));
  Field fixed{1, WireType::kFixed64, 7, {}, {}};
  EXPECT_FALSE(AppendVarints(fixed, &values));
}

// A message whose field 1 is a message of its own shape, field 2 a leaf.
extern const MessageShape kSelfShape;
constexpr MessageShape kLeaf{"leaf", nullptr, 0};
constexpr ChildShape kSelfChildren[] = {{1, &kSelfShape}, {2, &kLeaf}};
constexpr MessageShape kSelfShape{"self", kSelfChildren, 2};

TEST(ProtoWire, WellFormedBoundsTheDepth) {
  // Field 1 nests a message of the same shape: n levels of it.
  auto nested = [](int n) {
    std::string m;
    for (int i = 0; i < n; i++) {
      Writer w;
      w.Bytes(1, m);
      m = w.Take();
    }
    return m;
  };
  EXPECT_TRUE(WellFormed(nested(63), kSelfShape));
  EXPECT_FALSE(WellFormed(nested(64), kSelfShape));
  EXPECT_TRUE(WellFormed(nested(3), kSelfShape, 4));
  EXPECT_FALSE(WellFormed(nested(4), kSelfShape, 4));
  // A message field's payload is checked (a leaf's too); another
  // length-delimited field's is not.
  EXPECT_FALSE(WellFormed(Unhex("1201ff"), kSelfShape));
  EXPECT_FALSE(WellFormed(Unhex("0a01ff"), kSelfShape));
  EXPECT_TRUE(WellFormed(Unhex("1a01ff"), kSelfShape));
  // The guard takes tags up to 10 bytes (protobuf-c does not: Reader).
  EXPECT_TRUE(WellFormed(Unhex("88808080808000"
                               "01"),
                         kLeaf));
  EXPECT_FALSE(WellFormed(Unhex("0b"), kLeaf));
}

}  // namespace
}  // namespace natcd::server::wire
