// natcd client library: etcd v3 semantics over NATS, as a C API.
//
// C11, usable from C and C++ (everything is extern "C"). It speaks the wire
// contract of docs/PROTOCOL.md over nats.c and protobuf-c; include it as
// "natcd/client.h" (with -Iadapters/nats/client/include: a directory of
// public headers only, in a namespace of its own rather than nats.c's
// <nats/...>) and link libnatcd_client.a -lnats -lprotobuf-c -lpthread.
//
// Conventions (those of nats.c):
//
// - Every call that can fail returns a natcdStatus; natcdStatus_OK is 0.
//   natcdStatus_GetText() names a status. On failure natcd_GetLastError()
//   gives the details (the service error code and text, the compact
//   revision of an ErrCompacted...) for the calling thread.
// - Arguments: outputs first, then the object, then the inputs.
// - Keys and values are byte arrays with a length (they may hold any byte,
//   NUL included). NATCD_STR("text") expands to the two arguments for a C
//   string. Every natcdKeyValue the library hands out has a NUL byte after
//   its key and after its value (not counted in the lengths), so text keys
//   print as C strings.
// - Objects are opaque and owned by whoever created them; every
//   natcd<Type>_Create/_Start/... has a _Destroy, and _Destroy(NULL) does
//   nothing. Results (natcdRangeResponse...) are plain structs owned by the
//   caller and freed with their _Destroy.
// - Times are milliseconds (int64_t, named *_ms) unless a name says
//   seconds (lease TTLs are seconds, as in etcd). Revisions are int64_t.
//
// Threading. A natcdClient is thread-safe: any thread may use it at once.
// Calls are synchronous (they block for at most the request timeout times
// the attempts). The library runs its own threads: one per natcdWatch (it
// delivers that watch's notices, in order), one per natcdKeepAlive, and one
// per natcdObserver; handlers run on those threads, never on nats.c's
// threads. A handler may call any natcd function except the _Destroy of the
// object it belongs to.
//
// Writes are retried safely: every write (put, delete, txn, compact, lease
// grant and revoke) carries a Natcd-Request-Id header, a random 128-bit id in
// hex, and is retried with the SAME id after a timeout, "no responders",
// 429 or 503, so natcd applies it at most once (PROTOCOL.md, "Idempotent
// retries").
#ifndef NATCD_CLIENT_H_
#define NATCD_CLIENT_H_

#include <nats/nats.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Expands to `s, strlen(s)`: a C string as a key or value argument. */
#define NATCD_STR(s) (s), strlen(s)

// ---------------------------------------------------------------------------
// Status and errors
// ---------------------------------------------------------------------------

/** What a call returned. Service errors map by their Nats-Service-Error-Code. */
typedef enum {
  natcdStatus_OK = 0,           ///< Success.
  natcdStatus_InvalidArg,       ///< A bad argument to the library (NULL output...); nothing sent.
  natcdStatus_NoMemory,         ///< Out of memory.
  natcdStatus_Timeout,          ///< No reply in time after every attempt, or a wait timed out.
  natcdStatus_NoResponders,     ///< No natcd serves the prefix (after every attempt).
  natcdStatus_ConnectionError,  ///< NATS failed otherwise (connection closed...): see nats_status.
  natcdStatus_ProtocolError,    ///< A reply that is not what the protocol says.
  natcdStatus_BadRequest,       ///< 400: ErrInvalidArgument, ErrEmptyKey, ErrFutureRev...
  natcdStatus_NotFound,         ///< 404: ErrLeaseNotFound (and a keepalive answering TTL 0).
  natcdStatus_Conflict,         ///< 409: ErrLeaseExist.
  natcdStatus_Compacted,        ///< 410: ErrCompacted; compact_revision says where history starts.
  natcdStatus_TooLarge,         ///< 413: ErrRequestTooLarge.
  natcdStatus_TooManyRequests,  ///< 429: ErrTooManyRequests (after every attempt).
  natcdStatus_Unavailable,      ///< 503: ErrStopped, ErrUnsupported (after every attempt for
                                ///< ErrStopped).
  natcdStatus_Internal,         ///< 500: ErrIO, ErrCorrupt, ErrInternal.
  natcdStatus_ServiceError,     ///< Any other service error code.
  natcdStatus_Canceled,         ///< The object was canceled or destroyed while the call waited.
  natcdStatus_Locked,           ///< natcdMutex_TryLock: another session holds the lock.
  natcdStatus_SessionExpired,   ///< The session's lease is gone (etcd's ErrSessionExpired).
  natcdStatus_NotLeader,        ///< Election: this campaigner is not the leader.
  natcdStatus_NoLeader,         ///< Election: nobody leads.
  natcdStatus_NoSpace,          ///< 507: ErrNoSpace (the NOSPACE alarm or the backend quota).
} natcdStatus;

/** A static text for a status ("OK", "Timeout"...). Never NULL. */
const char* natcdStatus_GetText(natcdStatus s);

/** Details of a failed call. */
typedef struct natcdError {
  natcdStatus status;        ///< What the call returned.
  int code;                  ///< Nats-Service-Error-Code (400, 410...), 0 if not a service error.
  natsStatus nats_status;    ///< The nats.c status behind Timeout/NoResponders/ConnectionError.
  int64_t compact_revision;  ///< Compacted: the store's compact revision (0 if unknown).
  /// The Nats-Service-Error header ("ErrCompacted: etcdserver: mvcc: ..."),
  /// or the library's own description. Always NUL-terminated (truncated).
  char text[512];
} natcdError;

/**
 * Copies into `*out` the details of the last natcd call on the calling
 * thread that failed (thread-local, like nats_GetLastError). Calls that
 * succeed leave it as it was; read it right after the failure. Returns
 * out->status (natcdStatus_OK if no call on this thread ever failed).
 */
natcdStatus natcd_GetLastError(natcdError* out);

// ---------------------------------------------------------------------------
// Client
// ---------------------------------------------------------------------------

typedef struct natcdClient natcdClient;

/** Client settings; fill with natcdClientOptions_Init, then change fields. */
typedef struct natcdClientOptions {
  /// Subject prefix P ("natcd"). Copied. NULL: "natcd".
  const char* prefix;
  /// Wait for one reply, ms. <= 0: 5000.
  int64_t timeout_ms;
  /// Extra attempts after a timeout, "no responders", 429 or 503 ErrStopped
  /// (writes keep their request id). < 0: 0. Default 3.
  /// \warning natcd remembers a request id for 2 minutes: keep
  /// (retries + 1) * (timeout_ms + backoff_max_ms) well below that, or a
  /// late retry of a write that did happen is applied again.
  int retries;
  /// Pause before the first retry, ms, doubled each time. <= 0: 50.
  int64_t backoff_ms;
  /// Longest pause between attempts, ms. <= 0: 1000.
  int64_t backoff_max_ms;
  /// natcdClient_Connect only: pause between reconnect attempts, ms. <= 0: 250.
  int64_t reconnect_wait_ms;
  /// With auth enabled (etcdctl's --user): the user and its password, both
  /// copied. The client authenticates when it is created (a wrong password
  /// fails there), sends the token in every request's Natcd-Auth-Token
  /// header, and authenticates once more when natcd answers "invalid auth
  /// token" (expired, or natcd restarted) or "revision of auth store is
  /// old". NULL: no user (every request tokenless).
  const char* user;
  const char* password;
} natcdClientOptions;

/** Sets every field of `opts` to its default. */
void natcdClientOptions_Init(natcdClientOptions* opts);

/**
 * Creates a client on a connection the application already has.
 *
 * @param out  receives the client; destroy it with natcdClient_Destroy
 *             before the connection.
 * @param nc   the connection; borrowed, not owned: it must outlive the
 *             client (and every object made from it).
 * @param opts NULL for defaults; copied.
 * \note Watches detect a reconnect of `nc` by its statistics and resume.
 */
natcdStatus natcdClient_Create(natcdClient** out, natsConnection* nc,
                               const natcdClientOptions* opts);

/**
 * Creates a client with its own NATS connection to `url` (comma-separated
 * URLs), which reconnects for ever (opts->reconnect_wait_ms apart) and is
 * closed by natcdClient_Destroy. Fails if no server accepts the first
 * connection (natcdStatus_ConnectionError).
 */
natcdStatus natcdClient_Connect(natcdClient** out, const char* url, const natcdClientOptions* opts);

/** The client's connection (borrowed; owned by the client only after Connect). */
natsConnection* natcdClient_GetConnection(natcdClient* client);

/**
 * Destroys the client (and closes its connection if natcdClient_Connect
 * made it). Destroy every watch, keepalive, session, mutex, election and
 * observer made from it first. NULL: no-op.
 */
void natcdClient_Destroy(natcdClient* client);

// ---------------------------------------------------------------------------
// KV
// ---------------------------------------------------------------------------

/** ResponseHeader: who answered and the store revision after the request. */
typedef struct natcdHeader {
  uint64_t cluster_id;
  uint64_t member_id;
  int64_t revision;
  uint64_t raft_term;
} natcdHeader;

/** One revision of one key. key and value are followed by a NUL byte. */
typedef struct natcdKeyValue {
  const char* key;
  size_t key_len;
  int64_t create_revision;  ///< Revision that created the key (0: none).
  int64_t mod_revision;     ///< Revision of its last change.
  int64_t version;          ///< 1 on create, +1 per put; 0 after a delete.
  const char* value;
  size_t value_len;
  int64_t lease;  ///< Lease ID, 0 for none.
} natcdKeyValue;

/** A natcdKeyValue returned on its own (natcdElection_Leader). NULL: no-op. */
void natcdKeyValue_Destroy(natcdKeyValue* kv);

/**
 * Writes into `buf` the range end that selects every key starting with
 * `key` (the key with its last byte below 0xff incremented and the rest
 * dropped; "\0" — every key — if there is none), and returns its length
 * (1 to key_len). `buf` must hold max(key_len, 1) bytes.
 */
size_t natcdKey_PrefixEnd(char* buf, const void* key, size_t key_len);

typedef enum {
  natcdSortOrder_None = 0,  ///< Key order.
  natcdSortOrder_Ascend = 1,
  natcdSortOrder_Descend = 2,
} natcdSortOrder;

typedef enum {
  natcdSortTarget_Key = 0,
  natcdSortTarget_Version = 1,
  natcdSortTarget_Create = 2,
  natcdSortTarget_Mod = 3,
  natcdSortTarget_Value = 4,
} natcdSortTarget;

/**
 * Range options; all zero (or a NULL pointer) is etcd's default: the key
 * alone, latest revision, linearizable, key order. Pointers are borrowed
 * for the duration of the call.
 */
typedef struct natcdRangeOptions {
  const void* range_end;  ///< End of the range, exclusive; NULL: the key alone.
  size_t range_end_len;
  bool prefix;       ///< Every key starting with key (range_end ignored).
  bool from_key;     ///< Every key >= key (range_end "\0"; range_end ignored).
  int64_t limit;     ///< At most this many keys; 0: no limit.
  int64_t revision;  ///< Read as of this revision; <= 0: latest.
  natcdSortOrder sort_order;
  natcdSortTarget sort_target;
  bool serializable;         ///< Serve from the member that receives it (may be stale).
  bool keys_only;            ///< Leave values out.
  bool count_only;           ///< Count only, no keys.
  int64_t min_mod_revision;  ///< Revision filters; 0: no bound.
  int64_t max_mod_revision;
  int64_t min_create_revision;
  int64_t max_create_revision;
} natcdRangeOptions;

/** RangeResponse. Owns everything it points to. */
typedef struct natcdRangeResponse {
  natcdHeader header;
  natcdKeyValue* kvs;  ///< n_kvs keys (none for count_only).
  size_t n_kvs;
  bool more;      ///< The limit cut the answer.
  int64_t count;  ///< Keys in the range, regardless of the limit.
} natcdRangeResponse;

/**
 * Reads `key` (or the range that opts gives).
 *
 * @param resp receives the response; free with natcdRangeResponse_Destroy.
 * @param key  at least one byte; borrowed.
 */
natcdStatus natcdKV_Get(natcdRangeResponse** resp, natcdClient* client, const void* key,
                        size_t key_len, const natcdRangeOptions* opts);

/** Frees a response from natcdKV_Get. Not for the ones inside a txn response. NULL: no-op. */
void natcdRangeResponse_Destroy(natcdRangeResponse* resp);

/** Put options; zero or NULL: no lease, no prev_kv. */
typedef struct natcdPutOptions {
  int64_t lease;      ///< Attach to this lease; 0 detaches.
  bool prev_kv;       ///< Return the key as it was.
  bool ignore_value;  ///< Keep the current value (the key must exist; value must be empty).
  bool ignore_lease;  ///< Keep the current lease (the key must exist; lease must be 0).
} natcdPutOptions;

/** PutResponse. Owns prev_kv. */
typedef struct natcdPutResponse {
  natcdHeader header;
  natcdKeyValue* prev_kv;  ///< The previous key, when asked for and it existed; else NULL.
} natcdPutResponse;

/**
 * Writes `key` = `value` (a write: carries a request id, retried safely).
 *
 * @param resp NULL if the response is not wanted; else free it with
 *             natcdPutResponse_Destroy.
 */
natcdStatus natcdKV_Put(natcdPutResponse** resp, natcdClient* client, const void* key,
                        size_t key_len, const void* value, size_t value_len,
                        const natcdPutOptions* opts);

/** NULL: no-op. Not for the ones inside a txn response. */
void natcdPutResponse_Destroy(natcdPutResponse* resp);

/** Delete options; zero or NULL: the key alone. */
typedef struct natcdDeleteOptions {
  const void* range_end;  ///< NULL: the key alone.
  size_t range_end_len;
  bool prefix;    ///< Every key starting with key.
  bool from_key;  ///< Every key >= key.
  bool prev_kv;   ///< Return the deleted keys.
} natcdDeleteOptions;

/** DeleteRangeResponse. Owns everything it points to. */
typedef struct natcdDeleteResponse {
  natcdHeader header;
  int64_t deleted;          ///< Keys deleted.
  natcdKeyValue* prev_kvs;  ///< When asked for: the deleted keys.
  size_t n_prev_kvs;
} natcdDeleteResponse;

/** Deletes `key` or a range (a write). resp may be NULL. */
natcdStatus natcdKV_Delete(natcdDeleteResponse** resp, natcdClient* client, const void* key,
                           size_t key_len, const natcdDeleteOptions* opts);

/** NULL: no-op. Not for the ones inside a txn response. */
void natcdDeleteResponse_Destroy(natcdDeleteResponse* resp);

/**
 * Drops history below `revision` (a write). `physical`: answer only once
 * the compaction is on disk. header may be NULL.
 */
natcdStatus natcdKV_Compact(natcdHeader* header, natcdClient* client, int64_t revision,
                            bool physical);

// ---------------------------------------------------------------------------
// Txn builder
// ---------------------------------------------------------------------------

typedef struct natcdTxn natcdTxn;

typedef enum {
  natcdCompare_Equal = 0,
  natcdCompare_Greater = 1,
  natcdCompare_Less = 2,
  natcdCompare_NotEqual = 3,
} natcdCompareOp;

typedef enum {
  natcdCompareTarget_Version = 0,
  natcdCompareTarget_Create = 1,  ///< create_revision
  natcdCompareTarget_Mod = 2,     ///< mod_revision
  natcdCompareTarget_Value = 3,
  natcdCompareTarget_Lease = 4,
} natcdCompareTarget;

/** An empty transaction (no compares: the Then branch applies). */
natcdStatus natcdTxn_Create(natcdTxn** out);
/** NULL: no-op. */
void natcdTxn_Destroy(natcdTxn* txn);

/**
 * Adds a compare: `target` of the key (or of every key in [key, range_end)
 * when range_end is not NULL) `op` the operand: `number` for version,
 * create, mod and lease, `value`/`value_len` for value. Everything is
 * copied. The If* below are shorthands without a range end.
 */
natcdStatus natcdTxn_If(natcdTxn* txn, natcdCompareTarget target, natcdCompareOp op,
                        const void* key, size_t key_len, const void* range_end,
                        size_t range_end_len, int64_t number, const void* value, size_t value_len);
natcdStatus natcdTxn_IfVersion(natcdTxn* txn, const void* key, size_t key_len, natcdCompareOp op,
                               int64_t version);
natcdStatus natcdTxn_IfCreateRevision(natcdTxn* txn, const void* key, size_t key_len,
                                      natcdCompareOp op, int64_t revision);
natcdStatus natcdTxn_IfModRevision(natcdTxn* txn, const void* key, size_t key_len,
                                   natcdCompareOp op, int64_t revision);
natcdStatus natcdTxn_IfLease(natcdTxn* txn, const void* key, size_t key_len, natcdCompareOp op,
                             int64_t lease);
natcdStatus natcdTxn_IfValue(natcdTxn* txn, const void* key, size_t key_len, natcdCompareOp op,
                             const void* value, size_t value_len);

/** Operations of the success (Then) and failure (Else) branches; arguments are copied. */
natcdStatus natcdTxn_ThenPut(natcdTxn* txn, const void* key, size_t key_len, const void* value,
                             size_t value_len, const natcdPutOptions* opts);
natcdStatus natcdTxn_ThenGet(natcdTxn* txn, const void* key, size_t key_len,
                             const natcdRangeOptions* opts);
natcdStatus natcdTxn_ThenDelete(natcdTxn* txn, const void* key, size_t key_len,
                                const natcdDeleteOptions* opts);
/** A nested txn, copied as it is now (the caller keeps and destroys `nested`). */
natcdStatus natcdTxn_ThenTxn(natcdTxn* txn, const natcdTxn* nested);
natcdStatus natcdTxn_ElsePut(natcdTxn* txn, const void* key, size_t key_len, const void* value,
                             size_t value_len, const natcdPutOptions* opts);
natcdStatus natcdTxn_ElseGet(natcdTxn* txn, const void* key, size_t key_len,
                             const natcdRangeOptions* opts);
natcdStatus natcdTxn_ElseDelete(natcdTxn* txn, const void* key, size_t key_len,
                                const natcdDeleteOptions* opts);
natcdStatus natcdTxn_ElseTxn(natcdTxn* txn, const natcdTxn* nested);

typedef enum {
  natcdOp_Range = 1,
  natcdOp_Put = 2,
  natcdOp_Delete = 3,
  natcdOp_Txn = 4,
} natcdOpType;

typedef struct natcdTxnResponse natcdTxnResponse;

/** The response of one operation of the applied branch, in order. */
typedef struct natcdOpResponse {
  natcdOpType type;  ///< Which member is set.
  natcdRangeResponse* range;
  natcdPutResponse* put;
  natcdDeleteResponse* del;
  natcdTxnResponse* txn;
} natcdOpResponse;

/** TxnResponse. Owns everything it points to, nested responses included. */
struct natcdTxnResponse {
  natcdHeader header;
  bool succeeded;  ///< The compares held: the Then branch was applied.
  natcdOpResponse* responses;
  size_t n_responses;
};

/**
 * Commits `txn` (a write; the txn itself is unchanged and may be committed
 * again). resp may be NULL; else free it with natcdTxnResponse_Destroy.
 */
natcdStatus natcdTxn_Commit(natcdTxnResponse** resp, natcdClient* client, const natcdTxn* txn);

/** Frees a txn response and everything in it. NULL: no-op. */
void natcdTxnResponse_Destroy(natcdTxnResponse* resp);

// ---------------------------------------------------------------------------
// Leases
// ---------------------------------------------------------------------------

/**
 * Grants a lease of `ttl_seconds` (raised to natcd's --lease-ttl-min).
 *
 * @param id  receives the lease ID.
 * @param granted_ttl_seconds NULL, or receives the TTL granted.
 * @param requested_id 0: natcd chooses.
 */
natcdStatus natcdLease_Grant(int64_t* id, int64_t* granted_ttl_seconds, natcdClient* client,
                             int64_t ttl_seconds, int64_t requested_id);

/** Ends a lease and deletes its keys (a write). Unknown lease: natcdStatus_NotFound. */
natcdStatus natcdLease_Revoke(natcdClient* client, int64_t id);

/**
 * Renews a lease once. ttl_seconds receives the renewed TTL; a lease that
 * does not exist (any more) is natcdStatus_NotFound.
 */
natcdStatus natcdLease_KeepAliveOnce(int64_t* ttl_seconds, natcdClient* client, int64_t id);

/** LeaseTimeToLiveResponse. Owns its keys. */
typedef struct natcdLeaseTimeToLive {
  natcdHeader header;
  int64_t id;
  int64_t ttl_seconds;          ///< Seconds left; -1: no such lease.
  int64_t granted_ttl_seconds;  ///< The TTL it was granted with.
  const char** keys;            ///< When asked for: the attached keys (NUL-terminated too).
  size_t* key_lens;
  size_t n_keys;
} natcdLeaseTimeToLive;

/** Time left of a lease (ttl_seconds -1 if it does not exist), with its keys if `keys`. */
natcdStatus natcdLease_TimeToLive(natcdLeaseTimeToLive** out, natcdClient* client, int64_t id,
                                  bool keys);
/** NULL: no-op. */
void natcdLeaseTimeToLive_Destroy(natcdLeaseTimeToLive* ttl);

/**
 * Lists every lease. *ids receives a malloc'ed array of *n_ids IDs (NULL
 * when there are none); free it with free().
 */
natcdStatus natcdLease_Leases(int64_t** ids, size_t* n_ids, natcdClient* client);

typedef struct natcdKeepAlive natcdKeepAlive;

/**
 * Called once, on the keepalive's thread, when the lease is lost: `reason`
 * is natcdStatus_NotFound when natcd answered that the lease is gone
 * (revoked or expired), natcdStatus_Timeout when no renewal succeeded for a
 * whole TTL (natcd unreachable: the lease may have expired). The keepalive
 * then stops renewing.
 */
typedef void (*natcdKeepAliveHandler)(natcdKeepAlive* ka, int64_t lease_id, natcdStatus reason,
                                      void* closure);

/**
 * Keeps a lease alive in the background. Renews once synchronously (so an
 * unknown lease fails here with natcdStatus_NotFound), learns the TTL from
 * that reply, then renews every TTL/3 from its own thread; after a failed
 * renewal it retries every min(TTL/3, 500 ms) — through NATS reconnects and
 * natcd restarts — until a renewal succeeds or a whole TTL has passed since
 * the last one that did (then `handler` is called, see above).
 *
 * @param handler NULL: nobody is told (see natcdKeepAlive_IsAlive).
 */
natcdStatus natcdKeepAlive_Start(natcdKeepAlive** out, natcdClient* client, int64_t lease_id,
                                 natcdKeepAliveHandler handler, void* closure);

/**
 * alive: false once the lease was found lost; ttl_seconds: the TTL of the
 * last successful renewal. Either may be NULL.
 */
natcdStatus natcdKeepAlive_IsAlive(bool* alive, int64_t* ttl_seconds, natcdKeepAlive* ka);

/** Stops renewing (the lease is not revoked) and joins the thread. Idempotent. */
void natcdKeepAlive_Stop(natcdKeepAlive* ka);
/** Stops and frees. NULL: no-op. Not from its own handler. */
void natcdKeepAlive_Destroy(natcdKeepAlive* ka);

// ---------------------------------------------------------------------------
// Watch
// ---------------------------------------------------------------------------

typedef struct natcdWatch natcdWatch;

typedef enum {
  natcdEventType_Put = 0,
  natcdEventType_Delete = 1,
} natcdEventType;

typedef enum {
  /// One event; each event of the range is delivered exactly once, in
  /// revision order (and in order within a revision).
  natcdWatchNotice_Event = 0,
  /// Progress: every event up to `revision` has been delivered. Only for
  /// watches with progress_notify, or after natcdWatch_RequestProgress.
  natcdWatchNotice_Progress = 1,
  /// The watch needed history that was compacted (at creation from an old
  /// revision, or when it resumed after an outage): events from `revision`
  /// to compact_revision - 1 are lost. The watch has ENDED: read the state
  /// again and create a new watch.
  natcdWatchNotice_Compacted = 2,
  /// The watch ended on an error it cannot resume from (e.g. natcd rejected
  /// the re-created watch with 400): `status` and `text` say which.
  natcdWatchNotice_Failed = 3,
} natcdWatchNoticeKind;

/** What the watch handler gets. Everything is borrowed for the call only. */
typedef struct natcdWatchNotice {
  natcdWatchNoticeKind kind;
  /// Event: the event's revision (kv->mod_revision). Progress: the bookmark.
  /// Compacted: the first revision the watch still needed.
  int64_t revision;
  int64_t compact_revision;      ///< Compacted: the oldest revision still available.
  natcdEventType type;           ///< Event.
  const natcdKeyValue* kv;       ///< Event: the key after the event (delete: key and mod_revision).
  const natcdKeyValue* prev_kv;  ///< Event with prev_kv: the key before, if it existed; else NULL.
  bool last_in_revision;         ///< Event: the last event of its revision (txn boundary).
  natcdStatus status;            ///< Failed.
  const char* text;              ///< Failed: a description. Else NULL.
} natcdWatchNotice;

/** Called on the watch's own thread, one notice at a time. */
typedef void (*natcdWatchHandler)(natcdWatch* watch, const natcdWatchNotice* notice, void* closure);

/** Watch options; zero or NULL: puts and deletes, no prev_kv. */
typedef struct natcdWatchOptions {
  bool prefix;    ///< Every key starting with key (range_end must be NULL).
  bool from_key;  ///< Every key >= key (range_end must be NULL).
  bool prev_kv;
  bool no_put;           ///< Drop put events.
  bool no_delete;        ///< Drop delete events.
  bool progress_notify;  ///< Ask natcd for periodic progress notices (and deliver them).
  /// natcd's --watch-heartbeat-ms (default 5000). The watch assumes its
  /// stream is dead, and re-creates it, after 3 heartbeats of silence.
  int64_t heartbeat_ms;
  /// Do not join a watch group (PROTOCOL.md, "Watch groups"): the watch
  /// keeps a stream of its own. By default a watch that has caught up moves
  /// to the group of its shape, whose messages natcd publishes once for all
  /// of its members.
  bool no_group;
  /// Group messages that may wait for the handler (0: nats.c's default,
  /// 65536). Beyond it NATS drops them; the watch sees the gap and resumes
  /// from the last revision delivered, catching up from natcd's history
  /// with flow control, so a slow handler costs the others nothing.
  int group_pending_msgs;
} natcdWatchOptions;

/**
 * Watches [key, range_end) from `start_revision` (<= 0: from the next
 * change) and calls `handler` for each event, once, in revision order.
 *
 * The first P.watch.create happens here (with the client's retries): a
 * watch from a compacted revision fails with natcdStatus_Compacted (and
 * compact_revision in natcd_GetLastError). From then on the watch's thread
 * acknowledges each message after the handler returns, and re-creates the
 * watch from the last revision delivered + 1 — on a new inbox, so nothing
 * of the old stream is mixed in — after: a seq gap (lost message), a cancel
 * from natcd (slow consumer, reclaimed, server shutting down...), a NATS
 * reconnect, or 3 heartbeats of silence (natcd gone); while natcd is
 * unreachable it keeps trying (backoff up to the client's backoff_max_ms).
 * Events at or below the last delivered revision are dropped, so no event
 * is delivered twice; a revision is delivered only whole (fragments are
 * reassembled first), so none is cut in two by a resume.
 *
 * @param key       borrowed (copied); range_end NULL: the key alone (or see opts).
 * @param handler   required.
 */
natcdStatus natcdWatch_Create(natcdWatch** out, natcdClient* client, const void* key,
                              size_t key_len, const void* range_end, size_t range_end_len,
                              int64_t start_revision, const natcdWatchOptions* opts,
                              natcdWatchHandler handler, void* closure);

/**
 * Asks natcd for a progress notice (etcd's RequestProgress); it reaches the
 * handler as natcdWatchNotice_Progress once every event up to its revision
 * was delivered.
 */
natcdStatus natcdWatch_RequestProgress(natcdWatch* watch);

/** Counters, for monitoring and tests. */
typedef struct natcdWatchStats {
  int64_t last_revision;         ///< Every event up to this revision was delivered.
  int64_t events;                ///< Events delivered.
  int64_t resumes;               ///< Times the watch was re-created.
  int64_t gaps;                  ///< Resumes caused by a seq gap.
  int64_t server_cancels;        ///< Resumes caused by a cancel from natcd (slow consumer...).
  int64_t silences;              ///< Resumes caused by heartbeat silence.
  int64_t reconnects;            ///< Resumes caused by a NATS reconnect.
  int64_t duplicates;            ///< Events dropped because they were already delivered.
  bool ended;                    ///< Canceled, compacted or failed.
  char last_cancel_reason[128];  ///< The last cancel_reason natcd sent.
  int64_t group_joins;           ///< Times the watch was handed over to a group.
  bool in_group;                 ///< Its stream is a group's now.
} natcdWatchStats;

natcdStatus natcdWatch_GetStats(natcdWatchStats* stats, natcdWatch* watch);

/**
 * Stops the watch: once it returns the handler is not running and is not
 * called again (called from the handler itself: no notice after the handler
 * returns). Tells natcd (P.watch.cancel, best effort). Idempotent.
 */
void natcdWatch_Cancel(natcdWatch* watch);
/** Cancels and frees. NULL: no-op. Not from the watch's own handler. */
void natcdWatch_Destroy(natcdWatch* watch);

// ---------------------------------------------------------------------------
// Concurrency recipes (etcd's clientv3/concurrency): session, mutex, election
// ---------------------------------------------------------------------------

typedef struct natcdSession natcdSession;

/**
 * Called once, on the keepalive's thread, when the session's lease is lost
 * (see natcdKeepAliveHandler). It must not destroy the session.
 */
typedef void (*natcdSessionHandler)(natcdSession* session, void* closure);

/**
 * A lease of `ttl_seconds` kept alive in the background (natcdKeepAlive).
 * Keys a mutex or an election writes are attached to it, so they vanish
 * when the process holding them dies. handler may be NULL.
 */
natcdStatus natcdSession_Create(natcdSession** out, natcdClient* client, int64_t ttl_seconds,
                                natcdSessionHandler handler, void* closure);
/** The session's lease ID. */
int64_t natcdSession_Lease(const natcdSession* session);
/** The session's client (borrowed). */
natcdClient* natcdSession_GetClient(const natcdSession* session);
/** True once the lease was found lost (or the session orphaned). */
bool natcdSession_IsExpired(natcdSession* session);
/**
 * Stops renewing without revoking: the lease, and what holds on it, expires
 * after its TTL (as if the process had died). The session stays usable for
 * natcdSession_Lease and _Destroy only.
 */
void natcdSession_Orphan(natcdSession* session);
/**
 * Stops renewing and revokes the lease (best effort; not after _Orphan),
 * which releases every lock and leadership it held at once. NULL: no-op.
 */
void natcdSession_Destroy(natcdSession* session);

typedef struct natcdMutex natcdMutex;

/**
 * A distributed mutex under `prefix` (etcd's concurrency.Mutex): the lock
 * key is "<prefix>/<lease ID in hex>" attached to the session's lease.
 * Waiters queue in the order they asked (by create revision): fair FIFO. A
 * holder whose session dies releases the lock when its lease expires.
 * The session is borrowed: destroy the mutex first.
 */
natcdStatus natcdMutex_Create(natcdMutex** out, natcdSession* session, const char* prefix);

/**
 * Takes the lock, waiting at most `timeout_ms` (< 0: for ever). On timeout
 * (natcdStatus_Timeout) the place in the queue is given up. Fails with
 * natcdStatus_SessionExpired if the session's lease is gone.
 */
natcdStatus natcdMutex_Lock(natcdMutex* mutex, int64_t timeout_ms);
/** Takes the lock only if nobody holds it; else natcdStatus_Locked. */
natcdStatus natcdMutex_TryLock(natcdMutex* mutex);
/** Releases the lock (deletes the lock key). */
natcdStatus natcdMutex_Unlock(natcdMutex* mutex);
/** The lock key (borrowed, NUL-terminated) and the revision that created it (0 if not held). */
const char* natcdMutex_Key(const natcdMutex* mutex, int64_t* create_revision);
/** Frees the mutex; does not unlock. NULL: no-op. */
void natcdMutex_Destroy(natcdMutex* mutex);

typedef struct natcdElection natcdElection;

/**
 * An election under `prefix` (etcd's concurrency.Election). Campaigners
 * write "<prefix>/<lease ID in hex>" = value under their session's lease;
 * the leader is the key with the smallest create revision.
 *
 * @param session NULL for an election that only observes (Leader, Observe);
 *                borrowed: destroy the election first.
 */
natcdStatus natcdElection_Create(natcdElection** out, natcdClient* client, natcdSession* session,
                                 const char* prefix);

/**
 * Campaigns with `value` and blocks until this campaigner leads, at most
 * `timeout_ms` (< 0: for ever). On timeout the candidacy is withdrawn.
 * natcdStatus_SessionExpired if the session's lease is gone.
 */
natcdStatus natcdElection_Campaign(natcdElection* election, const void* value, size_t value_len,
                                   int64_t timeout_ms);
/** The leader announces a new value; natcdStatus_NotLeader if not leading any more. */
natcdStatus natcdElection_Proclaim(natcdElection* election, const void* value, size_t value_len);
/** Gives up leadership (no-op if not leading). */
natcdStatus natcdElection_Resign(natcdElection* election);
/** The current leader's key and value; natcdStatus_NoLeader if none. Free with
 * natcdKeyValue_Destroy. */
natcdStatus natcdElection_Leader(natcdKeyValue** leader, natcdElection* election);

typedef struct natcdObserver natcdObserver;

/**
 * Called each time the leadership changes: a new leader, a new value
 * proclaimed, or (leader NULL) nobody leads. Borrowed for the call.
 */
typedef void (*natcdObserveHandler)(natcdObserver* observer, const natcdKeyValue* leader,
                                    void* closure);

/**
 * Follows the election's leader: calls `handler` with the current leader
 * (or NULL) once before returning, on the calling thread, then on every
 * change, on the observer's own thread (an internal watch on the prefix),
 * until destroyed.
 */
natcdStatus natcdElection_Observe(natcdObserver** out, natcdElection* election,
                                  natcdObserveHandler handler, void* closure);
/** Stops observing. NULL: no-op. Not from its own handler. */
void natcdObserver_Destroy(natcdObserver* observer);

/** Frees the election; does not resign. NULL: no-op. */
void natcdElection_Destroy(natcdElection* election);

// ---------------------------------------------------------------------------
// Maintenance and cluster (etcd's Maintenance and Cluster services)
// ---------------------------------------------------------------------------

/** StatusResponse: one member's view. Owns everything it points to. */
typedef struct natcdStatusResponse {
  natcdHeader header;  ///< header.member_id: the member that answered.
  const char* version;
  int64_t db_size;         ///< Size of the database file, in bytes.
  int64_t db_size_in_use;  ///< Bytes of it in use.
  uint64_t leader;         ///< Member ID of the leader; 0: none known.
  uint64_t raft_index;
  uint64_t raft_term;
  uint64_t raft_applied_index;
  bool is_learner;
  const char** errors;  ///< n_errors messages (alarms, a failed disk...).
  size_t n_errors;
} natcdStatusResponse;

/** The status of whichever member the request reaches (P.maint.status). */
natcdStatus natcdMaint_Status(natcdStatusResponse** resp, natcdClient* client);

/**
 * The status of the member `member_id` itself, asked on
 * P.to.<member ID as 16 hex digits>.maint.status (etcdctl's `endpoint
 * status --cluster`). A member that is down is natcdStatus_NoResponders.
 */
natcdStatus natcdMaint_MemberStatus(natcdStatusResponse** resp, natcdClient* client,
                                    uint64_t member_id);

/** NULL: no-op. */
void natcdStatusResponse_Destroy(natcdStatusResponse* resp);

/** HashKVResponse (etcd's): one member's hash of its MVCC state. */
typedef struct natcdHashKVResponse {
  natcdHeader header;        ///< header.member_id: the member that answered.
  uint32_t hash;             ///< CRC-32C; compare between members of one natcd version.
  int64_t compact_revision;  ///< The compaction in force (0: none).
  int64_t hash_revision;     ///< The revision hashed up to.
} natcdHashKVResponse;

/**
 * The hash of the MVCC state (every kept write up to `revision`; 0: the
 * current revision) of whichever member the request reaches
 * (P.maint.hashkv). Healthy members that applied the same log answer the
 * same hash for the same revision and compact revision. Below the compact
 * revision: natcdStatus_Compacted; past the current one:
 * natcdStatus_BadRequest (ErrFutureRev).
 */
natcdStatus natcdMaint_HashKV(natcdHashKVResponse* resp, natcdClient* client, int64_t revision);

/**
 * The same, of the member `member_id` itself (P.to.<member ID as 16 hex
 * digits>.maint.hashkv: etcdctl's `endpoint hashkv --cluster`). A member
 * that is down is natcdStatus_NoResponders.
 */
natcdStatus natcdMaint_MemberHashKV(natcdHashKVResponse* resp, natcdClient* client,
                                    uint64_t member_id, int64_t revision);

/**
 * etcd's Hash, for tests only: a hash of the whole stored state of the
 * member the request reaches (P.maint.hash). header: NULL, or receives the
 * answer's header.
 */
natcdStatus natcdMaint_Hash(uint32_t* hash, natcdHeader* header, natcdClient* client);

/**
 * Defragments the database of whichever member the request reaches
 * (P.maint.defrag): it gives the space compaction freed back to the file
 * system, serving nothing meanwhile. header: NULL, or receives the answer's
 * header (header.member_id: the member defragmented).
 */
natcdStatus natcdMaint_Defragment(natcdHeader* header, natcdClient* client);

/** The same, of the member `member_id` (P.to.<member ID>.maint.defrag). */
natcdStatus natcdMaint_MemberDefragment(natcdHeader* header, natcdClient* client,
                                        uint64_t member_id);

/**
 * Hands leadership to `target_id` and returns once it leads (a no-op when
 * it leads already). header: NULL, or receives the answer's header.
 */
natcdStatus natcdMaint_MoveLeader(natcdHeader* header, natcdClient* client, uint64_t target_id);

/** etcd's AlarmType. */
typedef enum {
  natcdAlarm_None = 0,
  natcdAlarm_NoSpace = 1,  ///< A member's database passed --quota-backend-bytes.
  natcdAlarm_Corrupt = 2,  ///< A member's HashKV differs from the leader's.
} natcdAlarmType;

/** etcd's AlarmRequest.AlarmAction. */
typedef enum {
  natcdAlarmAction_Get = 0,         ///< List every raised alarm.
  natcdAlarmAction_Activate = 1,    ///< Raise `alarm` for `member_id`.
  natcdAlarmAction_Deactivate = 2,  ///< Clear it (etcdctl's `alarm disarm`).
} natcdAlarmAction;

/** One raised alarm: which member, what. */
typedef struct natcdAlarmMember {
  uint64_t member_id;
  natcdAlarmType alarm;
} natcdAlarmMember;

/** AlarmResponse (etcd's). Owns everything it points to. */
typedef struct natcdAlarmResponse {
  natcdHeader header;
  natcdAlarmMember* alarms;  ///< n_alarms alarms, by member ID then type.
  size_t n_alarms;
} natcdAlarmResponse;

/**
 * etcd's Maintenance.Alarm (P.maint.alarm, served by the leader): Get lists
 * every raised alarm (member_id and alarm ignored); Activate and Deactivate
 * raise or clear `alarm` for `member_id` through the Raft log and answer
 * the alarm changed (none when deactivating one that is not raised).
 * natcdStatus_BadRequest for an alarm other than NoSpace/Corrupt, or a
 * member ID that is not in the cluster (ErrMemberNotFound; deactivating an
 * alarm of a member removed since is allowed); nothing changes then.
 */
natcdStatus natcdMaint_Alarm(natcdAlarmResponse** resp, natcdClient* client,
                             natcdAlarmAction action, uint64_t member_id, natcdAlarmType alarm);

/** NULL: no-op. */
void natcdAlarmResponse_Destroy(natcdAlarmResponse* resp);

/** etcd's names: "NONE", "NOSPACE", "CORRUPT"; "UNKNOWN" for any other. */
const char* natcdAlarmType_GetText(natcdAlarmType alarm);

/** What a backup holds (natcdMaint_Snapshot, natcdMaint_SnapshotSave). */
typedef struct natcdSnapshotInfo {
  natcdHeader header;    ///< header.member_id: the member copied; header.revision: the
                         ///< revision the backup holds.
  uint64_t total_bytes;  ///< The stream: the database, then its 32-byte SHA-256.
  char sha256_hex[65];   ///< That SHA-256 (checked), in lowercase hex.
} natcdSnapshotInfo;

/**
 * Takes a piece of a backup's stream, in order (the last 32 bytes are the
 * SHA-256 of all before them). Return false to stop: the call then ends
 * with natcdStatus_Canceled.
 */
typedef bool (*natcdSnapshotHandler)(const void* data, size_t len, void* closure);

/**
 * An online backup of one member's database (P.maint.snapshot; etcd's
 * Maintenance.Snapshot): a consistent copy as of one commit, taken while
 * the cluster serves, handed to `handler` chunk by chunk as fast as it
 * takes them. member_id 0: whichever member the request reaches; otherwise
 * that member (P.to.<member ID>.maint.snapshot). The SHA-256 at the end
 * is checked: a mismatch is natcdStatus_ProtocolError (after the handler
 * had every byte: a caller writing a file must not keep it then). info:
 * NULL, or what the backup holds. Taking the copy may take a while: the
 * first reply may wait up to twelve times the client's timeout (1 minute
 * at least).
 */
natcdStatus natcdMaint_Snapshot(natcdSnapshotInfo* info, natcdClient* client, uint64_t member_id,
                                natcdSnapshotHandler handler, void* closure);

/**
 * natcdMaint_Snapshot into the file at `path` (etcdctl's snapshot save):
 * written as path + ".part", fsync'd, and renamed to path only once the
 * checksum matched, so `path` is complete or untouched.
 */
natcdStatus natcdMaint_SnapshotSave(natcdSnapshotInfo* info, natcdClient* client,
                                    uint64_t member_id, const char* path);

/** One member of the cluster. */
typedef struct natcdMember {
  uint64_t id;
  const char* name;  ///< Empty for a member added but not started yet.
  const char** peer_urls;
  size_t n_peer_urls;
  const char** client_urls;
  size_t n_client_urls;
  bool is_learner;
} natcdMember;

/** The members after a call (every member call answers them). Owns everything. */
typedef struct natcdMemberResponse {
  natcdHeader header;
  natcdMember* members;
  size_t n_members;
  const natcdMember* added;  ///< natcdMember_Add: the member just added; else NULL.
} natcdMemberResponse;

/**
 * Lists the members (answered by the leader). For add, remove and promote
 * `resp` may be NULL (the change alone).
 */
natcdStatus natcdMember_List(natcdMemberResponse** resp, natcdClient* client);

/**
 * Adds a member by its name (its ID derives from it); start it then with
 * that --name and --initial-cluster-state existing. Committed when it
 * returns. Not retried (a second add would be refused as a duplicate).
 */
natcdStatus natcdMember_Add(natcdMemberResponse** resp, natcdClient* client, const char* name,
                            bool is_learner);
/** Removes a member. Not retried. */
natcdStatus natcdMember_Remove(natcdMemberResponse** resp, natcdClient* client, uint64_t id);
/** Makes a learner a voter once it has caught up. Not retried. */
natcdStatus natcdMember_Promote(natcdMemberResponse** resp, natcdClient* client, uint64_t id);
/**
 * Sets a member's peer URLs (etcd's MemberUpdate; at least one), listed
 * from then on instead of its Raft subject. natcdStatus_BadRequest with
 * etcd's texts: "etcdserver: member not found" for an unknown ID,
 * "etcdserver: Peer URLs already exists" for a URL another member has.
 * Not retried.
 */
natcdStatus natcdMember_Update(natcdMemberResponse** resp, natcdClient* client, uint64_t id,
                               const char** peer_urls, size_t n_peer_urls);

/** NULL: no-op. */
void natcdMemberResponse_Destroy(natcdMemberResponse* resp);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // NATCD_CLIENT_H_
