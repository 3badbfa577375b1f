#include "adapters/nats/codec/convert.h"

#include <type_traits>

namespace natcd::nats {
namespace {

std::string Bytes(const ProtobufCBinaryData& data) {
  return data.len ? std::string(reinterpret_cast<const char*>(data.data), data.len) : std::string();
}

// Points at the string's bytes; the string must outlive the pack.
ProtobufCBinaryData View(const std::string& s) {
  return ProtobufCBinaryData{s.size(), reinterpret_cast<uint8_t*>(const_cast<char*>(s.data()))};
}

Status BadEnum(const char* what, int value) {
  return Status::InvalidArgument("ErrInvalidArgument",
                                 std::string("invalid ") + what + " " + std::to_string(value));
}

}  // namespace

Status FromProto(const Natcd__V1__RangeRequest& in, RangeRequest* out) {
  out->key = Bytes(in.key);
  out->range_end = Bytes(in.range_end);
  out->limit = in.limit;
  out->revision = in.revision;
  if (in.sort_order < 0 || in.sort_order > 2) {
    return Status::InvalidArgument("ErrInvalidSortOption", "etcdserver: invalid sort option");
  }
  if (in.sort_target < 0 || in.sort_target > 4) {
    return Status::InvalidArgument("ErrInvalidSortOption", "etcdserver: invalid sort option");
  }
  out->sort_order = static_cast<SortOrder>(in.sort_order);
  out->sort_target = static_cast<SortTarget>(in.sort_target);
  out->serializable = in.serializable;
  out->keys_only = in.keys_only;
  out->count_only = in.count_only;
  out->min_mod_revision = in.min_mod_revision;
  out->max_mod_revision = in.max_mod_revision;
  out->min_create_revision = in.min_create_revision;
  out->max_create_revision = in.max_create_revision;
  return Status::OK();
}

Status FromProto(const Natcd__V1__PutRequest& in, PutRequest* out) {
  out->key = Bytes(in.key);
  out->value = Bytes(in.value);
  out->lease = in.lease;
  out->prev_kv = in.prev_kv;
  out->ignore_value = in.ignore_value;
  out->ignore_lease = in.ignore_lease;
  return Status::OK();
}

Status FromProto(const Natcd__V1__DeleteRangeRequest& in, DeleteRangeRequest* out) {
  out->key = Bytes(in.key);
  out->range_end = Bytes(in.range_end);
  out->prev_kv = in.prev_kv;
  return Status::OK();
}

namespace {

Status CompareFromProto(const Natcd__V1__Compare& in, Compare* out) {
  if (in.result < 0 || in.result > 3) return BadEnum("compare result", in.result);
  if (in.target < 0 || in.target > 4) return BadEnum("compare target", in.target);
  out->result = static_cast<Compare::Result>(in.result);
  out->target = static_cast<Compare::Target>(in.target);
  out->key = Bytes(in.key);
  out->range_end = Bytes(in.range_end);
  switch (in.target_union_case) {
    case NATCD__V1__COMPARE__TARGET_UNION_VERSION:
      out->version = in.version;
      break;
    case NATCD__V1__COMPARE__TARGET_UNION_CREATE_REVISION:
      out->create_revision = in.create_revision;
      break;
    case NATCD__V1__COMPARE__TARGET_UNION_MOD_REVISION:
      out->mod_revision = in.mod_revision;
      break;
    case NATCD__V1__COMPARE__TARGET_UNION_VALUE:
      out->value = Bytes(in.value);
      break;
    case NATCD__V1__COMPARE__TARGET_UNION_LEASE:
      out->lease = in.lease;
      break;
    default:
      break;  // unset: compare against zero, as etcd does
  }
  return Status::OK();
}

Status OpFromProto(const Natcd__V1__RequestOp& in, RequestOp* out, int depth) {
  switch (in.request_case) {
    case NATCD__V1__REQUEST_OP__REQUEST_REQUEST_RANGE: {
      RangeRequest r;
      NATCD_RETURN_IF_ERROR(FromProto(*in.request_range, &r));
      out->op = std::move(r);
      return Status::OK();
    }
    case NATCD__V1__REQUEST_OP__REQUEST_REQUEST_PUT: {
      PutRequest r;
      NATCD_RETURN_IF_ERROR(FromProto(*in.request_put, &r));
      out->op = std::move(r);
      return Status::OK();
    }
    case NATCD__V1__REQUEST_OP__REQUEST_REQUEST_DELETE_RANGE: {
      DeleteRangeRequest r;
      NATCD_RETURN_IF_ERROR(FromProto(*in.request_delete_range, &r));
      out->op = std::move(r);
      return Status::OK();
    }
    case NATCD__V1__REQUEST_OP__REQUEST_REQUEST_TXN: {
      auto r = std::make_shared<TxnRequest>();
      NATCD_RETURN_IF_ERROR(FromProto(*in.request_txn, r.get(), depth + 1));
      out->op = std::move(r);
      return Status::OK();
    }
    default:
      return Status::InvalidArgument("ErrInvalidArgument", "txn operation with no request set");
  }
}

}  // namespace

Status FromProto(const Natcd__V1__TxnRequest& in, TxnRequest* out, int depth) {
  if (depth > kTxnDepthMax) {
    return Status::InvalidArgument("ErrInvalidArgument",
                                   "txn nested deeper than " + std::to_string(kTxnDepthMax));
  }
  out->compare.resize(in.n_compare);
  for (size_t i = 0; i < in.n_compare; ++i) {
    NATCD_RETURN_IF_ERROR(CompareFromProto(*in.compare[i], &out->compare[i]));
  }
  out->success.resize(in.n_success);
  for (size_t i = 0; i < in.n_success; ++i) {
    NATCD_RETURN_IF_ERROR(OpFromProto(*in.success[i], &out->success[i], depth));
  }
  out->failure.resize(in.n_failure);
  for (size_t i = 0; i < in.n_failure; ++i) {
    NATCD_RETURN_IF_ERROR(OpFromProto(*in.failure[i], &out->failure[i], depth));
  }
  return Status::OK();
}

Status FromProto(const Natcd__V1__CompactionRequest& in, CompactionRequest* out) {
  out->revision = in.revision;
  out->physical = in.physical;
  return Status::OK();
}

Status FromProto(const Natcd__V1__WatchCreateRequest& in, WatchOptions* out) {
  out->key = Bytes(in.key);
  out->range_end = Bytes(in.range_end);
  out->start_revision = in.start_revision;
  out->prev_kv = in.prev_kv;
  out->progress_notify = in.progress_notify;
  for (size_t i = 0; i < in.n_filters; ++i) {
    switch (in.filters[i]) {
      case NATCD__V1__WATCH_CREATE_REQUEST__FILTER_TYPE__NOPUT:
        out->no_put = true;
        break;
      case NATCD__V1__WATCH_CREATE_REQUEST__FILTER_TYPE__NODELETE:
        out->no_delete = true;
        break;
      default:
        return BadEnum("watch filter", in.filters[i]);
    }
  }
  return Status::OK();
}

Natcd__V1__ResponseHeader* ToProto(const ResponseHeader& in, const HeaderInfo& info,
                                   ProtoArena* arena) {
  auto* out = arena->New(natcd__v1__response_header__init);
  out->cluster_id = info.cluster_id;
  out->member_id = info.member_id;
  out->raft_term = info.raft_term;
  out->revision = in.revision;
  return out;
}

Natcd__V1__KeyValue* ToProto(const KeyValue& in, ProtoArena* arena) {
  auto* out = arena->New(natcd__v1__key_value__init);
  out->key = View(in.key);
  out->create_revision = in.create_revision;
  out->mod_revision = in.mod_revision;
  out->version = in.version;
  out->value = View(in.value);
  out->lease = in.lease;
  return out;
}

Natcd__V1__Event* ToProto(const Event& in, bool with_prev_kv, ProtoArena* arena) {
  auto* out = arena->New(natcd__v1__event__init);
  out->type = in.type == Event::Type::kPut ? NATCD__V1__EVENT__EVENT_TYPE__PUT
                                           : NATCD__V1__EVENT__EVENT_TYPE__DELETE;
  out->kv = ToProto(in.kv, arena);
  if (with_prev_kv && in.has_prev_kv) out->prev_kv = ToProto(in.prev_kv, arena);
  return out;
}

namespace {

Natcd__V1__KeyValue** KvArray(const std::vector<KeyValue>& kvs, ProtoArena* arena) {
  auto** out = arena->Array<Natcd__V1__KeyValue>(kvs.size());
  for (size_t i = 0; i < kvs.size(); ++i) out[i] = ToProto(kvs[i], arena);
  return out;
}

}  // namespace

Natcd__V1__RangeResponse* ToProto(const RangeResponse& in, const HeaderInfo& info,
                                  ProtoArena* arena) {
  auto* out = arena->New(natcd__v1__range_response__init);
  out->header = ToProto(in.header, info, arena);
  out->n_kvs = in.kvs.size();
  out->kvs = KvArray(in.kvs, arena);
  out->more = in.more;
  out->count = in.count;
  return out;
}

Natcd__V1__PutResponse* ToProto(const PutResponse& in, const HeaderInfo& info, ProtoArena* arena) {
  auto* out = arena->New(natcd__v1__put_response__init);
  out->header = ToProto(in.header, info, arena);
  if (in.has_prev_kv) out->prev_kv = ToProto(in.prev_kv, arena);
  return out;
}

Natcd__V1__DeleteRangeResponse* ToProto(const DeleteRangeResponse& in, const HeaderInfo& info,
                                        ProtoArena* arena) {
  auto* out = arena->New(natcd__v1__delete_range_response__init);
  out->header = ToProto(in.header, info, arena);
  out->deleted = in.deleted;
  out->n_prev_kvs = in.prev_kvs.size();
  out->prev_kvs = KvArray(in.prev_kvs, arena);
  return out;
}

Natcd__V1__TxnResponse* ToProto(const TxnResponse& in, const HeaderInfo& info, ProtoArena* arena) {
  auto* out = arena->New(natcd__v1__txn_response__init);
  out->header = ToProto(in.header, info, arena);
  out->succeeded = in.succeeded;
  out->n_responses = in.responses.size();
  out->responses = arena->Array<Natcd__V1__ResponseOp>(in.responses.size());
  for (size_t i = 0; i < in.responses.size(); ++i) {
    auto* op = arena->New(natcd__v1__response_op__init);
    std::visit(
        [&](const auto& r) {
          using T = std::decay_t<decltype(r)>;
          if constexpr (std::is_same_v<T, RangeResponse>) {
            op->response_case = NATCD__V1__RESPONSE_OP__RESPONSE_RESPONSE_RANGE;
            op->response_range = ToProto(r, info, arena);
          } else if constexpr (std::is_same_v<T, PutResponse>) {
            op->response_case = NATCD__V1__RESPONSE_OP__RESPONSE_RESPONSE_PUT;
            op->response_put = ToProto(r, info, arena);
          } else if constexpr (std::is_same_v<T, DeleteRangeResponse>) {
            op->response_case = NATCD__V1__RESPONSE_OP__RESPONSE_RESPONSE_DELETE_RANGE;
            op->response_delete_range = ToProto(r, info, arena);
          } else {
            op->response_case = NATCD__V1__RESPONSE_OP__RESPONSE_RESPONSE_TXN;
            op->response_txn = ToProto(*r, info, arena);
          }
        },
        in.responses[i].response);
    out->responses[i] = op;
  }
  return out;
}

Natcd__V1__CompactionResponse* ToProto(const CompactionResponse& in, const HeaderInfo& info,
                                       ProtoArena* arena) {
  auto* out = arena->New(natcd__v1__compaction_response__init);
  out->header = ToProto(in.header, info, arena);
  return out;
}

Natcd__V1__LeaseGrantResponse* ToProto(const LeaseGrantResponse& in, const HeaderInfo& info,
                                       ProtoArena* arena) {
  auto* out = arena->New(natcd__v1__lease_grant_response__init);
  out->header = ToProto(in.header, info, arena);
  out->id = in.id;
  out->ttl = in.ttl;
  return out;
}

Natcd__V1__LeaseRevokeResponse* ToProto(const LeaseRevokeResponse& in, const HeaderInfo& info,
                                        ProtoArena* arena) {
  auto* out = arena->New(natcd__v1__lease_revoke_response__init);
  out->header = ToProto(in.header, info, arena);
  return out;
}

Natcd__V1__LeaseKeepAliveResponse* ToProto(const LeaseKeepAliveResponse& in, const HeaderInfo& info,
                                           ProtoArena* arena) {
  auto* out = arena->New(natcd__v1__lease_keep_alive_response__init);
  out->header = ToProto(in.header, info, arena);
  out->id = in.id;
  out->ttl = in.ttl;
  return out;
}

Natcd__V1__LeaseTimeToLiveResponse* ToProto(const LeaseTimeToLiveResponse& in,
                                            const HeaderInfo& info, ProtoArena* arena) {
  auto* out = arena->New(natcd__v1__lease_time_to_live_response__init);
  out->header = ToProto(in.header, info, arena);
  out->id = in.id;
  out->ttl = in.ttl;
  out->grantedttl = in.granted_ttl;
  out->n_keys = in.keys.size();
  out->keys = arena->Values<ProtobufCBinaryData>(in.keys.size());
  for (size_t i = 0; i < in.keys.size(); ++i) out->keys[i] = View(in.keys[i]);
  return out;
}

Natcd__V1__LeaseLeasesResponse* ToProto(const LeaseLeasesResponse& in, const HeaderInfo& info,
                                        ProtoArena* arena) {
  auto* out = arena->New(natcd__v1__lease_leases_response__init);
  out->header = ToProto(in.header, info, arena);
  out->n_leases = in.ids.size();
  out->leases = arena->Array<Natcd__V1__LeaseStatus>(in.ids.size());
  for (size_t i = 0; i < in.ids.size(); ++i) {
    out->leases[i] = arena->New(natcd__v1__lease_status__init);
    out->leases[i]->id = in.ids[i];
  }
  return out;
}

const ProtobufCMessage* ToProto(const WriteResponse& in, const HeaderInfo& info,
                                ProtoArena* arena) {
  return std::visit(
      [&](const auto& r) -> const ProtobufCMessage* {
        using T = std::decay_t<decltype(r)>;
        if constexpr (std::is_same_v<T, LeaseExpireResponse> ||
                      std::is_same_v<T, LeaseCheckpointResponse>) {
          return nullptr;  // internal entries have no client
        } else {
          return &ToProto(r, info, arena)->base;
        }
      },
      in);
}

Natcd__V1__HashKVResponse* ToProto(const HashKVResponse& in, const HeaderInfo& info,
                                   ProtoArena* arena) {
  auto* out = arena->New(natcd__v1__hash_kvresponse__init);
  out->header = ToProto(in.header, info, arena);
  out->hash = in.hash;
  out->compact_revision = in.compact_revision;
  out->hash_revision = in.hash_revision;
  return out;
}

Natcd__V1__HashResponse* ToProto(const HashResponse& in, const HeaderInfo& info,
                                 ProtoArena* arena) {
  auto* out = arena->New(natcd__v1__hash_response__init);
  out->header = ToProto(in.header, info, arena);
  out->hash = in.hash;
  return out;
}

Natcd__V1__DefragmentResponse* ToProto(const DefragmentResponse& in, const HeaderInfo& info,
                                       ProtoArena* arena) {
  auto* out = arena->New(natcd__v1__defragment_response__init);
  out->header = ToProto(in.header, info, arena);
  return out;
}

}  // namespace natcd::nats
