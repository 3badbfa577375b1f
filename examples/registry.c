// Service registry: providers register themselves under /services/<name>/
// on a lease they keep alive; consumers list the prefix, then watch it and
// keep a live table. A provider that dies (kill -9) disappears from every
// consumer's table when its lease expires, after at most --ttl seconds.
//
// RUN:
//   NATS_URL=nats://127.0.0.1:4222 example-registry provide web a 10.0.0.1:80 --ttl 5 &
//   NATS_URL=nats://127.0.0.1:4222 example-registry provide web b 10.0.0.2:80 --ttl 5 &
//   NATS_URL=nats://127.0.0.1:4222 example-registry consume web
//
// OUTPUT (consumer; then kill -9 the provider of "a"):
//   listed at revision 3: 2 instance(s)
//   + a 10.0.0.1:80
//   + b 10.0.0.2:80
//   table: a=10.0.0.1:80 b=10.0.0.2:80
//   - a
//   table: b=10.0.0.2:80
//
// Both modes run until SIGINT or SIGTERM; a provider stopped that way
// revokes its lease, so it disappears at once.
#define _POSIX_C_SOURCE 200809L
#include <natcd/client.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_INSTANCES 64

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
// provide
// ---------------------------------------------------------------------------

static void on_lease_lost(natcdKeepAlive* ka, int64_t lease, natcdStatus reason, void* closure) {
  (void)ka;
  (void)closure;
  fprintf(stderr, "lease %llx lost: %s\n", (long long)lease, natcdStatus_GetText(reason));
  stop_requested = 1;
}

static int provide(natcdClient* client, const char* key, const char* addr, int64_t ttl) {
  int64_t lease = 0, granted = 0;
  natcdKeepAlive* ka = NULL;
  natcdStatus s = natcdLease_Grant(&lease, &granted, client, ttl, 0);
  if (s != natcdStatus_OK) return fail("lease grant", s);

  natcdPutOptions put = {.lease = lease};
  s = natcdKV_Put(NULL, client, NATCD_STR(key), NATCD_STR(addr), &put);
  if (s == natcdStatus_OK) s = natcdKeepAlive_Start(&ka, client, lease, on_lease_lost, NULL);
  if (s != natcdStatus_OK) {
    int rc = fail("register", s);
    natcdLease_Revoke(client, lease);
    return rc;
  }
  printf("registered %s = %s on lease %llx (ttl %lld s)\n", key, addr, (long long)lease,
         (long long)granted);

  while (!stop_requested) sleep_ms(100);

  bool alive = false;
  natcdKeepAlive_IsAlive(&alive, NULL, ka);
  natcdKeepAlive_Destroy(ka);
  if (!alive) return 1;                  // the lease was lost (reported by on_lease_lost)
  s = natcdLease_Revoke(client, lease);  // deregisters at once
  if (s != natcdStatus_OK) return fail("lease revoke", s);
  printf("deregistered %s\n", key);
  return 0;
}

// ---------------------------------------------------------------------------
// consume
// ---------------------------------------------------------------------------

typedef struct {
  char* id;
  char* addr;
} Instance;

typedef struct {
  size_t prefix_len;
  Instance items[MAX_INSTANCES];
  size_t n;
  volatile sig_atomic_t failed;
} Table;

static void table_set(Table* t, const char* id, const char* addr) {
  for (size_t i = 0; i < t->n; i++) {
    if (strcmp(t->items[i].id, id) == 0) {
      free(t->items[i].addr);
      t->items[i].addr = strdup(addr);
      return;
    }
  }
  if (t->n == MAX_INSTANCES) return;
  t->items[t->n].id = strdup(id);
  t->items[t->n].addr = strdup(addr);
  t->n++;
}

static void table_remove(Table* t, const char* id) {
  for (size_t i = 0; i < t->n; i++) {
    if (strcmp(t->items[i].id, id) == 0) {
      free(t->items[i].id);
      free(t->items[i].addr);
      t->items[i] = t->items[--t->n];
      return;
    }
  }
}

static void table_print(const Table* t) {
  printf("table:");
  for (size_t i = 0; i < t->n; i++) printf(" %s=%s", t->items[i].id, t->items[i].addr);
  printf("%s\n", t->n == 0 ? " (empty)" : "");
}

static void table_clear(Table* t) {
  for (size_t i = 0; i < t->n; i++) {
    free(t->items[i].id);
    free(t->items[i].addr);
  }
  t->n = 0;
}

// Runs on the watch's thread, one event at a time, in revision order.
static void on_change(natcdWatch* w, const natcdWatchNotice* n, void* closure) {
  (void)w;
  Table* t = closure;
  if (n->kind != natcdWatchNotice_Event) {
    if (n->kind == natcdWatchNotice_Compacted || n->kind == natcdWatchNotice_Failed) {
      fprintf(stderr, "watch ended: %s\n", n->text ? n->text : "compacted");
      t->failed = 1;
      stop_requested = 1;
    }
    return;
  }
  const char* id = n->kv->key + t->prefix_len;
  if (n->type == natcdEventType_Put) {
    printf("+ %s %s\n", id, n->kv->value);
    table_set(t, id, n->kv->value);
  } else {
    printf("- %s\n", id);
    table_remove(t, id);
  }
  if (n->last_in_revision) table_print(t);
}

static int consume(natcdClient* client, const char* prefix) {
  Table table = {.prefix_len = strlen(prefix)};
  natcdRangeResponse* list = NULL;
  natcdWatch* watch = NULL;

  natcdRangeOptions range = {.prefix = true};
  natcdStatus s = natcdKV_Get(&list, client, NATCD_STR(prefix), &range);
  if (s != natcdStatus_OK) return fail("list", s);
  printf("listed at revision %lld: %zu instance(s)\n", (long long)list->header.revision,
         list->n_kvs);
  for (size_t i = 0; i < list->n_kvs; i++) {
    const natcdKeyValue* kv = &list->kvs[i];
    printf("+ %s %s\n", kv->key + table.prefix_len, kv->value);
    table_set(&table, kv->key + table.prefix_len, kv->value);
  }
  table_print(&table);
  fflush(stdout);

  // Everything after the listing's revision, gap-free (the library resumes).
  natcdWatchOptions wopts = {.prefix = true};
  s = natcdWatch_Create(&watch, client, NATCD_STR(prefix), NULL, 0, list->header.revision + 1,
                        &wopts, on_change, &table);
  natcdRangeResponse_Destroy(list);
  if (s != natcdStatus_OK) {
    table_clear(&table);
    return fail("watch", s);
  }

  while (!stop_requested) sleep_ms(100);

  natcdWatch_Destroy(watch);
  table_clear(&table);
  return table.failed ? 1 : 0;
}

// ---------------------------------------------------------------------------

static int usage(void) {
  fprintf(stderr,
          "usage: example-registry provide <name> <id> <addr> [--ttl N]\n"
          "       example-registry consume <name>\n"
          "NATS_URL selects the server (default nats://127.0.0.1:4222).\n");
  return 2;
}

int main(int argc, char** argv) {
  const char* url = getenv("NATS_URL") ? getenv("NATS_URL") : "nats://127.0.0.1:4222";
  bool providing = argc >= 5 && strcmp(argv[1], "provide") == 0;
  bool consuming = argc == 3 && strcmp(argv[1], "consume") == 0;
  int64_t ttl = 10;
  if (providing && argc == 7 && strcmp(argv[5], "--ttl") == 0) {
    ttl = atoll(argv[6]);
  } else if (providing && argc != 5) {
    return usage();
  }
  if ((!providing && !consuming) || ttl <= 0 || strchr(argv[2], '/') != NULL) return usage();

  setvbuf(stdout, NULL, _IOLBF, 0);
  struct sigaction sa = {.sa_handler = on_signal};
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);

  natcdClient* client = NULL;
  natcdStatus s = natcdClient_Connect(&client, url, NULL);
  if (s != natcdStatus_OK) return fail(url, s);

  // "/services/<name>/" (+ "<id>" for a provider).
  char key[512];
  int rc;
  if (providing) {
    snprintf(key, sizeof key, "/services/%s/%s", argv[2], argv[3]);
    rc = provide(client, key, argv[4], ttl);
  } else {
    snprintf(key, sizeof key, "/services/%s/", argv[2]);
    rc = consume(client, key);
  }
  natcdClient_Destroy(client);
  nats_Close();
  return rc;
}
