// The client: connection, request-reply with safe retries, time helpers.
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

// --- time ------------------------------------------------------------------

int64_t _nowMs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void _sleepMs(int64_t ms) {
  if (ms <= 0) return;
  struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

struct timespec _deadlineIn(int64_t ms) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  if (ms < 0) ms = 0;
  ts.tv_sec += ms / 1000;
  ts.tv_nsec += (ms % 1000) * 1000000;
  if (ts.tv_nsec >= 1000000000) {
    ts.tv_sec += 1;
    ts.tv_nsec -= 1000000000;
  }
  return ts;
}

int _condInit(pthread_cond_t* cond) {
  pthread_condattr_t attr;
  int rc = pthread_condattr_init(&attr);
  if (rc == 0) rc = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  if (rc == 0) rc = pthread_cond_init(cond, &attr);
  pthread_condattr_destroy(&attr);
  return rc;
}

bool _condWaitMs(pthread_cond_t* cond, pthread_mutex_t* mu, int64_t ms) {
  struct timespec deadline = _deadlineIn(ms);
  return pthread_cond_timedwait(cond, mu, &deadline) == ETIMEDOUT;
}

void _randomHex128(char out[33]) {
  static const char kHex[] = "0123456789abcdef";
  uint8_t bytes[16];
  size_t got = 0;
  while (got < sizeof bytes) {
    ssize_t n = getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      // No getrandom (very old kernel): still unique enough per process.
      uint64_t x = (uint64_t)_nowMs() ^ ((uint64_t)(uintptr_t)&got << 17) ^ (uint64_t)rand();
      for (; got < sizeof bytes; ++got) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        bytes[got] = (uint8_t)(x >> 56);
      }
      break;
    }
    got += (size_t)n;
  }
  for (size_t i = 0; i < sizeof bytes; ++i) {
    out[2 * i] = kHex[bytes[i] >> 4];
    out[2 * i + 1] = kHex[bytes[i] & 0xf];
  }
  out[32] = '\0';
}

// --- client ----------------------------------------------------------------

void natcdClientOptions_Init(natcdClientOptions* opts) {
  if (opts == NULL) return;
  memset(opts, 0, sizeof *opts);
  opts->prefix = NATCD_DEFAULT_PREFIX;
  opts->timeout_ms = 5000;
  opts->retries = 3;
  opts->backoff_ms = 50;
  opts->backoff_max_ms = 1000;
  opts->reconnect_wait_ms = 250;
}

// `urls` (comma-separated) as nats.c's server pool: natsOptions_SetURL
// takes a single URL.
static natsStatus _setServers(natsOptions* nopts, const char* urls) {
  size_t n = 1;
  for (const char* p = urls; *p != '\0'; p++) n += *p == ',';
  char* copy = strdup(urls);
  const char** servers = calloc(n, sizeof *servers);
  if (copy == NULL || servers == NULL) {
    free(copy);
    free(servers);
    return NATS_NO_MEMORY;
  }
  int count = 0;
  char* save = NULL;
  for (char* url = strtok_r(copy, ",", &save); url != NULL; url = strtok_r(NULL, ",", &save)) {
    if (*url != '\0') servers[count++] = url;
  }
  natsStatus ns = count > 0 ? natsOptions_SetServers(nopts, servers, count) : NATS_INVALID_ARG;
  free(servers);
  free(copy);
  return ns;
}

static natcdStatus _clientNew(natcdClient** out, const natcdClientOptions* given) {
  natcdClientOptions opts;
  natcdClientOptions_Init(&opts);
  if (given != NULL) opts = *given;
  natcdClient* c = calloc(1, sizeof *c);
  if (c == NULL) return _setError(natcdStatus_NoMemory, "out of memory");
  const char* prefix =
      opts.prefix != NULL && opts.prefix[0] != '\0' ? opts.prefix : NATCD_DEFAULT_PREFIX;
  c->prefix = strdup(prefix);
  if (c->prefix == NULL || pthread_mutex_init(&c->retired_mu, NULL) != 0) {
    free(c->prefix);
    free(c);
    return _setError(natcdStatus_NoMemory, "out of memory");
  }
  atomic_init(&c->leader_id, 0);
  pthread_mutex_init(&c->token_mu, NULL);
  if (opts.user != NULL) {
    c->user = strdup(opts.user);
    c->password = strdup(opts.password != NULL ? opts.password : "");
    if (c->user == NULL || c->password == NULL) {
      natcdClient_Destroy(c);
      return _setError(natcdStatus_NoMemory, "out of memory");
    }
  }
  c->timeout_ms = opts.timeout_ms > 0 ? opts.timeout_ms : 5000;
  c->retries = opts.retries > 0 ? opts.retries : 0;
  c->backoff_ms = opts.backoff_ms > 0 ? opts.backoff_ms : 50;
  c->backoff_max_ms = opts.backoff_max_ms > 0 ? opts.backoff_max_ms : 1000;
  if (c->backoff_max_ms < c->backoff_ms) c->backoff_max_ms = c->backoff_ms;
  *out = c;
  return natcdStatus_OK;
}

// With a user: its first token (etcdctl authenticates when it dials).
static natcdStatus _authenticateFirst(natcdClient** out, natcdClient* c) {
  natcdStatus s = c->user != NULL ? _authenticate(c) : natcdStatus_OK;
  if (s != natcdStatus_OK) {
    natcdClient_Destroy(c);
    return s;
  }
  *out = c;
  return natcdStatus_OK;
}

natcdStatus natcdClient_Create(natcdClient** out, natsConnection* nc,
                               const natcdClientOptions* opts) {
  NATCD_CHECK_ARG(out != NULL);
  NATCD_CHECK_ARG(nc != NULL);
  natcdClient* c = NULL;
  natcdStatus s = _clientNew(&c, opts);
  if (s != natcdStatus_OK) return s;
  c->nc = nc;
  return _authenticateFirst(out, c);
}

natcdStatus natcdClient_Connect(natcdClient** out, const char* url,
                                const natcdClientOptions* opts) {
  NATCD_CHECK_ARG(out != NULL);
  NATCD_CHECK_ARG(url != NULL);
  natcdClient* c = NULL;
  natcdStatus s = _clientNew(&c, opts);
  if (s != natcdStatus_OK) return s;
  int64_t reconnect_wait =
      opts != NULL && opts->reconnect_wait_ms > 0 ? opts->reconnect_wait_ms : 250;
  natsOptions* nopts = NULL;
  natsStatus ns = natsOptions_Create(&nopts);
  if (ns == NATS_OK) ns = _setServers(nopts, url);
  if (ns == NATS_OK) ns = natsOptions_SetMaxReconnect(nopts, -1);
  if (ns == NATS_OK) ns = natsOptions_SetReconnectWait(nopts, reconnect_wait);
  if (ns == NATS_OK) ns = natsOptions_SetReconnectJitter(nopts, 50, 500);
  if (ns == NATS_OK) ns = natsConnection_Connect(&c->nc, nopts);
  natsOptions_Destroy(nopts);
  if (ns != NATS_OK) {
    natcdClient_Destroy(c);
    return _setNatsError(natcdStatus_ConnectionError, ns, "connect");
  }
  c->owns_nc = true;
  return _authenticateFirst(out, c);
}

natsConnection* natcdClient_GetConnection(natcdClient* client) {
  return client != NULL ? client->nc : NULL;
}

void natcdClient_Destroy(natcdClient* client) {
  if (client == NULL) return;
  // Closed first, so that the subscriptions still waiting to be freed can be.
  if (client->owns_nc && client->nc != NULL) natsConnection_Close(client->nc);
  if (client->nc != NULL) _subscriptionsFreeAll(client);
  if (client->owns_nc && client->nc != NULL) natsConnection_Destroy(client->nc);
  pthread_mutex_destroy(&client->retired_mu);
  free(client->user);
  free(client->password);
  free(client->token);
  pthread_mutex_destroy(&client->token_mu);
  free(client->prefix);
  free(client);
}

// --- requests --------------------------------------------------------------

static char* _subject(natcdClient* c, const char* suffix) {
  size_t n = strlen(c->prefix) + 1 + strlen(suffix) + 1;
  char* s = malloc(n);
  if (s != NULL) snprintf(s, n, "%s.%s", c->prefix, suffix);
  return s;
}

static uint8_t* _pack(const ProtobufCMessage* msg, size_t* len) {
  *len = protobuf_c_message_get_packed_size(msg);
  uint8_t* buf = malloc(*len > 0 ? *len : 1);
  if (buf != NULL) protobuf_c_message_pack(msg, buf);
  return buf;
}

// One attempt. Returns OK with *reply set, or an error; *retry says whether
// another attempt may help.
static natcdStatus _attempt(natsMsg** reply, natcdClient* c, const char* subject,
                            const uint8_t* body, size_t len, const char* request_id,
                            const char* token, int64_t timeout_ms, bool* retry) {
  *retry = false;
  natsMsg* msg = NULL;
  natsStatus ns = natsMsg_Create(&msg, subject, NULL, (const char*)body, (int)len);
  if (ns == NATS_OK && request_id != NULL) {
    ns = natsMsgHeader_Set(msg, NATCD_REQUEST_ID_HEADER, request_id);
  }
  if (ns == NATS_OK && token != NULL) ns = natsMsgHeader_Set(msg, NATCD_AUTH_TOKEN_HEADER, token);
  if (ns == NATS_OK) ns = natsConnection_RequestMsg(reply, c->nc, msg, timeout_ms);
  natsMsg_Destroy(msg);
  if (ns == NATS_OK) return natcdStatus_OK;
  if (ns == NATS_TIMEOUT) {
    *retry = true;
    return _setNatsError(natcdStatus_Timeout, ns, subject);
  }
  if (ns == NATS_NO_RESPONDERS) {
    *retry = true;
    return _setNatsError(natcdStatus_NoResponders, ns, subject);
  }
  // While nats.c reconnects a request may fail in other ways; another
  // attempt after the backoff may find the connection back.
  *retry = natsConnection_IsReconnecting(c->nc);
  return _setNatsError(natcdStatus_ConnectionError, ns, subject);
}

// The member ID in a response's header (every natcd response has one as
// field `header`), 0 if none. For a write it is the leader's: a follower
// relays the leader's reply as it is.
static uint64_t _responderId(const ProtobufCMessage* m) {
  const ProtobufCFieldDescriptor* f =
      protobuf_c_message_descriptor_get_field_by_name(m->descriptor, "header");
  if (f == NULL || f->type != PROTOBUF_C_TYPE_MESSAGE ||
      f->descriptor != &natcd__v1__response_header__descriptor) {
    return 0;
  }
  const Natcd__V1__ResponseHeader* h =
      *(const Natcd__V1__ResponseHeader* const*)((const char*)m + f->offset);
  return h != NULL ? h->member_id : 0;
}

// P.to.<member ID as 16 hex digits>.<suffix>: where a member takes the
// requests clients address to it as the leader (docs/PROTOCOL.md,
// "Clusters"), checked as on P.<suffix>. (P.fwd.* is the members' own.)
static char* _directSubject(natcdClient* c, uint64_t member, const char* suffix) {
  size_t n = strlen(c->prefix) + strlen(".to.") + 16 + 1 + strlen(suffix) + 1;
  char* s = malloc(n);
  if (s != NULL) {
    snprintf(s, n, "%s.to.%016llx.%s", c->prefix, (unsigned long long)member, suffix);
  }
  return s;
}

natcdStatus _request(ProtobufCMessage** reply_out, natcdClient* c, const char* suffix,
                     const ProtobufCMessage* req, const ProtobufCMessageDescriptor* reply_desc,
                     const _requestOpts* o) {
  *reply_out = NULL;
  char* subject = _subject(c, suffix);
  size_t len = 0;
  uint8_t* body = _pack(req, &len);
  if (subject == NULL || body == NULL) {
    free(subject);
    free(body);
    return _setError(natcdStatus_NoMemory, "out of memory");
  }
  char id_buf[33];
  const char* request_id = NULL;
  const bool write = o != NULL && o->write;
  if (write) {
    _randomHex128(id_buf);
    request_id = id_buf;
  }
  int64_t timeout = o != NULL && o->timeout_ms > 0 ? o->timeout_ms : c->timeout_ms;
  int retries = o != NULL && o->retries >= 0 ? o->retries : c->retries;
  int64_t backoff = c->backoff_ms;

  const bool with_token = c->user != NULL && (o == NULL || !o->no_token);
  bool reauthenticated = false;
  natcdStatus s = natcdStatus_OK;
  for (int attempt = 0;; ++attempt) {
    natsMsg* reply = NULL;
    bool retry = false;
    bool reauthenticate = false;
    char* token = NULL;
    if (with_token) {
      pthread_mutex_lock(&c->token_mu);
      token = c->token != NULL ? strdup(c->token) : NULL;
      pthread_mutex_unlock(&c->token_mu);
    }
    // Every write is a leader's (a follower only hands it over): to the
    // leader last seen, else to the queue group (any member). So is a
    // linearizable read (a follower asks the leader for its read index): a
    // paused follower then holds none of them.
    const bool to_leader = write || (o != NULL && o->to_leader);
    const uint64_t leader = to_leader ? atomic_load(&c->leader_id) : 0;
    char* direct = leader != 0 ? _directSubject(c, leader, suffix) : NULL;
    const uint64_t retired = _subscriptionsRetiredSoFar(c);
    s = _attempt(&reply, c, direct != NULL ? direct : subject, body, len, request_id, token,
                 timeout, &retry);
    free(direct);
    free(token);
    // A reply: the reader is past every message before it (subscription.c).
    if (s == natcdStatus_OK) _subscriptionsFreeUpTo(c, retired);
    bool retry_at_once = false;
    if (s != natcdStatus_OK && direct != NULL) {
      // That member did not answer (stopped, cut off, gone): forget it, and
      // ask the queue group next, at once. The same request id makes the
      // second attempt safe if the first is applied after all.
      uint64_t expected = leader;
      atomic_compare_exchange_strong(&c->leader_id, &expected, 0);
      retry_at_once = retry;
    }
    if (s == natcdStatus_OK) {
      const char* code_text = NULL;
      if (natsMsgHeader_Get(reply, NATCD_ERROR_CODE_HEADER, &code_text) == NATS_OK &&
          code_text != NULL) {
        const char* text = NULL;
        (void)natsMsgHeader_Get(reply, NATCD_ERROR_HEADER, &text);
        int code = atoi(code_text);
        s = _setServiceError(code, text);
        // Not applied (ErrStopped: natcd is stopping; 429: come back later),
        // so another attempt with the same id is safe.
        retry =
            code == 429 || (code == 503 && text != NULL && strncmp(text, "ErrStopped", 10) == 0);
        if (retry && leader != 0) {
          uint64_t expected = leader;
          atomic_compare_exchange_strong(&c->leader_id, &expected, 0);
        }
        // The token expired (or natcd restarted), or the auth state moved
        // since it was checked: etcd's clients get a new token and retry;
        // once per call. Not applied, so the same request id is safe.
        reauthenticate = with_token && !reauthenticated && text != NULL &&
                         (strstr(text, "invalid auth token") != NULL ||
                          strstr(text, "revision of auth store is old") != NULL);
      } else {
        ProtobufCMessage* m =
            protobuf_c_message_unpack(reply_desc, NULL, (size_t)natsMsg_GetDataLength(reply),
                                      (const uint8_t*)natsMsg_GetData(reply));
        if (m == NULL) {
          s = _setError(natcdStatus_ProtocolError, "%s: undecodable %s reply", subject,
                        reply_desc->name);
        } else {
          *reply_out = m;
          if (write) {
            const uint64_t responder = _responderId(m);
            if (responder != 0) atomic_store(&c->leader_id, responder);
          }
        }
      }
      natsMsg_Destroy(reply);
    }
    if (reauthenticate) {
      reauthenticated = true;
      natcdStatus again = _authenticate(c);
      if (again != natcdStatus_OK) {
        s = again;
        break;
      }
      --attempt;  // not counted: the request was refused, not lost
      continue;
    }
    if (s == natcdStatus_OK || !retry || attempt >= retries) break;
    if (retry_at_once) continue;
    _sleepMs(backoff);
    backoff = backoff * 2 > c->backoff_max_ms ? c->backoff_max_ms : backoff * 2;
  }
  free(subject);
  free(body);
  return s;
}

natcdStatus _publish(natcdClient* c, const char* suffix, const ProtobufCMessage* m) {
  char* subject = _subject(c, suffix);
  size_t len = 0;
  uint8_t* body = _pack(m, &len);
  natcdStatus s = natcdStatus_OK;
  if (subject == NULL || body == NULL) {
    s = _setError(natcdStatus_NoMemory, "out of memory");
  } else {
    natsStatus ns = natsConnection_Publish(c->nc, subject, body, (int)len);
    if (ns != NATS_OK) s = _setNatsError(natcdStatus_ConnectionError, ns, subject);
  }
  free(subject);
  free(body);
  return s;
}

natcdStatus _authenticate(natcdClient* c) {
  Natcd__V1__AuthenticateRequest req;
  natcd__v1__authenticate_request__init(&req);
  req.name = c->user;
  req.password = c->password;
  ProtobufCMessage* reply = NULL;
  const _requestOpts o = {.write = false, .retries = -1, .no_token = true};
  natcdStatus s = _request(&reply, c, "auth.authenticate", &req.base,
                           &natcd__v1__authenticate_response__descriptor, &o);
  if (s != natcdStatus_OK) return s;
  const Natcd__V1__AuthenticateResponse* r = (const Natcd__V1__AuthenticateResponse*)reply;
  char* token = strdup(r->token != NULL ? r->token : "");
  protobuf_c_message_free_unpacked(reply, NULL);
  if (token == NULL) return _setError(natcdStatus_NoMemory, "out of memory");
  pthread_mutex_lock(&c->token_mu);
  char* old = c->token;
  c->token = token;
  pthread_mutex_unlock(&c->token_mu);
  free(old);
  return natcdStatus_OK;
}
