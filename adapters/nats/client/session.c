// Session (a lease kept alive) and the wait shared by mutex and election:
// etcd's clientv3/concurrency session.go and key.go.
#include "internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

// How often a wait looks at the session and its deadline.
enum { kWaitSliceMs = 100 };

struct natcdSession {
  natcdClient* client;
  int64_t lease;
  natcdKeepAlive* ka;
  natcdSessionHandler handler;
  void* closure;
  atomic_bool expired;
  bool orphaned;
};

static void _onLost(natcdKeepAlive* ka, int64_t lease_id, natcdStatus reason, void* closure) {
  (void)ka;
  (void)lease_id;
  (void)reason;
  natcdSession* s = closure;
  atomic_store(&s->expired, true);
  if (s->handler != NULL) s->handler(s, s->closure);
}

natcdStatus natcdSession_Create(natcdSession** out, natcdClient* client, int64_t ttl_seconds,
                                natcdSessionHandler handler, void* closure) {
  NATCD_CHECK_ARG(out != NULL);
  NATCD_CHECK_ARG(client != NULL);
  NATCD_CHECK_ARG(ttl_seconds > 0);
  *out = NULL;
  natcdSession* s = calloc(1, sizeof *s);
  if (s == NULL) return _setError(natcdStatus_NoMemory, "out of memory");
  s->client = client;
  s->handler = handler;
  s->closure = closure;
  atomic_init(&s->expired, false);
  natcdStatus st = natcdLease_Grant(&s->lease, NULL, client, ttl_seconds, 0);
  if (st == natcdStatus_OK) st = natcdKeepAlive_Start(&s->ka, client, s->lease, _onLost, s);
  if (st != natcdStatus_OK) {
    if (s->lease != 0) {
      natcdError e;
      natcd_GetLastError(&e);
      (void)natcdLease_Revoke(client, s->lease);
      _setError(e.status, "%s", e.text);  // the error that matters
    }
    free(s);
    return st;
  }
  *out = s;
  return natcdStatus_OK;
}

int64_t natcdSession_Lease(const natcdSession* s) { return s != NULL ? s->lease : 0; }

natcdClient* natcdSession_GetClient(const natcdSession* s) { return s != NULL ? s->client : NULL; }

bool natcdSession_IsExpired(natcdSession* s) {
  return s == NULL || s->orphaned || atomic_load(&s->expired);
}

void natcdSession_Orphan(natcdSession* s) {
  if (s == NULL) return;
  natcdKeepAlive_Stop(s->ka);
  s->orphaned = true;
}

void natcdSession_Destroy(natcdSession* s) {
  if (s == NULL) return;
  natcdKeepAlive_Destroy(s->ka);
  if (!s->orphaned && !atomic_load(&s->expired)) (void)natcdLease_Revoke(s->client, s->lease);
  free(s);
}

// --- shared helpers ----------------------------------------------------------

char* _leaseKey(const char* prefix, int64_t lease) {
  size_t n = strlen(prefix) + 2 + 16 + 1;
  char* key = malloc(n);
  if (key != NULL) snprintf(key, n, "%s/%" PRIx64, prefix, (uint64_t)lease);
  return key;
}

typedef struct _deleteWait {
  pthread_mutex_t mu;
  pthread_cond_t cond;
  bool done;
} _deleteWait;

static void _onDelete(natcdWatch* w, const natcdWatchNotice* n, void* closure) {
  (void)w;
  _deleteWait* d = closure;
  // A delete of the key, or anything that means "look again".
  if (n->kind == natcdWatchNotice_Event && n->type != natcdEventType_Delete) return;
  pthread_mutex_lock(&d->mu);
  d->done = true;
  pthread_cond_broadcast(&d->cond);
  pthread_mutex_unlock(&d->mu);
}

// Waits until `key` is deleted at a revision >= from_revision.
static natcdStatus _waitDelete(natcdClient* c, const char* key, size_t key_len,
                               int64_t from_revision, int64_t deadline_ms, natcdSession* session) {
  _deleteWait d = {.done = false};
  pthread_mutex_init(&d.mu, NULL);
  _condInit(&d.cond);
  natcdWatchOptions opts;
  memset(&opts, 0, sizeof opts);
  opts.no_put = true;
  natcdWatch* w = NULL;
  natcdStatus s =
      _watchCreate(&w, c, key, key_len, NULL, 0, from_revision, &opts, _onDelete, &d, true);
  if (s == natcdStatus_Compacted) s = natcdStatus_OK;  // the caller looks again
  while (s == natcdStatus_OK && w != NULL) {
    pthread_mutex_lock(&d.mu);
    if (!d.done) _condWaitMs(&d.cond, &d.mu, kWaitSliceMs);
    bool done = d.done;
    pthread_mutex_unlock(&d.mu);
    if (done) break;
    if (session != NULL && natcdSession_IsExpired(session)) {
      s = _setError(natcdStatus_SessionExpired, "the session's lease is gone");
    } else if (deadline_ms >= 0 && _nowMs() >= deadline_ms) {
      s = _setError(natcdStatus_Timeout, "timed out waiting for the deletion of %s", key);
    }
  }
  natcdWatch_Destroy(w);
  pthread_cond_destroy(&d.cond);
  pthread_mutex_destroy(&d.mu);
  return s;
}

natcdStatus _waitDeletes(natcdClient* c, const char* prefix, int64_t max_create_revision,
                         int64_t deadline_ms, natcdSession* session) {
  // No key was created before revision 1 (and 0 would mean "no bound").
  if (max_create_revision <= 0) return natcdStatus_OK;
  natcdRangeOptions last;
  memset(&last, 0, sizeof last);
  last.prefix = true;
  last.sort_target = natcdSortTarget_Create;
  last.sort_order = natcdSortOrder_Descend;
  last.limit = 1;
  last.max_create_revision = max_create_revision;
  for (;;) {
    if (session != NULL && natcdSession_IsExpired(session)) {
      return _setError(natcdStatus_SessionExpired, "the session's lease is gone");
    }
    if (deadline_ms >= 0 && _nowMs() >= deadline_ms) {
      return _setError(natcdStatus_Timeout, "timed out waiting under %s", prefix);
    }
    natcdRangeResponse* r = NULL;
    natcdStatus s = natcdKV_Get(&r, c, prefix, strlen(prefix), &last);
    if (s != natcdStatus_OK) return s;
    if (r->n_kvs == 0) {
      natcdRangeResponse_Destroy(r);
      return natcdStatus_OK;
    }
    s = _waitDelete(c, r->kvs[0].key, r->kvs[0].key_len, r->header.revision + 1, deadline_ms,
                    session);
    natcdRangeResponse_Destroy(r);
    if (s != natcdStatus_OK) return s;
  }
}
