#include "adapters/nats/codec/client_convert.h"

#include <memory>
#include <string>
#include <type_traits>
#include <variant>

namespace natcd::nats {
namespace {

std::string Bytes(const ProtobufCBinaryData& data) {
  return data.len ? std::string(reinterpret_cast<const char*>(data.data), data.len) : std::string();
}

// Points at the string's bytes; the string must outlive the pack.
ProtobufCBinaryData View(const std::string& s) {
  return ProtobufCBinaryData{s.size(), reinterpret_cast<uint8_t*>(const_cast<char*>(s.data()))};
}

Natcd__V1__Compare* CompareToProto(const Compare& in, ProtoArena* arena) {
  auto* out = arena->New(natcd__v1__compare__init);
  out->result = static_cast<Natcd__V1__Compare__CompareResult>(in.result);
  out->target = static_cast<Natcd__V1__Compare__CompareTarget>(in.target);
  out->key = View(in.key);
  out->range_end = View(in.range_end);
  switch (in.target) {
    case Compare::Target::kVersion:
      out->target_union_case = NATCD__V1__COMPARE__TARGET_UNION_VERSION;
      out->version = in.version;
      break;
    case Compare::Target::kCreate:
      out->target_union_case = NATCD__V1__COMPARE__TARGET_UNION_CREATE_REVISION;
      out->create_revision = in.create_revision;
      break;
    case Compare::Target::kMod:
      out->target_union_case = NATCD__V1__COMPARE__TARGET_UNION_MOD_REVISION;
      out->mod_revision = in.mod_revision;
      break;
    case Compare::Target::kValue:
      out->target_union_case = NATCD__V1__COMPARE__TARGET_UNION_VALUE;
      out->value = View(in.value);
      break;
    case Compare::Target::kLease:
      out->target_union_case = NATCD__V1__COMPARE__TARGET_UNION_LEASE;
      out->lease = in.lease;
      break;
  }
  return out;
}

Natcd__V1__RequestOp** OpsToProto(const std::vector<RequestOp>& ops, ProtoArena* arena) {
  auto** out = arena->Array<Natcd__V1__RequestOp>(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    auto* op = arena->New(natcd__v1__request_op__init);
    std::visit(
        [&](const auto& r) {
          using T = std::decay_t<decltype(r)>;
          if constexpr (std::is_same_v<T, RangeRequest>) {
            op->request_case = NATCD__V1__REQUEST_OP__REQUEST_REQUEST_RANGE;
            op->request_range = ToProto(r, arena);
          } else if constexpr (std::is_same_v<T, PutRequest>) {
            op->request_case = NATCD__V1__REQUEST_OP__REQUEST_REQUEST_PUT;
            op->request_put = ToProto(r, arena);
          } else if constexpr (std::is_same_v<T, DeleteRangeRequest>) {
            op->request_case = NATCD__V1__REQUEST_OP__REQUEST_REQUEST_DELETE_RANGE;
            op->request_delete_range = ToProto(r, arena);
          } else {
            op->request_case = NATCD__V1__REQUEST_OP__REQUEST_REQUEST_TXN;
            op->request_txn = ToProto(*r, arena);
          }
        },
        ops[i].op);
    out[i] = op;
  }
  return out;
}

std::vector<KeyValue> KvsFromProto(size_t n, Natcd__V1__KeyValue* const* kvs) {
  std::vector<KeyValue> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) out.push_back(FromProto(*kvs[i]));
  return out;
}

Status ResponseOpFromProto(const Natcd__V1__ResponseOp& in, ResponseOp* out, int depth) {
  switch (in.response_case) {
    case NATCD__V1__RESPONSE_OP__RESPONSE_RESPONSE_RANGE: {
      RangeResponse r;
      NATCD_RETURN_IF_ERROR(FromProto(*in.response_range, &r));
      out->response = std::move(r);
      return Status::OK();
    }
    case NATCD__V1__RESPONSE_OP__RESPONSE_RESPONSE_PUT: {
      PutResponse r;
      NATCD_RETURN_IF_ERROR(FromProto(*in.response_put, &r));
      out->response = std::move(r);
      return Status::OK();
    }
    case NATCD__V1__RESPONSE_OP__RESPONSE_RESPONSE_DELETE_RANGE: {
      DeleteRangeResponse r;
      NATCD_RETURN_IF_ERROR(FromProto(*in.response_delete_range, &r));
      out->response = std::move(r);
      return Status::OK();
    }
    case NATCD__V1__RESPONSE_OP__RESPONSE_RESPONSE_TXN: {
      auto r = std::make_shared<TxnResponse>();
      NATCD_RETURN_IF_ERROR(FromProto(*in.response_txn, r.get(), depth + 1));
      out->response = std::move(r);
      return Status::OK();
    }
    default:
      return Status::InvalidArgument("ErrInvalidArgument", "txn response op with no response set");
  }
}

}  // namespace

Natcd__V1__RangeRequest* ToProto(const RangeRequest& in, ProtoArena* arena) {
  auto* out = arena->New(natcd__v1__range_request__init);
  out->key = View(in.key);
  out->range_end = View(in.range_end);
  out->limit = in.limit;
  out->revision = in.revision;
  out->sort_order = static_cast<Natcd__V1__RangeRequest__SortOrder>(in.sort_order);
  out->sort_target = static_cast<Natcd__V1__RangeRequest__SortTarget>(in.sort_target);
  out->serializable = in.serializable;
  out->keys_only = in.keys_only;
  out->count_only = in.count_only;
  out->min_mod_revision = in.min_mod_revision;
  out->max_mod_revision = in.max_mod_revision;
  out->min_create_revision = in.min_create_revision;
  out->max_create_revision = in.max_create_revision;
  return out;
}

Natcd__V1__PutRequest* ToProto(const PutRequest& in, ProtoArena* arena) {
  auto* out = arena->New(natcd__v1__put_request__init);
  out->key = View(in.key);
  out->value = View(in.value);
  out->lease = in.lease;
  out->prev_kv = in.prev_kv;
  out->ignore_value = in.ignore_value;
  out->ignore_lease = in.ignore_lease;
  return out;
}

Natcd__V1__DeleteRangeRequest* ToProto(const DeleteRangeRequest& in, ProtoArena* arena) {
  auto* out = arena->New(natcd__v1__delete_range_request__init);
  out->key = View(in.key);
  out->range_end = View(in.range_end);
  out->prev_kv = in.prev_kv;
  return out;
}

Natcd__V1__TxnRequest* ToProto(const TxnRequest& in, ProtoArena* arena) {
  auto* out = arena->New(natcd__v1__txn_request__init);
  out->n_compare = in.compare.size();
  out->compare = arena->Array<Natcd__V1__Compare>(in.compare.size());
  for (size_t i = 0; i < in.compare.size(); ++i) {
    out->compare[i] = CompareToProto(in.compare[i], arena);
  }
  out->n_success = in.success.size();
  out->success = OpsToProto(in.success, arena);
  out->n_failure = in.failure.size();
  out->failure = OpsToProto(in.failure, arena);
  return out;
}

Natcd__V1__CompactionRequest* ToProto(const CompactionRequest& in, ProtoArena* arena) {
  auto* out = arena->New(natcd__v1__compaction_request__init);
  out->revision = in.revision;
  out->physical = in.physical;
  return out;
}

ResponseHeader FromProto(const Natcd__V1__ResponseHeader* in) {
  ResponseHeader out;
  if (in != nullptr) out.revision = in->revision;
  return out;
}

KeyValue FromProto(const Natcd__V1__KeyValue& in) {
  KeyValue out;
  out.key = Bytes(in.key);
  out.create_revision = in.create_revision;
  out.mod_revision = in.mod_revision;
  out.version = in.version;
  out.value = Bytes(in.value);
  out.lease = in.lease;
  return out;
}

Status FromProto(const Natcd__V1__RangeResponse& in, RangeResponse* out) {
  out->header = FromProto(in.header);
  out->kvs = KvsFromProto(in.n_kvs, in.kvs);
  out->more = in.more;
  out->count = in.count;
  return Status::OK();
}

Status FromProto(const Natcd__V1__PutResponse& in, PutResponse* out) {
  out->header = FromProto(in.header);
  out->has_prev_kv = in.prev_kv != nullptr;
  out->prev_kv = in.prev_kv != nullptr ? FromProto(*in.prev_kv) : KeyValue();
  return Status::OK();
}

Status FromProto(const Natcd__V1__DeleteRangeResponse& in, DeleteRangeResponse* out) {
  out->header = FromProto(in.header);
  out->deleted = in.deleted;
  out->prev_kvs = KvsFromProto(in.n_prev_kvs, in.prev_kvs);
  return Status::OK();
}

Status FromProto(const Natcd__V1__TxnResponse& in, TxnResponse* out, int depth) {
  if (depth > kTxnDepthMax) {
    return Status::InvalidArgument(
        "ErrInvalidArgument", "txn response nested deeper than " + std::to_string(kTxnDepthMax));
  }
  out->header = FromProto(in.header);
  out->succeeded = in.succeeded;
  out->responses.resize(in.n_responses);
  for (size_t i = 0; i < in.n_responses; ++i) {
    NATCD_RETURN_IF_ERROR(ResponseOpFromProto(*in.responses[i], &out->responses[i], depth));
  }
  return Status::OK();
}

Status FromProto(const Natcd__V1__CompactionResponse& in, CompactionResponse* out) {
  out->header = FromProto(in.header);
  return Status::OK();
}

Status FromProto(const Natcd__V1__LeaseGrantResponse& in, LeaseGrantResponse* out) {
  out->header = FromProto(in.header);
  out->id = in.id;
  out->ttl = in.ttl;
  return Status::OK();
}

Status FromProto(const Natcd__V1__LeaseRevokeResponse& in, LeaseRevokeResponse* out) {
  out->header = FromProto(in.header);
  return Status::OK();
}

Status FromProto(const Natcd__V1__LeaseKeepAliveResponse& in, LeaseKeepAliveResponse* out) {
  out->header = FromProto(in.header);
  out->id = in.id;
  out->ttl = in.ttl;
  return Status::OK();
}

Status FromProto(const Natcd__V1__LeaseTimeToLiveResponse& in, LeaseTimeToLiveResponse* out) {
  out->header = FromProto(in.header);
  out->id = in.id;
  out->ttl = in.ttl;
  out->granted_ttl = in.grantedttl;
  out->keys.clear();
  for (size_t i = 0; i < in.n_keys; ++i) out->keys.push_back(Bytes(in.keys[i]));
  return Status::OK();
}

Status FromProto(const Natcd__V1__LeaseLeasesResponse& in, LeaseLeasesResponse* out) {
  out->header = FromProto(in.header);
  out->ids.clear();
  for (size_t i = 0; i < in.n_leases; ++i) out->ids.push_back(in.leases[i]->id);
  return Status::OK();
}

}  // namespace natcd::nats
