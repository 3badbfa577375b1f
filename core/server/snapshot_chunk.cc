#include "server/snapshot_chunk.h"

#include <cassert>
#include <cstdint>
#include <cstring>
#include <string>

#include "storage/crc32c.h"

namespace natcd::server {
namespace {

constexpr std::string_view kChunkMagic = "NCSC";
constexpr std::string_view kAckMagic = "NCSA";
constexpr uint8_t kVersion = 1;
constexpr uint8_t kChunkFlagLast = 0x01;
constexpr uint8_t kAckFlagGap = 0x01;
// Where each layout's own checksum sits (everything before it is covered).
constexpr size_t kChunkCrcOffset = 56;
constexpr size_t kAckCrcOffset = 40;

static_assert(kChunkCrcOffset + 4 == kSnapshotChunkHeaderBytes);
static_assert(kAckCrcOffset + 4 == kSnapshotAckBytes);

void PutU64(char* p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}
void PutU32(char* p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}
uint64_t GetU64(const char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v |= static_cast<uint64_t>(static_cast<uint8_t>(p[i])) << (8 * i);
  return v;
}
uint32_t GetU32(const char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; i++) v |= static_cast<uint32_t>(static_cast<uint8_t>(p[i])) << (8 * i);
  return v;
}

void PutId(char* p, const SnapshotId& id) {
  PutU64(p, id.leader);
  PutU64(p + 8, id.index);
  PutU64(p + 16, id.term);
}
SnapshotId GetId(const char* p) {
  SnapshotId id;
  id.leader = GetU64(p);
  id.index = GetU64(p + 8);
  id.term = GetU64(p + 16);
  return id;
}

Status Garbage(const char* what, const std::string& detail) {
  return Status::InvalidArgument("ErrSnapshotMessage",
                                 std::string("snapshot ") + what + ": " + detail);
}

// Magic and version, shared by both layouts.
Status CheckPreamble(const char* what, std::string_view bytes, std::string_view magic,
                     size_t min_bytes) {
  if (bytes.size() < min_bytes) {
    return Garbage(
        what, std::to_string(bytes.size()) + " bytes, fewer than " + std::to_string(min_bytes));
  }
  if (bytes.substr(0, 4) != magic) return Garbage(what, "bad magic");
  if (static_cast<uint8_t>(bytes[4]) != kVersion) {
    return Garbage(what, "unsupported version " + std::to_string(static_cast<uint8_t>(bytes[4])));
  }
  return Status::OK();
}

}  // namespace

std::string SnapshotId::ToString() const {
  return std::to_string(leader) + "/" + std::to_string(index) + "/" + std::to_string(term);
}

std::string EncodeSnapshotChunk(const SnapshotChunk& chunk) {
  assert(chunk.data.size() <= UINT32_MAX && "the sender bounds chunks to a message");
  std::string out(kSnapshotChunkHeaderBytes + chunk.data.size(), '\0');
  char* p = out.data();
  std::memcpy(p, kChunkMagic.data(), 4);
  p[4] = static_cast<char>(kVersion);
  p[5] = static_cast<char>(chunk.last ? kChunkFlagLast : 0);
  PutId(p + 8, chunk.id);
  PutU64(p + 32, chunk.offset);
  PutU64(p + 40, chunk.total_bytes);
  PutU32(p + 48, static_cast<uint32_t>(chunk.data.size()));
  PutU32(p + 52, chunk.last ? chunk.file_crc32c : 0);
  if (!chunk.data.empty()) {
    std::memcpy(p + kSnapshotChunkHeaderBytes, chunk.data.data(), chunk.data.size());
  }
  uint32_t crc = Crc32cExtend(0, p, kChunkCrcOffset);
  crc = Crc32cExtend(crc, chunk.data.data(), chunk.data.size());
  PutU32(p + kChunkCrcOffset, crc);
  return out;
}

Result<SnapshotChunk> DecodeSnapshotChunk(std::string_view bytes) {
  NATCD_RETURN_IF_ERROR(CheckPreamble("chunk", bytes, kChunkMagic, kSnapshotChunkHeaderBytes));
  const char* p = bytes.data();
  const uint8_t flags = static_cast<uint8_t>(p[5]);
  if ((flags & ~kChunkFlagLast) != 0 || p[6] != 0 || p[7] != 0) {
    return Garbage("chunk", "unknown flags or reserved bits set");
  }
  const uint64_t data_bytes = GetU32(p + 48);
  if (data_bytes != bytes.size() - kSnapshotChunkHeaderBytes) {
    return Garbage("chunk", "says " + std::to_string(data_bytes) + " data bytes, carries " +
                                std::to_string(bytes.size() - kSnapshotChunkHeaderBytes));
  }
  std::string_view data = bytes.substr(kSnapshotChunkHeaderBytes);
  uint32_t crc = Crc32cExtend(0, p, kChunkCrcOffset);
  crc = Crc32cExtend(crc, data.data(), data.size());
  if (crc != GetU32(p + kChunkCrcOffset)) {
    return Status::Corruption("snapshot chunk fails its checksum");
  }
  SnapshotChunk chunk;
  chunk.id = GetId(p + 8);
  chunk.offset = GetU64(p + 32);
  chunk.total_bytes = GetU64(p + 40);
  chunk.last = (flags & kChunkFlagLast) != 0;
  chunk.file_crc32c = GetU32(p + 52);
  chunk.data = data;
  return chunk;
}

std::string EncodeSnapshotAck(const SnapshotAck& ack) {
  std::string out(kSnapshotAckBytes, '\0');
  char* p = out.data();
  std::memcpy(p, kAckMagic.data(), 4);
  p[4] = static_cast<char>(kVersion);
  p[5] = static_cast<char>(ack.state);
  p[6] = static_cast<char>(ack.gap ? kAckFlagGap : 0);
  PutId(p + 8, ack.id);
  PutU64(p + 32, ack.next_offset);
  PutU32(p + kAckCrcOffset, Crc32cExtend(0, p, kAckCrcOffset));
  return out;
}

Result<SnapshotAck> DecodeSnapshotAck(std::string_view bytes) {
  NATCD_RETURN_IF_ERROR(CheckPreamble("ack", bytes, kAckMagic, kSnapshotAckBytes));
  if (bytes.size() != kSnapshotAckBytes) {
    return Garbage(
        "ack", std::to_string(bytes.size()) + " bytes, not " + std::to_string(kSnapshotAckBytes));
  }
  const char* p = bytes.data();
  if (Crc32cExtend(0, p, kAckCrcOffset) != GetU32(p + kAckCrcOffset)) {
    return Status::Corruption("snapshot ack fails its checksum");
  }
  const uint8_t state = static_cast<uint8_t>(p[5]);
  const uint8_t flags = static_cast<uint8_t>(p[6]);
  if (state > static_cast<uint8_t>(SnapshotAckState::kRejected)) {
    return Garbage("ack", "unknown state " + std::to_string(state));
  }
  if ((flags & ~kAckFlagGap) != 0 || p[7] != 0) {
    return Garbage("ack", "unknown flags or reserved bits set");
  }
  SnapshotAck ack;
  ack.id = GetId(p + 8);
  ack.next_offset = GetU64(p + 32);
  ack.state = static_cast<SnapshotAckState>(state);
  ack.gap = (flags & kAckFlagGap) != 0;
  return ack;
}

}  // namespace natcd::server
