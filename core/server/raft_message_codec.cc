#include "server/raft_message_codec.h"

#include <vector>

#include "server/proto_wire.h"

namespace natcd::server {
namespace {

// DO NOT CHANGE: persisted. Field numbers of natcd.v1.RaftMessage ...
enum : uint32_t {
  kType = 1,
  kTo = 2,
  kFrom = 3,
  kTerm = 4,
  kLogTerm = 5,
  kIndex = 6,
  kEntries = 7,
  kCommit = 8,
  kSnapshot = 9,
  kReject = 10,
  kRejectHint = 11,
  kContext = 12,
};
// ... RaftEntry ...
enum : uint32_t { kEntryTerm = 1, kEntryIndex = 2, kEntryType = 3, kEntryData = 4 };
// ... RaftSnapshotMeta and RaftConfState.
enum : uint32_t { kMetaIndex = 1, kMetaTerm = 2, kMetaConfState = 3 };
enum : uint32_t { kVoters = 1, kLearners = 2 };

constexpr wire::MessageShape kLeaf{"", nullptr, 0};
constexpr wire::ChildShape kMetaChildren[] = {{kMetaConfState, &kLeaf}};
constexpr wire::MessageShape kMetaShape{"natcd.v1.RaftSnapshotMeta", kMetaChildren, 1};
constexpr wire::ChildShape kMessageChildren[] = {{kEntries, &kLeaf}, {kSnapshot, &kMetaShape}};
constexpr wire::MessageShape kMessageShape{"natcd.v1.RaftMessage", kMessageChildren, 2};

Status Invalid(const std::string& what) {
  return Status::InvalidArgument("ErrInvalidArgument", what);
}

struct ParsedEntry {
  uint64_t term = 0;
  uint64_t index = 0;
  uint32_t type = 0;
  std::string_view data;
};

bool ParseEntry(std::string_view bytes, ParsedEntry* e) {
  wire::Reader reader(bytes);
  wire::Field f;
  while (reader.Next(&f)) {
    bool ok = true;
    switch (f.number) {
      case kEntryTerm:
        ok = wire::AsUint64(f, &e->term);
        break;
      case kEntryIndex:
        ok = wire::AsUint64(f, &e->index);
        break;
      case kEntryType:
        ok = wire::AsUint32(f, &e->type);
        break;
      case kEntryData:
        ok = wire::AsBytes(f, &e->data);
        break;
      default:
        break;
    }
    if (!ok) return false;
  }
  return reader.ok();
}

bool ParseConfState(std::string_view bytes, std::vector<uint64_t>* voters,
                    std::vector<uint64_t>* learners) {
  wire::Reader reader(bytes);
  wire::Field f;
  while (reader.Next(&f)) {
    if (f.number == kVoters && !wire::AppendVarints(f, voters)) return false;
    if (f.number == kLearners && !wire::AppendVarints(f, learners)) return false;
  }
  return reader.ok();
}

// A singular message field given more than once is merged by protobuf-c
// (merge_messages): the later occurrence's proto3 scalars win even where it
// leaves them out, repeated fields and sub-messages accumulate. So index and
// term come from the last `snapshot` alone, voters and learners from every
// conf_state in every snapshot, in order.
bool ParseSnapshotMeta(std::string_view bytes, raft::SnapshotMeta* meta) {
  meta->index = 0;
  meta->term = 0;
  wire::Reader reader(bytes);
  wire::Field f;
  while (reader.Next(&f)) {
    bool ok = true;
    switch (f.number) {
      case kMetaIndex:
        ok = wire::AsUint64(f, &meta->index);
        break;
      case kMetaTerm:
        ok = wire::AsUint64(f, &meta->term);
        break;
      case kMetaConfState: {
        std::string_view body;
        ok = wire::AsBytes(f, &body) &&
             ParseConfState(body, &meta->conf_state.voters, &meta->conf_state.learners);
        break;
      }
      default:
        break;
    }
    if (!ok) return false;
  }
  return reader.ok();
}

}  // namespace

std::string EncodeRaftMessage(const raft::Message& m) {
  wire::Writer w;
  w.VarintField(kType, static_cast<uint64_t>(m.type));
  w.VarintField(kTo, m.to);
  w.VarintField(kFrom, m.from);
  w.VarintField(kTerm, m.term);
  w.VarintField(kLogTerm, m.log_term);
  w.VarintField(kIndex, m.index);
  for (const raft::Entry& e : m.entries) {
    wire::Writer entry;
    entry.VarintField(kEntryTerm, e.term);
    entry.VarintField(kEntryIndex, e.index);
    entry.VarintField(kEntryType, static_cast<uint64_t>(e.type));
    entry.BytesField(kEntryData, e.data);
    w.Bytes(kEntries, entry.out());
  }
  w.VarintField(kCommit, m.commit);
  if (m.type == raft::MessageType::kSnap) {
    // Written even when empty, conf_state too (protobuf-c writes a set
    // sub-message pointer).
    wire::Writer conf;
    conf.PackedVarints(kVoters, m.snapshot.meta.conf_state.voters);
    conf.PackedVarints(kLearners, m.snapshot.meta.conf_state.learners);
    wire::Writer meta;
    meta.VarintField(kMetaIndex, m.snapshot.meta.index);
    meta.VarintField(kMetaTerm, m.snapshot.meta.term);
    meta.Bytes(kMetaConfState, conf.out());
    w.Bytes(kSnapshot, meta.out());
  }
  w.BoolField(kReject, m.reject);
  w.VarintField(kRejectHint, m.reject_hint);
  w.BytesField(kContext, m.context);
  return w.Take();
}

Status DecodeRaftMessage(std::string_view bytes, raft::Message* out) {
  if (!wire::WellFormed(bytes, kMessageShape)) {
    return Invalid("malformed or too deeply nested protobuf: not a natcd.v1.RaftMessage");
  }
  uint32_t type = 0;
  raft::Message m;
  std::vector<ParsedEntry> entries;
  wire::Reader reader(bytes);
  wire::Field f;
  bool ok = true;
  while (ok && reader.Next(&f)) {
    switch (f.number) {
      case kType:
        ok = wire::AsUint32(f, &type);
        break;
      case kTo:
        ok = wire::AsUint64(f, &m.to);
        break;
      case kFrom:
        ok = wire::AsUint64(f, &m.from);
        break;
      case kTerm:
        ok = wire::AsUint64(f, &m.term);
        break;
      case kLogTerm:
        ok = wire::AsUint64(f, &m.log_term);
        break;
      case kIndex:
        ok = wire::AsUint64(f, &m.index);
        break;
      case kEntries: {
        std::string_view body;
        entries.emplace_back();
        ok = wire::AsBytes(f, &body) && ParseEntry(body, &entries.back());
        break;
      }
      case kCommit:
        ok = wire::AsUint64(f, &m.commit);
        break;
      case kSnapshot: {
        std::string_view body;
        ok = wire::AsBytes(f, &body) && ParseSnapshotMeta(body, &m.snapshot.meta);
        break;
      }
      case kReject:
        m.reject = wire::AsBool(f);
        break;
      case kRejectHint:
        ok = wire::AsUint64(f, &m.reject_hint);
        break;
      case kContext: {
        std::string_view body;
        ok = wire::AsBytes(f, &body);
        if (ok) m.context.assign(body);
        break;
      }
      default:
        break;
    }
  }
  if (!ok || !reader.ok()) return Invalid("malformed protobuf: not a natcd.v1.RaftMessage");
  if (type > static_cast<uint32_t>(raft::MessageType::kPreVoteResp)) {
    return Invalid("unknown raft message type " + std::to_string(type));
  }
  m.type = static_cast<raft::MessageType>(type);
  m.entries.reserve(entries.size());
  for (const ParsedEntry& e : entries) {
    if (e.type > static_cast<uint32_t>(raft::EntryType::kConfChange)) {
      return Invalid("unknown raft entry type " + std::to_string(e.type));
    }
    m.entries.push_back(
        raft::Entry{e.term, e.index, static_cast<raft::EntryType>(e.type), std::string(e.data)});
  }
  *out = std::move(m);
  return Status::OK();
}

}  // namespace natcd::server
