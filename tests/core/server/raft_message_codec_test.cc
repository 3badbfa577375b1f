// The Raft message format, pinned: the bytes below were produced by the
// protobuf-c codec (adapters/nats/raft_codec.cc) for the values of
// codec_examples.h. Members of the old and the new version exchange them.
#include "server/raft_message_codec.h"

#include <gtest/gtest.h>

#include "core/server/codec_examples.h"

namespace natcd::server {
namespace {

using testing::Dump;
using testing::Hex;
using testing::Unhex;

// DO NOT CHANGE: persisted. name -> bytes (hex) of ExampleRaftMessages().
const std::pair<const char*, const char*> kGolden[] = {
    {"app_with_entries",
     "08031002180120052804300a3a090805100b2203636d643a0a0805100c1801220263633a"
     "040805100d4009"},
    {"app_resp_reject", "0804100118022005300a50015807"},
    {"vote", "08051003180120062805300d"},
    {"vote_resp", "0806100118032006"},
    {"pre_vote", "0811100218012007"},
    {"pre_vote_resp", "08121001180220075001"},
    {"heartbeat", "080810021801200540096206726561642d37"},
    {"heartbeat_resp", "0809100118022005"},
    {"snap", "08071002180120054a1808e80710041a110a0c010290e4d0b287d3aeeefe01120104"},
    {"snap_empty", "08071002180120054a021a00"},
    {"prop", "0802100118023a0b2209666f72776172646564"},
    {"transfer_leader", "080d100118032005"},
    {"timeout_now", "080e100318012005"},
    {"read_index", "080f1001180220053a052203637478"},
    {"read_index_resp", "0810100218012005302a3a052203637478"},
    {"all_zero", ""},
};

TEST(RaftMessageCodec, EncodesEveryTypeToItsPinnedBytes) {
  const auto examples = testing::ExampleRaftMessages();
  ASSERT_EQ(examples.size(), std::size(kGolden));
  for (size_t i = 0; i < examples.size(); i++) {
    ASSERT_EQ(examples[i].first, kGolden[i].first);
    EXPECT_EQ(Hex(EncodeRaftMessage(examples[i].second)), kGolden[i].second) << kGolden[i].first;
  }
}

TEST(RaftMessageCodec, DecodesThePinnedBytesToTheirValues) {
  const auto examples = testing::ExampleRaftMessages();
  for (size_t i = 0; i < examples.size(); i++) {
    raft::Message out;
    ASSERT_TRUE(DecodeRaftMessage(Unhex(kGolden[i].second), &out).ok()) << kGolden[i].first;
    EXPECT_EQ(Dump(out), Dump(examples[i].second)) << kGolden[i].first;
  }
}

TEST(RaftMessageCodec, WritesTheSnapshotMetaForSnapOnly) {
  raft::Message m;
  m.type = raft::MessageType::kApp;
  m.snapshot.meta.index = 5;
  EXPECT_EQ(Hex(EncodeRaftMessage(m)), "0803");
}

TEST(RaftMessageCodec, MergesARepeatedSnapshotAsProtobufC) {
  // snapshot {index 5, term 6, conf {voters 1 2}}, then snapshot {term 7,
  // conf {learners 3}}: the later scalars win (index reads 0), the
  // repeated fields add up.
  raft::Message out;
  ASSERT_TRUE(DecodeRaftMessage(Unhex("08074a0a080510061a040a0201024a0610071a021003"), &out).ok());
  EXPECT_EQ(out.snapshot.meta.index, 0u);
  EXPECT_EQ(out.snapshot.meta.term, 7u);
  EXPECT_EQ(out.snapshot.meta.conf_state.voters, (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(out.snapshot.meta.conf_state.learners, (std::vector<uint64_t>{3}));
}

std::string ErrorOf(const std::string& hex) {
  raft::Message out;
  Status s = DecodeRaftMessage(Unhex(hex), &out);
  return s.ok() ? "OK" : s.ToString();
}

TEST(RaftMessageCodec, RefusesWhatTodaysDecoderRefusesWithItsText) {
  EXPECT_EQ(ErrorOf("0813"), "ErrInvalidArgument: unknown raft message type 19");
  EXPECT_EQ(ErrorOf("08ffffffff0f"), "ErrInvalidArgument: unknown raft message type 4294967295");
  // uint32: the low 32 bits of a longer varint, as protobuf-c reads it.
  EXPECT_EQ(ErrorOf("0883808080f0ffffffff01"), "OK");
  EXPECT_EQ(ErrorOf("08033a021802"), "ErrInvalidArgument: unknown raft entry type 2");
  EXPECT_EQ(
      ErrorOf("0803"
              "3a03"),
      "ErrInvalidArgument: malformed or too deeply nested protobuf: not a natcd.v1.RaftMessage");
  EXPECT_EQ(
      ErrorOf("4a031a0108"),  // inside conf_state: a field without its value
      "ErrInvalidArgument: malformed or too deeply nested protobuf: not a natcd.v1.RaftMessage");
  EXPECT_EQ(ErrorOf("08033a020a00"),  // an entry's term as bytes
            "ErrInvalidArgument: malformed protobuf: not a natcd.v1.RaftMessage");
  EXPECT_EQ(ErrorOf("4a051a030a0180"),  // voters: an unterminated packed varint
            "ErrInvalidArgument: malformed protobuf: not a natcd.v1.RaftMessage");
}

TEST(RaftMessageCodec, TruncationsRandomBytesAndRandomValues) {
  for (const auto& [name, hex] : kGolden) {
    const std::string bytes = Unhex(hex);
    for (size_t n = 0; n < bytes.size(); n++) {
      raft::Message out;
      if (DecodeRaftMessage(bytes.substr(0, n), &out).ok()) {
        raft::Message again;
        ASSERT_TRUE(DecodeRaftMessage(EncodeRaftMessage(out), &again).ok());
        // Only a kSnap carries its snapshot meta on.
        if (out.type != raft::MessageType::kSnap) out.snapshot = raft::Snapshot{};
        ASSERT_EQ(Dump(again), Dump(out));
      }
    }
  }
  testing::RandomValues r(21);
  for (int i = 0; i < 20000; i++) {
    raft::Message out;
    (void)DecodeRaftMessage(r.S(64), &out);
    const raft::Message m = r.Raft();
    std::string bytes = EncodeRaftMessage(m);
    ASSERT_TRUE(DecodeRaftMessage(bytes, &out).ok());
    ASSERT_EQ(Dump(out), Dump(m));
    bytes.resize(r.U(bytes.size() + 1));
    (void)DecodeRaftMessage(bytes, &out);
  }
}

}  // namespace
}  // namespace natcd::server
