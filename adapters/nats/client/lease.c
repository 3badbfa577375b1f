// Leases: grant, revoke, one keepalive, time-to-live, list.
#include "internal.h"

#include <string.h>

natcdStatus natcdLease_Grant(int64_t* id, int64_t* granted_ttl_seconds, natcdClient* client,
                             int64_t ttl_seconds, int64_t requested_id) {
  NATCD_CHECK_ARG(id != NULL);
  NATCD_CHECK_ARG(client != NULL);
  NATCD_CHECK_ARG(requested_id >= 0);
  Natcd__V1__LeaseGrantRequest req;
  natcd__v1__lease_grant_request__init(&req);
  req.ttl = ttl_seconds;
  req.id = requested_id;
  ProtobufCMessage* reply = NULL;
  const _requestOpts write = {.write = true, .retries = -1};
  natcdStatus s = _request(&reply, client, "lease.grant", &req.base,
                           &natcd__v1__lease_grant_response__descriptor, &write);
  if (s == natcdStatus_OK) {
    const Natcd__V1__LeaseGrantResponse* r = (const Natcd__V1__LeaseGrantResponse*)reply;
    if (r->error != NULL && r->error[0] != '\0') {
      s = _setError(natcdStatus_ServiceError, "%s", r->error);
    } else {
      *id = r->id;
      if (granted_ttl_seconds != NULL) *granted_ttl_seconds = r->ttl;
    }
  }
  if (reply != NULL) protobuf_c_message_free_unpacked(reply, NULL);
  return s;
}

natcdStatus natcdLease_Revoke(natcdClient* client, int64_t id) {
  NATCD_CHECK_ARG(client != NULL);
  Natcd__V1__LeaseRevokeRequest req;
  natcd__v1__lease_revoke_request__init(&req);
  req.id = id;
  ProtobufCMessage* reply = NULL;
  const _requestOpts write = {.write = true, .retries = -1};
  natcdStatus s = _request(&reply, client, "lease.revoke", &req.base,
                           &natcd__v1__lease_revoke_response__descriptor, &write);
  if (reply != NULL) protobuf_c_message_free_unpacked(reply, NULL);
  return s;
}

natcdStatus natcdLease_KeepAliveOnce(int64_t* ttl_seconds, natcdClient* client, int64_t id) {
  NATCD_CHECK_ARG(ttl_seconds != NULL);
  NATCD_CHECK_ARG(client != NULL);
  Natcd__V1__LeaseKeepAliveRequest req;
  natcd__v1__lease_keep_alive_request__init(&req);
  req.id = id;
  ProtobufCMessage* reply = NULL;
  natcdStatus s = _request(&reply, client, "lease.keepalive", &req.base,
                           &natcd__v1__lease_keep_alive_response__descriptor, NULL);
  if (s == natcdStatus_OK) {
    int64_t ttl = ((const Natcd__V1__LeaseKeepAliveResponse*)reply)->ttl;
    if (ttl <= 0) {
      s = _setError(natcdStatus_NotFound,
                    "ErrLeaseNotFound: lease %llx: keepalive answered TTL %lld",
                    (unsigned long long)id, (long long)ttl);
    } else {
      *ttl_seconds = ttl;
    }
  }
  if (reply != NULL) protobuf_c_message_free_unpacked(reply, NULL);
  return s;
}

static void* _buildTimeToLive(_arena* a, const void* in_) {
  const Natcd__V1__LeaseTimeToLiveResponse* in = in_;
  natcdLeaseTimeToLive* out = _arenaAlloc(a, sizeof *out);
  if (out == NULL) return NULL;
  _headerFromProto(&out->header, in->header);
  out->id = in->id;
  out->ttl_seconds = in->ttl;
  out->granted_ttl_seconds = in->grantedttl;
  if (in->n_keys > 0) {
    out->keys = _arenaAlloc(a, in->n_keys * sizeof *out->keys);
    out->key_lens = _arenaAlloc(a, in->n_keys * sizeof *out->key_lens);
    if (out->keys == NULL || out->key_lens == NULL) return NULL;
    for (size_t i = 0; i < in->n_keys; ++i) {
      out->keys[i] = _arenaBytes(a, in->keys[i].data, in->keys[i].len);
      if (out->keys[i] == NULL) return NULL;
      out->key_lens[i] = in->keys[i].len;
    }
    out->n_keys = in->n_keys;
  }
  return out;
}

natcdStatus natcdLease_TimeToLive(natcdLeaseTimeToLive** out, natcdClient* client, int64_t id,
                                  bool keys) {
  NATCD_CHECK_ARG(out != NULL);
  NATCD_CHECK_ARG(client != NULL);
  *out = NULL;
  Natcd__V1__LeaseTimeToLiveRequest req;
  natcd__v1__lease_time_to_live_request__init(&req);
  req.id = id;
  req.keys = keys;
  ProtobufCMessage* reply = NULL;
  natcdStatus s = _request(&reply, client, "lease.timetolive", &req.base,
                           &natcd__v1__lease_time_to_live_response__descriptor, NULL);
  if (s == natcdStatus_OK) {
    *out = _standaloneBuild(sizeof(natcdLeaseTimeToLive), _buildTimeToLive, reply);
    if (*out == NULL) s = _setError(natcdStatus_NoMemory, "out of memory");
  }
  if (reply != NULL) protobuf_c_message_free_unpacked(reply, NULL);
  return s;
}

void natcdLeaseTimeToLive_Destroy(natcdLeaseTimeToLive* ttl) { _standaloneDestroy(ttl); }

natcdStatus natcdLease_Leases(int64_t** ids, size_t* n_ids, natcdClient* client) {
  NATCD_CHECK_ARG(ids != NULL);
  NATCD_CHECK_ARG(n_ids != NULL);
  NATCD_CHECK_ARG(client != NULL);
  *ids = NULL;
  *n_ids = 0;
  Natcd__V1__LeaseLeasesRequest req;
  natcd__v1__lease_leases_request__init(&req);
  ProtobufCMessage* reply = NULL;
  natcdStatus s = _request(&reply, client, "lease.leases", &req.base,
                           &natcd__v1__lease_leases_response__descriptor, NULL);
  if (s == natcdStatus_OK) {
    const Natcd__V1__LeaseLeasesResponse* r = (const Natcd__V1__LeaseLeasesResponse*)reply;
    if (r->n_leases > 0) {
      *ids = malloc(r->n_leases * sizeof **ids);
      if (*ids == NULL) {
        s = _setError(natcdStatus_NoMemory, "out of memory");
      } else {
        for (size_t i = 0; i < r->n_leases; ++i) (*ids)[i] = r->leases[i]->id;
        *n_ids = r->n_leases;
      }
    }
  }
  if (reply != NULL) protobuf_c_message_free_unpacked(reply, NULL);
  return s;
}
