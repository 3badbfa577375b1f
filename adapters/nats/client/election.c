// Leader election: etcd's clientv3/concurrency/election.go on natcd.
#include "internal.h"

#include <stdio.h>
#include <string.h>

struct natcdElection {
  natcdClient* client;
  natcdSession* session;  // NULL: observe only
  char* pfx;              // "<prefix>/"
  char* my_key;           // "<prefix>/<lease hex>" (with a session)
  int64_t leader_rev;     // create revision of my_key while leading; 0 otherwise
};

natcdStatus natcdElection_Create(natcdElection** out, natcdClient* client, natcdSession* session,
                                 const char* prefix) {
  NATCD_CHECK_ARG(out != NULL);
  NATCD_CHECK_ARG(client != NULL);
  NATCD_CHECK_ARG(prefix != NULL && prefix[0] != '\0');
  *out = NULL;
  natcdElection* e = calloc(1, sizeof *e);
  if (e == NULL) return _setError(natcdStatus_NoMemory, "out of memory");
  e->client = client;
  e->session = session;
  size_t n = strlen(prefix) + 2;
  e->pfx = malloc(n);
  if (e->pfx != NULL) snprintf(e->pfx, n, "%s/", prefix);
  if (session != NULL) e->my_key = _leaseKey(prefix, natcdSession_Lease(session));
  if (e->pfx == NULL || (session != NULL && e->my_key == NULL)) {
    natcdElection_Destroy(e);
    return _setError(natcdStatus_NoMemory, "out of memory");
  }
  *out = e;
  return natcdStatus_OK;
}

void natcdElection_Destroy(natcdElection* e) {
  if (e == NULL) return;
  free(e->pfx);
  free(e->my_key);
  free(e);
}

// If my key still has leader_rev as its create revision: put `value` (or
// delete the key). *held: it did.
static natcdStatus _ifMine(natcdElection* e, bool del, const void* value, size_t value_len,
                           bool* held) {
  natcdPutOptions put;
  memset(&put, 0, sizeof put);
  put.lease = natcdSession_Lease(e->session);
  natcdTxn* txn = NULL;
  natcdStatus s = natcdTxn_Create(&txn);
  if (s == natcdStatus_OK) {
    s = natcdTxn_IfCreateRevision(txn, NATCD_STR(e->my_key), natcdCompare_Equal, e->leader_rev);
  }
  if (s == natcdStatus_OK) {
    s = del ? natcdTxn_ThenDelete(txn, NATCD_STR(e->my_key), NULL)
            : natcdTxn_ThenPut(txn, NATCD_STR(e->my_key), value, value_len, &put);
  }
  natcdTxnResponse* r = NULL;
  if (s == natcdStatus_OK) s = natcdTxn_Commit(&r, e->client, txn);
  natcdTxn_Destroy(txn);
  if (s == natcdStatus_OK) *held = r->succeeded;
  natcdTxnResponse_Destroy(r);
  return s;
}

natcdStatus natcdElection_Proclaim(natcdElection* e, const void* value, size_t value_len) {
  NATCD_CHECK_ARG(e != NULL);
  NATCD_CHECK_ARG(value != NULL || value_len == 0);
  if (e->session == NULL || e->leader_rev == 0) {
    return _setError(natcdStatus_NotLeader, "not leading the election %s", e->pfx);
  }
  bool held = false;
  natcdStatus s = _ifMine(e, false, value, value_len, &held);
  if (s != natcdStatus_OK) return s;
  if (!held) {
    e->leader_rev = 0;
    return _setError(natcdStatus_NotLeader, "leadership of %s was lost", e->pfx);
  }
  return natcdStatus_OK;
}

natcdStatus natcdElection_Resign(natcdElection* e) {
  NATCD_CHECK_ARG(e != NULL);
  if (e->session == NULL || e->leader_rev == 0) return natcdStatus_OK;
  bool held = false;
  natcdStatus s = _ifMine(e, true, NULL, 0, &held);
  if (s == natcdStatus_OK) e->leader_rev = 0;
  return s;
}

natcdStatus natcdElection_Campaign(natcdElection* e, const void* value, size_t value_len,
                                   int64_t timeout_ms) {
  NATCD_CHECK_ARG(e != NULL);
  NATCD_CHECK_ARG(e->session != NULL);
  NATCD_CHECK_ARG(value != NULL || value_len == 0);
  const int64_t deadline = timeout_ms < 0 ? -1 : _nowMs() + timeout_ms;
  if (natcdSession_IsExpired(e->session)) {
    return _setError(natcdStatus_SessionExpired, "the session's lease is gone");
  }
  natcdPutOptions put;
  memset(&put, 0, sizeof put);
  put.lease = natcdSession_Lease(e->session);
  natcdTxn* txn = NULL;
  natcdStatus s = natcdTxn_Create(&txn);
  if (s == natcdStatus_OK)
    s = natcdTxn_IfCreateRevision(txn, NATCD_STR(e->my_key), natcdCompare_Equal, 0);
  if (s == natcdStatus_OK) s = natcdTxn_ThenPut(txn, NATCD_STR(e->my_key), value, value_len, &put);
  if (s == natcdStatus_OK) s = natcdTxn_ElseGet(txn, NATCD_STR(e->my_key), NULL);
  natcdTxnResponse* r = NULL;
  if (s == natcdStatus_OK) s = natcdTxn_Commit(&r, e->client, txn);
  natcdTxn_Destroy(txn);
  if (s != natcdStatus_OK) return s;
  bool proclaim = false;
  if (r->succeeded) {
    e->leader_rev = r->header.revision;
  } else if (r->n_responses == 1 && r->responses[0].type == natcdOp_Range &&
             r->responses[0].range->n_kvs == 1) {
    // Already campaigning with this session: keep the place, update the value.
    const natcdKeyValue* kv = &r->responses[0].range->kvs[0];
    e->leader_rev = kv->create_revision;
    proclaim =
        kv->value_len != value_len || (value_len > 0 && memcmp(kv->value, value, value_len) != 0);
  } else {
    natcdTxnResponse_Destroy(r);
    return _setError(natcdStatus_ProtocolError, "unexpected campaign txn response");
  }
  natcdTxnResponse_Destroy(r);
  if (proclaim) {
    s = natcdElection_Proclaim(e, value, value_len);
    if (s != natcdStatus_OK) {
      natcdError err;
      natcd_GetLastError(&err);
      (void)natcdElection_Resign(e);
      _setError(err.status, "%s", err.text);
      return s;
    }
  }
  s = _waitDeletes(e->client, e->pfx, e->leader_rev - 1, deadline, e->session);
  if (s != natcdStatus_OK) {
    natcdError err;
    natcd_GetLastError(&err);
    if (s == natcdStatus_Timeout) (void)natcdElection_Resign(e);  // withdraw
    e->leader_rev = 0;
    _setError(err.status, "%s", err.text);
    return s;
  }
  // Still a candidate? (The lease may have expired while waiting.)
  natcdRangeResponse* mine = NULL;
  s = natcdKV_Get(&mine, e->client, NATCD_STR(e->my_key), NULL);
  if (s != natcdStatus_OK) return s;
  bool held = mine->n_kvs == 1 && mine->kvs[0].create_revision == e->leader_rev;
  natcdRangeResponse_Destroy(mine);
  if (!held) {
    e->leader_rev = 0;
    return _setError(natcdStatus_SessionExpired, "the campaign key vanished: the lease is gone");
  }
  return natcdStatus_OK;
}

static natcdStatus _leader(natcdKeyValue** out, int64_t* revision, natcdElection* e) {
  natcdRangeOptions first;
  memset(&first, 0, sizeof first);
  first.prefix = true;
  first.sort_target = natcdSortTarget_Create;
  first.sort_order = natcdSortOrder_Ascend;
  first.limit = 1;
  natcdRangeResponse* r = NULL;
  natcdStatus s = natcdKV_Get(&r, e->client, NATCD_STR(e->pfx), &first);
  if (s != natcdStatus_OK) return s;
  *out = NULL;
  if (revision != NULL) *revision = r->header.revision;
  if (r->n_kvs > 0) {
    *out = _kvDup(&r->kvs[0]);
    if (*out == NULL) s = _setError(natcdStatus_NoMemory, "out of memory");
  }
  natcdRangeResponse_Destroy(r);
  return s;
}

natcdStatus natcdElection_Leader(natcdKeyValue** leader, natcdElection* e) {
  NATCD_CHECK_ARG(leader != NULL);
  NATCD_CHECK_ARG(e != NULL);
  *leader = NULL;
  natcdStatus s = _leader(leader, NULL, e);
  if (s == natcdStatus_OK && *leader == NULL) {
    return _setError(natcdStatus_NoLeader, "nobody leads %s", e->pfx);
  }
  return s;
}

// --- observe -------------------------------------------------------------------

struct natcdObserver {
  natcdElection* election;
  natcdObserveHandler handler;
  void* closure;
  natcdWatch* watch;
  natcdKeyValue* last;  // the leader last reported (NULL: none)
  bool reported;
};

static bool _sameLeader(const natcdKeyValue* a, const natcdKeyValue* b) {
  if (a == NULL || b == NULL) return a == b;
  return a->create_revision == b->create_revision && a->mod_revision == b->mod_revision &&
         a->key_len == b->key_len && memcmp(a->key, b->key, a->key_len) == 0;
}

// Reads the leader and reports it if it changed.
static void _observeOnce(natcdObserver* o) {
  natcdKeyValue* now = NULL;
  if (_leader(&now, NULL, o->election) != natcdStatus_OK) return;  // the next event retries
  if (o->reported && _sameLeader(now, o->last)) {
    natcdKeyValue_Destroy(now);
    return;
  }
  natcdKeyValue_Destroy(o->last);
  o->last = now;
  o->reported = true;
  o->handler(o, now, o->closure);
}

static void _onElectionEvent(natcdWatch* w, const natcdWatchNotice* n, void* closure) {
  (void)w;
  natcdObserver* o = closure;
  // After a whole revision, or after a compaction (the watch goes on from the
  // compact revision): look at the leader again.
  if ((n->kind == natcdWatchNotice_Event && n->last_in_revision) ||
      n->kind == natcdWatchNotice_Compacted) {
    _observeOnce(o);
  }
}

natcdStatus natcdElection_Observe(natcdObserver** out, natcdElection* e,
                                  natcdObserveHandler handler, void* closure) {
  NATCD_CHECK_ARG(out != NULL);
  NATCD_CHECK_ARG(e != NULL);
  NATCD_CHECK_ARG(handler != NULL);
  *out = NULL;
  natcdObserver* o = calloc(1, sizeof *o);
  if (o == NULL) return _setError(natcdStatus_NoMemory, "out of memory");
  o->election = e;
  o->handler = handler;
  o->closure = closure;
  int64_t revision = 0;
  natcdStatus s = _leader(&o->last, &revision, e);
  if (s != natcdStatus_OK) {
    free(o);
    return s;
  }
  o->reported = true;
  handler(o, o->last, closure);
  natcdWatchOptions opts;
  memset(&opts, 0, sizeof opts);
  opts.prefix = true;
  s = _watchCreate(&o->watch, e->client, NATCD_STR(e->pfx), NULL, 0, revision + 1, &opts,
                   _onElectionEvent, o, true);
  if (s != natcdStatus_OK) {
    natcdKeyValue_Destroy(o->last);
    free(o);
    return s;
  }
  *out = o;
  return natcdStatus_OK;
}

void natcdObserver_Destroy(natcdObserver* o) {
  if (o == NULL) return;
  natcdWatch_Destroy(o->watch);
  natcdKeyValue_Destroy(o->last);
  free(o);
}
