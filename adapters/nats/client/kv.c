// KV: range, put, delete, compact; the arena and message conversions.
#include "internal.h"

#include <stdalign.h>
#include <stddef.h>
#include <string.h>

// --- arena -------------------------------------------------------------------

struct _arenaBlock {
  _arenaBlock* next;
  size_t used;
  size_t cap;
  alignas(max_align_t) unsigned char data[];
};

enum { kArenaBlockBytes = 4096 };

void* _arenaAlloc(_arena* a, size_t n) {
  const size_t align = alignof(max_align_t);
  n = (n + align - 1) / align * align;
  if (n == 0) n = align;
  _arenaBlock* b = a->head;
  if (b == NULL || b->cap - b->used < n) {
    size_t cap = n > kArenaBlockBytes ? n : kArenaBlockBytes;
    b = malloc(sizeof *b + cap);
    if (b == NULL) return NULL;
    b->cap = cap;
    b->used = 0;
    b->next = a->head;
    a->head = b;
  }
  void* p = b->data + b->used;
  b->used += n;
  memset(p, 0, n);
  return p;
}

char* _arenaBytes(_arena* a, const void* p, size_t n) {
  char* out = _arenaAlloc(a, n + 1);
  if (out != NULL && n > 0) memcpy(out, p, n);
  return out;
}

void _arenaFree(_arena* a) {
  _arenaBlock* b = a->head;
  while (b != NULL) {
    _arenaBlock* next = b->next;
    free(b);
    b = next;
  }
  a->head = NULL;
}

// --- conversions -----------------------------------------------------------

void _headerFromProto(natcdHeader* out, const Natcd__V1__ResponseHeader* in) {
  memset(out, 0, sizeof *out);
  if (in == NULL) return;
  out->cluster_id = in->cluster_id;
  out->member_id = in->member_id;
  out->revision = in->revision;
  out->raft_term = in->raft_term;
}

bool _kvFromProto(_arena* a, natcdKeyValue* out, const Natcd__V1__KeyValue* in) {
  memset(out, 0, sizeof *out);
  char* key = _arenaBytes(a, in->key.data, in->key.len);
  char* value = _arenaBytes(a, in->value.data, in->value.len);
  if (key == NULL || value == NULL) return false;
  out->key = key;
  out->key_len = in->key.len;
  out->value = value;
  out->value_len = in->value.len;
  out->create_revision = in->create_revision;
  out->mod_revision = in->mod_revision;
  out->version = in->version;
  out->lease = in->lease;
  return true;
}

natcdKeyValue* _kvDup(const natcdKeyValue* in) {
  natcdKeyValue* kv = malloc(sizeof *kv + in->key_len + 1 + in->value_len + 1);
  if (kv == NULL) return NULL;
  *kv = *in;
  char* key = (char*)(kv + 1);
  char* value = key + in->key_len + 1;
  if (in->key_len > 0) memcpy(key, in->key, in->key_len);
  key[in->key_len] = '\0';
  if (in->value_len > 0) memcpy(value, in->value, in->value_len);
  value[in->value_len] = '\0';
  kv->key = key;
  kv->value = value;
  return kv;
}

void natcdKeyValue_Destroy(natcdKeyValue* kv) { free(kv); }

size_t natcdKey_PrefixEnd(char* buf, const void* key, size_t key_len) {
  const unsigned char* k = key;
  for (size_t i = key_len; i > 0; --i) {
    if (k[i - 1] < 0xff) {
      memcpy(buf, k, i);
      buf[i - 1] = (char)(k[i - 1] + 1);
      return i;
    }
  }
  buf[0] = '\0';  // every byte is 0xff: every key from `key` on
  return 1;
}

bool _rangeEnd(_arena* a, ProtobufCBinaryData* r_end, const void* key, size_t key_len,
               const void* range_end, size_t range_end_len, bool prefix, bool from_key) {
  r_end->len = 0;
  r_end->data = NULL;
  if (from_key) {
    r_end->data = (uint8_t*)_arenaBytes(a, "", 1);
    if (r_end->data == NULL) return false;
    r_end->len = 1;
  } else if (prefix) {
    char* buf = _arenaAlloc(a, key_len > 0 ? key_len : 1);
    if (buf == NULL) return false;
    r_end->len = key_len > 0 ? natcdKey_PrefixEnd(buf, key, key_len) : 1;
    r_end->data = (uint8_t*)buf;  // an empty prefix: every key ("\0", zeroed)
  } else if (range_end != NULL && range_end_len > 0) {
    r_end->data = (uint8_t*)_arenaBytes(a, range_end, range_end_len);
    if (r_end->data == NULL) return false;
    r_end->len = range_end_len;
  }
  return true;
}

static bool _bytes(_arena* a, ProtobufCBinaryData* out, const void* p, size_t n) {
  out->len = n;
  out->data = (uint8_t*)_arenaBytes(a, p, n);
  return out->data != NULL;
}

bool _rangeRequestInit(_arena* a, Natcd__V1__RangeRequest* r, const void* key, size_t key_len,
                       const natcdRangeOptions* opts) {
  natcdRangeOptions none;
  if (opts == NULL) {
    memset(&none, 0, sizeof none);
    opts = &none;
  }
  natcd__v1__range_request__init(r);
  if (!_bytes(a, &r->key, key, key_len)) return false;
  if (!_rangeEnd(a, &r->range_end, key, key_len, opts->range_end, opts->range_end_len, opts->prefix,
                 opts->from_key)) {
    return false;
  }
  r->limit = opts->limit;
  r->revision = opts->revision;
  r->sort_order = (Natcd__V1__RangeRequest__SortOrder)opts->sort_order;
  r->sort_target = (Natcd__V1__RangeRequest__SortTarget)opts->sort_target;
  r->serializable = opts->serializable;
  r->keys_only = opts->keys_only;
  r->count_only = opts->count_only;
  r->min_mod_revision = opts->min_mod_revision;
  r->max_mod_revision = opts->max_mod_revision;
  r->min_create_revision = opts->min_create_revision;
  r->max_create_revision = opts->max_create_revision;
  return true;
}

bool _putRequestInit(_arena* a, Natcd__V1__PutRequest* r, const void* key, size_t key_len,
                     const void* value, size_t value_len, const natcdPutOptions* opts) {
  natcd__v1__put_request__init(r);
  if (!_bytes(a, &r->key, key, key_len)) return false;
  if (!_bytes(a, &r->value, value, value_len)) return false;
  if (opts != NULL) {
    r->lease = opts->lease;
    r->prev_kv = opts->prev_kv;
    r->ignore_value = opts->ignore_value;
    r->ignore_lease = opts->ignore_lease;
  }
  return true;
}

bool _deleteRequestInit(_arena* a, Natcd__V1__DeleteRangeRequest* r, const void* key,
                        size_t key_len, const natcdDeleteOptions* opts) {
  natcd__v1__delete_range_request__init(r);
  if (!_bytes(a, &r->key, key, key_len)) return false;
  if (opts != NULL) {
    if (!_rangeEnd(a, &r->range_end, key, key_len, opts->range_end, opts->range_end_len,
                   opts->prefix, opts->from_key)) {
      return false;
    }
    r->prev_kv = opts->prev_kv;
  }
  return true;
}

natcdRangeResponse* _rangeFromProto(_arena* a, const Natcd__V1__RangeResponse* in) {
  natcdRangeResponse* out = _arenaAlloc(a, sizeof *out);
  if (out == NULL) return NULL;
  _headerFromProto(&out->header, in->header);
  out->more = in->more;
  out->count = in->count;
  if (in->n_kvs > 0) {
    out->kvs = _arenaAlloc(a, in->n_kvs * sizeof *out->kvs);
    if (out->kvs == NULL) return NULL;
    for (size_t i = 0; i < in->n_kvs; ++i) {
      if (!_kvFromProto(a, &out->kvs[i], in->kvs[i])) return NULL;
    }
    out->n_kvs = in->n_kvs;
  }
  return out;
}

natcdPutResponse* _putFromProto(_arena* a, const Natcd__V1__PutResponse* in) {
  natcdPutResponse* out = _arenaAlloc(a, sizeof *out);
  if (out == NULL) return NULL;
  _headerFromProto(&out->header, in->header);
  if (in->prev_kv != NULL) {
    out->prev_kv = _arenaAlloc(a, sizeof *out->prev_kv);
    if (out->prev_kv == NULL || !_kvFromProto(a, out->prev_kv, in->prev_kv)) return NULL;
  }
  return out;
}

natcdDeleteResponse* _deleteFromProto(_arena* a, const Natcd__V1__DeleteRangeResponse* in) {
  natcdDeleteResponse* out = _arenaAlloc(a, sizeof *out);
  if (out == NULL) return NULL;
  _headerFromProto(&out->header, in->header);
  out->deleted = in->deleted;
  if (in->n_prev_kvs > 0) {
    out->prev_kvs = _arenaAlloc(a, in->n_prev_kvs * sizeof *out->prev_kvs);
    if (out->prev_kvs == NULL) return NULL;
    for (size_t i = 0; i < in->n_prev_kvs; ++i) {
      if (!_kvFromProto(a, &out->prev_kvs[i], in->prev_kvs[i])) return NULL;
    }
    out->n_prev_kvs = in->n_prev_kvs;
  }
  return out;
}

// Standalone responses: the public struct is allocated in its own arena,
// and the arena handle is stored in a hidden prefix just before it.
typedef struct _standalone {
  _arena arena;
  alignas(max_align_t) unsigned char pub[];
} _standalone;

static _standalone* _standaloneOf(void* pub) {
  return (_standalone*)((unsigned char*)pub - offsetof(_standalone, pub));
}

// Builds a standalone copy of a response with `build` and returns the public
// pointer (NULL when out of memory).
void* _standaloneBuild(size_t pub_size, void* (*build)(_arena*, const void*), const void* in) {
  _standalone* s = calloc(1, sizeof *s + pub_size);
  if (s == NULL) return NULL;
  void* built = build(&s->arena, in);
  if (built == NULL) {
    _arenaFree(&s->arena);
    free(s);
    return NULL;
  }
  memcpy(s->pub, built, pub_size);  // the struct itself moves out of the arena
  return s->pub;
}

void _standaloneDestroy(void* pub) {
  if (pub == NULL) return;
  _standalone* s = _standaloneOf(pub);
  _arenaFree(&s->arena);
  free(s);
}

static void* _buildRange(_arena* a, const void* in) { return _rangeFromProto(a, in); }
static void* _buildPut(_arena* a, const void* in) { return _putFromProto(a, in); }
static void* _buildDelete(_arena* a, const void* in) { return _deleteFromProto(a, in); }

void natcdRangeResponse_Destroy(natcdRangeResponse* resp) { _standaloneDestroy(resp); }
void natcdPutResponse_Destroy(natcdPutResponse* resp) { _standaloneDestroy(resp); }
void natcdDeleteResponse_Destroy(natcdDeleteResponse* resp) { _standaloneDestroy(resp); }

// --- calls -------------------------------------------------------------------

natcdStatus natcdKV_Get(natcdRangeResponse** resp, natcdClient* client, const void* key,
                        size_t key_len, const natcdRangeOptions* opts) {
  NATCD_CHECK_ARG(resp != NULL);
  NATCD_CHECK_ARG(client != NULL);
  NATCD_CHECK_ARG(key != NULL || key_len == 0);
  *resp = NULL;
  _arena a = {0};
  Natcd__V1__RangeRequest req;
  natcdStatus s = natcdStatus_OK;
  if (!_rangeRequestInit(&a, &req, key, key_len, opts)) {
    s = _setError(natcdStatus_NoMemory, "out of memory");
  }
  ProtobufCMessage* reply = NULL;
  if (s == natcdStatus_OK) {
    const _requestOpts read = {.to_leader = !req.serializable, .retries = -1};
    s = _request(&reply, client, "kv.range", &req.base, &natcd__v1__range_response__descriptor,
                 &read);
  }
  if (s == natcdStatus_OK) {
    *resp = _standaloneBuild(sizeof(natcdRangeResponse), _buildRange, reply);
    if (*resp == NULL) s = _setError(natcdStatus_NoMemory, "out of memory");
  }
  if (reply != NULL) protobuf_c_message_free_unpacked(reply, NULL);
  _arenaFree(&a);
  return s;
}

natcdStatus natcdKV_Put(natcdPutResponse** resp, natcdClient* client, const void* key,
                        size_t key_len, const void* value, size_t value_len,
                        const natcdPutOptions* opts) {
  NATCD_CHECK_ARG(client != NULL);
  NATCD_CHECK_ARG(key != NULL || key_len == 0);
  NATCD_CHECK_ARG(value != NULL || value_len == 0);
  if (resp != NULL) *resp = NULL;
  _arena a = {0};
  Natcd__V1__PutRequest req;
  natcdStatus s = natcdStatus_OK;
  if (!_putRequestInit(&a, &req, key, key_len, value, value_len, opts)) {
    s = _setError(natcdStatus_NoMemory, "out of memory");
  }
  ProtobufCMessage* reply = NULL;
  const _requestOpts write = {.write = true, .retries = -1};
  if (s == natcdStatus_OK) {
    s = _request(&reply, client, "kv.put", &req.base, &natcd__v1__put_response__descriptor, &write);
  }
  if (s == natcdStatus_OK && resp != NULL) {
    *resp = _standaloneBuild(sizeof(natcdPutResponse), _buildPut, reply);
    if (*resp == NULL) s = _setError(natcdStatus_NoMemory, "out of memory");
  }
  if (reply != NULL) protobuf_c_message_free_unpacked(reply, NULL);
  _arenaFree(&a);
  return s;
}

natcdStatus natcdKV_Delete(natcdDeleteResponse** resp, natcdClient* client, const void* key,
                           size_t key_len, const natcdDeleteOptions* opts) {
  NATCD_CHECK_ARG(client != NULL);
  NATCD_CHECK_ARG(key != NULL || key_len == 0);
  if (resp != NULL) *resp = NULL;
  _arena a = {0};
  Natcd__V1__DeleteRangeRequest req;
  natcdStatus s = natcdStatus_OK;
  if (!_deleteRequestInit(&a, &req, key, key_len, opts)) {
    s = _setError(natcdStatus_NoMemory, "out of memory");
  }
  ProtobufCMessage* reply = NULL;
  const _requestOpts write = {.write = true, .retries = -1};
  if (s == natcdStatus_OK) {
    s = _request(&reply, client, "kv.delete", &req.base,
                 &natcd__v1__delete_range_response__descriptor, &write);
  }
  if (s == natcdStatus_OK && resp != NULL) {
    *resp = _standaloneBuild(sizeof(natcdDeleteResponse), _buildDelete, reply);
    if (*resp == NULL) s = _setError(natcdStatus_NoMemory, "out of memory");
  }
  if (reply != NULL) protobuf_c_message_free_unpacked(reply, NULL);
  _arenaFree(&a);
  return s;
}

natcdStatus natcdKV_Compact(natcdHeader* header, natcdClient* client, int64_t revision,
                            bool physical) {
  NATCD_CHECK_ARG(client != NULL);
  Natcd__V1__CompactionRequest req;
  natcd__v1__compaction_request__init(&req);
  req.revision = revision;
  req.physical = physical;
  ProtobufCMessage* reply = NULL;
  const _requestOpts write = {.write = true, .retries = -1};
  natcdStatus s = _request(&reply, client, "kv.compact", &req.base,
                           &natcd__v1__compaction_response__descriptor, &write);
  if (s == natcdStatus_OK && header != NULL) {
    _headerFromProto(header, ((Natcd__V1__CompactionResponse*)reply)->header);
  }
  if (reply != NULL) protobuf_c_message_free_unpacked(reply, NULL);
  return s;
}
