// Distributed mutex: etcd's clientv3/concurrency/mutex.go on natcd.
#include "internal.h"

#include <stdio.h>
#include <string.h>

struct natcdMutex {
  natcdSession* session;
  char* pfx;       // "<prefix>/"
  char* my_key;    // "<prefix>/<lease hex>"
  int64_t my_rev;  // create revision of my_key while held or queued; 0 otherwise
};

natcdStatus natcdMutex_Create(natcdMutex** out, natcdSession* session, const char* prefix) {
  NATCD_CHECK_ARG(out != NULL);
  NATCD_CHECK_ARG(session != NULL);
  NATCD_CHECK_ARG(prefix != NULL && prefix[0] != '\0');
  *out = NULL;
  natcdMutex* m = calloc(1, sizeof *m);
  if (m == NULL) return _setError(natcdStatus_NoMemory, "out of memory");
  m->session = session;
  size_t n = strlen(prefix) + 2;
  m->pfx = malloc(n);
  if (m->pfx != NULL) snprintf(m->pfx, n, "%s/", prefix);
  m->my_key = _leaseKey(prefix, natcdSession_Lease(session));
  if (m->pfx == NULL || m->my_key == NULL) {
    natcdMutex_Destroy(m);
    return _setError(natcdStatus_NoMemory, "out of memory");
  }
  *out = m;
  return natcdStatus_OK;
}

void natcdMutex_Destroy(natcdMutex* m) {
  if (m == NULL) return;
  free(m->pfx);
  free(m->my_key);
  free(m);
}

const char* natcdMutex_Key(const natcdMutex* m, int64_t* create_revision) {
  if (m == NULL) return NULL;
  if (create_revision != NULL) *create_revision = m->my_rev;
  return m->my_key;
}

// Puts my key if it is not there (or reads it), and reads the owner, in one
// txn. *owner: the owner is me.
static natcdStatus _tryAcquire(natcdMutex* m, bool* owner) {
  natcdClient* c = natcdSession_GetClient(m->session);
  natcdRangeOptions first;
  memset(&first, 0, sizeof first);
  first.prefix = true;
  first.sort_target = natcdSortTarget_Create;
  first.sort_order = natcdSortOrder_Ascend;
  first.limit = 1;
  natcdPutOptions put;
  memset(&put, 0, sizeof put);
  put.lease = natcdSession_Lease(m->session);
  natcdTxn* txn = NULL;
  natcdStatus s = natcdTxn_Create(&txn);
  if (s == natcdStatus_OK)
    s = natcdTxn_IfCreateRevision(txn, NATCD_STR(m->my_key), natcdCompare_Equal, 0);
  if (s == natcdStatus_OK) s = natcdTxn_ThenPut(txn, NATCD_STR(m->my_key), "", 0, &put);
  if (s == natcdStatus_OK) s = natcdTxn_ThenGet(txn, NATCD_STR(m->pfx), &first);
  if (s == natcdStatus_OK) s = natcdTxn_ElseGet(txn, NATCD_STR(m->my_key), NULL);
  if (s == natcdStatus_OK) s = natcdTxn_ElseGet(txn, NATCD_STR(m->pfx), &first);
  natcdTxnResponse* r = NULL;
  if (s == natcdStatus_OK) s = natcdTxn_Commit(&r, c, txn);
  natcdTxn_Destroy(txn);
  if (s != natcdStatus_OK) return s;
  if (r->n_responses != 2 || r->responses[1].type != natcdOp_Range ||
      (!r->succeeded &&
       (r->responses[0].type != natcdOp_Range || r->responses[0].range->n_kvs == 0))) {
    natcdTxnResponse_Destroy(r);
    return _setError(natcdStatus_ProtocolError, "unexpected lock txn response");
  }
  m->my_rev = r->succeeded ? r->header.revision : r->responses[0].range->kvs[0].create_revision;
  const natcdRangeResponse* own = r->responses[1].range;
  *owner = own->n_kvs == 0 || own->kvs[0].create_revision == m->my_rev;
  natcdTxnResponse_Destroy(r);
  return natcdStatus_OK;
}

static natcdStatus _lock(natcdMutex* m, int64_t timeout_ms, bool try_only) {
  NATCD_CHECK_ARG(m != NULL);
  const int64_t deadline = timeout_ms < 0 ? -1 : _nowMs() + timeout_ms;
  if (natcdSession_IsExpired(m->session)) {
    return _setError(natcdStatus_SessionExpired, "the session's lease is gone");
  }
  bool owner = false;
  natcdStatus s = _tryAcquire(m, &owner);
  if (s != natcdStatus_OK) return s;
  if (owner) return natcdStatus_OK;
  natcdClient* c = natcdSession_GetClient(m->session);
  if (try_only) {
    (void)natcdKV_Delete(NULL, c, NATCD_STR(m->my_key), NULL);
    m->my_rev = 0;
    return _setError(natcdStatus_Locked, "%s is held by another session", m->pfx);
  }
  // Wait for the waiter just before me (not the owner): FIFO, no herd.
  s = _waitDeletes(c, m->pfx, m->my_rev - 1, deadline, m->session);
  if (s != natcdStatus_OK) {
    natcdError e;
    natcd_GetLastError(&e);
    (void)natcdMutex_Unlock(m);  // give up my place in the queue
    _setError(e.status, "%s", e.text);
    return s;
  }
  // Still mine? (The lease may have expired while waiting.)
  natcdRangeResponse* r = NULL;
  s = natcdKV_Get(&r, c, NATCD_STR(m->my_key), NULL);
  if (s != natcdStatus_OK) return s;
  bool mine = r->n_kvs == 1 && r->kvs[0].create_revision == m->my_rev;
  natcdRangeResponse_Destroy(r);
  if (!mine) {
    m->my_rev = 0;
    return _setError(natcdStatus_SessionExpired,
                     "the lock key vanished: the session's lease is gone");
  }
  return natcdStatus_OK;
}

natcdStatus natcdMutex_Lock(natcdMutex* m, int64_t timeout_ms) {
  return _lock(m, timeout_ms, false);
}

natcdStatus natcdMutex_TryLock(natcdMutex* m) { return _lock(m, 0, true); }

natcdStatus natcdMutex_Unlock(natcdMutex* m) {
  NATCD_CHECK_ARG(m != NULL);
  natcdStatus s =
      natcdKV_Delete(NULL, natcdSession_GetClient(m->session), NATCD_STR(m->my_key), NULL);
  if (s == natcdStatus_OK) m->my_rev = 0;
  return s;
}
