#include "adapters/reference_member_codec.h"

#include "adapters/nats/codec/convert.h"
#include "adapters/nats/codec/wire.h"
#include "adapters/nats/natcd.pb-c.h"
#include "core/server/member.pb-c.h"

namespace natcd::nats {
namespace {

std::string Pack(const ProtobufCMessage* message) {
  std::string out(protobuf_c_message_get_packed_size(message), '\0');
  protobuf_c_message_pack(message, reinterpret_cast<uint8_t*>(out.data()));
  return out;
}

ProtobufCBinaryData Bytes(const std::string& s) {
  return ProtobufCBinaryData{s.size(), reinterpret_cast<uint8_t*>(const_cast<char*>(s.data()))};
}

std::string FromBytes(const ProtobufCBinaryData& b) {
  return b.len ? std::string(reinterpret_cast<const char*>(b.data), b.len) : std::string();
}

Status Invalid(const std::string& what) {
  return Status::InvalidArgument("ErrInvalidArgument", what);
}

// The request of a write the leader proposes itself, or of a client write
// whose proto was not kept.
Status EncodeRequest(const WriteRequest& request, Natcd__V1__LogCommand__Kind* kind,
                     std::string* out) {
  if (auto* r = std::get_if<CompactionRequest>(&request)) {
    Natcd__V1__CompactionRequest m;
    natcd__v1__compaction_request__init(&m);
    m.revision = r->revision;
    m.physical = r->physical;
    *kind = NATCD__V1__LOG_COMMAND__KIND__COMPACTION;
    *out = Pack(&m.base);
  } else if (auto* r = std::get_if<LeaseGrantRequest>(&request)) {
    Natcd__V1__LeaseGrantRequest m;
    natcd__v1__lease_grant_request__init(&m);
    m.ttl = r->ttl;
    m.id = r->id;
    *kind = NATCD__V1__LOG_COMMAND__KIND__LEASE_GRANT;
    *out = Pack(&m.base);
  } else if (auto* r = std::get_if<LeaseRevokeRequest>(&request)) {
    Natcd__V1__LeaseRevokeRequest m;
    natcd__v1__lease_revoke_request__init(&m);
    m.id = r->id;
    *kind = NATCD__V1__LOG_COMMAND__KIND__LEASE_REVOKE;
    *out = Pack(&m.base);
  } else if (auto* r = std::get_if<LeaseExpireRequest>(&request)) {
    Natcd__V1__LeaseExpireCommand m;
    natcd__v1__lease_expire_command__init(&m);
    m.n_ids = r->ids.size();
    m.ids = const_cast<int64_t*>(r->ids.data());
    *kind = NATCD__V1__LOG_COMMAND__KIND__LEASE_EXPIRE;
    *out = Pack(&m.base);
  } else if (auto* r = std::get_if<LeaseCheckpointRequest>(&request)) {
    std::vector<Natcd__V1__LeaseCheckpoint> items(r->checkpoints.size());
    std::vector<Natcd__V1__LeaseCheckpoint*> ptrs(items.size());
    for (size_t i = 0; i < items.size(); i++) {
      natcd__v1__lease_checkpoint__init(&items[i]);
      items[i].id = r->checkpoints[i].id;
      items[i].remaining_ms = r->checkpoints[i].remaining_ms;
      ptrs[i] = &items[i];
    }
    Natcd__V1__LeaseCheckpointCommand m;
    natcd__v1__lease_checkpoint_command__init(&m);
    m.n_checkpoints = ptrs.size();
    m.checkpoints = ptrs.data();
    *kind = NATCD__V1__LOG_COMMAND__KIND__LEASE_CHECKPOINT;
    *out = Pack(&m.base);
  } else {
    return Status::Internal("a put, delete or txn must be logged with its request proto");
  }
  return Status::OK();
}

Natcd__V1__LogCommand__Kind KindOf(const WriteRequest& request) {
  switch (request.index()) {
    case 0:
      return NATCD__V1__LOG_COMMAND__KIND__PUT;
    case 1:
      return NATCD__V1__LOG_COMMAND__KIND__DELETE_RANGE;
    case 2:
      return NATCD__V1__LOG_COMMAND__KIND__TXN;
    case 3:
      return NATCD__V1__LOG_COMMAND__KIND__COMPACTION;
    case 4:
      return NATCD__V1__LOG_COMMAND__KIND__LEASE_GRANT;
    case 5:
      return NATCD__V1__LOG_COMMAND__KIND__LEASE_REVOKE;
    case 6:
      return NATCD__V1__LOG_COMMAND__KIND__LEASE_EXPIRE;
    default:
      return NATCD__V1__LOG_COMMAND__KIND__LEASE_CHECKPOINT;
  }
}
static_assert(std::variant_size_v<WriteRequest> == 8, "KindOf lists every write");

}  // namespace

std::string EncodeRaftMessage(const raft::Message& in) {
  Natcd__V1__RaftMessage m;
  natcd__v1__raft_message__init(&m);
  m.type = static_cast<uint32_t>(in.type);
  m.to = in.to;
  m.from = in.from;
  m.term = in.term;
  m.log_term = in.log_term;
  m.index = in.index;
  m.commit = in.commit;
  m.reject = in.reject;
  m.reject_hint = in.reject_hint;
  m.context = Bytes(in.context);
  std::vector<Natcd__V1__RaftEntry> entries(in.entries.size());
  std::vector<Natcd__V1__RaftEntry*> ptrs(entries.size());
  for (size_t i = 0; i < entries.size(); i++) {
    natcd__v1__raft_entry__init(&entries[i]);
    entries[i].term = in.entries[i].term;
    entries[i].index = in.entries[i].index;
    entries[i].type = static_cast<uint32_t>(in.entries[i].type);
    entries[i].data = Bytes(in.entries[i].data);
    ptrs[i] = &entries[i];
  }
  m.n_entries = ptrs.size();
  m.entries = ptrs.data();
  Natcd__V1__RaftSnapshotMeta snapshot;
  Natcd__V1__RaftConfState conf;
  if (in.type == raft::MessageType::kSnap) {
    natcd__v1__raft_snapshot_meta__init(&snapshot);
    natcd__v1__raft_conf_state__init(&conf);
    snapshot.index = in.snapshot.meta.index;
    snapshot.term = in.snapshot.meta.term;
    conf.n_voters = in.snapshot.meta.conf_state.voters.size();
    conf.voters = const_cast<uint64_t*>(in.snapshot.meta.conf_state.voters.data());
    conf.n_learners = in.snapshot.meta.conf_state.learners.size();
    conf.learners = const_cast<uint64_t*>(in.snapshot.meta.conf_state.learners.data());
    snapshot.conf_state = &conf;
    m.snapshot = &snapshot;
  }
  return Pack(&m.base);
}

Status DecodeRaftMessage(std::string_view bytes, raft::Message* out) {
  UniqueMessage message;
  NATCD_RETURN_IF_ERROR(
      DecodeMessage(&natcd__v1__raft_message__descriptor, bytes, false, &message));
  auto* m = reinterpret_cast<const Natcd__V1__RaftMessage*>(message.get());
  if (m->type > static_cast<uint32_t>(raft::MessageType::kPreVoteResp)) {
    return Invalid("unknown raft message type " + std::to_string(m->type));
  }
  out->type = static_cast<raft::MessageType>(m->type);
  out->to = m->to;
  out->from = m->from;
  out->term = m->term;
  out->log_term = m->log_term;
  out->index = m->index;
  out->commit = m->commit;
  out->reject = m->reject;
  out->reject_hint = m->reject_hint;
  out->context = FromBytes(m->context);
  out->entries.clear();
  for (size_t i = 0; i < m->n_entries; i++) {
    const Natcd__V1__RaftEntry* e = m->entries[i];
    if (e->type > static_cast<uint32_t>(raft::EntryType::kConfChange)) {
      return Invalid("unknown raft entry type " + std::to_string(e->type));
    }
    out->entries.push_back(
        raft::Entry{e->term, e->index, static_cast<raft::EntryType>(e->type), FromBytes(e->data)});
  }
  out->snapshot = raft::Snapshot{};
  if (m->snapshot != nullptr) {
    out->snapshot.meta.index = m->snapshot->index;
    out->snapshot.meta.term = m->snapshot->term;
    if (const Natcd__V1__RaftConfState* cs = m->snapshot->conf_state) {
      out->snapshot.meta.conf_state.voters.assign(cs->voters, cs->voters + cs->n_voters);
      out->snapshot.meta.conf_state.learners.assign(cs->learners, cs->learners + cs->n_learners);
    }
  }
  return Status::OK();
}

Result<std::string> EncodeLogCommand(const LogCommand& command, const std::string* request_proto) {
  Natcd__V1__LogCommand m;
  natcd__v1__log_command__init(&m);
  std::string request;
  if (command.events_published) {
    m.kind = NATCD__V1__LOG_COMMAND__KIND__EVENTS_PUBLISHED;
    m.events_published = *command.events_published;
  } else if (request_proto != nullptr) {
    m.kind = KindOf(command.request);
    request = *request_proto;
  } else {
    NATCD_RETURN_IF_ERROR(EncodeRequest(command.request, &m.kind, &request));
  }
  m.request = Bytes(request);
  m.origin_member = command.origin_member;
  m.origin_seq = command.origin_seq;
  m.request_id = const_cast<char*>(command.request_id.c_str());
  m.request_expires_ms = command.request_expires_ms;
  return Pack(&m.base);
}

Status DecodeLogCommand(std::string_view bytes, LogCommand* out) {
  UniqueMessage message;
  NATCD_RETURN_IF_ERROR(DecodeMessage(&natcd__v1__log_command__descriptor, bytes, false, &message));
  auto* m = reinterpret_cast<const Natcd__V1__LogCommand*>(message.get());
  out->origin_member = m->origin_member;
  out->origin_seq = m->origin_seq;
  out->request_id = m->request_id ? m->request_id : "";
  out->request_expires_ms = m->request_expires_ms;
  out->events_published.reset();
  if (m->kind == NATCD__V1__LOG_COMMAND__KIND__EVENTS_PUBLISHED) {
    if (m->events_published < 0) return Invalid("negative events_published");
    out->events_published = m->events_published;
    return Status::OK();
  }
  std::string_view request(reinterpret_cast<const char*>(m->request.data), m->request.len);
  UniqueMessage body;
  auto decode = [&](const ProtobufCMessageDescriptor* d) {
    return DecodeMessage(d, request, false, &body);
  };
  switch (m->kind) {
    case NATCD__V1__LOG_COMMAND__KIND__PUT: {
      NATCD_RETURN_IF_ERROR(decode(&natcd__v1__put_request__descriptor));
      PutRequest r;
      NATCD_RETURN_IF_ERROR(FromProto(*reinterpret_cast<Natcd__V1__PutRequest*>(body.get()), &r));
      out->request = std::move(r);
      return Status::OK();
    }
    case NATCD__V1__LOG_COMMAND__KIND__DELETE_RANGE: {
      NATCD_RETURN_IF_ERROR(decode(&natcd__v1__delete_range_request__descriptor));
      DeleteRangeRequest r;
      NATCD_RETURN_IF_ERROR(
          FromProto(*reinterpret_cast<Natcd__V1__DeleteRangeRequest*>(body.get()), &r));
      out->request = std::move(r);
      return Status::OK();
    }
    case NATCD__V1__LOG_COMMAND__KIND__TXN: {
      NATCD_RETURN_IF_ERROR(decode(&natcd__v1__txn_request__descriptor));
      TxnRequest r;
      NATCD_RETURN_IF_ERROR(FromProto(*reinterpret_cast<Natcd__V1__TxnRequest*>(body.get()), &r));
      out->request = std::move(r);
      return Status::OK();
    }
    case NATCD__V1__LOG_COMMAND__KIND__COMPACTION: {
      NATCD_RETURN_IF_ERROR(decode(&natcd__v1__compaction_request__descriptor));
      CompactionRequest r;
      NATCD_RETURN_IF_ERROR(
          FromProto(*reinterpret_cast<Natcd__V1__CompactionRequest*>(body.get()), &r));
      out->request = r;
      return Status::OK();
    }
    case NATCD__V1__LOG_COMMAND__KIND__LEASE_GRANT: {
      NATCD_RETURN_IF_ERROR(decode(&natcd__v1__lease_grant_request__descriptor));
      auto* in = reinterpret_cast<Natcd__V1__LeaseGrantRequest*>(body.get());
      out->request = LeaseGrantRequest{in->ttl, in->id};
      return Status::OK();
    }
    case NATCD__V1__LOG_COMMAND__KIND__LEASE_REVOKE: {
      NATCD_RETURN_IF_ERROR(decode(&natcd__v1__lease_revoke_request__descriptor));
      out->request =
          LeaseRevokeRequest{reinterpret_cast<Natcd__V1__LeaseRevokeRequest*>(body.get())->id};
      return Status::OK();
    }
    case NATCD__V1__LOG_COMMAND__KIND__LEASE_EXPIRE: {
      NATCD_RETURN_IF_ERROR(decode(&natcd__v1__lease_expire_command__descriptor));
      auto* in = reinterpret_cast<Natcd__V1__LeaseExpireCommand*>(body.get());
      out->request = LeaseExpireRequest{std::vector<int64_t>(in->ids, in->ids + in->n_ids)};
      return Status::OK();
    }
    case NATCD__V1__LOG_COMMAND__KIND__LEASE_CHECKPOINT: {
      NATCD_RETURN_IF_ERROR(decode(&natcd__v1__lease_checkpoint_command__descriptor));
      auto* in = reinterpret_cast<Natcd__V1__LeaseCheckpointCommand*>(body.get());
      LeaseCheckpointRequest r;
      for (size_t i = 0; i < in->n_checkpoints; i++) {
        r.checkpoints.push_back({in->checkpoints[i]->id, in->checkpoints[i]->remaining_ms});
      }
      out->request = std::move(r);
      return Status::OK();
    }
    default:
      return Invalid("unknown log command kind " + std::to_string(m->kind));
  }
}

}  // namespace natcd::nats
