// The Raft log file's on-disk format: segment names, record framing and
// the payload of each record type. Everything here is persisted: DO NOT
// CHANGE it (do not change: persisted); a new kind of record gets a new
// type number, a new layout a new format version. A test pins the bytes of
// a segment with known contents (tests/core/storage/raft_log/).
//
// A segment is a sequence of records, all integers little-endian:
//
//   offset 0   u32  CRC-32C of bytes [4, 12 + length): the rest of the
//                   header and the payload
//   offset 4   u32  length of the payload
//   offset 8   u8   type (RecordType)
//   offset 9   u8   flags (kFlagPriorDurable)
//   offset 10  u16  zero
//   offset 12  payload
//
// followed by zeros up to the preallocated size. A header of twelve zero
// bytes is the end of the records (a zero header's CRC is not 0, so it is
// never a record).
//
// kFlagPriorDurable on a record says that every byte before it in the
// segment had been made durable (fdatasync returned) when it was written:
// the first record of an Append that follows a synced one carries it. It
// is what tells a torn tail (an unsynced write a crash cut short: dropped)
// from damage to data that had been durable (refused as corruption): see
// segment_scan.h.
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "raft/types.h"

namespace natcd::raftlog {

// do not change: persisted
inline constexpr size_t kRecordHeaderBytes = 12;
inline constexpr uint8_t kFlagPriorDurable = 0x01;
// The largest payload a reader accepts: a bigger length is damage, not a
// record (an Append larger than this is refused before it is written).
inline constexpr uint32_t kRecordPayloadMax = 1u << 30;
// First in every segment's header record, with the format version.
inline constexpr std::string_view kSegmentMagic = "NATCDLOG";
inline constexpr uint32_t kFormatVersion = 1;

// do not change: persisted
enum class RecordType : uint8_t {
  // The magic, u32 format version, u64 seq, u64 first index; always the
  // segment's first record.
  kSegmentHeader = 1,
  // Consecutive entries: u64 first index, u32 count, then per entry u64
  // term, u8 type, u32 data length, data. An entry batch at index i
  // replaces every entry from i on (Raft's conflicting suffix).
  kEntries = 2,
  // u64 term, u64 vote, u64 commit; the newest one is the hard state.
  kHardState = 3,
  // u64 index, u64 term: the state machine's snapshot is at index; the
  // log starts after it.
  kSnapshot = 4,
};

struct SegmentHeader {
  uint64_t seq = 0;          // 0, 1, 2 ... in the order segments were created
  uint64_t first_index = 0;  // the index the log's next entry had when it was created

  bool operator==(const SegmentHeader&) const = default;
};

struct SnapshotMarker {
  uint64_t index = 0;
  uint64_t term = 0;

  bool operator==(const SnapshotMarker&) const = default;
};

// "<seq, 16 hex digits>-<first index, 16 hex digits>.wal", so that names
// sort in creation order.
std::string SegmentFileName(const SegmentHeader& header);
// Parses a name SegmentFileName made; nullopt for any other name.
std::optional<SegmentHeader> ParseSegmentFileName(std::string_view name);

// Each appends one whole record (header and payload) to *out.
void AppendSegmentHeaderRecord(const SegmentHeader& header, uint8_t flags, std::string* out);
void AppendEntriesRecord(const std::vector<raft::Entry>& entries, uint8_t flags, std::string* out);
void AppendHardStateRecord(const raft::HardState& hs, uint8_t flags, std::string* out);
void AppendSnapshotRecord(const SnapshotMarker& marker, uint8_t flags, std::string* out);

// Bytes AppendEntriesRecord adds for these entries.
uint64_t EntriesRecordBytes(const std::vector<raft::Entry>& entries);

// One record as it sits in a segment's bytes.
struct RecordView {
  RecordType type = RecordType::kSegmentHeader;
  uint8_t flags = 0;
  std::string_view payload;  // points into the bytes parsed
  uint64_t offset = 0;       // where the record starts in its segment
  uint64_t bytes = 0;        // header and payload
};

enum class ParseOutcome {
  kRecord,  // *rec is a record whose checksum matches
  kZero,    // twelve zero bytes: no record here (the preallocated rest)
  kBad,     // anything else: too short, length or type or flags out of
            // range, checksum mismatch
};

// The record starting at data[offset]. *rec is set only for kRecord.
ParseOutcome ParseRecord(std::string_view data, uint64_t offset, RecordView* rec);

// Payload decoders: false when the payload is not one of that type's.
bool DecodeSegmentHeader(std::string_view payload, SegmentHeader* header);
bool DecodeHardState(std::string_view payload, raft::HardState* hs);
bool DecodeSnapshot(std::string_view payload, SnapshotMarker* marker);

// An entry of an entry batch, its data pointing into the payload.
struct EntryView {
  uint64_t term = 0;
  raft::EntryType type = raft::EntryType::kNormal;
  std::string_view data;
};
// *first is the first entry's index; the entries follow in index order.
bool DecodeEntries(std::string_view payload, uint64_t* first, std::vector<EntryView>* entries);

}  // namespace natcd::raftlog
