// The snapshot transfer's wire format: chunks and acks survive the round
// trip exactly; any damaged, short, long or foreign input is refused with
// an error (never a crash), because every byte is under a checksum.
#include "server/snapshot_chunk.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace natcd::server {
namespace {

SnapshotChunk SampleChunk(const std::string& data, bool last) {
  SnapshotChunk chunk;
  chunk.id = SnapshotId{7, 123456789012ull, 0xfeedfacecafebeefull};
  chunk.offset = 3ull << 33;
  chunk.total_bytes = chunk.offset + data.size() + (last ? 0 : 100);
  chunk.last = last;
  chunk.file_crc32c = last ? 0xdeadbeef : 0;
  chunk.data = data;
  return chunk;
}

TEST(SnapshotChunkCodec, ChunkRoundTrip) {
  const std::string data("a\0b\xff\x01", 5);
  for (bool last : {false, true}) {
    const SnapshotChunk chunk = SampleChunk(data, last);
    const std::string wire = EncodeSnapshotChunk(chunk);
    EXPECT_EQ(wire.size(), kSnapshotChunkHeaderBytes + data.size());
    EXPECT_EQ(wire.substr(0, 4), "NCSC");
    Result<SnapshotChunk> back = DecodeSnapshotChunk(wire);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(back->id, chunk.id);
    EXPECT_EQ(back->offset, chunk.offset);
    EXPECT_EQ(back->total_bytes, chunk.total_bytes);
    EXPECT_EQ(back->last, last);
    EXPECT_EQ(back->file_crc32c, chunk.file_crc32c);
    EXPECT_EQ(back->data, data);
    // The data is a view into the message, not a copy.
    EXPECT_EQ(back->data.data(), wire.data() + kSnapshotChunkHeaderBytes);
  }
}

TEST(SnapshotChunkCodec, EmptyLastChunkRoundTrips) {
  SnapshotChunk chunk;
  chunk.id = SnapshotId{1, 1, 1};
  chunk.last = true;
  Result<SnapshotChunk> back = DecodeSnapshotChunk(EncodeSnapshotChunk(chunk));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_TRUE(back->data.empty());
  EXPECT_TRUE(back->last);
}

TEST(SnapshotChunkCodec, AckRoundTrip) {
  for (SnapshotAckState state : {SnapshotAckState::kReceiving, SnapshotAckState::kDone,
                                 SnapshotAckState::kFailed, SnapshotAckState::kRejected}) {
    for (bool gap : {false, true}) {
      const SnapshotAck ack{SnapshotId{9, 8, 7}, 0x0102030405060708ull, state, gap};
      const std::string wire = EncodeSnapshotAck(ack);
      EXPECT_EQ(wire.size(), kSnapshotAckBytes);
      Result<SnapshotAck> back = DecodeSnapshotAck(wire);
      ASSERT_TRUE(back.ok()) << back.status().ToString();
      EXPECT_EQ(back.value(), ack);
    }
  }
}

TEST(SnapshotChunkCodec, EveryFlippedBitIsRefused) {
  const std::string chunk = EncodeSnapshotChunk(SampleChunk("some file bytes", true));
  for (size_t bit = 0; bit < chunk.size() * 8; bit++) {
    std::string damaged = chunk;
    damaged[bit / 8] = static_cast<char>(damaged[bit / 8] ^ (1 << (bit % 8)));
    EXPECT_FALSE(DecodeSnapshotChunk(damaged).ok()) << "chunk bit " << bit;
  }
  const std::string ack =
      EncodeSnapshotAck(SnapshotAck{SnapshotId{1, 2, 3}, 4096, SnapshotAckState::kDone, true});
  for (size_t bit = 0; bit < ack.size() * 8; bit++) {
    std::string damaged = ack;
    damaged[bit / 8] = static_cast<char>(damaged[bit / 8] ^ (1 << (bit % 8)));
    EXPECT_FALSE(DecodeSnapshotAck(damaged).ok()) << "ack bit " << bit;
  }
}

TEST(SnapshotChunkCodec, DamagedDataIsACorruption) {
  std::string wire = EncodeSnapshotChunk(SampleChunk("file bytes", false));
  wire.back() ^= 0x20;
  Result<SnapshotChunk> back = DecodeSnapshotChunk(wire);
  ASSERT_FALSE(back.ok());
  EXPECT_EQ(back.status().code(), Status::Code::kCorruption) << back.status().ToString();
}

TEST(SnapshotChunkCodec, ShortLongAndForeignInputIsRefused) {
  const std::string chunk = EncodeSnapshotChunk(SampleChunk("0123456789", false));
  for (size_t n = 0; n < chunk.size(); n++) {
    EXPECT_FALSE(DecodeSnapshotChunk(chunk.substr(0, n)).ok()) << "chunk prefix " << n;
  }
  EXPECT_FALSE(DecodeSnapshotChunk(chunk + "x").ok());
  const std::string ack = EncodeSnapshotAck(SnapshotAck{});
  for (size_t n = 0; n < ack.size(); n++) {
    EXPECT_FALSE(DecodeSnapshotAck(ack.substr(0, n)).ok()) << "ack prefix " << n;
  }
  EXPECT_FALSE(DecodeSnapshotAck(ack + "x").ok());
  // Each is not the other.
  EXPECT_FALSE(DecodeSnapshotChunk(ack).ok());
  EXPECT_FALSE(DecodeSnapshotAck(chunk.substr(0, kSnapshotAckBytes)).ok());
}

TEST(SnapshotChunkCodec, RandomBytesAreRefused) {
  std::mt19937 rng(5);
  for (int round = 0; round < 20'000; round++) {
    std::string bytes(rng() % 128, '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    // Half of them look like the real thing up to the version.
    if (round % 2 == 0 && bytes.size() >= 5) {
      bytes.replace(0, 4, round % 4 == 0 ? "NCSC" : "NCSA");
      bytes[4] = 1;
    }
    EXPECT_FALSE(DecodeSnapshotChunk(bytes).ok()) << round;
    EXPECT_FALSE(DecodeSnapshotAck(bytes).ok()) << round;
  }
}

TEST(SnapshotId, NewerMeansLaterTermThenHigherIndex) {
  const SnapshotId old_leader{/*term=*/3, /*index=*/900, /*leader=*/1};
  const SnapshotId new_leader{/*term=*/4, /*index=*/500, /*leader=*/2};
  const SnapshotId later_snapshot{/*term=*/4, /*index=*/600, /*leader=*/2};
  EXPECT_LT(old_leader, new_leader);
  EXPECT_LT(new_leader, later_snapshot);
  EXPECT_EQ(new_leader.ToString(), "2/500/4");
}

}  // namespace
}  // namespace natcd::server
