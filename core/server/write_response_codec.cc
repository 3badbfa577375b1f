#include "server/write_response_codec.h"

#include <memory>
#include <type_traits>

#include "server/proto_wire.h"

namespace natcd::server {
namespace {

using wire::Field;
using wire::Reader;
using wire::Writer;

// ---- encode ----

void Header(const ResponseHeader& h, Writer* w) {
  Writer inner;
  inner.Int64Field(3, h.revision);  // ResponseHeader.revision
  w->Bytes(1, inner.out());
}

void Kv(uint32_t field, const KeyValue& kv, Writer* w) {
  Writer inner;
  inner.BytesField(1, kv.key);
  inner.Int64Field(2, kv.create_revision);
  inner.Int64Field(3, kv.mod_revision);
  inner.Int64Field(4, kv.version);
  inner.BytesField(5, kv.value);
  inner.Int64Field(6, kv.lease);
  w->Bytes(field, inner.out());
}

void Encode(const RangeResponse& r, Writer* w) {
  Header(r.header, w);
  for (const KeyValue& kv : r.kvs) Kv(2, kv, w);
  w->BoolField(3, r.more);
  w->Int64Field(4, r.count);
}

void Encode(const PutResponse& r, Writer* w) {
  Header(r.header, w);
  if (r.has_prev_kv) Kv(2, r.prev_kv, w);
}

void Encode(const DeleteRangeResponse& r, Writer* w) {
  Header(r.header, w);
  w->Int64Field(2, r.deleted);
  for (const KeyValue& kv : r.prev_kvs) Kv(3, kv, w);
}

void Encode(const TxnResponse& r, Writer* w);

template <typename T>
void Message(uint32_t field, const T& value, Writer* w) {
  Writer inner;
  Encode(value, &inner);
  w->Bytes(field, inner.out());
}

void Encode(const TxnResponse& r, Writer* w) {
  Header(r.header, w);
  w->BoolField(2, r.succeeded);
  for (const ResponseOp& op : r.responses) {
    Writer inner;
    std::visit(
        [&](const auto& x) {
          using T = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<T, RangeResponse>) {
            Message(1, x, &inner);
          } else if constexpr (std::is_same_v<T, PutResponse>) {
            Message(2, x, &inner);
          } else if constexpr (std::is_same_v<T, DeleteRangeResponse>) {
            Message(3, x, &inner);
          } else if (x != nullptr) {
            Message(4, *x, &inner);
          }
        },
        op.response);
    w->Bytes(3, inner.out());
  }
}

void Encode(const CompactionResponse& r, Writer* w) { Header(r.header, w); }

void Encode(const LeaseGrantResponse& r, Writer* w) {
  Header(r.header, w);
  w->Int64Field(2, r.id);
  w->Int64Field(3, r.ttl);
}

void Encode(const LeaseRevokeResponse& r, Writer* w) { Header(r.header, w); }

void Encode(const LeaseExpireResponse& r, Writer* w) {
  Header(r.header, w);
  w->Int64Field(2, r.revoked);
}

void Encode(const LeaseCheckpointResponse& r, Writer* w) { Header(r.header, w); }

// ---- decode ----

bool Bytes(const Field& f, std::string* out) {
  std::string_view v;
  if (!wire::AsBytes(f, &v)) return false;
  out->assign(v);
  return true;
}

bool ParseHeader(const Field& f, ResponseHeader* h) {
  std::string_view body;
  if (!wire::AsBytes(f, &body)) return false;
  h->revision = 0;
  Reader reader(body);
  Field g;
  uint64_t ignored;
  while (reader.Next(&g)) {
    bool ok = true;
    if (g.number == 3) {
      ok = wire::AsInt64(g, &h->revision);
    } else if (g.number == 1 || g.number == 2 || g.number == 4) {
      ok = wire::AsUint64(g, &ignored);  // the answering member's, dropped
    }
    if (!ok) return false;
  }
  return reader.ok();
}

bool ParseKv(const Field& f, KeyValue* kv) {
  std::string_view body;
  if (!wire::AsBytes(f, &body)) return false;
  *kv = KeyValue{};
  Reader reader(body);
  Field g;
  while (reader.Next(&g)) {
    bool ok = true;
    switch (g.number) {
      case 1:
        ok = Bytes(g, &kv->key);
        break;
      case 2:
        ok = wire::AsInt64(g, &kv->create_revision);
        break;
      case 3:
        ok = wire::AsInt64(g, &kv->mod_revision);
        break;
      case 4:
        ok = wire::AsInt64(g, &kv->version);
        break;
      case 5:
        ok = Bytes(g, &kv->value);
        break;
      case 6:
        ok = wire::AsInt64(g, &kv->lease);
        break;
      default:
        break;
    }
    if (!ok) return false;
  }
  return reader.ok();
}

// Reads every field of data with on_field; false when a field is malformed
// or on_field refuses it.
template <typename F>
bool Fields(std::string_view data, F on_field) {
  Reader reader(data);
  Field f;
  while (reader.Next(&f)) {
    if (!on_field(f)) return false;
  }
  return reader.ok();
}

bool Parse(std::string_view data, RangeResponse* r) {
  return Fields(data, [&](const Field& f) {
    switch (f.number) {
      case 1:
        return ParseHeader(f, &r->header);
      case 2:
        r->kvs.emplace_back();
        return ParseKv(f, &r->kvs.back());
      case 3:
        r->more = wire::AsBool(f);
        return true;
      case 4:
        return wire::AsInt64(f, &r->count);
      default:
        return true;
    }
  });
}

bool Parse(std::string_view data, PutResponse* r) {
  return Fields(data, [&](const Field& f) {
    if (f.number == 1) return ParseHeader(f, &r->header);
    if (f.number == 2) {
      r->has_prev_kv = true;
      return ParseKv(f, &r->prev_kv);
    }
    return true;
  });
}

bool Parse(std::string_view data, DeleteRangeResponse* r) {
  return Fields(data, [&](const Field& f) {
    switch (f.number) {
      case 1:
        return ParseHeader(f, &r->header);
      case 2:
        return wire::AsInt64(f, &r->deleted);
      case 3:
        r->prev_kvs.emplace_back();
        return ParseKv(f, &r->prev_kvs.back());
      default:
        return true;
    }
  });
}

bool Parse(std::string_view data, TxnResponse* r);

bool Parse(std::string_view data, ResponseOp* op) {
  bool set = false;
  bool ok = Fields(data, [&](const Field& f) {
    if (f.number < 1 || f.number > 4) return true;
    std::string_view body;
    if (!wire::AsBytes(f, &body)) return false;
    set = true;
    switch (f.number) {
      case 1: {
        RangeResponse x;
        if (!Parse(body, &x)) return false;
        op->response = std::move(x);
        return true;
      }
      case 2: {
        PutResponse x;
        if (!Parse(body, &x)) return false;
        op->response = std::move(x);
        return true;
      }
      case 3: {
        DeleteRangeResponse x;
        if (!Parse(body, &x)) return false;
        op->response = std::move(x);
        return true;
      }
      default: {
        auto x = std::make_shared<TxnResponse>();
        if (!Parse(body, x.get())) return false;
        op->response = std::move(x);
        return true;
      }
    }
  });
  return ok && set;  // a response op always has its response
}

bool Parse(std::string_view data, TxnResponse* r) {
  return Fields(data, [&](const Field& f) {
    switch (f.number) {
      case 1:
        return ParseHeader(f, &r->header);
      case 2:
        r->succeeded = wire::AsBool(f);
        return true;
      case 3: {
        std::string_view body;
        if (!wire::AsBytes(f, &body)) return false;
        r->responses.emplace_back();
        return Parse(body, &r->responses.back());
      }
      default:
        return true;
    }
  });
}

bool Parse(std::string_view data, CompactionResponse* r) {
  return Fields(data, [&](const Field& f) { return f.number != 1 || ParseHeader(f, &r->header); });
}

bool Parse(std::string_view data, LeaseGrantResponse* r) {
  return Fields(data, [&](const Field& f) {
    switch (f.number) {
      case 1:
        return ParseHeader(f, &r->header);
      case 2:
        return wire::AsInt64(f, &r->id);
      case 3:
        return wire::AsInt64(f, &r->ttl);
      default:
        return true;  // 4, error: never set by natcd
    }
  });
}

bool Parse(std::string_view data, LeaseRevokeResponse* r) {
  return Fields(data, [&](const Field& f) { return f.number != 1 || ParseHeader(f, &r->header); });
}

bool Parse(std::string_view data, LeaseExpireResponse* r) {
  return Fields(data, [&](const Field& f) {
    if (f.number == 1) return ParseHeader(f, &r->header);
    if (f.number == 2) return wire::AsInt64(f, &r->revoked);
    return true;
  });
}

bool Parse(std::string_view data, LeaseCheckpointResponse* r) {
  return Fields(data, [&](const Field& f) { return f.number != 1 || ParseHeader(f, &r->header); });
}

constexpr wire::MessageShape kLeaf{"", nullptr, 0};
constexpr wire::ChildShape kHeaderOnly[] = {{1, &kLeaf}};
constexpr wire::ChildShape kHeaderAndKvs2[] = {{1, &kLeaf}, {2, &kLeaf}};
constexpr wire::ChildShape kHeaderAndKvs3[] = {{1, &kLeaf}, {3, &kLeaf}};
constexpr wire::MessageShape kRangeResponseShape{"natcd.v1.RangeResponse", kHeaderAndKvs2, 2};
constexpr wire::MessageShape kPutResponseShape{"natcd.v1.PutResponse", kHeaderAndKvs2, 2};
constexpr wire::MessageShape kDeleteResponseShape{"natcd.v1.DeleteRangeResponse", kHeaderAndKvs3,
                                                  2};
extern const wire::MessageShape kTxnResponseShape;
constexpr wire::ChildShape kResponseOpChildren[] = {{1, &kRangeResponseShape},
                                                    {2, &kPutResponseShape},
                                                    {3, &kDeleteResponseShape},
                                                    {4, &kTxnResponseShape}};
constexpr wire::MessageShape kResponseOpShape{"natcd.v1.ResponseOp", kResponseOpChildren, 4};
constexpr wire::ChildShape kTxnResponseChildren[] = {{1, &kLeaf}, {3, &kResponseOpShape}};
constexpr wire::MessageShape kTxnResponseShape{"natcd.v1.TxnResponse", kTxnResponseChildren, 2};
constexpr wire::MessageShape kHeaderOnlyShape{"natcd.v1 response", kHeaderOnly, 1};

const wire::MessageShape& ShapeOf(WriteKind kind) {
  switch (kind) {
    case WriteKind::kPut:
      return kPutResponseShape;
    case WriteKind::kDeleteRange:
      return kDeleteResponseShape;
    case WriteKind::kTxn:
      return kTxnResponseShape;
    default:
      return kHeaderOnlyShape;
  }
}

template <typename T>
bool ParseInto(std::string_view data, WriteResponse* out) {
  T r;
  if (!Parse(data, &r)) return false;
  *out = std::move(r);
  return true;
}

}  // namespace

std::string EncodeWriteResponse(const WriteResponse& response) {
  Writer w;
  std::visit([&](const auto& r) { Encode(r, &w); }, response);
  return w.Take();
}

Status DecodeWriteResponse(WriteKind kind, std::string_view bytes, WriteResponse* out) {
  bool ok = wire::WellFormed(bytes, ShapeOf(kind));
  if (ok) {
    switch (kind) {
      case WriteKind::kPut:
        ok = ParseInto<PutResponse>(bytes, out);
        break;
      case WriteKind::kDeleteRange:
        ok = ParseInto<DeleteRangeResponse>(bytes, out);
        break;
      case WriteKind::kTxn:
        ok = ParseInto<TxnResponse>(bytes, out);
        break;
      case WriteKind::kCompaction:
        ok = ParseInto<CompactionResponse>(bytes, out);
        break;
      case WriteKind::kLeaseGrant:
        ok = ParseInto<LeaseGrantResponse>(bytes, out);
        break;
      case WriteKind::kLeaseRevoke:
        ok = ParseInto<LeaseRevokeResponse>(bytes, out);
        break;
      case WriteKind::kLeaseExpire:
        ok = ParseInto<LeaseExpireResponse>(bytes, out);
        break;
      case WriteKind::kLeaseCheckpoint:
        ok = ParseInto<LeaseCheckpointResponse>(bytes, out);
        break;
    }
  }
  if (!ok) {
    return Status::InvalidArgument("ErrInvalidArgument", std::string("malformed protobuf: not a ") +
                                                             WriteKindName(kind) + " response");
  }
  return Status::OK();
}

}  // namespace natcd::server
