// Background lease keepalive: renews at TTL/3 on its own thread, retries
// through outages, reports the loss of the lease once.
#include "internal.h"

#include <string.h>

// Between failed renewals, at most this long.
enum { kRetryMaxMs = 500, kAttemptMinMs = 100 };

struct natcdKeepAlive {
  natcdClient* client;
  int64_t lease_id;
  natcdKeepAliveHandler handler;
  void* closure;

  pthread_mutex_t mu;
  pthread_cond_t cond;
  bool stop;        // guarded by mu
  bool alive;       // guarded by mu
  int64_t ttl;      // seconds, guarded by mu
  int64_t last_ok;  // _nowMs() when the last successful renewal was sent; thread only

  pthread_t thread;
  bool started;
  bool joined;
};

// One renewal, without the client's retries (the loop retries). Returns
// OK with *ttl (<= 0: the lease is gone) or the failure.
static natcdStatus _renew(int64_t* ttl, natcdKeepAlive* ka, int64_t timeout_ms, int retries) {
  Natcd__V1__LeaseKeepAliveRequest req;
  natcd__v1__lease_keep_alive_request__init(&req);
  req.id = ka->lease_id;
  ProtobufCMessage* reply = NULL;
  const _requestOpts o = {.timeout_ms = timeout_ms, .retries = retries};
  natcdStatus s = _request(&reply, ka->client, "lease.keepalive", &req.base,
                           &natcd__v1__lease_keep_alive_response__descriptor, &o);
  if (s == natcdStatus_OK) *ttl = ((const Natcd__V1__LeaseKeepAliveResponse*)reply)->ttl;
  if (reply != NULL) protobuf_c_message_free_unpacked(reply, NULL);
  return s;
}

static void* _keepAliveMain(void* arg) {
  natcdKeepAlive* ka = arg;
  pthread_mutex_lock(&ka->mu);
  int64_t ttl_ms = ka->ttl * 1000;
  pthread_mutex_unlock(&ka->mu);
  int64_t next = ka->last_ok + ttl_ms / 3;
  natcdStatus lost = natcdStatus_OK;
  for (;;) {
    pthread_mutex_lock(&ka->mu);
    while (!ka->stop && _nowMs() < next) _condWaitMs(&ka->cond, &ka->mu, next - _nowMs());
    bool stop = ka->stop;
    pthread_mutex_unlock(&ka->mu);
    if (stop) break;

    const int64_t sent = _nowMs();
    const int64_t deadline = ka->last_ok + ttl_ms;
    int64_t timeout = ttl_ms / 3;
    if (timeout > ka->client->timeout_ms) timeout = ka->client->timeout_ms;
    if (timeout > deadline - sent) timeout = deadline - sent;
    if (timeout < kAttemptMinMs) timeout = kAttemptMinMs;
    int64_t ttl = 0;
    natcdStatus s = _renew(&ttl, ka, timeout, 0);
    if (s == natcdStatus_OK && ttl > 0) {
      ka->last_ok = sent;
      ttl_ms = ttl * 1000;
      pthread_mutex_lock(&ka->mu);
      ka->ttl = ttl;
      pthread_mutex_unlock(&ka->mu);
      next = sent + ttl_ms / 3;
      continue;
    }
    if (s == natcdStatus_OK) {  // TTL <= 0: revoked or expired
      lost = natcdStatus_NotFound;
      break;
    }
    const int64_t now = _nowMs();
    if (now >= deadline) {
      lost = natcdStatus_Timeout;
      break;
    }
    int64_t pause = ttl_ms / 3 < kRetryMaxMs ? ttl_ms / 3 : kRetryMaxMs;
    next = now + pause < deadline ? now + pause : deadline;
  }
  if (lost != natcdStatus_OK) {
    pthread_mutex_lock(&ka->mu);
    ka->alive = false;
    bool stop = ka->stop;
    pthread_mutex_unlock(&ka->mu);
    if (!stop && ka->handler != NULL) ka->handler(ka, ka->lease_id, lost, ka->closure);
  }
  return NULL;
}

natcdStatus natcdKeepAlive_Start(natcdKeepAlive** out, natcdClient* client, int64_t lease_id,
                                 natcdKeepAliveHandler handler, void* closure) {
  NATCD_CHECK_ARG(out != NULL);
  NATCD_CHECK_ARG(client != NULL);
  *out = NULL;
  natcdKeepAlive* ka = calloc(1, sizeof *ka);
  if (ka == NULL) return _setError(natcdStatus_NoMemory, "out of memory");
  ka->client = client;
  ka->lease_id = lease_id;
  ka->handler = handler;
  ka->closure = closure;
  ka->alive = true;
  if (pthread_mutex_init(&ka->mu, NULL) != 0 || _condInit(&ka->cond) != 0) {
    free(ka);
    return _setError(natcdStatus_NoMemory, "cannot create a mutex");
  }
  // The first renewal, synchronously, with the client's retries: learns the TTL.
  const int64_t sent = _nowMs();
  int64_t ttl = 0;
  natcdStatus s = _renew(&ttl, ka, 0, -1);
  if (s == natcdStatus_OK && ttl <= 0) {
    s = _setError(natcdStatus_NotFound, "ErrLeaseNotFound: lease %llx does not exist",
                  (unsigned long long)lease_id);
  }
  if (s == natcdStatus_OK) {
    ka->ttl = ttl;
    ka->last_ok = sent;
    if (pthread_create(&ka->thread, NULL, _keepAliveMain, ka) != 0) {
      s = _setError(natcdStatus_NoMemory, "cannot start the keepalive thread");
    } else {
      ka->started = true;
    }
  }
  if (s != natcdStatus_OK) {
    pthread_cond_destroy(&ka->cond);
    pthread_mutex_destroy(&ka->mu);
    free(ka);
    return s;
  }
  *out = ka;
  return natcdStatus_OK;
}

natcdStatus natcdKeepAlive_IsAlive(bool* alive, int64_t* ttl_seconds, natcdKeepAlive* ka) {
  NATCD_CHECK_ARG(ka != NULL);
  pthread_mutex_lock(&ka->mu);
  if (alive != NULL) *alive = ka->alive;
  if (ttl_seconds != NULL) *ttl_seconds = ka->ttl;
  pthread_mutex_unlock(&ka->mu);
  return natcdStatus_OK;
}

void natcdKeepAlive_Stop(natcdKeepAlive* ka) {
  if (ka == NULL) return;
  pthread_mutex_lock(&ka->mu);
  ka->stop = true;
  pthread_cond_broadcast(&ka->cond);
  pthread_mutex_unlock(&ka->mu);
  if (ka->started && !ka->joined && !pthread_equal(pthread_self(), ka->thread)) {
    pthread_join(ka->thread, NULL);
    ka->joined = true;
  }
}

void natcdKeepAlive_Destroy(natcdKeepAlive* ka) {
  if (ka == NULL) return;
  natcdKeepAlive_Stop(ka);
  pthread_cond_destroy(&ka->cond);
  pthread_mutex_destroy(&ka->mu);
  free(ka);
}
