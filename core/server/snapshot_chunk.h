// The wire format of a snapshot transfer: the state machine's database,
// shipped from the leader to a member that is behind the leader's kept
// log, as a run of chunks each small enough for one NATS message, and the
// acknowledgements the receiver answers with. See snapshot_transfer.h for
// the protocol; this file is only the bytes.
//
// A fixed little-endian binary layout of natcd's own rather than protobuf:
// a chunk is a small header plus up to about a megabyte of raw file bytes,
// and the receiver writes those bytes straight from the message buffer.
// Every field of both layouts is covered by a CRC-32C, so a damaged message
// is refused whole, header included (a damaged offset or snapshot id must
// not be acted on).
//
// Chunk, version 1 (DO NOT CHANGE: on the wire between members; a new
// layout gets a new version):
//   offset size
//    0      4   magic "NCSC" (bytes 4E 43 53 43)
//    4      1   version = 1
//    5      1   flags: bit 0 = last chunk; other bits 0
//    6      2   reserved, 0
//    8      8   snapshot id: leader (the sending member's ID)
//   16      8   snapshot id: Raft index of the snapshot
//   24      8   snapshot id: Raft term of the snapshot
//   32      8   offset of data in the file
//   40      8   total size of the file in bytes
//   48      4   n = bytes of data
//   52      4   CRC-32C of the whole file (last chunk only; 0 otherwise)
//   56      4   CRC-32C of bytes [0, 56) followed by the data
//   60      n   data
//
// Ack, version 1 (DO NOT CHANGE, as above):
//    0      4   magic "NCSA" (bytes 4E 43 53 41)
//    4      1   version = 1
//    5      1   state (SnapshotAckState)
//    6      1   flags: bit 0 = gap; other bits 0
//    7      1   reserved, 0
//    8     24   snapshot id: leader, index, term (as in a chunk)
//   32      8   next offset the receiver expects
//   40      4   CRC-32C of bytes [0, 40)
//   (44 bytes)
//
// Decoders treat their input as untrusted: short, long, damaged or unknown
// input is an error Status (InvalidArgument; Corruption for a checksum
// mismatch), never a crash.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "natcd/status.h"

namespace natcd::server {

// Names one shipment of one snapshot. Ordered by (term, index, leader): a
// later term means a later leader, and a leader's later snapshot has a
// higher index, so "newer" is "greater" and a receiver drops a transfer
// for any newer one. (Two leaders never share a term, so the leader only
// breaks ties that Raft rules out.)
struct SnapshotId {
  uint64_t term = 0;
  uint64_t index = 0;
  uint64_t leader = 0;

  auto operator<=>(const SnapshotId&) const = default;
  std::string ToString() const;  // "leader/index/term" for logs
};

inline constexpr size_t kSnapshotChunkHeaderBytes = 60;
inline constexpr size_t kSnapshotAckBytes = 44;

// One piece of a snapshot file. data is a view: after DecodeSnapshotChunk
// it points into the decoded buffer, which must outlive the chunk.
struct SnapshotChunk {
  SnapshotId id;
  uint64_t offset = 0;
  uint64_t total_bytes = 0;
  bool last = false;
  uint32_t file_crc32c = 0;  // the whole file's; only meaningful when last
  std::string_view data;
};

// DO NOT CHANGE the values: on the wire.
enum class SnapshotAckState : uint8_t {
  kReceiving = 0,  // next_offset is the offset expected next
  kDone = 1,       // the whole file arrived, checked and is durable
  kFailed = 2,     // the received file failed its check (or a disk write):
                   // this transfer is over; the leader may send it again
  kRejected = 3,   // the receiver is busy with a newer snapshot
};

struct SnapshotAck {
  SnapshotId id;
  uint64_t next_offset = 0;
  SnapshotAckState state = SnapshotAckState::kReceiving;
  // A chunk beyond next_offset arrived (one before it was lost or
  // overtaken): the sender may go back to next_offset without waiting for
  // its timeout.
  bool gap = false;

  bool operator==(const SnapshotAck&) const = default;
};

std::string EncodeSnapshotChunk(const SnapshotChunk& chunk);
// The decoded chunk's data points into bytes.
Result<SnapshotChunk> DecodeSnapshotChunk(std::string_view bytes);

std::string EncodeSnapshotAck(const SnapshotAck& ack);
Result<SnapshotAck> DecodeSnapshotAck(std::string_view bytes);

}  // namespace natcd::server
