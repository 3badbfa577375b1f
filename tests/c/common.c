// Shared test helpers; see common.h.
#include "common.h"

natcdFixture g_fx;
natcdClient* g_client = NULL;

natcdClient* test_Connect(const char* prefix, int retries) {
  natcdClientOptions opts;
  natcdClientOptions_Init(&opts);
  if (prefix != NULL) opts.prefix = prefix;
  opts.timeout_ms = 2000;
  opts.retries = retries;
  opts.backoff_ms = 20;
  opts.backoff_max_ms = 200;
  opts.reconnect_wait_ms = 100;
  natcdClient* c = NULL;
  natcdStatus s = natcdClient_Connect(&c, g_fx.url, &opts);
  if (s != natcdStatus_OK) {
    natcdError e;
    natcd_GetLastError(&e);
    fprintf(stderr, "natcdClient_Connect(%s): %s\n", g_fx.url, e.text);
    return NULL;
  }
  return c;
}

int test_GroupSetup(const char* const* natcd_args) {
  if (!natcdFixture_Init(&g_fx, natcd_args)) return -1;
  if (!natcdFixture_StartNats(&g_fx) || !natcdFixture_StartNatcd(&g_fx)) {
    natcdFixture_Destroy(&g_fx);
    return -1;
  }
  g_client = test_Connect(NULL, 3);
  if (g_client == NULL) {
    natcdFixture_Destroy(&g_fx);
    return -1;
  }
  return 0;
}

int test_GroupTeardown(void) {
  natcdClient_Destroy(g_client);
  g_client = NULL;
  natcdFixture_Destroy(&g_fx);
  return 0;
}

int64_t test_Put(natcdClient* c, const char* key, const char* value) {
  natcdPutResponse* r = NULL;
  ASSERT_OK(natcdKV_Put(&r, c, NATCD_STR(key), NATCD_STR(value), NULL));
  int64_t rev = r->header.revision;
  natcdPutResponse_Destroy(r);
  return rev;
}

int64_t test_Revision(natcdClient* c) {
  natcdRangeResponse* r = NULL;
  ASSERT_OK(natcdKV_Get(&r, c, NATCD_STR("\x01"), NULL));
  int64_t rev = r->header.revision;
  natcdRangeResponse_Destroy(r);
  return rev;
}

int64_t test_Count(natcdClient* c, const char* prefix) {
  natcdRangeOptions o = {.prefix = true, .count_only = true};
  natcdRangeResponse* r = NULL;
  ASSERT_OK(natcdKV_Get(&r, c, NATCD_STR(prefix), &o));
  int64_t n = r->count;
  natcdRangeResponse_Destroy(r);
  return n;
}

// --- recorder ------------------------------------------------------------------

void recorder_Init(recorder* r) {
  memset(r, 0, sizeof *r);
  pthread_mutex_init(&r->mu, NULL);
  pthread_cond_init(&r->cond, NULL);
}

void recorder_Destroy(recorder* r) {
  free(r->items);
  pthread_cond_destroy(&r->cond);
  pthread_mutex_destroy(&r->mu);
}

static void _copyText(char* out, size_t cap, const char* p, size_t n) {
  if (n >= cap) n = cap - 1;
  memcpy(out, p, n);
  out[n] = '\0';
}

void recorder_Handler(natcdWatch* w, const natcdWatchNotice* n, void* closure) {
  (void)w;
  recorder* r = closure;
  recordedNotice item;
  memset(&item, 0, sizeof item);
  item.kind = n->kind;
  item.type = n->type;
  item.revision = n->revision;
  item.compact_revision = n->compact_revision;
  item.last_in_revision = n->last_in_revision;
  if (n->kv != NULL) {
    _copyText(item.key, sizeof item.key, n->kv->key, n->kv->key_len);
    _copyText(item.value, sizeof item.value, n->kv->value, n->kv->value_len);
  }
  if (n->prev_kv != NULL) {
    item.has_prev = true;
    _copyText(item.prev_value, sizeof item.prev_value, n->prev_kv->value, n->prev_kv->value_len);
  }
  pthread_mutex_lock(&r->mu);
  while (r->block) {
    r->in_handler = true;
    pthread_cond_wait(&r->cond, &r->mu);
  }
  r->in_handler = false;
  if (r->n == r->cap) {
    r->cap = r->cap == 0 ? 64 : 2 * r->cap;
    r->items = realloc(r->items, r->cap * sizeof *r->items);
  }
  r->items[r->n++] = item;
  int sleep_ms = r->sleep_ms;
  pthread_mutex_unlock(&r->mu);
  if (sleep_ms > 0 && n->kind == natcdWatchNotice_Event) natcdFixture_SleepMs(sleep_ms);
}

size_t recorder_Count(recorder* r) {
  pthread_mutex_lock(&r->mu);
  size_t n = r->n;
  pthread_mutex_unlock(&r->mu);
  return n;
}

size_t recorder_CountKind(recorder* r, natcdWatchNoticeKind kind) {
  pthread_mutex_lock(&r->mu);
  size_t n = 0;
  for (size_t i = 0; i < r->n; ++i) n += r->items[i].kind == kind;
  pthread_mutex_unlock(&r->mu);
  return n;
}

recordedNotice recorder_At(recorder* r, size_t i) {
  pthread_mutex_lock(&r->mu);
  recordedNotice item = r->items[i];
  pthread_mutex_unlock(&r->mu);
  return item;
}

void recorder_SetBlock(recorder* r, bool block) {
  pthread_mutex_lock(&r->mu);
  r->block = block;
  pthread_cond_broadcast(&r->cond);
  pthread_mutex_unlock(&r->mu);
}

bool recorder_Blocked(recorder* r) {
  pthread_mutex_lock(&r->mu);
  bool b = r->in_handler;
  pthread_mutex_unlock(&r->mu);
  return b;
}
