// JsonToMessage on untrusted input: thousands of random, mutated and
// truncated documents (seeded, so a failure reproduces). Each must either
// fail with an error message or yield a valid message that encodes, and
// whose JSON parses back to the same bytes. Run under `make asan` to check
// for leaks and undefined behaviour too.

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "adapters/nats/codec/json_codec.h"
#include "adapters/nats/natcd.pb-c.h"
#include "proto_testutil.h"

namespace natcd::nats {
namespace {

using testutil::AllMessageDescriptors;
using testutil::Pack;
using testutil::RandomMessageGenerator;

constexpr uint64_t kSeed = 0x6e617463640a;  // change to explore; printed on failure

// Checks one input against one message type.
void CheckOne(const ProtobufCMessageDescriptor* d, const std::string& input, uint64_t case_id) {
  std::string error;
  UniqueMessage m = JsonToMessage(d, input, &error);
  if (m == nullptr) {
    ASSERT_FALSE(error.empty()) << "seed=" << kSeed << " case=" << case_id;
    return;
  }
  ASSERT_TRUE(protobuf_c_message_check(m.get())) << "seed=" << kSeed << " case=" << case_id;
  const std::string bytes = Pack(m.get());
  const std::string json = MessageToJson(m.get());
  UniqueMessage again = JsonToMessage(d, json, &error);
  ASSERT_NE(again, nullptr) << "seed=" << kSeed << " case=" << case_id << ": " << json << " -> "
                            << error;
  ASSERT_EQ(Pack(again.get()), bytes) << "seed=" << kSeed << " case=" << case_id;
  // And the binary form decodes to the same JSON.
  UniqueMessage unpacked(protobuf_c_message_unpack(d, nullptr, bytes.size(),
                                                   reinterpret_cast<const uint8_t*>(bytes.data())));
  ASSERT_NE(unpacked, nullptr) << "seed=" << kSeed << " case=" << case_id;
  ASSERT_EQ(MessageToJson(unpacked.get()), json) << "seed=" << kSeed << " case=" << case_id;
}

// Pieces a mutation may splice in: JSON syntax, tricky literals, names of
// real fields, enum names, escapes and non-UTF-8 bytes.
const std::vector<std::string>& Splices() {
  static const std::vector<std::string> kSplices = {
      "{",
      "}",
      "[",
      "]",
      ",",
      ":",
      "\"",
      "\\",
      "null",
      "true",
      "false",
      "0",
      "-0",
      "1e400",
      "-1",
      "9223372036854775808",
      "18446744073709551616",
      "\"9223372036854775807\"",
      "\"-9223372036854775808\"",
      "1.5",
      "\"NaN\"",
      "\"Infinity\"",
      "\"key\":",
      "\"rangeEnd\":",
      "\"range_end\":",
      "\"success\":[",
      "\"requestTxn\":{",
      "\"requestPut\":{",
      "\"compare\":[{",
      "\"version\":",
      "\"value\":",
      "\"filters\":[",
      "\"sortOrder\":",
      "\"DESCEND\"",
      "\"NODELETE\"",
      "\"events\":[",
      "\"header\":{",
      "\"deliverSubject\":",
      "\"peerURLs\":[",
      "\"AA==\"",
      "\"_-_-\"",
      "\"\\u0000\"",
      "\"\\ud800\"",
      "\"\\ud83d\\ude00\"",
      "\xff",
      "\xc3",
      "\xe2\x82\xac",
      std::string(1, '\0'),
      "  ",
      "\n",
  };
  return kSplices;
}

std::string Mutate(std::string s, std::mt19937_64& rng) {
  const int mutations = 1 + static_cast<int>(rng() % 4);
  for (int i = 0; i < mutations; ++i) {
    const size_t pos = s.empty() ? 0 : rng() % (s.size() + 1);
    switch (rng() % 7) {
      case 0:  // flip a byte
        if (!s.empty()) s[pos % s.size()] = static_cast<char>(rng());
        break;
      case 1:  // delete a run
        if (!s.empty()) s.erase(pos % s.size(), 1 + rng() % 8);
        break;
      case 2:  // truncate
        s.resize(pos);
        break;
      case 3: {  // splice in a piece
        const auto& pieces = Splices();
        s.insert(pos, pieces[rng() % pieces.size()]);
        break;
      }
      case 4: {  // duplicate a run
        if (s.empty()) break;
        const size_t from = rng() % s.size();
        const size_t len = 1 + rng() % 32;
        s.insert(pos, s.substr(from, len));
        break;
      }
      case 5:  // insert a random byte
        s.insert(s.begin() + static_cast<std::ptrdiff_t>(pos), static_cast<char>(rng()));
        break;
      case 6: {  // swap two bytes
        if (s.size() < 2) break;
        std::swap(s[rng() % s.size()], s[rng() % s.size()]);
        break;
      }
    }
  }
  return s;
}

TEST(JsonFuzz, MutatedValidDocuments) {
  std::mt19937_64 rng(kSeed);
  RandomMessageGenerator gen(kSeed);
  const auto& all = AllMessageDescriptors();
  uint64_t case_id = 0;
  int parsed = 0;
  for (int round = 0; round < 60; ++round) {
    for (const ProtobufCMessageDescriptor* d : all) {
      UniqueMessage seed_message(gen.New(d, 3));
      const std::string valid = MessageToJson(seed_message.get());
      CheckOne(d, valid, case_id++);
      for (int k = 0; k < 3; ++k) {
        const std::string input = Mutate(valid, rng);
        std::string error;
        if (JsonToMessage(d, input, &error) != nullptr) ++parsed;
        CheckOne(d, input, case_id++);
        // The same bytes offered as another message type.
        CheckOne(all[rng() % all.size()], input, case_id++);
        if (HasFatalFailure()) return;
      }
    }
  }
  // The mutations should not all be rejected (or the test checks little).
  EXPECT_GT(parsed, 100);
}

TEST(JsonFuzz, EveryTruncation) {
  RandomMessageGenerator gen(kSeed + 1);
  uint64_t case_id = 0;
  for (const ProtobufCMessageDescriptor* d :
       {&natcd__v1__txn_request__descriptor, &natcd__v1__watch_response__descriptor,
        &natcd__v1__member_add_response__descriptor}) {
    UniqueMessage m(gen.New(d, 4));
    const std::string valid = MessageToJson(m.get());
    for (size_t n = 0; n < valid.size(); ++n) {
      std::string error;
      // A strict prefix of one JSON object is never a complete one.
      EXPECT_EQ(JsonToMessage(d, valid.substr(0, n), &error), nullptr);
      EXPECT_FALSE(error.empty());
      CheckOne(d, valid.substr(n), case_id++);  // and every suffix
      if (HasFatalFailure()) return;
    }
  }
}

TEST(JsonFuzz, RandomBytesAndTokenSoup) {
  std::mt19937_64 rng(kSeed + 2);
  const auto& all = AllMessageDescriptors();
  const auto& pieces = Splices();
  for (uint64_t case_id = 0; case_id < 4000; ++case_id) {
    std::string input;
    if (case_id % 2 == 0) {
      const size_t len = rng() % 64;
      for (size_t i = 0; i < len; ++i) input.push_back(static_cast<char>(rng()));
    } else {
      input = "{";
      const size_t len = rng() % 24;
      for (size_t i = 0; i < len; ++i) input += pieces[rng() % pieces.size()];
    }
    CheckOne(all[rng() % all.size()], input, case_id);
    if (HasFatalFailure()) return;
  }
}

TEST(JsonFuzz, DeepAndWideInputs) {
  const auto* txn = &natcd__v1__txn_request__descriptor;
  // Deep nesting of every container kind, well past the limit.
  for (const std::string& open :
       {std::string("["), std::string("{\"a\":"), std::string("{\"success\":[{\"requestTxn\":")}) {
    std::string input = "{\"x\":";
    for (int i = 0; i < 5000; ++i) input += open;
    std::string error;
    EXPECT_EQ(JsonToMessage(txn, input, &error), nullptr);
    EXPECT_FALSE(error.empty());
  }
  // Many fields and many list elements are fine.
  std::string wide = "{\"compare\":[";
  for (int i = 0; i < 20000; ++i) wide += (i ? ",{\"key\":\"YQ==\"}" : "{\"key\":\"YQ==\"}");
  wide += "]}";
  std::string error;
  UniqueMessage m = JsonToMessage(txn, wide, &error);
  ASSERT_NE(m, nullptr) << error;
  EXPECT_EQ(reinterpret_cast<Natcd__V1__TxnRequest*>(m.get())->n_compare, 20000u);
  // A failure late in a long list frees everything allocated before it.
  std::string late = wide.substr(0, wide.size() - 2) + ",{\"key\":1}]}";
  EXPECT_EQ(JsonToMessage(txn, late, &error), nullptr);
  EXPECT_EQ(error.rfind("compare[20000].key: ", 0), 0u) << error;
}

}  // namespace
}  // namespace natcd::nats
