// Internals shared by the client library's files (not installed, not API).
// Include it first: it sets the feature macros the system headers need.
#ifndef NATCD_CLIENT_INTERNAL_H_
#define NATCD_CLIENT_INTERNAL_H_

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "adapters/nats/natcd.pb-c.h"
#include "natcd/client.h"

#define NATCD_DEFAULT_PREFIX "natcd"
#define NATCD_REQUEST_ID_HEADER "Natcd-Request-Id"
#define NATCD_ERROR_CODE_HEADER "Nats-Service-Error-Code"
#define NATCD_ERROR_HEADER "Nats-Service-Error"
#define NATCD_AUTH_TOKEN_HEADER "Natcd-Auth-Token"

struct natcdClient {
  natsConnection* nc;
  bool owns_nc;
  char* prefix;
  int64_t timeout_ms;
  int retries;
  int64_t backoff_ms;
  int64_t backoff_max_ms;
  // The member that answered the last write: the leader, as far as this
  // client knows (0: none known). Writes go to it directly, on
  // P.to.<leader ID>.<suffix>, so that a leader that stopped answering
  // (paused, frozen, cut off) costs one attempt and not, as through the
  // queue group where it keeps its weighted subscriptions, most of them.
  _Atomic uint64_t leader_id;
  // Subscriptions unsubscribed but not freed yet (subscription.c).
  pthread_mutex_t retired_mu;
  struct _retired* retired;  // guarded by retired_mu, in retirement order
  size_t n_retired;          // guarded by retired_mu
  size_t cap_retired;        // guarded by retired_mu
  uint64_t retired_seq;      // guarded by retired_mu: retirements so far
  // The user to authenticate as (NULL: none) and the token natcd gave it
  // (NULL: none yet), replaced when natcd no longer takes it.
  char* user;
  char* password;
  pthread_mutex_t token_mu;
  char* token;  // guarded by token_mu
};

// --- errors (status.c) -----------------------------------------------------

// Records the calling thread's last error and returns `s`.
natcdStatus _setError(natcdStatus s, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
// The same, for an error that came from nats.c.
natcdStatus _setNatsError(natcdStatus s, natsStatus ns, const char* what);
// A service error reply: maps the code, parses the compact revision.
natcdStatus _setServiceError(int code, const char* text);

// Argument checks: return natcdStatus_InvalidArg from the enclosing function.
#define NATCD_CHECK_ARG(cond)                                                             \
  do {                                                                                    \
    if (!(cond)) return _setError(natcdStatus_InvalidArg, "invalid argument: %s", #cond); \
  } while (0)

// --- time (client.c) -------------------------------------------------------

// Monotonic milliseconds.
int64_t _nowMs(void);
void _sleepMs(int64_t ms);
// Absolute CLOCK_MONOTONIC deadline `ms` from now, for pthread_cond_timedwait on
// a condition variable made by _condInit.
struct timespec _deadlineIn(int64_t ms);
int _condInit(pthread_cond_t* cond);
// Waits on cond (mu held) until signaled or `ms` passed. Returns true on timeout.
bool _condWaitMs(pthread_cond_t* cond, pthread_mutex_t* mu, int64_t ms);

// --- requests (client.c) ---------------------------------------------------

typedef struct _requestOpts {
  bool write;          // carry a Natcd-Request-Id; to the leader last seen
  bool to_leader;      // a linearizable read: to the leader last seen too
  int64_t timeout_ms;  // 0: the client's
  int retries;         // -1: the client's
  bool no_token;       // Authenticate itself: no token, no re-authentication
} _requestOpts;

// Sends `req` to P.<suffix> and unpacks the reply with `reply_desc` into
// *reply (free with protobuf_c_message_free_unpacked). Retries a timeout,
// "no responders", 429 and 503 ErrStopped with the same request id.
natcdStatus _request(ProtobufCMessage** reply, natcdClient* c, const char* suffix,
                     const ProtobufCMessage* req, const ProtobufCMessageDescriptor* reply_desc,
                     const _requestOpts* o);
// Authenticates as c->user on P.auth.authenticate and keeps the token for
// the Natcd-Auth-Token header of later requests.
natcdStatus _authenticate(natcdClient* c);
// Publishes `msg` to P.<suffix> without a reply subject (acks, best-effort cancels).
natcdStatus _publish(natcdClient* c, const char* suffix, const ProtobufCMessage* msg);
// 32 lowercase hex digits from 128 random bits, NUL-terminated (33 bytes).
void _randomHex128(char out[33]);

// --- subscriptions (subscription.c) -------------------------------------------

typedef struct _retired _retired;

// Unsubscribes `sub` (NULL: nothing) and keeps it until nats.c's reader can
// no longer be using it: the only way the client lets go of a subscription.
void _subscriptionRetire(natcdClient* c, natsSubscription* sub);
// How many subscriptions were retired so far: read before sending a request.
uint64_t _subscriptionsRetiredSoFar(natcdClient* c);
// Once that request's reply has come: frees the first `seq` retired.
void _subscriptionsFreeUpTo(natcdClient* c, uint64_t seq);
// At natcdClient_Destroy: frees what is left (the connection closed, or up
// and answering; else leaks it, never freeing too early).
void _subscriptionsFreeAll(natcdClient* c);

// --- arena (kv.c) ------------------------------------------------------------

// Bump allocator: everything a response points to, freed at once.
typedef struct _arenaBlock _arenaBlock;
typedef struct _arena {
  _arenaBlock* head;
} _arena;

void* _arenaAlloc(_arena* a, size_t n);  // zeroed; NULL when out of memory
// A copy of n bytes followed by a NUL byte (never NULL for n == 0 unless out of memory).
char* _arenaBytes(_arena* a, const void* p, size_t n);
void _arenaFree(_arena* a);

// --- conversions (kv.c) ----------------------------------------------------

void _headerFromProto(natcdHeader* out, const Natcd__V1__ResponseHeader* in);
// Copies `in` into `out` with its bytes in the arena. false: out of memory.
bool _kvFromProto(_arena* a, natcdKeyValue* out, const Natcd__V1__KeyValue* in);
natcdKeyValue* _kvDup(const natcdKeyValue* in);  // one malloc; natcdKeyValue_Destroy frees it

// Fills a request from options; bytes point into the arena (or to the caller's
// memory for the duration of the request).
bool _rangeRequestInit(_arena* a, Natcd__V1__RangeRequest* r, const void* key, size_t key_len,
                       const natcdRangeOptions* opts);
bool _putRequestInit(_arena* a, Natcd__V1__PutRequest* r, const void* key, size_t key_len,
                     const void* value, size_t value_len, const natcdPutOptions* opts);
bool _deleteRequestInit(_arena* a, Natcd__V1__DeleteRangeRequest* r, const void* key,
                        size_t key_len, const natcdDeleteOptions* opts);
// Range end from (range_end, prefix, from_key) into r_end; false when out of memory.
bool _rangeEnd(_arena* a, ProtobufCBinaryData* r_end, const void* key, size_t key_len,
               const void* range_end, size_t range_end_len, bool prefix, bool from_key);

// Responses built in `a` (nested in a txn response) or standalone.
natcdRangeResponse* _rangeFromProto(_arena* a, const Natcd__V1__RangeResponse* in);
natcdPutResponse* _putFromProto(_arena* a, const Natcd__V1__PutResponse* in);
natcdDeleteResponse* _deleteFromProto(_arena* a, const Natcd__V1__DeleteRangeResponse* in);

// A response the caller owns: `build` makes it in a fresh arena, whose handle
// is kept in a hidden header just before the returned public struct (of
// pub_size bytes). _standaloneDestroy(pub) frees it all. NULL: out of memory.
void* _standaloneBuild(size_t pub_size, void* (*build)(_arena*, const void*), const void* in);
void _standaloneDestroy(void* pub);

// --- watch internals (watch.c) -----------------------------------------------

// Internal users (mutex, election) may ask a watch to go on after a
// compaction from the compact revision (they re-read state anyway).
natcdStatus _watchCreate(natcdWatch** out, natcdClient* client, const void* key, size_t key_len,
                         const void* range_end, size_t range_end_len, int64_t start_revision,
                         const natcdWatchOptions* opts, natcdWatchHandler handler, void* closure,
                         bool continue_after_compaction);

// --- concurrency helpers (session.c) ------------------------------------------

// "<prefix>/<lease hex>" (malloc'ed).
char* _leaseKey(const char* prefix, int64_t lease);
// Waits until every key under `prefix` created before `max_create_revision`
// (inclusive) is gone: etcd's waitDeletes. deadline_ms: absolute _nowMs()
// time, or < 0 for none. cancel: optional flag checked while waiting.
natcdStatus _waitDeletes(natcdClient* c, const char* prefix, int64_t max_create_revision,
                         int64_t deadline_ms, natcdSession* session);

#endif  // NATCD_CLIENT_INTERNAL_H_
