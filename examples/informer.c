// List-watch cache (Kubernetes' "informer"): lists every key under
// <prefix>, then watches the prefix from the listing's revision + 1 and keeps
// an in-memory copy, printing every change with its revision. The library
// resumes the watch after a NATS reconnect or a natcd restart from the last
// revision it delivered, so no event is missed or repeated; only if the
// history it needs was compacted away does the informer list again.
//
// --heartbeat-ms must match natcd's --watch-heartbeat-ms (default 5000):
// the watch takes 3 heartbeats of silence as natcd being gone.
//
// RUN:
//   NATS_URL=nats://127.0.0.1:4222 example-informer /config/ &
//   etcdctl-like writes: put /config/a 1, put /config/b 2, delete /config/a
//   kill %1     (SIGTERM: prints the cache and exits)
//
// OUTPUT:
//   listed 0 key(s) at revision 4
//   rev 5 PUT /config/a = 1
//   rev 6 PUT /config/b = 2
//   rev 7 DELETE /config/a
//   cache /config/b = 2
//   cache: 1 key(s), up to revision 7, 0 resume(s)
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <natcd/client.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile sig_atomic_t stop_requested = 0;
static void on_signal(int sig) {
  (void)sig;
  stop_requested = 1;
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

static int fail(const char* what, natcdStatus s) {
  natcdError err;
  natcd_GetLastError(&err);
  fprintf(stderr, "%s: %s (%s)\n", what, natcdStatus_GetText(s), err.text);
  return 1;
}

// ---------------------------------------------------------------------------
// The cache: key -> value, kept sorted by key (text keys and values).
// ---------------------------------------------------------------------------

typedef struct {
  char* key;
  char* value;
} Entry;

typedef struct {
  Entry* entries;
  size_t n, cap;
  int64_t revision;                   // every change up to here is in the cache
  volatile sig_atomic_t must_relist;  // the watch ended (compacted history)
} Cache;

static size_t cache_find(const Cache* c, const char* key, bool* found) {
  size_t lo = 0, hi = c->n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    int cmp = strcmp(c->entries[mid].key, key);
    if (cmp == 0) {
      *found = true;
      return mid;
    }
    if (cmp < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  *found = false;
  return lo;
}

static bool cache_put(Cache* c, const char* key, const char* value) {
  bool found;
  size_t i = cache_find(c, key, &found);
  char* copy = strdup(value);
  if (copy == NULL) return false;
  if (found) {
    free(c->entries[i].value);
    c->entries[i].value = copy;
    return true;
  }
  if (c->n == c->cap) {
    size_t cap = c->cap ? 2 * c->cap : 16;
    Entry* grown = realloc(c->entries, cap * sizeof *grown);
    if (grown == NULL) {
      free(copy);
      return false;
    }
    c->entries = grown;
    c->cap = cap;
  }
  Entry e = {strdup(key), copy};
  if (e.key == NULL) {
    free(copy);
    return false;
  }
  memmove(&c->entries[i + 1], &c->entries[i], (c->n - i) * sizeof *c->entries);
  c->entries[i] = e;
  c->n++;
  return true;
}

static void cache_delete(Cache* c, const char* key) {
  bool found;
  size_t i = cache_find(c, key, &found);
  if (!found) return;
  free(c->entries[i].key);
  free(c->entries[i].value);
  memmove(&c->entries[i], &c->entries[i + 1], (c->n - i - 1) * sizeof *c->entries);
  c->n--;
}

static void cache_clear(Cache* c) {
  while (c->n > 0) {
    c->n--;
    free(c->entries[c->n].key);
    free(c->entries[c->n].value);
  }
}

// ---------------------------------------------------------------------------
// List, then watch
// ---------------------------------------------------------------------------

// Runs on the watch's thread: one event at a time, each exactly once, in
// revision order.
static void on_event(natcdWatch* w, const natcdWatchNotice* n, void* closure) {
  (void)w;
  Cache* c = closure;
  if (n->kind == natcdWatchNotice_Compacted) {
    printf("history compacted (needed revision %" PRId64 ", oldest %" PRId64 "): relisting\n",
           n->revision, n->compact_revision);
    c->must_relist = 1;
    return;
  }
  if (n->kind == natcdWatchNotice_Failed) {
    fprintf(stderr, "watch failed: %s\n", n->text);
    c->must_relist = 1;
    return;
  }
  if (n->kind != natcdWatchNotice_Event) return;
  if (n->type == natcdEventType_Put) {
    printf("rev %" PRId64 " PUT %s = %s\n", n->revision, n->kv->key, n->kv->value);
    if (!cache_put(c, n->kv->key, n->kv->value)) c->must_relist = 1;
  } else {
    printf("rev %" PRId64 " DELETE %s\n", n->revision, n->kv->key);
    cache_delete(c, n->kv->key);
  }
  c->revision = n->revision;
}

// Replaces the cache with a fresh listing and starts a watch right after it.
static natcdStatus list_and_watch(natcdWatch** watch, natcdClient* client, const char* prefix,
                                  int64_t heartbeat_ms, Cache* c) {
  natcdRangeResponse* list = NULL;
  natcdRangeOptions range = {.prefix = true};
  natcdStatus s = natcdKV_Get(&list, client, NATCD_STR(prefix), &range);
  if (s != natcdStatus_OK) return s;
  cache_clear(c);
  for (size_t i = 0; i < list->n_kvs && s == natcdStatus_OK; i++) {
    if (!cache_put(c, list->kvs[i].key, list->kvs[i].value)) s = natcdStatus_NoMemory;
  }
  c->revision = list->header.revision;
  c->must_relist = 0;
  natcdRangeResponse_Destroy(list);
  if (s != natcdStatus_OK) return s;
  printf("listed %zu key(s) at revision %" PRId64 "\n", c->n, c->revision);

  natcdWatchOptions wopts = {.prefix = true, .heartbeat_ms = heartbeat_ms};
  return natcdWatch_Create(watch, client, NATCD_STR(prefix), NULL, 0, c->revision + 1, &wopts,
                           on_event, c);
}

int main(int argc, char** argv) {
  const char* url = getenv("NATS_URL") ? getenv("NATS_URL") : "nats://127.0.0.1:4222";
  int64_t heartbeat_ms = 0;  // natcd's default
  if (argc == 4 && strcmp(argv[2], "--heartbeat-ms") == 0) heartbeat_ms = atoll(argv[3]);
  if ((argc != 2 && argc != 4) || (argc == 4 && heartbeat_ms <= 0) || argv[1][0] == '\0') {
    fprintf(stderr,
            "usage: example-informer <prefix> [--heartbeat-ms N]   (NATS_URL selects the "
            "server)\n");
    return 2;
  }
  const char* prefix = argv[1];

  setvbuf(stdout, NULL, _IOLBF, 0);
  struct sigaction sa = {.sa_handler = on_signal};
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);

  natcdClient* client = NULL;
  natcdWatch* watch = NULL;
  Cache cache = {0};
  int64_t resumes = 0;
  int rc = 0;
  natcdStatus s = natcdClient_Connect(&client, url, NULL);
  if (s != natcdStatus_OK) return fail(url, s);

  s = list_and_watch(&watch, client, prefix, heartbeat_ms, &cache);
  while (s == natcdStatus_OK && !stop_requested) {
    sleep_ms(100);
    if (cache.must_relist) {
      natcdWatch_Destroy(watch);  // joins its thread: the cache is ours again
      watch = NULL;
      s = list_and_watch(&watch, client, prefix, heartbeat_ms, &cache);
    }
  }
  if (s != natcdStatus_OK) rc = fail("list and watch", s);

  if (watch != NULL) {
    natcdWatchStats stats;
    if (natcdWatch_GetStats(&stats, watch) == natcdStatus_OK) resumes = stats.resumes;
    natcdWatch_Destroy(watch);
  }
  for (size_t i = 0; i < cache.n; i++) {
    printf("cache %s = %s\n", cache.entries[i].key, cache.entries[i].value);
  }
  printf("cache: %zu key(s), up to revision %" PRId64 ", %" PRId64 " resume(s)\n", cache.n,
         cache.revision, resumes);
  cache_clear(&cache);
  free(cache.entries);
  natcdClient_Destroy(client);
  nats_Close();
  return rc;
}
