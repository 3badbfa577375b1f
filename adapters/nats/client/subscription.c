// Letting go of a subscription that may still get messages, safely with
// nats.c 3.4.
//
// nats.c 3.4.1 (what Debian ships; nats-io/nats.c#637, reported against
// 3.5.0 and fixed by #638) has its reader thread look a message's
// subscription up under the lock of the subscription table, let go of that
// lock, build the message, and only then lock the subscription: one freed
// by natsSubscription_Destroy in between is used after it is freed (the
// reader locks a garbage mutex and dies). So the client never frees a
// subscription at once. _subscriptionRetire unsubscribes it (out of the
// table: no later message finds it) and keeps it until a reply comes to a
// request sent after that: the reader handles a connection's input in
// order, one message after the other, and a reconnect joins the old reader
// before a new one starts, so by the time a later reply has come the reader
// is past any message for which it could still hold the subscription.
// Until then (no request yet, or the connection is down) the handle waits
// in the client's list; natcdClient_Destroy frees what is left.
#include "internal.h"

#include <string.h>

struct _retired {
  natsSubscription* sub;
  uint64_t seq;  // of its retirement, counted by the client from 1
};

void _subscriptionRetire(natcdClient* c, natsSubscription* sub) {
  if (sub == NULL) return;
  (void)natsSubscription_Unsubscribe(sub);
  pthread_mutex_lock(&c->retired_mu);
  if (c->n_retired == c->cap_retired) {
    size_t cap = c->cap_retired == 0 ? 8 : 2 * c->cap_retired;
    _retired* grown = realloc(c->retired, cap * sizeof *grown);
    if (grown != NULL) {
      c->retired = grown;
      c->cap_retired = cap;
    }
  }
  // Out of memory: nowhere to keep it. Freeing it could crash the reader;
  // leaking one handle is the lesser harm.
  if (c->n_retired < c->cap_retired) {
    c->retired[c->n_retired++] = (_retired){.sub = sub, .seq = ++c->retired_seq};
  }
  pthread_mutex_unlock(&c->retired_mu);
}

uint64_t _subscriptionsRetiredSoFar(natcdClient* c) {
  pthread_mutex_lock(&c->retired_mu);
  const uint64_t seq = c->retired_seq;
  pthread_mutex_unlock(&c->retired_mu);
  return seq;
}

// Frees the first n (no nats.c lock is held here, and nats.c never calls
// back into the client, so holding retired_mu meanwhile is safe).
static void _freeFirst(natcdClient* c, size_t n) {
  if (n == 0) return;  // retired may be NULL
  for (size_t i = 0; i < n; ++i) natsSubscription_Destroy(c->retired[i].sub);
  memmove(c->retired, c->retired + n, (c->n_retired - n) * sizeof *c->retired);
  c->n_retired -= n;
}

void _subscriptionsFreeUpTo(natcdClient* c, uint64_t seq) {
  pthread_mutex_lock(&c->retired_mu);
  size_t n = 0;
  while (n < c->n_retired && c->retired[n].seq <= seq) ++n;  // retired in order
  _freeFirst(c, n);
  pthread_mutex_unlock(&c->retired_mu);
}

void _subscriptionsFreeAll(natcdClient* c) {
  pthread_mutex_lock(&c->retired_mu);
  // Once the connection is closed its reader has been joined; a round trip
  // on one that is up does as well as a reply.
  if (c->n_retired > 0 && (natsConnection_IsClosed(c->nc) ||
                           natsConnection_FlushTimeout(c->nc, c->timeout_ms) == NATS_OK)) {
    _freeFirst(c, c->n_retired);
  }
  // Else (a connection of the caller's, up but not answering) its reader
  // may still hold them: they are leaked rather than freed too early.
  free(c->retired);
  c->retired = NULL;
  c->n_retired = 0;
  c->cap_retired = 0;
  pthread_mutex_unlock(&c->retired_mu);
}
