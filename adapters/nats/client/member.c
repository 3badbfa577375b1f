// Cluster membership: list, add, remove, promote (etcd's Cluster service).
#include "internal.h"

#include <string.h>

// The arena copy of a NULL-or-C string (never NULL unless out of memory).
static const char* _string(_arena* a, const char* s) {
  return _arenaBytes(a, s != NULL ? s : "", s != NULL ? strlen(s) : 0);
}

static bool _strings(_arena* a, const char*** out, size_t* n_out, char** in, size_t n) {
  *n_out = 0;
  if (n == 0) return true;
  *out = _arenaAlloc(a, n * sizeof **out);
  if (*out == NULL) return false;
  for (size_t i = 0; i < n; ++i) {
    (*out)[i] = _string(a, in[i]);
    if ((*out)[i] == NULL) return false;
  }
  *n_out = n;
  return true;
}

static bool _memberFromProto(_arena* a, natcdMember* out, const Natcd__V1__Member* in) {
  out->id = in->id;
  out->name = _string(a, in->name);
  out->is_learner = in->islearner;
  return out->name != NULL &&
         _strings(a, &out->peer_urls, &out->n_peer_urls, in->peerurls, in->n_peerurls) &&
         _strings(a, &out->client_urls, &out->n_client_urls, in->clienturls, in->n_clienturls);
}

// Every member response: the header (1) and the members; add also names
// the new member.
typedef struct _memberReply {
  const Natcd__V1__ResponseHeader* header;
  Natcd__V1__Member* const* members;
  size_t n_members;
  const Natcd__V1__Member* added;
} _memberReply;

static void* _buildMembers(_arena* a, const void* in_) {
  const _memberReply* in = in_;
  natcdMemberResponse* out = _arenaAlloc(a, sizeof *out);
  if (out == NULL) return NULL;
  _headerFromProto(&out->header, in->header);
  if (in->n_members > 0) {
    out->members = _arenaAlloc(a, in->n_members * sizeof *out->members);
    if (out->members == NULL) return NULL;
    for (size_t i = 0; i < in->n_members; ++i) {
      if (!_memberFromProto(a, &out->members[i], in->members[i])) return NULL;
    }
    out->n_members = in->n_members;
  }
  if (in->added != NULL) {
    natcdMember* added = _arenaAlloc(a, sizeof *added);
    if (added == NULL || !_memberFromProto(a, added, in->added)) return NULL;
    out->added = added;
  }
  return out;
}

// A membership change is not retried: it is not idempotent (a second add
// is a duplicate), so one attempt gets the time all attempts would have.
static _requestOpts _changeOpts(const natcdClient* c) {
  _requestOpts o = {.write = false, .timeout_ms = c->timeout_ms * (c->retries + 1), .retries = 0};
  return o;
}

static natcdStatus _members(natcdMemberResponse** resp, natcdClient* client, const char* suffix,
                            const ProtobufCMessage* req, const ProtobufCMessageDescriptor* desc,
                            const _requestOpts* o) {
  if (resp != NULL) *resp = NULL;
  ProtobufCMessage* reply = NULL;
  natcdStatus s = _request(&reply, client, suffix, req, desc, o);
  if (s == natcdStatus_OK && resp != NULL) {
    _memberReply r = {0};
    if (desc == &natcd__v1__member_add_response__descriptor) {
      const Natcd__V1__MemberAddResponse* m = (const Natcd__V1__MemberAddResponse*)reply;
      r = (_memberReply){m->header, m->members, m->n_members, m->member};
    } else if (desc == &natcd__v1__member_list_response__descriptor) {
      const Natcd__V1__MemberListResponse* m = (const Natcd__V1__MemberListResponse*)reply;
      r = (_memberReply){m->header, m->members, m->n_members, NULL};
    } else if (desc == &natcd__v1__member_remove_response__descriptor) {
      const Natcd__V1__MemberRemoveResponse* m = (const Natcd__V1__MemberRemoveResponse*)reply;
      r = (_memberReply){m->header, m->members, m->n_members, NULL};
    } else if (desc == &natcd__v1__member_update_response__descriptor) {
      const Natcd__V1__MemberUpdateResponse* m = (const Natcd__V1__MemberUpdateResponse*)reply;
      r = (_memberReply){m->header, m->members, m->n_members, NULL};
    } else {
      const Natcd__V1__MemberPromoteResponse* m = (const Natcd__V1__MemberPromoteResponse*)reply;
      r = (_memberReply){m->header, m->members, m->n_members, NULL};
    }
    *resp = _standaloneBuild(sizeof(natcdMemberResponse), _buildMembers, &r);
    if (*resp == NULL) s = _setError(natcdStatus_NoMemory, "out of memory");
  }
  if (reply != NULL) protobuf_c_message_free_unpacked(reply, NULL);
  return s;
}

natcdStatus natcdMember_List(natcdMemberResponse** resp, natcdClient* client) {
  NATCD_CHECK_ARG(resp != NULL);
  NATCD_CHECK_ARG(client != NULL);
  Natcd__V1__MemberListRequest req;
  natcd__v1__member_list_request__init(&req);
  return _members(resp, client, "cluster.member.list", &req.base,
                  &natcd__v1__member_list_response__descriptor, NULL);
}

natcdStatus natcdMember_Add(natcdMemberResponse** resp, natcdClient* client, const char* name,
                            bool is_learner) {
  NATCD_CHECK_ARG(client != NULL);
  NATCD_CHECK_ARG(name != NULL && name[0] != '\0');
  Natcd__V1__MemberAddRequest req;
  natcd__v1__member_add_request__init(&req);
  req.name = (char*)name;
  req.islearner = is_learner;
  const _requestOpts o = _changeOpts(client);
  return _members(resp, client, "cluster.member.add", &req.base,
                  &natcd__v1__member_add_response__descriptor, &o);
}

natcdStatus natcdMember_Remove(natcdMemberResponse** resp, natcdClient* client, uint64_t id) {
  NATCD_CHECK_ARG(client != NULL);
  Natcd__V1__MemberRemoveRequest req;
  natcd__v1__member_remove_request__init(&req);
  req.id = id;
  const _requestOpts o = _changeOpts(client);
  return _members(resp, client, "cluster.member.remove", &req.base,
                  &natcd__v1__member_remove_response__descriptor, &o);
}

natcdStatus natcdMember_Promote(natcdMemberResponse** resp, natcdClient* client, uint64_t id) {
  NATCD_CHECK_ARG(client != NULL);
  Natcd__V1__MemberPromoteRequest req;
  natcd__v1__member_promote_request__init(&req);
  req.id = id;
  const _requestOpts o = _changeOpts(client);
  return _members(resp, client, "cluster.member.promote", &req.base,
                  &natcd__v1__member_promote_response__descriptor, &o);
}

natcdStatus natcdMember_Update(natcdMemberResponse** resp, natcdClient* client, uint64_t id,
                               const char** peer_urls, size_t n_peer_urls) {
  NATCD_CHECK_ARG(client != NULL);
  NATCD_CHECK_ARG(peer_urls != NULL && n_peer_urls > 0);
  for (size_t i = 0; i < n_peer_urls; i++) NATCD_CHECK_ARG(peer_urls[i] != NULL);
  Natcd__V1__MemberUpdateRequest req;
  natcd__v1__member_update_request__init(&req);
  req.id = id;
  req.peerurls = (char**)peer_urls;
  req.n_peerurls = n_peer_urls;
  const _requestOpts o = _changeOpts(client);
  return _members(resp, client, "cluster.member.update", &req.base,
                  &natcd__v1__member_update_response__descriptor, &o);
}

void natcdMemberResponse_Destroy(natcdMemberResponse* resp) { _standaloneDestroy(resp); }
