// Maintenance: a member's status (through any member, or of one member by
// its ID) and moving leadership.
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
  snprintf(suffix, sizeof suffix, "fwd.%016" PRIx64 ".maint.status", member_id);
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
