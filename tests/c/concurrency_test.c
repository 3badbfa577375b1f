// Session, mutex and election (etcd's concurrency recipes).
#include "common.h"

#include <sys/wait.h>
#include <unistd.h>

#include "tests.h"

static natcdSession* _session(int64_t ttl) {
  natcdSession* s = NULL;
  ASSERT_OK(natcdSession_Create(&s, g_client, ttl, NULL, NULL));
  return s;
}

static void test_mutex_basic(void** state) {
  (void)state;
  natcdSession* s1 = _session(5);
  natcdSession* s2 = _session(5);
  natcdMutex *m1 = NULL, *m2 = NULL;
  ASSERT_OK(natcdMutex_Create(&m1, s1, "/mx/basic"));
  ASSERT_OK(natcdMutex_Create(&m2, s2, "/mx/basic"));
  ASSERT_OK(natcdMutex_Lock(m1, 1000));
  int64_t rev = 0;
  const char* key = natcdMutex_Key(m1, &rev);
  char want[64];
  snprintf(want, sizeof want, "/mx/basic/%llx", (unsigned long long)natcdSession_Lease(s1));
  assert_string_equal(key, want);
  assert_true(rev > 0);
  // The lock key lives on the session's lease.
  natcdRangeResponse* r = NULL;
  ASSERT_OK(natcdKV_Get(&r, g_client, NATCD_STR(key), NULL));
  assert_int_equal(r->kvs[0].lease, natcdSession_Lease(s1));
  natcdRangeResponse_Destroy(r);

  ASSERT_STATUS(natcdStatus_Locked, natcdMutex_TryLock(m2));
  long long t0 = natcdFixture_NowMs();
  ASSERT_STATUS(natcdStatus_Timeout, natcdMutex_Lock(m2, 300));
  assert_true(natcdFixture_NowMs() - t0 >= 300);
  assert_int_equal(test_Count(g_client, "/mx/basic/"), 1);  // the waiter left the queue
  ASSERT_OK(natcdMutex_Unlock(m1));
  ASSERT_OK(natcdMutex_TryLock(m2));
  ASSERT_OK(natcdMutex_Unlock(m2));
  ASSERT_OK(natcdMutex_Lock(m1, -1));
  ASSERT_OK(natcdMutex_Unlock(m1));
  assert_int_equal(test_Count(g_client, "/mx/basic/"), 0);
  natcdMutex_Destroy(m1);
  natcdMutex_Destroy(m2);
  natcdSession_Destroy(s1);
  natcdSession_Destroy(s2);
}

static void _onSessionLost(natcdSession* s, void* closure) {
  (void)s;
  atomic_fetch_add((atomic_int*)closure, 1);
}

static void test_session(void** state) {
  (void)state;
  atomic_int lost = 0;
  natcdSession* s = NULL;
  ASSERT_OK(natcdSession_Create(&s, g_client, 1, _onSessionLost, &lost));
  assert_ptr_equal(natcdSession_GetClient(s), g_client);
  const int64_t lease = natcdSession_Lease(s);
  assert_true(lease > 0);
  natcdFixture_SleepMs(1500);  // longer than its TTL: kept alive
  assert_false(natcdSession_IsExpired(s));
  natcdLeaseTimeToLive* t = NULL;
  ASSERT_OK(natcdLease_TimeToLive(&t, g_client, lease, false));
  assert_true(t->ttl_seconds >= 0);
  natcdLeaseTimeToLive_Destroy(t);
  // Its lease revoked elsewhere: the session learns it and says so once.
  ASSERT_OK(natcdLease_Revoke(g_client, lease));
  assert_true(WAIT_FOR(natcdSession_IsExpired(s), 2000));
  assert_int_equal(atomic_load(&lost), 1);
  natcdMutex* m = NULL;
  ASSERT_OK(natcdMutex_Create(&m, s, "/mx/expired"));
  ASSERT_STATUS(natcdStatus_SessionExpired, natcdMutex_Lock(m, 100));
  natcdMutex_Destroy(m);
  natcdSession_Destroy(s);
  // Destroy revokes the lease of a live session.
  ASSERT_OK(natcdSession_Create(&s, g_client, 10, NULL, NULL));
  const int64_t other = natcdSession_Lease(s);
  natcdSession_Destroy(s);
  ASSERT_OK(natcdLease_TimeToLive(&t, g_client, other, false));
  assert_int_equal(t->ttl_seconds, -1);
  natcdLeaseTimeToLive_Destroy(t);
}

typedef struct waiter {
  int index;
  natcdMutex* mutex;
  pthread_mutex_t* mu;
  int* order;
  int* n_order;
  natcdStatus status;
} waiter;

static void* _waiterMain(void* arg) {
  waiter* w = arg;
  w->status = natcdMutex_Lock(w->mutex, 10000);
  if (w->status == natcdStatus_OK) {
    pthread_mutex_lock(w->mu);
    w->order[(*w->n_order)++] = w->index;
    pthread_mutex_unlock(w->mu);
    natcdFixture_SleepMs(30);
    natcdMutex_Unlock(w->mutex);
  }
  return NULL;
}

static void test_mutex_fifo(void** state) {
  (void)state;
  enum { kWaiters = 4 };
  natcdSession* holder_session = _session(5);
  natcdMutex* holder = NULL;
  ASSERT_OK(natcdMutex_Create(&holder, holder_session, "/mx/fifo"));
  ASSERT_OK(natcdMutex_Lock(holder, 1000));
  natcdSession* sessions[kWaiters];
  waiter waiters[kWaiters];
  pthread_t threads[kWaiters];
  pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
  int order[kWaiters];
  int n_order = 0;
  for (int i = 0; i < kWaiters; ++i) {
    sessions[i] = _session(5);
    waiters[i] = (waiter){.index = i, .mu = &mu, .order = order, .n_order = &n_order};
    ASSERT_OK(natcdMutex_Create(&waiters[i].mutex, sessions[i], "/mx/fifo"));
    pthread_create(&threads[i], NULL, _waiterMain, &waiters[i]);
    // The next one asks only once this one is queued.
    assert_true(WAIT_FOR(test_Count(g_client, "/mx/fifo/") == i + 2, 3000));
  }
  pthread_mutex_lock(&mu);
  assert_int_equal(n_order, 0);
  pthread_mutex_unlock(&mu);
  ASSERT_OK(natcdMutex_Unlock(holder));
  for (int i = 0; i < kWaiters; ++i) pthread_join(threads[i], NULL);
  assert_int_equal(n_order, kWaiters);
  for (int i = 0; i < kWaiters; ++i) {
    assert_int_equal(waiters[i].status, natcdStatus_OK);
    assert_int_equal(order[i], i);  // first come, first served
    natcdMutex_Destroy(waiters[i].mutex);
    natcdSession_Destroy(sessions[i]);
  }
  natcdMutex_Destroy(holder);
  natcdSession_Destroy(holder_session);
}

// The child of test_mutex_killed_holder: `client_tests --lock-holder <url>
// <prefix> <ready file>` takes the lock with a 1 s session, says so by
// creating the ready file, and dies without unlocking.
int lockHolderMain(int argc, char** argv) {
  if (argc != 5) return 2;
  natcdClient* c = NULL;
  natcdSession* s = NULL;
  natcdMutex* m = NULL;
  if (natcdClient_Connect(&c, argv[2], NULL) != natcdStatus_OK) return 3;
  if (natcdSession_Create(&s, c, 1, NULL, NULL) != natcdStatus_OK) return 4;
  if (natcdMutex_Create(&m, s, argv[3]) != natcdStatus_OK) return 5;
  if (natcdMutex_Lock(m, 5000) != natcdStatus_OK) return 6;
  FILE* f = fopen(argv[4], "w");
  if (f == NULL) return 7;
  fclose(f);
  _exit(0);  // no unlock, no revoke: only the lease's expiry frees the lock
}

static void test_mutex_killed_holder(void** state) {
  (void)state;
  char self[512];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  assert_true(n > 0);
  self[n] = '\0';
  char ready[400], log[400];
  snprintf(ready, sizeof ready, "%s/holder.ready", g_fx.dir);
  snprintf(log, sizeof log, "%s/holder.log", g_fx.dir);
  char* argv[] = {self, "--lock-holder", g_fx.url, "/mx/killed", ready, NULL};
  pid_t child = natcdFixture_Spawn(argv, log);
  assert_true(child > 0);
  int status = natcdFixture_Reap(child, 10000);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
  assert_int_equal(access(ready, F_OK), 0);
  const long long dead_at = natcdFixture_NowMs();
  assert_int_equal(test_Count(g_client, "/mx/killed/"), 1);  // still held by the dead

  natcdSession* s = _session(5);
  natcdMutex* m = NULL;
  ASSERT_OK(natcdMutex_Create(&m, s, "/mx/killed"));
  ASSERT_STATUS(natcdStatus_Locked, natcdMutex_TryLock(m));
  ASSERT_OK(natcdMutex_Lock(m, 5000));
  const long long waited = natcdFixture_NowMs() - dead_at;
  assert_true(waited <= 2500);  // its 1 s TTL, plus natcd's expiry check
  ASSERT_OK(natcdMutex_Unlock(m));
  natcdMutex_Destroy(m);
  natcdSession_Destroy(s);
}

// --- election ------------------------------------------------------------------

typedef struct leaders {
  pthread_mutex_t mu;
  char seen[32][32];  // values, "-" for no leader
  int n;
} leaders;

static void _onLeader(natcdObserver* o, const natcdKeyValue* leader, void* closure) {
  (void)o;
  leaders* l = closure;
  pthread_mutex_lock(&l->mu);
  if (l->n < 32) snprintf(l->seen[l->n++], sizeof l->seen[0], "%s", leader ? leader->value : "-");
  pthread_mutex_unlock(&l->mu);
}

static bool _lastLeader(leaders* l, const char* value) {
  pthread_mutex_lock(&l->mu);
  bool ok = l->n > 0 && strcmp(l->seen[l->n - 1], value) == 0;
  pthread_mutex_unlock(&l->mu);
  return ok;
}

typedef struct campaign {
  natcdElection* e;
  const char* value;
  natcdStatus status;
  atomic_bool done;
} campaign;

static void* _campaignMain(void* arg) {
  campaign* c = arg;
  c->status = natcdElection_Campaign(c->e, NATCD_STR(c->value), 10000);
  atomic_store(&c->done, true);
  return NULL;
}

static void test_election(void** state) {
  (void)state;
  const char* pfx = "/el/svc";
  natcdSession* s1 = _session(5);
  natcdSession* s2 = _session(1);
  natcdSession* s3 = _session(5);
  natcdElection *e1 = NULL, *e2 = NULL, *e3 = NULL, *watcher = NULL;
  ASSERT_OK(natcdElection_Create(&e1, g_client, s1, pfx));
  ASSERT_OK(natcdElection_Create(&e2, g_client, s2, pfx));
  ASSERT_OK(natcdElection_Create(&e3, g_client, s3, pfx));
  ASSERT_OK(natcdElection_Create(&watcher, g_client, NULL, pfx));

  natcdKeyValue* kv = NULL;
  ASSERT_STATUS(natcdStatus_NoLeader, natcdElection_Leader(&kv, watcher));
  leaders seen = {.n = 0};
  pthread_mutex_init(&seen.mu, NULL);
  natcdObserver* obs = NULL;
  ASSERT_OK(natcdElection_Observe(&obs, watcher, _onLeader, &seen));
  assert_true(_lastLeader(&seen, "-"));  // told at once: nobody

  ASSERT_OK(natcdElection_Campaign(e1, NATCD_STR("a"), 2000));
  ASSERT_OK(natcdElection_Leader(&kv, watcher));
  assert_string_equal(kv->value, "a");
  natcdKeyValue_Destroy(kv);
  assert_true(WAIT_FOR(_lastLeader(&seen, "a"), 3000));

  // Two more campaigners queue behind, in order.
  campaign c2 = {.e = e2, .value = "b"}, c3 = {.e = e3, .value = "c"};
  pthread_t t2, t3;
  pthread_create(&t2, NULL, _campaignMain, &c2);
  assert_true(WAIT_FOR(test_Count(g_client, "/el/svc/") == 2, 3000));
  pthread_create(&t3, NULL, _campaignMain, &c3);
  assert_true(WAIT_FOR(test_Count(g_client, "/el/svc/") == 3, 3000));
  natcdFixture_SleepMs(100);
  assert_false(atomic_load(&c2.done) || atomic_load(&c3.done));

  ASSERT_OK(natcdElection_Proclaim(e1, NATCD_STR("a2")));
  assert_true(WAIT_FOR(_lastLeader(&seen, "a2"), 3000));
  natcdSession* s4 = _session(5);
  natcdElection* e4 = NULL;
  ASSERT_OK(natcdElection_Create(&e4, g_client, s4, pfx));
  ASSERT_STATUS(natcdStatus_NotLeader, natcdElection_Proclaim(e4, NATCD_STR("x")));
  ASSERT_OK(natcdElection_Resign(e4));  // not leading: nothing to do

  // The leader resigns: the next campaigner leads.
  ASSERT_OK(natcdElection_Resign(e1));
  pthread_join(t2, NULL);
  assert_int_equal(c2.status, natcdStatus_OK);
  assert_true(WAIT_FOR(_lastLeader(&seen, "b"), 3000));
  assert_false(atomic_load(&c3.done));
  ASSERT_STATUS(natcdStatus_NotLeader, natcdElection_Proclaim(e1, NATCD_STR("late")));

  // The leader's session dies (its process hangs): when the lease expires
  // the third campaigner leads.
  long long t0 = natcdFixture_NowMs();
  natcdSession_Orphan(s2);
  pthread_join(t3, NULL);
  assert_int_equal(c3.status, natcdStatus_OK);
  assert_true(natcdFixture_NowMs() - t0 < 3000);
  assert_true(WAIT_FOR(_lastLeader(&seen, "c"), 3000));
  ASSERT_OK(natcdElection_Leader(&kv, watcher));
  assert_string_equal(kv->value, "c");
  natcdKeyValue_Destroy(kv);
  ASSERT_STATUS(natcdStatus_NotLeader, natcdElection_Proclaim(e2, NATCD_STR("zombie")));

  ASSERT_OK(natcdElection_Resign(e3));
  assert_true(WAIT_FOR(_lastLeader(&seen, "-"), 3000));
  ASSERT_STATUS(natcdStatus_NoLeader, natcdElection_Leader(&kv, watcher));

  // Observers saw each change once, in order.
  pthread_mutex_lock(&seen.mu);
  const char* expected[] = {"-", "a", "a2", "b", "c", "-"};
  assert_int_equal(seen.n, 6);
  for (int i = 0; i < 6; ++i) assert_string_equal(seen.seen[i], expected[i]);
  pthread_mutex_unlock(&seen.mu);

  natcdObserver_Destroy(obs);
  natcdElection_Destroy(e1);
  natcdElection_Destroy(e2);
  natcdElection_Destroy(e3);
  natcdElection_Destroy(e4);
  natcdElection_Destroy(watcher);
  natcdSession_Destroy(s1);
  natcdSession_Destroy(s2);
  natcdSession_Destroy(s3);
  natcdSession_Destroy(s4);
  pthread_mutex_destroy(&seen.mu);
}

const struct CMUnitTest concurrency_tests[] = {
    cmocka_unit_test(test_session),    cmocka_unit_test(test_mutex_basic),
    cmocka_unit_test(test_mutex_fifo), cmocka_unit_test(test_mutex_killed_holder),
    cmocka_unit_test(test_election),
};
const size_t concurrency_tests_count = sizeof concurrency_tests / sizeof concurrency_tests[0];
