// Snapshot transfer between a SnapshotSender and a SnapshotReceiver over a
// simulated network (seeded: drops, duplicates, reordering, both ways) with
// an injected clock: a 50 MB file arrives byte for byte; the window bounds
// what is unacknowledged; lost chunks are sent again after a gap report or
// a timeout; damage is caught by the checksums; a newer snapshot replaces an
// older one; malformed input is an error value; nothing holds the file in
// memory.
#include "server/snapshot_transfer.h"

#include <gtest/gtest.h>
#include <malloc.h>

#include <algorithm>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "testutil.h"

namespace natcd::server {
namespace {

using natcd::testing::TempDir;

// n pseudo-random bytes (from seed), written a megabyte at a time.
void MakeFile(const std::string& path, uint64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::ofstream out(path, std::ios::binary);
  std::string block;
  while (n > 0) {
    block.resize(std::min<uint64_t>(n, 1 << 20));
    for (char& c : block) c = static_cast<char>(rng());
    out.write(block.data(), static_cast<std::streamsize>(block.size()));
    n -= block.size();
  }
}

// Compared a megabyte at a time.
bool SameFile(const std::string& a, const std::string& b) {
  std::ifstream fa(a, std::ios::binary), fb(b, std::ios::binary);
  if (!fa || !fb) return false;
  std::string ba(1 << 20, '\0'), bb(1 << 20, '\0');
  while (true) {
    fa.read(ba.data(), static_cast<std::streamsize>(ba.size()));
    fb.read(bb.data(), static_cast<std::streamsize>(bb.size()));
    if (fa.gcount() != fb.gcount()) return false;
    if (ba.compare(0, fa.gcount(), bb, 0, fb.gcount()) != 0) return false;
    if (fa.gcount() == 0) return true;
  }
}

int64_t HeapInUseBytes() {
  struct mallinfo2 mi = mallinfo2();
  return static_cast<int64_t>(mi.uordblks + mi.hblkhd);
}

std::unique_ptr<SnapshotSender> OpenSender(const std::string& path, const SnapshotId& id,
                                           const SnapshotSenderOptions& options, int64_t now) {
  Result<std::unique_ptr<SnapshotSender>> sender = SnapshotSender::Open(path, id, options, now);
  EXPECT_TRUE(sender.ok()) << sender.status().ToString();
  return sender.ok() ? std::move(sender).value() : nullptr;
}

// Next() that must succeed; nullopt when nothing is to be sent.
std::optional<std::string> NextChunk(SnapshotSender* sender, int64_t now) {
  Result<std::optional<std::string>> next = sender->Next(now);
  EXPECT_TRUE(next.ok()) << next.status().ToString();
  return next.ok() ? next.value() : std::nullopt;
}

SnapshotChunk Decoded(const std::string& wire) {
  Result<SnapshotChunk> chunk = DecodeSnapshotChunk(wire);
  EXPECT_TRUE(chunk.ok()) << chunk.status().ToString();
  return chunk.ok() ? chunk.value() : SnapshotChunk{};
}

// Hands one encoded chunk to the receiver and its ack back to the sender.
Status Deliver(const std::string& wire, SnapshotReceiver* receiver, SnapshotSender* sender,
               int64_t now, SnapshotAck* ack_out = nullptr) {
  SnapshotAck ack;
  Status s = receiver->OnChunk(Decoded(wire), &ack);
  if (ack_out != nullptr) *ack_out = ack;
  if (sender != nullptr) {
    Result<SnapshotAck> back = DecodeSnapshotAck(EncodeSnapshotAck(ack));
    EXPECT_TRUE(back.ok());
    EXPECT_OK(sender->OnAck(back.value(), now));
  }
  return s;
}

class SnapshotTransferTest : public ::testing::Test {
 protected:
  SnapshotSenderOptions SmallChunks() {
    SnapshotSenderOptions options;
    options.message_bytes_max = kSnapshotChunkHeaderBytes + 1000;  // 1000 data bytes
    options.window_chunks = 3;
    options.resend_after_ms = 100;
    options.give_up_after_ms = 1000;
    return options;
  }
  SnapshotReceiverOptions ReceiverOptions() { return SnapshotReceiverOptions{dir_.File("in.db")}; }

  TempDir dir_;
  const SnapshotId id_{/*term=*/2, /*index=*/1000, /*leader=*/1};
};

TEST_F(SnapshotTransferTest, InOrderTransferArrivesWhole) {
  const std::string src = dir_.File("snap.db");
  MakeFile(src, 3500, 1);
  auto sender = OpenSender(src, id_, SmallChunks(), 0);
  ASSERT_NE(sender, nullptr);
  SnapshotReceiver receiver(ReceiverOptions());
  std::vector<uint64_t> offsets;
  while (auto wire = NextChunk(sender.get(), 0)) {
    offsets.push_back(Decoded(*wire).offset);
    ASSERT_OK(Deliver(*wire, &receiver, sender.get(), 0));
  }
  EXPECT_EQ(offsets, (std::vector<uint64_t>{0, 1000, 2000, 3000}));
  EXPECT_TRUE(sender->done());
  EXPECT_FALSE(sender->failed());
  EXPECT_TRUE(receiver.done());
  EXPECT_EQ(receiver.current_id(), id_);
  EXPECT_TRUE(SameFile(src, receiver.path()));
  EXPECT_FALSE(std::filesystem::exists(receiver.path() + ".tmp"));
  // A late duplicate of the done transfer is answered done.
  SnapshotAck ack;
  SnapshotChunk first = Decoded(EncodeSnapshotChunk(SnapshotChunk{id_, 0, 3500, false, 0, "x"}));
  EXPECT_OK(receiver.OnChunk(first, &ack));
  EXPECT_EQ(ack.state, SnapshotAckState::kDone);
  EXPECT_EQ(ack.next_offset, 3500u);
}

TEST_F(SnapshotTransferTest, EmptyFileIsOneLastChunk) {
  const std::string src = dir_.File("empty.db");
  MakeFile(src, 0, 1);
  auto sender = OpenSender(src, id_, SmallChunks(), 0);
  ASSERT_NE(sender, nullptr);
  SnapshotReceiver receiver(ReceiverOptions());
  auto wire = NextChunk(sender.get(), 0);
  ASSERT_TRUE(wire.has_value());
  EXPECT_TRUE(Decoded(*wire).last);
  EXPECT_FALSE(NextChunk(sender.get(), 0).has_value());
  ASSERT_OK(Deliver(*wire, &receiver, sender.get(), 0));
  EXPECT_TRUE(sender->done());
  EXPECT_TRUE(receiver.done());
  EXPECT_EQ(std::filesystem::file_size(receiver.path()), 0u);
}

TEST_F(SnapshotTransferTest, WindowBoundsUnacknowledgedChunks) {
  const std::string src = dir_.File("snap.db");
  MakeFile(src, 10'000, 1);
  auto sender = OpenSender(src, id_, SmallChunks(), 0);
  ASSERT_NE(sender, nullptr);
  std::vector<std::string> out;
  while (auto wire = NextChunk(sender.get(), 0)) out.push_back(*wire);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(sender->in_flight_bytes(), 3000u);
  // One ack opens the window by one chunk.
  SnapshotReceiver receiver(ReceiverOptions());
  ASSERT_OK(Deliver(out[0], &receiver, sender.get(), 10));
  auto next = NextChunk(sender.get(), 10);
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(Decoded(*next).offset, 3000u);
  EXPECT_FALSE(NextChunk(sender.get(), 10).has_value());
}

TEST_F(SnapshotTransferTest, LostChunksAreSentAgainAfterTheTimeout) {
  const std::string src = dir_.File("snap.db");
  MakeFile(src, 10'000, 1);
  auto sender = OpenSender(src, id_, SmallChunks(), 0);
  ASSERT_NE(sender, nullptr);
  SnapshotReceiver receiver(ReceiverOptions());
  auto first = NextChunk(sender.get(), 0);
  ASSERT_TRUE(first.has_value());
  ASSERT_OK(Deliver(*first, &receiver, sender.get(), 5));  // acked: 1000
  while (NextChunk(sender.get(), 5)) {
  }  // 1000..3999 sent, all lost
  EXPECT_FALSE(NextChunk(sender.get(), 104).has_value()) << "resent before the timeout";
  auto again = NextChunk(sender.get(), 105);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(Decoded(*again).offset, 1000u) << "not from the last acknowledged offset";
  EXPECT_EQ(sender->acked_bytes(), 1000u);
}

TEST_F(SnapshotTransferTest, GivesUpWithoutProgress) {
  const std::string src = dir_.File("snap.db");
  MakeFile(src, 10'000, 1);
  auto sender = OpenSender(src, id_, SmallChunks(), 0);
  ASSERT_NE(sender, nullptr);
  int64_t now = 0;
  Result<std::optional<std::string>> next = sender->Next(now);
  while (next.ok() && now < 5'000) {
    now += 10;
    next = sender->Next(now);
  }
  ASSERT_FALSE(next.ok());
  EXPECT_EQ(next.status().code(), Status::Code::kTimeout) << next.status().ToString();
  EXPECT_EQ(now, 1'000);
  EXPECT_TRUE(sender->failed());
  EXPECT_FALSE(NextChunk(sender.get(), now + 1).has_value());
}

TEST_F(SnapshotTransferTest, AGapRewindsOnceWithoutWaitingForTheTimeout) {
  const std::string src = dir_.File("snap.db");
  MakeFile(src, 10'000, 1);
  auto sender = OpenSender(src, id_, SmallChunks(), 0);
  ASSERT_NE(sender, nullptr);
  SnapshotReceiver receiver(ReceiverOptions());
  std::vector<std::string> out;
  while (auto wire = NextChunk(sender.get(), 0)) out.push_back(*wire);
  ASSERT_EQ(out.size(), 3u);
  // The first is lost; the other two each report the gap at 0.
  SnapshotAck ack;
  ASSERT_OK(Deliver(out[1], &receiver, sender.get(), 1, &ack));
  EXPECT_TRUE(ack.gap);
  EXPECT_EQ(ack.next_offset, 0u);
  auto resent = NextChunk(sender.get(), 1);
  ASSERT_TRUE(resent.has_value());
  EXPECT_EQ(Decoded(*resent).offset, 0u);
  ASSERT_OK(Deliver(out[2], &receiver, sender.get(), 2, &ack));
  EXPECT_TRUE(ack.gap);
  // The same gap again: no second rewind; the sender goes on from 1000.
  auto next = NextChunk(sender.get(), 2);
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(Decoded(*next).offset, 1000u);
  // The rest completes in order.
  ASSERT_OK(Deliver(*resent, &receiver, sender.get(), 3));
  ASSERT_OK(Deliver(*next, &receiver, sender.get(), 3));
  while (auto wire = NextChunk(sender.get(), 4))
    ASSERT_OK(Deliver(*wire, &receiver, sender.get(), 4));
  EXPECT_TRUE(sender->done());
  EXPECT_TRUE(SameFile(src, receiver.path()));
}

// The acceptance test: 50 MB through a network that drops, duplicates and
// reorders chunks and acks. Deterministic for a seed
// (--gtest_random_seed=N replays another).
TEST_F(SnapshotTransferTest, FiftyMegabytesThroughALossyNetworkArriveIdentical) {
  const uint32_t seed = natcd::testing::RandomSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  auto chance = [&](double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; };

  const std::string src = dir_.File("snap.db");
  constexpr uint64_t kFileBytes = 50ull << 20;
  MakeFile(src, kFileBytes, seed);
  SnapshotSenderOptions options;
  options.message_bytes_max = 256 << 10;
  options.window_chunks = 4;
  options.resend_after_ms = 200;
  options.give_up_after_ms = 10'000;
  const uint64_t window_bytes =
      options.window_chunks * (options.message_bytes_max - kSnapshotChunkHeaderBytes);

  const int64_t heap_before = HeapInUseBytes();
  int64_t heap_peak = heap_before;
  auto sender = OpenSender(src, id_, options, 0);
  ASSERT_NE(sender, nullptr);
  SnapshotReceiver receiver(ReceiverOptions());

  // Messages in flight each way; delivery picks one of the first few, so
  // later messages overtake earlier ones.
  std::deque<std::string> to_receiver, to_sender;
  auto send = [&](std::deque<std::string>* queue, std::string message) {
    if (chance(0.05)) return;                     // dropped
    if (chance(0.05)) queue->push_back(message);  // duplicated
    queue->push_back(std::move(message));
  };
  auto take = [&](std::deque<std::string>* queue) {
    size_t i = rng() % std::min<size_t>(queue->size(), 3);
    std::string message = std::move((*queue)[i]);
    queue->erase(queue->begin() + static_cast<std::ptrdiff_t>(i));
    return message;
  };

  int64_t now = 0;
  uint64_t chunks_sent = 0, resent_bytes = 0, gaps = 0, max_in_flight = 0;
  uint64_t furthest = 0;
  for (int step = 0; step < 200'000 && !sender->done(); step++) {
    now += 5;
    Result<std::optional<std::string>> next = sender->Next(now);
    ASSERT_TRUE(next.ok()) << next.status().ToString();
    while (next.ok() && next.value().has_value()) {
      SnapshotChunk chunk = Decoded(*next.value());
      if (chunk.offset < furthest) resent_bytes += chunk.data.size();
      furthest = std::max(furthest, chunk.offset + chunk.data.size());
      chunks_sent++;
      send(&to_receiver, std::move(*next.value()));
      next = sender->Next(now);
    }
    ASSERT_TRUE(next.ok()) << next.status().ToString();
    max_in_flight = std::max(max_in_flight, sender->in_flight_bytes());
    for (int n = 0; n < 3 && !to_receiver.empty(); n++) {
      SnapshotAck ack;
      EXPECT_OK(receiver.OnChunk(Decoded(take(&to_receiver)), &ack));
      if (ack.gap) gaps++;
      send(&to_sender, EncodeSnapshotAck(ack));
    }
    while (!to_sender.empty()) {
      Result<SnapshotAck> ack = DecodeSnapshotAck(take(&to_sender));
      ASSERT_TRUE(ack.ok()) << ack.status().ToString();
      EXPECT_OK(sender->OnAck(ack.value(), now));
    }
    heap_peak = std::max(heap_peak, HeapInUseBytes());
  }
  ASSERT_TRUE(sender->done()) << "stuck at " << sender->acked_bytes() << " of " << kFileBytes;
  EXPECT_TRUE(receiver.done());
  EXPECT_TRUE(SameFile(src, receiver.path()));
  EXPECT_LE(max_in_flight, window_bytes);
  // The network did its worst, and both recovery paths ran.
  EXPECT_GT(resent_bytes, 0u);
  EXPECT_GT(gaps, 0u);
  std::printf(
      "[   INFO   ] 50 MiB in %llu chunks (%.1f MiB resent), %llu gaps, %lld ms simulated\n",
      static_cast<unsigned long long>(chunks_sent), resent_bytes / double(1 << 20),
      static_cast<unsigned long long>(gaps), static_cast<long long>(now));
#if defined(__SANITIZE_ADDRESS__)
  // ASan's allocator does not report through mallinfo2.
  (void)heap_peak;
#else
  // A full-file buffer anywhere would be 50 MiB. What is allowed: the
  // window and the simulated network's queues, a few MiB.
  EXPECT_LT(heap_peak - heap_before, int64_t{16} << 20)
      << "peak heap growth " << (heap_peak - heap_before) << " bytes";
#endif
}

TEST_F(SnapshotTransferTest, DamagedContentFailsTheFileChecksum) {
  const std::string src = dir_.File("snap.db");
  MakeFile(src, 3500, 1);
  auto sender = OpenSender(src, id_, SmallChunks(), 0);
  ASSERT_NE(sender, nullptr);
  SnapshotReceiver receiver(ReceiverOptions());
  int n = 0;
  Status last;
  SnapshotAck ack;
  while (auto wire = NextChunk(sender.get(), 0)) {
    SnapshotChunk chunk = Decoded(*wire);
    std::string data(chunk.data);
    // Damage the second chunk before its own checksum is computed (as a bad
    // read on the sender's disk would): only the file checksum can tell.
    if (n++ == 1) data[17] ^= 0x01;
    chunk.data = data;
    last = receiver.OnChunk(Decoded(EncodeSnapshotChunk(chunk)), &ack);
    EXPECT_OK(sender->OnAck(ack, 0));
  }
  EXPECT_EQ(last.code(), Status::Code::kCorruption) << last.ToString();
  EXPECT_EQ(ack.state, SnapshotAckState::kFailed);
  EXPECT_FALSE(receiver.done());
  EXPECT_FALSE(receiver.receiving());
  EXPECT_FALSE(std::filesystem::exists(receiver.path()));
  EXPECT_FALSE(std::filesystem::exists(receiver.path() + ".tmp"));
  EXPECT_TRUE(sender->failed());
  EXPECT_FALSE(sender->done());
}

TEST_F(SnapshotTransferTest, DamagedMessageNeverReachesTheFile) {
  const std::string src = dir_.File("snap.db");
  MakeFile(src, 3500, 1);
  auto sender = OpenSender(src, id_, SmallChunks(), 0);
  ASSERT_NE(sender, nullptr);
  SnapshotReceiver receiver(ReceiverOptions());
  auto wire = NextChunk(sender.get(), 0);
  ASSERT_TRUE(wire.has_value());
  std::string damaged = *wire;
  damaged[kSnapshotChunkHeaderBytes + 3] ^= 0x40;
  Result<SnapshotChunk> chunk = DecodeSnapshotChunk(damaged);
  ASSERT_FALSE(chunk.ok());
  EXPECT_EQ(chunk.status().code(), Status::Code::kCorruption);
  // Dropped, so the sender resends it after the timeout and all is well.
  int64_t now = 0;
  while (!sender->done() && now < 1000) {
    now += 50;
    while (auto again = NextChunk(sender.get(), now)) {
      ASSERT_OK(Deliver(*again, &receiver, sender.get(), now));
    }
  }
  EXPECT_TRUE(sender->done());
  EXPECT_TRUE(SameFile(src, receiver.path()));
}

TEST_F(SnapshotTransferTest, ANewerSnapshotReplacesTheOneUnderWay) {
  const std::string old_src = dir_.File("old.db");
  const std::string new_src = dir_.File("new.db");
  MakeFile(old_src, 5000, 1);
  MakeFile(new_src, 4200, 2);
  const SnapshotId old_id{/*term=*/2, /*index=*/1000, /*leader=*/1};
  const SnapshotId new_id{/*term=*/3, /*index=*/900, /*leader=*/2};  // a new leader
  auto old_sender = OpenSender(old_src, old_id, SmallChunks(), 0);
  auto new_sender = OpenSender(new_src, new_id, SmallChunks(), 0);
  ASSERT_NE(old_sender, nullptr);
  ASSERT_NE(new_sender, nullptr);
  SnapshotReceiver receiver(ReceiverOptions());

  for (int i = 0; i < 2; i++) {
    auto wire = NextChunk(old_sender.get(), 0);
    ASSERT_TRUE(wire.has_value());
    ASSERT_OK(Deliver(*wire, &receiver, old_sender.get(), 0));
  }
  EXPECT_EQ(receiver.received_bytes(), 2000u);

  // The new leader's first chunk is lost; its second restarts the
  // receiver, which asks for offset 0 of the new snapshot.
  ASSERT_TRUE(NextChunk(new_sender.get(), 1).has_value());
  auto second = NextChunk(new_sender.get(), 1);
  ASSERT_TRUE(second.has_value());
  SnapshotAck ack;
  ASSERT_OK(Deliver(*second, &receiver, new_sender.get(), 1, &ack));
  EXPECT_EQ(ack.id, new_id);
  EXPECT_EQ(ack.next_offset, 0u);
  EXPECT_TRUE(receiver.receiving());
  EXPECT_EQ(receiver.current_id(), new_id);
  EXPECT_EQ(receiver.received_bytes(), 0u);

  // The old leader's chunks are now refused, which ends its transfer.
  auto stale = NextChunk(old_sender.get(), 2);
  ASSERT_TRUE(stale.has_value());
  Status s = Deliver(*stale, &receiver, old_sender.get(), 2, &ack);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(ack.state, SnapshotAckState::kRejected);
  EXPECT_TRUE(old_sender->failed());

  int64_t now = 2;
  while (!new_sender->done() && now < 1000) {
    while (auto wire = NextChunk(new_sender.get(), now)) {
      ASSERT_OK(Deliver(*wire, &receiver, new_sender.get(), now));
    }
    now += 10;
  }
  EXPECT_TRUE(new_sender->done());
  EXPECT_TRUE(receiver.done());
  EXPECT_EQ(receiver.current_id(), new_id);
  EXPECT_TRUE(SameFile(new_src, receiver.path()));
}

TEST_F(SnapshotTransferTest, MalformedChunksAreErrorsAndTheTransferGoesOn) {
  const std::string src = dir_.File("snap.db");
  MakeFile(src, 3500, 1);
  auto sender = OpenSender(src, id_, SmallChunks(), 0);
  ASSERT_NE(sender, nullptr);
  SnapshotReceiverOptions options = ReceiverOptions();
  options.total_bytes_max = 1 << 20;
  SnapshotReceiver receiver(options);
  auto first = NextChunk(sender.get(), 0);
  ASSERT_TRUE(first.has_value());
  ASSERT_OK(Deliver(*first, &receiver, sender.get(), 0));

  const std::string data(1000, 'z');
  const std::vector<SnapshotChunk> bad = {
      {id_, 1000, 3500, false, 0, std::string_view(data).substr(0, 0)},  // empty, not last
      {id_, 3000, 3500, false, 0, data},                                 // past the total
      {id_, 1000, 3500, true, 0, data},                                  // last in the middle
      {id_, 2500, 3500, false, 0, data},                                 // ends the file, not last
      {id_, 1000, 9000, false, 0, data},                                 // another total
      {id_, ~0ull - 10, 3500, false, 0, data},                           // offset overflow
      {SnapshotId{9, 9, 9}, 0, uint64_t{1} << 30, false, 0, data},       // over the limit
  };
  for (const SnapshotChunk& chunk : bad) {
    SCOPED_TRACE("offset " + std::to_string(chunk.offset) + " total " +
                 std::to_string(chunk.total_bytes));
    SnapshotAck ack;
    Status s = receiver.OnChunk(chunk, &ack);
    EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
    EXPECT_TRUE(receiver.receiving());
    EXPECT_EQ(receiver.current_id(), id_);
    EXPECT_EQ(receiver.received_bytes(), 1000u);
  }
  while (auto wire = NextChunk(sender.get(), 1))
    ASSERT_OK(Deliver(*wire, &receiver, sender.get(), 1));
  EXPECT_TRUE(sender->done());
  EXPECT_TRUE(SameFile(src, receiver.path()));
}

TEST_F(SnapshotTransferTest, RandomChunksNeverBreakTheReceiver) {
  std::mt19937_64 rng(natcd::testing::RandomSeed());
  SnapshotReceiver receiver(ReceiverOptions());
  std::string data(300, 'q');
  for (int round = 0; round < 20'000; round++) {
    SnapshotChunk chunk;
    chunk.id = SnapshotId{rng() % 3, rng() % 3, rng() % 2};
    chunk.total_bytes = rng() % 4 == 0 ? rng() : rng() % 2000;
    chunk.offset = rng() % 4 == 0 ? rng() : (rng() % 8) * 100;
    chunk.last = rng() % 2 == 0;
    chunk.file_crc32c = static_cast<uint32_t>(rng());
    chunk.data = std::string_view(data).substr(0, rng() % 301);
    SnapshotAck ack;
    Status s = receiver.OnChunk(chunk, &ack);
    (void)s;  // any answer will do; what counts is no crash and sane state
    ASSERT_EQ(ack.id, chunk.id);
    if (receiver.receiving()) {
      ASSERT_LE(receiver.received_bytes(), 2000u);
    }
  }
}

TEST_F(SnapshotTransferTest, SenderIgnoresAcksThatMakeNoSense) {
  const std::string src = dir_.File("snap.db");
  MakeFile(src, 3500, 1);
  auto sender = OpenSender(src, id_, SmallChunks(), 0);
  ASSERT_NE(sender, nullptr);
  ASSERT_TRUE(NextChunk(sender.get(), 0).has_value());  // [0, 1000) sent
  auto ack = [&](uint64_t offset, SnapshotAckState state) {
    return sender->OnAck(SnapshotAck{id_, offset, state, false}, 1);
  };
  EXPECT_TRUE(ack(2000, SnapshotAckState::kReceiving).IsInvalidArgument());  // never sent
  EXPECT_TRUE(ack(500, SnapshotAckState::kReceiving).IsInvalidArgument());   // not a boundary
  EXPECT_TRUE(ack(3500, SnapshotAckState::kDone).IsInvalidArgument());       // last not sent
  EXPECT_OK(sender->OnAck(SnapshotAck{SnapshotId{1, 1, 1}, 1000, SnapshotAckState::kDone, false},
                          1));  // another snapshot's
  EXPECT_EQ(sender->acked_bytes(), 0u);
  EXPECT_FALSE(sender->done());
  EXPECT_FALSE(sender->failed());
  EXPECT_OK(ack(1000, SnapshotAckState::kReceiving));
  EXPECT_EQ(sender->acked_bytes(), 1000u);
}

TEST_F(SnapshotTransferTest, BadOptionsAndMissingFilesAreErrors) {
  const std::string src = dir_.File("snap.db");
  MakeFile(src, 10, 1);
  SnapshotSenderOptions options;
  options.message_bytes_max = kSnapshotChunkHeaderBytes;
  EXPECT_TRUE(SnapshotSender::Open(src, id_, options, 0).status().IsInvalidArgument());
  options = SnapshotSenderOptions{};
  options.window_chunks = 0;
  EXPECT_TRUE(SnapshotSender::Open(src, id_, options, 0).status().IsInvalidArgument());
  EXPECT_TRUE(SnapshotSender::Open(dir_.File("nope"), id_, SnapshotSenderOptions{}, 0)
                  .status()
                  .IsNotFound());
  EXPECT_FALSE(SnapshotSender::Open(dir_.path(), id_, SnapshotSenderOptions{}, 0).ok());
}

TEST_F(SnapshotTransferTest, AnUnfinishedTransferLeavesNoFile) {
  const std::string src = dir_.File("snap.db");
  MakeFile(src, 3500, 1);
  auto sender = OpenSender(src, id_, SmallChunks(), 0);
  ASSERT_NE(sender, nullptr);
  const std::string tmp = ReceiverOptions().path + ".tmp";
  {
    SnapshotReceiver receiver(ReceiverOptions());
    auto wire = NextChunk(sender.get(), 0);
    ASSERT_TRUE(wire.has_value());
    ASSERT_OK(Deliver(*wire, &receiver, nullptr, 0));
    EXPECT_TRUE(std::filesystem::exists(tmp));
    receiver.Abandon();
    EXPECT_FALSE(std::filesystem::exists(tmp));
    ASSERT_OK(Deliver(*wire, &receiver, nullptr, 0));  // starts again
    EXPECT_TRUE(std::filesystem::exists(tmp));
  }
  EXPECT_FALSE(std::filesystem::exists(tmp));
  EXPECT_FALSE(std::filesystem::exists(ReceiverOptions().path));
}

}  // namespace
}  // namespace natcd::server
