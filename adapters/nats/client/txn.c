// Txn builder: compares, Then/Else operations, nested txns, commit.
#include "internal.h"

#include <string.h>

struct natcdTxn {
  _arena arena;               // every compare, op and byte string of the request
  Natcd__V1__TxnRequest req;  // its three arrays are malloc'ed (they grow)
  size_t cap_compare;
  size_t cap_success;
  size_t cap_failure;
  // Nested txns, unpacked copies owned here.
  ProtobufCMessage** nested;
  size_t n_nested;
  size_t cap_nested;
};

natcdStatus natcdTxn_Create(natcdTxn** out) {
  NATCD_CHECK_ARG(out != NULL);
  natcdTxn* txn = calloc(1, sizeof *txn);
  if (txn == NULL) return _setError(natcdStatus_NoMemory, "out of memory");
  natcd__v1__txn_request__init(&txn->req);
  *out = txn;
  return natcdStatus_OK;
}

void natcdTxn_Destroy(natcdTxn* txn) {
  if (txn == NULL) return;
  for (size_t i = 0; i < txn->n_nested; ++i) protobuf_c_message_free_unpacked(txn->nested[i], NULL);
  free(txn->nested);
  free(txn->req.compare);
  free(txn->req.success);
  free(txn->req.failure);
  _arenaFree(&txn->arena);
  free(txn);
}

// Appends `item` to a growing array of pointers.
static bool _push(void*** items, size_t* n, size_t* cap, void* item) {
  if (*n == *cap) {
    size_t next = *cap == 0 ? 4 : *cap * 2;
    void** grown = realloc(*items, next * sizeof *grown);
    if (grown == NULL) return false;
    *items = grown;
    *cap = next;
  }
  (*items)[(*n)++] = item;
  return true;
}

natcdStatus natcdTxn_If(natcdTxn* txn, natcdCompareTarget target, natcdCompareOp op,
                        const void* key, size_t key_len, const void* range_end,
                        size_t range_end_len, int64_t number, const void* value, size_t value_len) {
  NATCD_CHECK_ARG(txn != NULL);
  NATCD_CHECK_ARG(key != NULL || key_len == 0);
  NATCD_CHECK_ARG(target >= natcdCompareTarget_Version && target <= natcdCompareTarget_Lease);
  NATCD_CHECK_ARG(op >= natcdCompare_Equal && op <= natcdCompare_NotEqual);
  NATCD_CHECK_ARG(value != NULL || value_len == 0);
  Natcd__V1__Compare* c = _arenaAlloc(&txn->arena, sizeof *c);
  if (c == NULL) return _setError(natcdStatus_NoMemory, "out of memory");
  natcd__v1__compare__init(c);
  c->result = (Natcd__V1__Compare__CompareResult)op;
  c->target = (Natcd__V1__Compare__CompareTarget)target;
  c->key.len = key_len;
  c->key.data = (uint8_t*)_arenaBytes(&txn->arena, key, key_len);
  if (range_end != NULL && range_end_len > 0) {
    c->range_end.len = range_end_len;
    c->range_end.data = (uint8_t*)_arenaBytes(&txn->arena, range_end, range_end_len);
    if (c->range_end.data == NULL) return _setError(natcdStatus_NoMemory, "out of memory");
  }
  switch (target) {
    case natcdCompareTarget_Version:
      c->target_union_case = NATCD__V1__COMPARE__TARGET_UNION_VERSION;
      c->version = number;
      break;
    case natcdCompareTarget_Create:
      c->target_union_case = NATCD__V1__COMPARE__TARGET_UNION_CREATE_REVISION;
      c->create_revision = number;
      break;
    case natcdCompareTarget_Mod:
      c->target_union_case = NATCD__V1__COMPARE__TARGET_UNION_MOD_REVISION;
      c->mod_revision = number;
      break;
    case natcdCompareTarget_Value:
      c->target_union_case = NATCD__V1__COMPARE__TARGET_UNION_VALUE;
      c->value.len = value_len;
      c->value.data = (uint8_t*)_arenaBytes(&txn->arena, value, value_len);
      if (c->value.data == NULL) return _setError(natcdStatus_NoMemory, "out of memory");
      break;
    case natcdCompareTarget_Lease:
      c->target_union_case = NATCD__V1__COMPARE__TARGET_UNION_LEASE;
      c->lease = number;
      break;
  }
  if (c->key.data == NULL ||
      !_push((void***)&txn->req.compare, &txn->req.n_compare, &txn->cap_compare, c)) {
    return _setError(natcdStatus_NoMemory, "out of memory");
  }
  return natcdStatus_OK;
}

natcdStatus natcdTxn_IfVersion(natcdTxn* txn, const void* key, size_t key_len, natcdCompareOp op,
                               int64_t version) {
  return natcdTxn_If(txn, natcdCompareTarget_Version, op, key, key_len, NULL, 0, version, NULL, 0);
}

natcdStatus natcdTxn_IfCreateRevision(natcdTxn* txn, const void* key, size_t key_len,
                                      natcdCompareOp op, int64_t revision) {
  return natcdTxn_If(txn, natcdCompareTarget_Create, op, key, key_len, NULL, 0, revision, NULL, 0);
}

natcdStatus natcdTxn_IfModRevision(natcdTxn* txn, const void* key, size_t key_len,
                                   natcdCompareOp op, int64_t revision) {
  return natcdTxn_If(txn, natcdCompareTarget_Mod, op, key, key_len, NULL, 0, revision, NULL, 0);
}

natcdStatus natcdTxn_IfLease(natcdTxn* txn, const void* key, size_t key_len, natcdCompareOp op,
                             int64_t lease) {
  return natcdTxn_If(txn, natcdCompareTarget_Lease, op, key, key_len, NULL, 0, lease, NULL, 0);
}

natcdStatus natcdTxn_IfValue(natcdTxn* txn, const void* key, size_t key_len, natcdCompareOp op,
                             const void* value, size_t value_len) {
  return natcdTxn_If(txn, natcdCompareTarget_Value, op, key, key_len, NULL, 0, 0, value, value_len);
}

static natcdStatus _addOp(natcdTxn* txn, bool then, Natcd__V1__RequestOp* op) {
  bool ok = then ? _push((void***)&txn->req.success, &txn->req.n_success, &txn->cap_success, op)
                 : _push((void***)&txn->req.failure, &txn->req.n_failure, &txn->cap_failure, op);
  return ok ? natcdStatus_OK : _setError(natcdStatus_NoMemory, "out of memory");
}

static natcdStatus _put(natcdTxn* txn, bool then, const void* key, size_t key_len,
                        const void* value, size_t value_len, const natcdPutOptions* opts) {
  NATCD_CHECK_ARG(txn != NULL);
  NATCD_CHECK_ARG(key != NULL || key_len == 0);
  NATCD_CHECK_ARG(value != NULL || value_len == 0);
  Natcd__V1__RequestOp* op = _arenaAlloc(&txn->arena, sizeof *op);
  Natcd__V1__PutRequest* put = _arenaAlloc(&txn->arena, sizeof *put);
  if (op == NULL || put == NULL ||
      !_putRequestInit(&txn->arena, put, key, key_len, value, value_len, opts)) {
    return _setError(natcdStatus_NoMemory, "out of memory");
  }
  natcd__v1__request_op__init(op);
  op->request_case = NATCD__V1__REQUEST_OP__REQUEST_REQUEST_PUT;
  op->request_put = put;
  return _addOp(txn, then, op);
}

static natcdStatus _get(natcdTxn* txn, bool then, const void* key, size_t key_len,
                        const natcdRangeOptions* opts) {
  NATCD_CHECK_ARG(txn != NULL);
  NATCD_CHECK_ARG(key != NULL || key_len == 0);
  Natcd__V1__RequestOp* op = _arenaAlloc(&txn->arena, sizeof *op);
  Natcd__V1__RangeRequest* range = _arenaAlloc(&txn->arena, sizeof *range);
  if (op == NULL || range == NULL || !_rangeRequestInit(&txn->arena, range, key, key_len, opts)) {
    return _setError(natcdStatus_NoMemory, "out of memory");
  }
  natcd__v1__request_op__init(op);
  op->request_case = NATCD__V1__REQUEST_OP__REQUEST_REQUEST_RANGE;
  op->request_range = range;
  return _addOp(txn, then, op);
}

static natcdStatus _delete(natcdTxn* txn, bool then, const void* key, size_t key_len,
                           const natcdDeleteOptions* opts) {
  NATCD_CHECK_ARG(txn != NULL);
  NATCD_CHECK_ARG(key != NULL || key_len == 0);
  Natcd__V1__RequestOp* op = _arenaAlloc(&txn->arena, sizeof *op);
  Natcd__V1__DeleteRangeRequest* del = _arenaAlloc(&txn->arena, sizeof *del);
  if (op == NULL || del == NULL || !_deleteRequestInit(&txn->arena, del, key, key_len, opts)) {
    return _setError(natcdStatus_NoMemory, "out of memory");
  }
  natcd__v1__request_op__init(op);
  op->request_case = NATCD__V1__REQUEST_OP__REQUEST_REQUEST_DELETE_RANGE;
  op->request_delete_range = del;
  return _addOp(txn, then, op);
}

static natcdStatus _nested(natcdTxn* txn, bool then, const natcdTxn* nested) {
  NATCD_CHECK_ARG(txn != NULL);
  NATCD_CHECK_ARG(nested != NULL);
  NATCD_CHECK_ARG(nested != txn);
  // A deep copy by encoding: the nested builder stays the caller's.
  size_t len = protobuf_c_message_get_packed_size(&nested->req.base);
  uint8_t* buf = malloc(len > 0 ? len : 1);
  if (buf == NULL) return _setError(natcdStatus_NoMemory, "out of memory");
  protobuf_c_message_pack(&nested->req.base, buf);
  ProtobufCMessage* copy =
      protobuf_c_message_unpack(&natcd__v1__txn_request__descriptor, NULL, len, buf);
  free(buf);
  Natcd__V1__RequestOp* op = _arenaAlloc(&txn->arena, sizeof *op);
  if (copy == NULL || op == NULL ||
      !_push((void***)&txn->nested, &txn->n_nested, &txn->cap_nested, copy)) {
    if (copy != NULL) protobuf_c_message_free_unpacked(copy, NULL);
    return _setError(natcdStatus_NoMemory, "out of memory");
  }
  natcd__v1__request_op__init(op);
  op->request_case = NATCD__V1__REQUEST_OP__REQUEST_REQUEST_TXN;
  op->request_txn = (Natcd__V1__TxnRequest*)copy;
  return _addOp(txn, then, op);
}

natcdStatus natcdTxn_ThenPut(natcdTxn* txn, const void* key, size_t key_len, const void* value,
                             size_t value_len, const natcdPutOptions* opts) {
  return _put(txn, true, key, key_len, value, value_len, opts);
}
natcdStatus natcdTxn_ThenGet(natcdTxn* txn, const void* key, size_t key_len,
                             const natcdRangeOptions* opts) {
  return _get(txn, true, key, key_len, opts);
}
natcdStatus natcdTxn_ThenDelete(natcdTxn* txn, const void* key, size_t key_len,
                                const natcdDeleteOptions* opts) {
  return _delete(txn, true, key, key_len, opts);
}
natcdStatus natcdTxn_ThenTxn(natcdTxn* txn, const natcdTxn* nested) {
  return _nested(txn, true, nested);
}
natcdStatus natcdTxn_ElsePut(natcdTxn* txn, const void* key, size_t key_len, const void* value,
                             size_t value_len, const natcdPutOptions* opts) {
  return _put(txn, false, key, key_len, value, value_len, opts);
}
natcdStatus natcdTxn_ElseGet(natcdTxn* txn, const void* key, size_t key_len,
                             const natcdRangeOptions* opts) {
  return _get(txn, false, key, key_len, opts);
}
natcdStatus natcdTxn_ElseDelete(natcdTxn* txn, const void* key, size_t key_len,
                                const natcdDeleteOptions* opts) {
  return _delete(txn, false, key, key_len, opts);
}
natcdStatus natcdTxn_ElseTxn(natcdTxn* txn, const natcdTxn* nested) {
  return _nested(txn, false, nested);
}

// --- response ----------------------------------------------------------------

static natcdTxnResponse* _txnFromProto(_arena* a, const Natcd__V1__TxnResponse* in) {
  natcdTxnResponse* out = _arenaAlloc(a, sizeof *out);
  if (out == NULL) return NULL;
  _headerFromProto(&out->header, in->header);
  out->succeeded = in->succeeded;
  if (in->n_responses == 0) return out;
  out->responses = _arenaAlloc(a, in->n_responses * sizeof *out->responses);
  if (out->responses == NULL) return NULL;
  for (size_t i = 0; i < in->n_responses; ++i) {
    const Natcd__V1__ResponseOp* op = in->responses[i];
    natcdOpResponse* r = &out->responses[i];
    bool ok = true;
    switch (op->response_case) {
      case NATCD__V1__RESPONSE_OP__RESPONSE_RESPONSE_RANGE:
        r->type = natcdOp_Range;
        ok = (r->range = _rangeFromProto(a, op->response_range)) != NULL;
        break;
      case NATCD__V1__RESPONSE_OP__RESPONSE_RESPONSE_PUT:
        r->type = natcdOp_Put;
        ok = (r->put = _putFromProto(a, op->response_put)) != NULL;
        break;
      case NATCD__V1__RESPONSE_OP__RESPONSE_RESPONSE_DELETE_RANGE:
        r->type = natcdOp_Delete;
        ok = (r->del = _deleteFromProto(a, op->response_delete_range)) != NULL;
        break;
      case NATCD__V1__RESPONSE_OP__RESPONSE_RESPONSE_TXN:
        r->type = natcdOp_Txn;
        ok = (r->txn = _txnFromProto(a, op->response_txn)) != NULL;
        break;
      default:
        break;  // unset: left zeroed (type 0)
    }
    if (!ok) return NULL;
  }
  out->n_responses = in->n_responses;
  return out;
}

static void* _buildTxn(_arena* a, const void* in) { return _txnFromProto(a, in); }

void natcdTxnResponse_Destroy(natcdTxnResponse* resp) { _standaloneDestroy(resp); }

natcdStatus natcdTxn_Commit(natcdTxnResponse** resp, natcdClient* client, const natcdTxn* txn) {
  NATCD_CHECK_ARG(client != NULL);
  NATCD_CHECK_ARG(txn != NULL);
  if (resp != NULL) *resp = NULL;
  ProtobufCMessage* reply = NULL;
  const _requestOpts write = {.write = true, .retries = -1};
  natcdStatus s = _request(&reply, client, "kv.txn", &txn->req.base,
                           &natcd__v1__txn_response__descriptor, &write);
  if (s == natcdStatus_OK && resp != NULL) {
    *resp = _standaloneBuild(sizeof(natcdTxnResponse), _buildTxn, reply);
    if (*resp == NULL) s = _setError(natcdStatus_NoMemory, "out of memory");
  }
  if (reply != NULL) protobuf_c_message_free_unpacked(reply, NULL);
  return s;
}
