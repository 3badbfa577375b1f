#include "storage/raft_log/log_format.h"

#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "storage/crc32c.h"

namespace natcd::raftlog {
namespace {

void PutU8(std::string* out, uint8_t v) { out->push_back(static_cast<char>(v)); }

void PutU32(std::string* out, uint32_t v) {
  char b[4];
  for (int i = 0; i < 4; i++) b[i] = static_cast<char>(v >> (8 * i));
  out->append(b, 4);
}

void PutU64(std::string* out, uint64_t v) {
  char b[8];
  for (int i = 0; i < 8; i++) b[i] = static_cast<char>(v >> (8 * i));
  out->append(b, 8);
}

uint32_t GetU32(const char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; i++) v |= static_cast<uint32_t>(static_cast<uint8_t>(p[i])) << (8 * i);
  return v;
}

uint64_t GetU64(const char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v |= static_cast<uint64_t>(static_cast<uint8_t>(p[i])) << (8 * i);
  return v;
}

// Reads fixed-size fields off the front of a payload; any read past its
// end makes ok() false for good.
class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  bool ok() const { return ok_; }
  bool done() const { return ok_ && in_.empty(); }
  uint8_t U8() {
    if (!Need(1)) return 0;
    uint8_t v = static_cast<uint8_t>(in_[0]);
    in_.remove_prefix(1);
    return v;
  }
  uint32_t U32() {
    if (!Need(4)) return 0;
    uint32_t v = GetU32(in_.data());
    in_.remove_prefix(4);
    return v;
  }
  uint64_t U64() {
    if (!Need(8)) return 0;
    uint64_t v = GetU64(in_.data());
    in_.remove_prefix(8);
    return v;
  }
  std::string_view Bytes(size_t n) {
    if (!Need(n)) return {};
    std::string_view v = in_.substr(0, n);
    in_.remove_prefix(n);
    return v;
  }

 private:
  bool Need(size_t n) {
    if (ok_ && in_.size() >= n) return true;
    ok_ = false;
    return false;
  }
  std::string_view in_;
  bool ok_ = true;
};

// Reserves the header, lets the caller append the payload, then fills the
// header in: the payload is encoded straight into the output, not copied.
size_t BeginRecord(std::string* out) {
  size_t start = out->size();
  out->append(kRecordHeaderBytes, '\0');
  return start;
}

void EndRecord(std::string* out, size_t start, RecordType type, uint8_t flags) {
  uint64_t length = out->size() - start - kRecordHeaderBytes;
  char* h = out->data() + start;
  for (int i = 0; i < 4; i++) h[4 + i] = static_cast<char>(length >> (8 * i));
  h[8] = static_cast<char>(type);
  h[9] = static_cast<char>(flags);
  h[10] = h[11] = 0;
  uint32_t crc = Crc32cExtend(0, h + 4, out->size() - start - 4);
  for (int i = 0; i < 4; i++) h[i] = static_cast<char>(crc >> (8 * i));
}

bool KnownType(uint8_t t) {
  return t >= static_cast<uint8_t>(RecordType::kSegmentHeader) &&
         t <= static_cast<uint8_t>(RecordType::kSnapshot);
}

}  // namespace

std::string SegmentFileName(const SegmentHeader& header) {
  char name[64];
  std::snprintf(name, sizeof name, "%016" PRIx64 "-%016" PRIx64 ".wal", header.seq,
                header.first_index);
  return name;
}

std::optional<SegmentHeader> ParseSegmentFileName(std::string_view name) {
  // Exactly the 37 characters SegmentFileName writes, lowercase hex.
  if (name.size() != 16 + 1 + 16 + 4 || name[16] != '-' || name.substr(33) != ".wal") {
    return std::nullopt;
  }
  auto hex = [](std::string_view digits, uint64_t* v) {
    *v = 0;
    for (char c : digits) {
      int d;
      if (c >= '0' && c <= '9') {
        d = c - '0';
      } else if (c >= 'a' && c <= 'f') {
        d = c - 'a' + 10;
      } else {
        return false;
      }
      *v = *v << 4 | static_cast<uint64_t>(d);
    }
    return true;
  };
  SegmentHeader h;
  if (!hex(name.substr(0, 16), &h.seq) || !hex(name.substr(17, 16), &h.first_index)) {
    return std::nullopt;
  }
  return h;
}

void AppendSegmentHeaderRecord(const SegmentHeader& header, uint8_t flags, std::string* out) {
  size_t start = BeginRecord(out);
  out->append(kSegmentMagic);
  PutU32(out, kFormatVersion);
  PutU64(out, header.seq);
  PutU64(out, header.first_index);
  EndRecord(out, start, RecordType::kSegmentHeader, flags);
}

uint64_t EntriesRecordBytes(const std::vector<raft::Entry>& entries) {
  uint64_t n = kRecordHeaderBytes + 8 + 4;
  for (const raft::Entry& e : entries) n += 8 + 1 + 4 + e.data.size();
  return n;
}

void AppendEntriesRecord(const std::vector<raft::Entry>& entries, uint8_t flags, std::string* out) {
  out->reserve(out->size() + EntriesRecordBytes(entries));
  size_t start = BeginRecord(out);
  PutU64(out, entries.empty() ? 0 : entries.front().index);
  PutU32(out, static_cast<uint32_t>(entries.size()));
  for (const raft::Entry& e : entries) {
    PutU64(out, e.term);
    PutU8(out, static_cast<uint8_t>(e.type));
    PutU32(out, static_cast<uint32_t>(e.data.size()));
    out->append(e.data);
  }
  EndRecord(out, start, RecordType::kEntries, flags);
}

void AppendHardStateRecord(const raft::HardState& hs, uint8_t flags, std::string* out) {
  size_t start = BeginRecord(out);
  PutU64(out, hs.term);
  PutU64(out, hs.vote);
  PutU64(out, hs.commit);
  EndRecord(out, start, RecordType::kHardState, flags);
}

void AppendSnapshotRecord(const SnapshotMarker& marker, uint8_t flags, std::string* out) {
  size_t start = BeginRecord(out);
  PutU64(out, marker.index);
  PutU64(out, marker.term);
  EndRecord(out, start, RecordType::kSnapshot, flags);
}

ParseOutcome ParseRecord(std::string_view data, uint64_t offset, RecordView* rec) {
  if (offset > data.size() || data.size() - offset < kRecordHeaderBytes) {
    // A short rest is the end only if it is all zeros.
    for (uint64_t i = offset; i < data.size(); i++) {
      if (data[i] != 0) return ParseOutcome::kBad;
    }
    return ParseOutcome::kZero;
  }
  const char* h = data.data() + offset;
  static constexpr char kZeros[kRecordHeaderBytes] = {};
  if (std::memcmp(h, kZeros, kRecordHeaderBytes) == 0) return ParseOutcome::kZero;
  uint32_t length = GetU32(h + 4);
  uint8_t type = static_cast<uint8_t>(h[8]);
  uint8_t flags = static_cast<uint8_t>(h[9]);
  if (length > kRecordPayloadMax || !KnownType(type) || (flags & ~kFlagPriorDurable) != 0 ||
      h[10] != 0 || h[11] != 0 || data.size() - offset - kRecordHeaderBytes < length) {
    return ParseOutcome::kBad;
  }
  if (Crc32cExtend(0, h + 4, kRecordHeaderBytes - 4 + length) != GetU32(h)) {
    return ParseOutcome::kBad;
  }
  rec->type = static_cast<RecordType>(type);
  rec->flags = flags;
  rec->payload = data.substr(offset + kRecordHeaderBytes, length);
  rec->offset = offset;
  rec->bytes = kRecordHeaderBytes + length;
  return ParseOutcome::kRecord;
}

bool DecodeSegmentHeader(std::string_view payload, SegmentHeader* header) {
  Reader r(payload);
  if (r.Bytes(kSegmentMagic.size()) != kSegmentMagic || r.U32() != kFormatVersion) return false;
  header->seq = r.U64();
  header->first_index = r.U64();
  return r.done();
}

bool DecodeHardState(std::string_view payload, raft::HardState* hs) {
  Reader r(payload);
  hs->term = r.U64();
  hs->vote = r.U64();
  hs->commit = r.U64();
  return r.done();
}

bool DecodeSnapshot(std::string_view payload, SnapshotMarker* marker) {
  Reader r(payload);
  marker->index = r.U64();
  marker->term = r.U64();
  return r.done();
}

bool DecodeEntries(std::string_view payload, uint64_t* first, std::vector<EntryView>* entries) {
  Reader r(payload);
  *first = r.U64();
  uint32_t count = r.U32();
  // Each entry takes 13 bytes at least: a count the payload cannot hold is
  // damage, refused before anything is reserved for it.
  if (!r.ok() || count == 0 || *first == 0 || count > payload.size() / 13) return false;
  entries->clear();
  entries->reserve(count);
  for (uint32_t i = 0; i < count; i++) {
    EntryView e;
    e.term = r.U64();
    uint8_t type = r.U8();
    if (type > static_cast<uint8_t>(raft::EntryType::kConfChange)) return false;
    e.type = static_cast<raft::EntryType>(type);
    e.data = r.Bytes(r.U32());
    if (!r.ok()) return false;
    entries->push_back(e);
  }
  return r.done();
}

}  // namespace natcd::raftlog
