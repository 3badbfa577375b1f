#include "server/write_request_codec.h"

#include <memory>
#include <type_traits>
#include <utility>

#include "server/proto_wire.h"

namespace natcd::server {

const char* WriteKindName(WriteKind kind) {
  switch (kind) {
    case WriteKind::kPut:
      return "put";
    case WriteKind::kDeleteRange:
      return "delete";
    case WriteKind::kTxn:
      return "txn";
    case WriteKind::kCompaction:
      return "compaction";
    case WriteKind::kLeaseGrant:
      return "lease grant";
    case WriteKind::kLeaseRevoke:
      return "lease revoke";
    case WriteKind::kLeaseExpire:
      return "lease expiry";
    case WriteKind::kLeaseCheckpoint:
      return "lease checkpoint";
  }
  return "unknown write";
}

namespace {

using wire::Field;
using wire::Reader;
using wire::Writer;

// ---- shapes: which fields are messages (for the depth check) ----

constexpr wire::MessageShape kLeaf{"", nullptr, 0};
extern const wire::MessageShape kTxnRequestShape;
constexpr wire::ChildShape kRequestOpChildren[] = {
    {1, &kLeaf}, {2, &kLeaf}, {3, &kLeaf}, {4, &kTxnRequestShape}};
constexpr wire::MessageShape kRequestOpShape{"natcd.v1.RequestOp", kRequestOpChildren, 4};
constexpr wire::ChildShape kTxnRequestChildren[] = {
    {1, &kLeaf}, {2, &kRequestOpShape}, {3, &kRequestOpShape}};
constexpr wire::MessageShape kTxnRequestShape{"natcd.v1.TxnRequest", kTxnRequestChildren, 3};
constexpr wire::ChildShape kCheckpointChildren[] = {{1, &kLeaf}};
constexpr wire::MessageShape kCheckpointCommandShape{"natcd.v1.LeaseCheckpointCommand",
                                                     kCheckpointChildren, 1};

Status InvalidArgument(const std::string& message) {
  return Status::InvalidArgument("ErrInvalidArgument", message);
}

Status BadEnum(const char* what, int32_t value) {
  return InvalidArgument(std::string("invalid ") + what + " " + std::to_string(value));
}

// Keeps the first error of a message's checks (FromProto stops at it).
void Keep(Status* first, Status s) {
  if (first->ok() && !s.ok()) *first = std::move(s);
}

// ---- encode ----

void Encode(const RequestOp& op, Writer* w);
void Encode(const TxnRequest& r, Writer* w);
void Encode(const LeaseCheckpointRequest::Checkpoint& c, Writer* w);

void Encode(const PutRequest& r, Writer* w) {
  w->BytesField(1, r.key);
  w->BytesField(2, r.value);
  w->Int64Field(3, r.lease);
  w->BoolField(4, r.prev_kv);
  w->BoolField(5, r.ignore_value);
  w->BoolField(6, r.ignore_lease);
}

void Encode(const DeleteRangeRequest& r, Writer* w) {
  w->BytesField(1, r.key);
  w->BytesField(2, r.range_end);
  w->BoolField(3, r.prev_kv);
}

void Encode(const RangeRequest& r, Writer* w) {
  w->BytesField(1, r.key);
  w->BytesField(2, r.range_end);
  w->Int64Field(3, r.limit);
  w->Int64Field(4, r.revision);
  w->VarintField(5, static_cast<uint64_t>(r.sort_order));
  w->VarintField(6, static_cast<uint64_t>(r.sort_target));
  w->BoolField(7, r.serializable);
  w->BoolField(8, r.keys_only);
  w->BoolField(9, r.count_only);
  w->Int64Field(10, r.min_mod_revision);
  w->Int64Field(11, r.max_mod_revision);
  w->Int64Field(12, r.min_create_revision);
  w->Int64Field(13, r.max_create_revision);
}

void Encode(const Compare& c, Writer* w) {
  w->VarintField(1, static_cast<uint64_t>(c.result));
  w->VarintField(2, static_cast<uint64_t>(c.target));
  w->BytesField(3, c.key);
  // protobuf-c writes the selected oneof member even when it is 0 or empty.
  switch (c.target) {
    case Compare::Target::kVersion:
      w->Varint(4, static_cast<uint64_t>(c.version));
      break;
    case Compare::Target::kCreate:
      w->Varint(5, static_cast<uint64_t>(c.create_revision));
      break;
    case Compare::Target::kMod:
      w->Varint(6, static_cast<uint64_t>(c.mod_revision));
      break;
    case Compare::Target::kValue:
      w->Bytes(7, c.value);
      break;
    case Compare::Target::kLease:
      w->Varint(8, static_cast<uint64_t>(c.lease));
      break;
  }
  w->BytesField(64, c.range_end);
}

// A sub-message: always written when present, even empty.
template <typename T>
void Message(uint32_t field, const T& value, Writer* w) {
  Writer inner;
  Encode(value, &inner);
  w->Bytes(field, inner.out());
}

void Encode(const RequestOp& op, Writer* w) {
  std::visit(
      [&](const auto& r) {
        using T = std::decay_t<decltype(r)>;
        if constexpr (std::is_same_v<T, RangeRequest>) {
          Message(1, r, w);
        } else if constexpr (std::is_same_v<T, PutRequest>) {
          Message(2, r, w);
        } else if constexpr (std::is_same_v<T, DeleteRangeRequest>) {
          Message(3, r, w);
        } else if (r != nullptr) {
          Message(4, *r, w);
        }
      },
      op.op);
}

void Encode(const TxnRequest& r, Writer* w) {
  for (const Compare& c : r.compare) Message(1, c, w);
  for (const RequestOp& op : r.success) Message(2, op, w);
  for (const RequestOp& op : r.failure) Message(3, op, w);
}

void Encode(const CompactionRequest& r, Writer* w) {
  w->Int64Field(1, r.revision);
  w->BoolField(2, r.physical);
}

void Encode(const LeaseGrantRequest& r, Writer* w) {
  w->Int64Field(1, r.ttl);
  w->Int64Field(2, r.id);
}

void Encode(const LeaseRevokeRequest& r, Writer* w) { w->Int64Field(1, r.id); }

void Encode(const LeaseExpireRequest& r, Writer* w) { w->PackedVarints(1, r.ids); }

void Encode(const LeaseCheckpointRequest::Checkpoint& c, Writer* w) {
  w->Int64Field(1, c.id);
  w->Int64Field(2, c.remaining_ms);
}

void Encode(const LeaseCheckpointRequest& r, Writer* w) {
  for (const auto& c : r.checkpoints) Message(1, c, w);
}

// ---- decode ----
//
// Each Parse function reads one message as protobuf-c unpacks it and
// returns false where protobuf-c fails (the whole decode then fails with
// "malformed protobuf"). The checks FromProto makes afterwards are kept in
// *check (the first failing one), so that a malformed field later in the
// input still wins, as it does when protobuf-c unpacks everything first.
// Recursion is bounded: WellFormed checked the depth before.

bool Bytes(const Field& f, std::string* out) {
  std::string_view v;
  if (!wire::AsBytes(f, &v)) return false;
  out->assign(v);
  return true;
}

bool Parse(std::string_view data, PutRequest* out) {
  Reader reader(data);
  Field f;
  while (reader.Next(&f)) {
    bool ok = true;
    switch (f.number) {
      case 1:
        ok = Bytes(f, &out->key);
        break;
      case 2:
        ok = Bytes(f, &out->value);
        break;
      case 3:
        ok = wire::AsInt64(f, &out->lease);
        break;
      case 4:
        out->prev_kv = wire::AsBool(f);
        break;
      case 5:
        out->ignore_value = wire::AsBool(f);
        break;
      case 6:
        out->ignore_lease = wire::AsBool(f);
        break;
      default:
        break;  // unknown: skipped
    }
    if (!ok) return false;
  }
  return reader.ok();
}

bool Parse(std::string_view data, DeleteRangeRequest* out) {
  Reader reader(data);
  Field f;
  while (reader.Next(&f)) {
    bool ok = true;
    switch (f.number) {
      case 1:
        ok = Bytes(f, &out->key);
        break;
      case 2:
        ok = Bytes(f, &out->range_end);
        break;
      case 3:
        out->prev_kv = wire::AsBool(f);
        break;
      default:
        break;
    }
    if (!ok) return false;
  }
  return reader.ok();
}

bool Parse(std::string_view data, RangeRequest* out, Status* check) {
  int32_t sort_order = 0;
  int32_t sort_target = 0;
  Reader reader(data);
  Field f;
  while (reader.Next(&f)) {
    bool ok = true;
    switch (f.number) {
      case 1:
        ok = Bytes(f, &out->key);
        break;
      case 2:
        ok = Bytes(f, &out->range_end);
        break;
      case 3:
        ok = wire::AsInt64(f, &out->limit);
        break;
      case 4:
        ok = wire::AsInt64(f, &out->revision);
        break;
      case 5:
        ok = wire::AsInt32(f, &sort_order);
        break;
      case 6:
        ok = wire::AsInt32(f, &sort_target);
        break;
      case 7:
        out->serializable = wire::AsBool(f);
        break;
      case 8:
        out->keys_only = wire::AsBool(f);
        break;
      case 9:
        out->count_only = wire::AsBool(f);
        break;
      case 10:
        ok = wire::AsInt64(f, &out->min_mod_revision);
        break;
      case 11:
        ok = wire::AsInt64(f, &out->max_mod_revision);
        break;
      case 12:
        ok = wire::AsInt64(f, &out->min_create_revision);
        break;
      case 13:
        ok = wire::AsInt64(f, &out->max_create_revision);
        break;
      default:
        break;
    }
    if (!ok) return false;
  }
  if (!reader.ok()) return false;
  if (sort_order < 0 || sort_order > 2 || sort_target < 0 || sort_target > 4) {
    Keep(check, Status::InvalidArgument("ErrInvalidSortOption", "etcdserver: invalid sort option"));
  } else {
    out->sort_order = static_cast<SortOrder>(sort_order);
    out->sort_target = static_cast<SortTarget>(sort_target);
  }
  return true;
}

bool Parse(std::string_view data, Compare* out, Status* check) {
  int32_t result = 0;
  int32_t target = 0;
  uint32_t target_case = 0;  // the oneof member last seen, by field number
  int64_t number = 0;
  std::string value;
  Reader reader(data);
  Field f;
  while (reader.Next(&f)) {
    bool ok = true;
    switch (f.number) {
      case 1:
        ok = wire::AsInt32(f, &result);
        break;
      case 2:
        ok = wire::AsInt32(f, &target);
        break;
      case 3:
        ok = Bytes(f, &out->key);
        break;
      case 4:
      case 5:
      case 6:
      case 8:
        ok = wire::AsInt64(f, &number);
        target_case = f.number;
        break;
      case 7:
        ok = Bytes(f, &value);
        target_case = 7;
        break;
      case 64:
        ok = Bytes(f, &out->range_end);
        break;
      default:
        break;
    }
    if (!ok) return false;
  }
  if (!reader.ok()) return false;
  if (result < 0 || result > 3) {
    Keep(check, BadEnum("compare result", result));
    return true;
  }
  if (target < 0 || target > 4) {
    Keep(check, BadEnum("compare target", target));
    return true;
  }
  out->result = static_cast<Compare::Result>(result);
  out->target = static_cast<Compare::Target>(target);
  switch (target_case) {
    case 4:
      out->version = number;
      break;
    case 5:
      out->create_revision = number;
      break;
    case 6:
      out->mod_revision = number;
      break;
    case 7:
      out->value = std::move(value);
      break;
    case 8:
      out->lease = number;
      break;
    default:
      break;  // unset: compare against zero, as etcd does
  }
  return true;
}

bool Parse(std::string_view data, TxnRequest* out, int depth, Status* check);

bool Parse(std::string_view data, RequestOp* out, int depth, Status* check) {
  // A oneof: a later member replaces an earlier one (protobuf-c unpacks
  // and drops it; its checks do not count).
  bool set = false;
  Status op_check;
  Reader reader(data);
  Field f;
  while (reader.Next(&f)) {
    if (f.number < 1 || f.number > 4) continue;
    std::string_view body;
    if (!wire::AsBytes(f, &body)) return false;
    op_check = Status::OK();
    switch (f.number) {
      case 1: {
        RangeRequest r;
        if (!Parse(body, &r, &op_check)) return false;
        out->op = std::move(r);
        break;
      }
      case 2: {
        PutRequest r;
        if (!Parse(body, &r)) return false;
        out->op = std::move(r);
        break;
      }
      case 3: {
        DeleteRangeRequest r;
        if (!Parse(body, &r)) return false;
        out->op = std::move(r);
        break;
      }
      case 4: {
        auto r = std::make_shared<TxnRequest>();
        if (!Parse(body, r.get(), depth + 1, &op_check)) return false;
        out->op = std::move(r);
        break;
      }
    }
    set = true;
  }
  if (!reader.ok()) return false;
  if (!set) op_check = InvalidArgument("txn operation with no request set");
  Keep(check, std::move(op_check));
  return true;
}

bool Parse(std::string_view data, TxnRequest* out, int depth, Status* check) {
  Status compare_check, success_check, failure_check;
  Reader reader(data);
  Field f;
  while (reader.Next(&f)) {
    if (f.number < 1 || f.number > 3) continue;
    std::string_view body;
    if (!wire::AsBytes(f, &body)) return false;
    if (f.number == 1) {
      out->compare.emplace_back();
      if (!Parse(body, &out->compare.back(), &compare_check)) return false;
    } else {
      std::vector<RequestOp>& ops = f.number == 2 ? out->success : out->failure;
      ops.emplace_back();
      if (!Parse(body, &ops.back(), depth, f.number == 2 ? &success_check : &failure_check)) {
        return false;
      }
    }
  }
  if (!reader.ok()) return false;
  // FromProto's order: the depth, then compares, then success, then failure.
  if (depth > kTxnDepthMax) {
    Keep(check, InvalidArgument("txn nested deeper than " + std::to_string(kTxnDepthMax)));
  }
  Keep(check, std::move(compare_check));
  Keep(check, std::move(success_check));
  Keep(check, std::move(failure_check));
  return true;
}

bool Parse(std::string_view data, CompactionRequest* out) {
  Reader reader(data);
  Field f;
  while (reader.Next(&f)) {
    if (f.number == 1 && !wire::AsInt64(f, &out->revision)) return false;
    if (f.number == 2) out->physical = wire::AsBool(f);
  }
  return reader.ok();
}

bool Parse(std::string_view data, LeaseGrantRequest* out) {
  Reader reader(data);
  Field f;
  while (reader.Next(&f)) {
    if (f.number == 1 && !wire::AsInt64(f, &out->ttl)) return false;
    if (f.number == 2 && !wire::AsInt64(f, &out->id)) return false;
  }
  return reader.ok();
}

bool Parse(std::string_view data, LeaseRevokeRequest* out) {
  Reader reader(data);
  Field f;
  while (reader.Next(&f)) {
    if (f.number == 1 && !wire::AsInt64(f, &out->id)) return false;
  }
  return reader.ok();
}

bool Parse(std::string_view data, LeaseExpireRequest* out) {
  std::vector<uint64_t> ids;
  Reader reader(data);
  Field f;
  while (reader.Next(&f)) {
    if (f.number == 1 && !wire::AppendVarints(f, &ids)) return false;
  }
  if (!reader.ok()) return false;
  out->ids.assign(ids.begin(), ids.end());
  return true;
}

bool Parse(std::string_view data, LeaseCheckpointRequest::Checkpoint* out) {
  Reader reader(data);
  Field f;
  while (reader.Next(&f)) {
    if (f.number == 1 && !wire::AsInt64(f, &out->id)) return false;
    if (f.number == 2 && !wire::AsInt64(f, &out->remaining_ms)) return false;
  }
  return reader.ok();
}

bool Parse(std::string_view data, LeaseCheckpointRequest* out) {
  Reader reader(data);
  Field f;
  while (reader.Next(&f)) {
    if (f.number != 1) continue;
    std::string_view body;
    if (!wire::AsBytes(f, &body)) return false;
    out->checkpoints.emplace_back();
    if (!Parse(body, &out->checkpoints.back())) return false;
  }
  return reader.ok();
}

const wire::MessageShape& ShapeOf(WriteKind kind) {
  static constexpr wire::MessageShape kPut{"natcd.v1.PutRequest", nullptr, 0};
  static constexpr wire::MessageShape kDelete{"natcd.v1.DeleteRangeRequest", nullptr, 0};
  static constexpr wire::MessageShape kCompaction{"natcd.v1.CompactionRequest", nullptr, 0};
  static constexpr wire::MessageShape kGrant{"natcd.v1.LeaseGrantRequest", nullptr, 0};
  static constexpr wire::MessageShape kRevoke{"natcd.v1.LeaseRevokeRequest", nullptr, 0};
  static constexpr wire::MessageShape kExpire{"natcd.v1.LeaseExpireCommand", nullptr, 0};
  switch (kind) {
    case WriteKind::kPut:
      return kPut;
    case WriteKind::kDeleteRange:
      return kDelete;
    case WriteKind::kTxn:
      return kTxnRequestShape;
    case WriteKind::kCompaction:
      return kCompaction;
    case WriteKind::kLeaseGrant:
      return kGrant;
    case WriteKind::kLeaseRevoke:
      return kRevoke;
    case WriteKind::kLeaseExpire:
      return kExpire;
    case WriteKind::kLeaseCheckpoint:
      return kCheckpointCommandShape;
  }
  return kPut;
}

// Parses into a fresh T and moves it into *out (today's decoder fills a
// fresh struct too, so no earlier value leaks into the result).
template <typename T>
bool ParseInto(std::string_view data, WriteRequest* out) {
  T r;
  if (!Parse(data, &r)) return false;
  *out = std::move(r);
  return true;
}

}  // namespace

const char* WriteRequestMessageName(WriteKind kind) { return ShapeOf(kind).name; }

std::string EncodeWriteRequest(const WriteRequest& request) {
  Writer w;
  std::visit([&](const auto& r) { Encode(r, &w); }, request);
  return w.Take();
}

Status DecodeWriteRequest(WriteKind kind, std::string_view bytes, WriteRequest* out) {
  const wire::MessageShape& shape = ShapeOf(kind);
  if (!wire::WellFormed(bytes, shape)) {
    return InvalidArgument(std::string("malformed or too deeply nested protobuf: not a ") +
                           shape.name);
  }
  Status check;
  bool parsed = false;
  switch (kind) {
    case WriteKind::kPut:
      parsed = ParseInto<PutRequest>(bytes, out);
      break;
    case WriteKind::kDeleteRange:
      parsed = ParseInto<DeleteRangeRequest>(bytes, out);
      break;
    case WriteKind::kTxn: {
      TxnRequest r;
      parsed = Parse(bytes, &r, 0, &check);
      if (parsed && check.ok()) *out = std::move(r);
      break;
    }
    case WriteKind::kCompaction:
      parsed = ParseInto<CompactionRequest>(bytes, out);
      break;
    case WriteKind::kLeaseGrant:
      parsed = ParseInto<LeaseGrantRequest>(bytes, out);
      break;
    case WriteKind::kLeaseRevoke:
      parsed = ParseInto<LeaseRevokeRequest>(bytes, out);
      break;
    case WriteKind::kLeaseExpire:
      parsed = ParseInto<LeaseExpireRequest>(bytes, out);
      break;
    case WriteKind::kLeaseCheckpoint:
      parsed = ParseInto<LeaseCheckpointRequest>(bytes, out);
      break;
  }
  if (!parsed) return InvalidArgument(std::string("malformed protobuf: not a ") + shape.name);
  return check;
}

}  // namespace natcd::server
