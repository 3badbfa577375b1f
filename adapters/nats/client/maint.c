// Maintenance: a member's status, hash and defragmentation (through any
// member, or of one member by its ID) and moving leadership.
#include "internal.h"

#include <inttypes.h>
#include <stdio.h>

static void* _buildStatus(_arena* a, const void* in_) {
  const Natcd__V1__StatusResponse* in = in_;
  natcdStatusResponse* out = _arenaAlloc(a, sizeof *out);
  if (out == NULL) return NULL;
  _headerFromProto(&out->header, in->header);
  const char* version = in->version != NULL ? in->version : "";
  out->version = _arenaBytes(a, version, strlen(version));
  if (out->version == NULL) return NULL;
  out->db_size = in->dbsize;
  out->db_size_in_use = in->dbsizeinuse;
  out->leader = in->leader;
  out->raft_index = in->raftindex;
  out->raft_term = in->raftterm;
  out->raft_applied_index = in->raftappliedindex;
  out->is_learner = in->islearner;
  if (in->n_errors > 0) {
    out->errors = _arenaAlloc(a, in->n_errors * sizeof *out->errors);
    if (out->errors == NULL) return NULL;
    for (size_t i = 0; i < in->n_errors; ++i) {
      out->errors[i] = _arenaBytes(a, in->errors[i], strlen(in->errors[i]));
      if (out->errors[i] == NULL) return NULL;
    }
    out->n_errors = in->n_errors;
  }
  return out;
}

static natcdStatus _status(natcdStatusResponse** resp, natcdClient* client, const char* suffix) {
  *resp = NULL;
  Natcd__V1__StatusRequest req;
  natcd__v1__status_request__init(&req);
  ProtobufCMessage* reply = NULL;
  natcdStatus s =
      _request(&reply, client, suffix, &req.base, &natcd__v1__status_response__descriptor, NULL);
  if (s == natcdStatus_OK) {
    *resp = _standaloneBuild(sizeof(natcdStatusResponse), _buildStatus, reply);
    if (*resp == NULL) s = _setError(natcdStatus_NoMemory, "out of memory");
  }
  if (reply != NULL) protobuf_c_message_free_unpacked(reply, NULL);
  return s;
}

natcdStatus natcdMaint_Status(natcdStatusResponse** resp, natcdClient* client) {
  NATCD_CHECK_ARG(resp != NULL);
  NATCD_CHECK_ARG(client != NULL);
  return _status(resp, client, "maint.status");
}

natcdStatus natcdMaint_MemberStatus(natcdStatusResponse** resp, natcdClient* client,
                                    uint64_t member_id) {
  NATCD_CHECK_ARG(resp != NULL);
  NATCD_CHECK_ARG(client != NULL);
  NATCD_CHECK_ARG(member_id != 0);
  // The subject every member subscribes for itself (docs/PROTOCOL.md, "Clusters").
  char suffix[64];
  snprintf(suffix, sizeof suffix, "to.%016" PRIx64 ".maint.status", member_id);
  return _status(resp, client, suffix);
}

void natcdStatusResponse_Destroy(natcdStatusResponse* resp) { _standaloneDestroy(resp); }

natcdStatus natcdMaint_MoveLeader(natcdHeader* header, natcdClient* client, uint64_t target_id) {
  NATCD_CHECK_ARG(client != NULL);
  Natcd__V1__MoveLeaderRequest req;
  natcd__v1__move_leader_request__init(&req);
  req.targetid = target_id;
  ProtobufCMessage* reply = NULL;
  natcdStatus s = _request(&reply, client, "maint.moveleader", &req.base,
                           &natcd__v1__move_leader_response__descriptor, NULL);
  if (s == natcdStatus_OK && header != NULL) {
    _headerFromProto(header, ((const Natcd__V1__MoveLeaderResponse*)reply)->header);
  }
  if (reply != NULL) protobuf_c_message_free_unpacked(reply, NULL);
  return s;
}

// P.to.<member ID>.<what>: the subject every member subscribes for itself
// (docs/PROTOCOL.md, "Clusters").
static void _memberSuffix(char* out, size_t n, uint64_t member_id, const char* what) {
  snprintf(out, n, "to.%016" PRIx64 ".%s", member_id, what);
}

static natcdStatus _hashKV(natcdHashKVResponse* resp, natcdClient* client, const char* suffix,
                           int64_t revision) {
  memset(resp, 0, sizeof *resp);
  Natcd__V1__HashKVRequest req;
  natcd__v1__hash_kvrequest__init(&req);
  req.revision = revision;
  ProtobufCMessage* reply = NULL;
  natcdStatus s =
      _request(&reply, client, suffix, &req.base, &natcd__v1__hash_kvresponse__descriptor, NULL);
  if (s == natcdStatus_OK) {
    const Natcd__V1__HashKVResponse* in = (const Natcd__V1__HashKVResponse*)reply;
    _headerFromProto(&resp->header, in->header);
    resp->hash = in->hash;
    resp->compact_revision = in->compact_revision;
    resp->hash_revision = in->hash_revision;
  }
  if (reply != NULL) protobuf_c_message_free_unpacked(reply, NULL);
  return s;
}

natcdStatus natcdMaint_HashKV(natcdHashKVResponse* resp, natcdClient* client, int64_t revision) {
  NATCD_CHECK_ARG(resp != NULL);
  NATCD_CHECK_ARG(client != NULL);
  NATCD_CHECK_ARG(revision >= 0);
  return _hashKV(resp, client, "maint.hashkv", revision);
}

natcdStatus natcdMaint_MemberHashKV(natcdHashKVResponse* resp, natcdClient* client,
                                    uint64_t member_id, int64_t revision) {
  NATCD_CHECK_ARG(resp != NULL);
  NATCD_CHECK_ARG(client != NULL);
  NATCD_CHECK_ARG(member_id != 0);
  NATCD_CHECK_ARG(revision >= 0);
  char suffix[64];
  _memberSuffix(suffix, sizeof suffix, member_id, "maint.hashkv");
  return _hashKV(resp, client, suffix, revision);
}

natcdStatus natcdMaint_Hash(uint32_t* hash, natcdHeader* header, natcdClient* client) {
  NATCD_CHECK_ARG(hash != NULL);
  NATCD_CHECK_ARG(client != NULL);
  Natcd__V1__HashRequest req;
  natcd__v1__hash_request__init(&req);
  ProtobufCMessage* reply = NULL;
  natcdStatus s = _request(&reply, client, "maint.hash", &req.base,
                           &natcd__v1__hash_response__descriptor, NULL);
  if (s == natcdStatus_OK) {
    const Natcd__V1__HashResponse* in = (const Natcd__V1__HashResponse*)reply;
    *hash = in->hash;
    if (header != NULL) _headerFromProto(header, in->header);
  }
  if (reply != NULL) protobuf_c_message_free_unpacked(reply, NULL);
  return s;
}

static natcdStatus _defragment(natcdHeader* header, natcdClient* client, const char* suffix) {
  Natcd__V1__DefragmentRequest req;
  natcd__v1__defragment_request__init(&req);
  ProtobufCMessage* reply = NULL;
  // A retry after a timeout defragments again: harmless, and what etcdctl
  // does when asked twice.
  natcdStatus s = _request(&reply, client, suffix, &req.base,
                           &natcd__v1__defragment_response__descriptor, NULL);
  if (s == natcdStatus_OK && header != NULL) {
    _headerFromProto(header, ((const Natcd__V1__DefragmentResponse*)reply)->header);
  }
  if (reply != NULL) protobuf_c_message_free_unpacked(reply, NULL);
  return s;
}

natcdStatus natcdMaint_Defragment(natcdHeader* header, natcdClient* client) {
  NATCD_CHECK_ARG(client != NULL);
  return _defragment(header, client, "maint.defrag");
}

natcdStatus natcdMaint_MemberDefragment(natcdHeader* header, natcdClient* client,
                                        uint64_t member_id) {
  NATCD_CHECK_ARG(client != NULL);
  NATCD_CHECK_ARG(member_id != 0);
  char suffix[64];
  _memberSuffix(suffix, sizeof suffix, member_id, "maint.defrag");
  return _defragment(header, client, suffix);
}
