// Freeing a subscription that may still get messages, safely with nats.c
// 3.4.
//
// nats.c up to 3.5 (issue nats-io/nats.c#637, fixed in 3.6.0) has its
// reader thread look a message's subscription up under the lock of the
// subscription table, let go of that lock, build the message, and only then
// lock the subscription: one freed by natsSubscription_Destroy in between is
// used after it is freed (the reader then locks a garbage mutex and dies).
// So the client never frees a subscription at once. It unsubscribes it
// (out of the table: no later message finds it) and frees it only after a
// PING sent after that has had its PONG: the reader handles a connection's
// input in order, one message after the other, and a reconnect joins the
// old reader before a new one starts, so by then it is past any message for
// which it could still hold the subscription. Until such a round trip
// succeeds (the connection is down, say), the handle waits in the client's
// list, freed by a later round trip or by natcdClient_Destroy.
#include "internal.h"

#include <string.h>

// How long one round trip may take before its subscriptions wait for the next.
enum { kRoundTripMaxMs = 1000 };

// The handles of the list, which is left empty (*n: how many).
static natsSubscription** _takeRetired(natcdClient* c, size_t* n) {
  pthread_mutex_lock(&c->retired_mu);
  natsSubscription** taken = c->retired;
  *n = c->n_retired;
  c->retired = NULL;
  c->n_retired = 0;
  c->cap_retired = 0;
  pthread_mutex_unlock(&c->retired_mu);
  return taken;
}

// Adds n handles to the list. false: out of memory (none added).
static bool _addRetired(natcdClient* c, natsSubscription* const* subs, size_t n) {
  pthread_mutex_lock(&c->retired_mu);
  bool ok = true;
  if (c->n_retired + n > c->cap_retired) {
    size_t cap = c->cap_retired == 0 ? 8 : 2 * c->cap_retired;
    while (cap < c->n_retired + n) cap *= 2;
    natsSubscription** grown = realloc(c->retired, cap * sizeof *grown);
    if (grown != NULL) {
      c->retired = grown;
      c->cap_retired = cap;
    }
    ok = grown != NULL;
  }
  if (ok) {
    memcpy(c->retired + c->n_retired, subs, n * sizeof *subs);
    c->n_retired += n;
  }
  pthread_mutex_unlock(&c->retired_mu);
  return ok;
}

static void _destroyAll(natsSubscription** subs, size_t n) {
  for (size_t i = 0; i < n; ++i) natsSubscription_Destroy(subs[i]);
  free(subs);
}

void _subscriptionFree(natcdClient* c, natsSubscription* sub) {
  if (sub == NULL) return;
  (void)natsSubscription_Unsubscribe(sub);
  if (!_addRetired(c, &sub, 1)) {
    // Nowhere to keep it: freeing it could crash the reader; leaking one
    // handle is the lesser harm.
    return;
  }
  size_t n = 0;
  natsSubscription** taken = _takeRetired(c, &n);
  // Every handle taken was unsubscribed before this PING.
  const int64_t timeout = c->timeout_ms < kRoundTripMaxMs ? c->timeout_ms : kRoundTripMaxMs;
  if (natsConnection_Status(c->nc) == NATS_CONN_STATUS_CONNECTED &&
      natsConnection_FlushTimeout(c->nc, timeout) == NATS_OK) {
    _destroyAll(taken, n);
    return;
  }
  (void)_addRetired(c, taken, n);  // out of memory: leaked, as above
  free(taken);
}

void _subscriptionsFreeAll(natcdClient* c) {
  size_t n = 0;
  natsSubscription** taken = _takeRetired(c, &n);
  if (n == 0) {
    free(taken);
    return;
  }
  // Once the connection is closed its reader has been joined.
  if (natsConnection_IsClosed(c->nc) ||
      natsConnection_FlushTimeout(c->nc, c->timeout_ms) == NATS_OK) {
    _destroyAll(taken, n);
    return;
  }
  // A connection of the caller's that is up but did not answer: its reader
  // may still hold them, so they are left to it (leaked) rather than freed.
  free(taken);
}
