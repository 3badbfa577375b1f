// Watches and keepalives through failures: natcd killed and restarted, the
// NATS server restarted, a slow consumer canceled, compaction during an
// outage. Every event must reach the handler exactly once, in order.
#include "common.h"
#include "tests.h"

static natcdWatchOptions _opts(void) {
  natcdWatchOptions o;
  memset(&o, 0, sizeof o);
  o.heartbeat_ms = TEST_HEARTBEAT_MS;
  o.prefix = true;
  return o;
}

// Writes <prefix><i> = i for i in [0, n), one put at a time, through a
// client that retries for long enough to ride out a natcd or NATS restart.
typedef struct writer {
  natcdClient* client;
  const char* prefix;
  int n;
  atomic_int written;
  int64_t last_revision;
  natcdStatus status;
  char error[640];
} writer;

static void* _writerMain(void* arg) {
  writer* w = arg;
  for (int i = 0; i < w->n; ++i) {
    char key[64], value[16];
    snprintf(key, sizeof key, "%s%04d", w->prefix, i);
    snprintf(value, sizeof value, "%d", i);
    natcdPutResponse* r = NULL;
    w->status = natcdKV_Put(&r, w->client, NATCD_STR(key), NATCD_STR(value), NULL);
    if (w->status != natcdStatus_OK) {
      natcdError e;
      natcd_GetLastError(&e);
      snprintf(w->error, sizeof w->error, "put %s: %s", key, e.text);
      return NULL;
    }
    w->last_revision = r->header.revision;
    natcdPutResponse_Destroy(r);
    atomic_fetch_add(&w->written, 1);
    natcdFixture_SleepMs(2);
  }
  return NULL;
}

static void _printStats(const char* what, natcdWatch* w) {
  natcdWatchStats st;
  natcdWatch_GetStats(&st, w);
  print_message(
      "  %s: %lld events, %lld resumes (gaps %lld, cancels %lld, silences %lld, "
      "reconnects %lld), %lld duplicates dropped, last cancel reason '%s'\n",
      what, (long long)st.events, (long long)st.resumes, (long long)st.gaps,
      (long long)st.server_cancels, (long long)st.silences, (long long)st.reconnects,
      (long long)st.duplicates, st.last_cancel_reason);
}

static int64_t _lastRevision(natcdWatch* w) {
  natcdWatchStats st;
  natcdWatch_GetStats(&st, w);
  return st.last_revision;
}

static bool _inGroup(natcdWatch* w) {
  natcdWatchStats st;
  natcdWatch_GetStats(&st, w);
  return st.in_group;
}

// The n puts of a writer, each seen once, in order, and each applied once.
static void _expectExactlyOnce(recorder* rec, natcdWatch* w, const char* prefix, int n,
                               int64_t from_revision, int64_t last_revision) {
  assert_true(WAIT_FOR(_lastRevision(w) >= last_revision, 15000));
  assert_int_equal(recorder_CountKind(rec, natcdWatchNotice_Event), (size_t)n);
  int64_t prev = from_revision - 1;
  for (int i = 0; i < n; ++i) {
    recordedNotice e = recorder_At(rec, (size_t)i);
    char key[64], value[16];
    snprintf(key, sizeof key, "%s%04d", prefix, i);
    snprintf(value, sizeof value, "%d", i);
    assert_int_equal(e.kind, natcdWatchNotice_Event);
    assert_string_equal(e.key, key);
    assert_string_equal(e.value, value);
    assert_true(e.revision > prev);
    prev = e.revision;
  }
  assert_int_equal(prev, last_revision);
  // Each put applied once although some were retried across the outage.
  natcdRangeOptions o = {.prefix = true};
  natcdRangeResponse* r = NULL;
  ASSERT_OK(natcdKV_Get(&r, g_client, NATCD_STR(prefix), &o));
  assert_int_equal(r->n_kvs, (size_t)n);
  for (size_t i = 0; i < r->n_kvs; ++i) assert_int_equal(r->kvs[i].version, 1);
  natcdRangeResponse_Destroy(r);
  // And a fresh watch over the same history sees the same events.
  recorder again;
  recorder_Init(&again);
  natcdWatchOptions opts = _opts();
  natcdWatch* check = NULL;
  ASSERT_OK(natcdWatch_Create(&check, g_client, NATCD_STR(prefix), NULL, 0, from_revision, &opts,
                              recorder_Handler, &again));
  assert_true(WAIT_FOR(recorder_Count(&again) == (size_t)n, 5000));
  for (int i = 0; i < n; ++i) {
    assert_int_equal(recorder_At(&again, (size_t)i).revision, recorder_At(rec, (size_t)i).revision);
  }
  natcdWatch_Destroy(check);
  recorder_Destroy(&again);
}

// Watches from the first write, created while the writes go on: each
// catches up on its own stream and joins the group mid-stream, seeing every
// event once.
static void test_group_join_midstream(void** state) {
  (void)state;
  enum { kWrites = 400, kWatches = 4 };
  const char* prefix = "/gjm/";
  const int64_t from = test_Revision(g_client) + 1;
  writer wr = {.client = g_client, .prefix = prefix, .n = kWrites};
  pthread_t t;
  pthread_create(&t, NULL, _writerMain, &wr);
  recorder recs[kWatches];
  natcdWatch* ws[kWatches];
  natcdWatchOptions o = _opts();
  for (int i = 0; i < kWatches; ++i) {
    assert_true(WAIT_FOR(atomic_load(&wr.written) >= (i + 1) * kWrites / (kWatches + 2), 10000));
    recorder_Init(&recs[i]);
    ASSERT_OK(natcdWatch_Create(&ws[i], g_client, NATCD_STR(prefix), NULL, 0, from, &o,
                                recorder_Handler, &recs[i]));
  }
  // Joined while the writer still writes.
  for (int i = 0; i < kWatches; ++i) assert_true(WAIT_FOR(_inGroup(ws[i]), 5000));
  assert_true(atomic_load(&wr.written) < kWrites);
  pthread_join(t, NULL);
  if (wr.status != natcdStatus_OK) fail_msg("writer: %s", wr.error);
  for (int i = 0; i < kWatches; ++i) {
    _expectExactlyOnce(&recs[i], ws[i], prefix, kWrites, from, wr.last_revision);
    natcdWatchStats st;
    ASSERT_OK(natcdWatch_GetStats(&st, ws[i]));
    assert_int_equal(st.resumes, 0);
    assert_int_equal(st.group_joins, 1);
    assert_int_equal(st.duplicates, 0);
    natcdWatch_Destroy(ws[i]);
    recorder_Destroy(&recs[i]);
  }
}

typedef enum { kKillNatcd, kRestartNats } outage;

static void _watchThroughOutage(const char* prefix, outage what) {
  enum { kWrites = 120 };
  natcdClient* wc = test_Connect(NULL, 200);
  assert_non_null(wc);
  const int64_t from = test_Revision(g_client) + 1;
  recorder rec;
  recorder_Init(&rec);
  natcdWatchOptions o = _opts();
  natcdWatch* w = NULL;
  ASSERT_OK(
      natcdWatch_Create(&w, g_client, NATCD_STR(prefix), NULL, 0, 0, &o, recorder_Handler, &rec));
  writer wr = {.client = wc, .prefix = prefix, .n = kWrites};
  pthread_t t;
  pthread_create(&t, NULL, _writerMain, &wr);
  assert_true(WAIT_FOR(atomic_load(&wr.written) >= 30, 10000));
  if (what == kKillNatcd) {
    natcdFixture_KillNatcd(&g_fx);
    natcdFixture_SleepMs(300);  // writes keep coming: retried meanwhile
    assert_true(natcdFixture_StartNatcd(&g_fx));
  } else {
    assert_true(natcdFixture_RestartNats(&g_fx));
  }
  pthread_join(t, NULL);
  if (wr.status != natcdStatus_OK) fail_msg("writer: %s", wr.error);
  _expectExactlyOnce(&rec, w, prefix, kWrites, from, wr.last_revision);
  _printStats(prefix, w);
  natcdWatchStats st;
  ASSERT_OK(natcdWatch_GetStats(&st, w));
  assert_true(st.resumes >= 1);
  if (what == kRestartNats) assert_true(st.reconnects >= 1);
  assert_false(st.ended);
  // Still live after all that.
  char key[64];
  snprintf(key, sizeof key, "%safter", prefix);
  const int64_t rev = test_Put(g_client, key, "live");
  assert_true(WAIT_FOR(_lastRevision(w) >= rev, 5000));
  assert_int_equal(recorder_CountKind(&rec, natcdWatchNotice_Event), (size_t)kWrites + 1);
  natcdWatch_Destroy(w);
  recorder_Destroy(&rec);
  natcdClient_Destroy(wc);
}

static void test_watch_survives_natcd_kill(void** state) {
  (void)state;
  _watchThroughOutage("/rk/", kKillNatcd);
}

static void test_watch_survives_nats_restart(void** state) {
  (void)state;
  _watchThroughOutage("/rn/", kRestartNats);
}

static void test_watch_compaction_during_outage(void** state) {
  (void)state;
  recorder rec;
  recorder_Init(&rec);
  natcdWatchOptions o = _opts();
  natcdWatch* w = NULL;
  ASSERT_OK(
      natcdWatch_Create(&w, g_client, NATCD_STR("/rc/"), NULL, 0, 0, &o, recorder_Handler, &rec));
  const int64_t ra = test_Put(g_client, "/rc/a", "1");
  assert_true(WAIT_FOR(recorder_Count(&rec) == 1, 3000));
  // The application is busy with the next event while natcd restarts and
  // the history it still needs is compacted away.
  recorder_SetBlock(&rec, true);
  const int64_t rb = test_Put(g_client, "/rc/b", "2");
  assert_true(WAIT_FOR(recorder_Blocked(&rec), 3000));
  natcdFixture_KillNatcd(&g_fx);
  assert_true(natcdFixture_StartNatcd(&g_fx));
  test_Put(g_client, "/rc/c", "3");
  const int64_t rd = test_Put(g_client, "/rc/d", "4");
  ASSERT_OK(natcdKV_Compact(NULL, g_client, rd, true));
  recorder_SetBlock(&rec, false);
  // b is delivered; the resume from b + 1 finds it compacted.
  assert_true(WAIT_FOR(recorder_Count(&rec) == 3, 5000));
  recordedNotice n = recorder_At(&rec, 0);
  assert_int_equal(n.revision, ra);
  n = recorder_At(&rec, 1);
  assert_int_equal(n.kind, natcdWatchNotice_Event);
  assert_int_equal(n.revision, rb);
  n = recorder_At(&rec, 2);
  assert_int_equal(n.kind, natcdWatchNotice_Compacted);
  assert_int_equal(n.revision, rb + 1);
  assert_int_equal(n.compact_revision, rd);
  natcdWatchStats st;
  assert_true(WAIT_FOR((natcdWatch_GetStats(&st, w), st.ended), 2000));
  assert_int_equal(st.silences, 1);
  // Ended: nothing more arrives.
  test_Put(g_client, "/rc/e", "5");
  natcdFixture_SleepMs(200);
  assert_int_equal(recorder_Count(&rec), 3);
  natcdWatch_Destroy(w);
  recorder_Destroy(&rec);
}

typedef struct lossRecord {
  atomic_int calls;
  atomic_int reason;
  atomic_llong at_ms;
} lossRecord;

static void _onLost(natcdKeepAlive* ka, int64_t lease_id, natcdStatus reason, void* closure) {
  (void)ka;
  (void)lease_id;
  lossRecord* r = closure;
  atomic_store(&r->reason, (int)reason);
  atomic_store(&r->at_ms, natcdFixture_NowMs());
  atomic_fetch_add(&r->calls, 1);
}

static void test_keepalive_through_outages(void** state) {
  (void)state;
  natcdClient* c = test_Connect(NULL, 3);
  int64_t id = 0, ttl = 0;
  ASSERT_OK(natcdLease_Grant(&id, &ttl, c, 2, 0));
  natcdPutOptions po = {.lease = id};
  ASSERT_OK(natcdKV_Put(NULL, c, NATCD_STR("/rka/a"), NATCD_STR("1"), &po));
  lossRecord lost = {0};
  natcdKeepAlive* ka = NULL;
  ASSERT_OK(natcdKeepAlive_Start(&ka, c, id, _onLost, &lost));

  // A NATS restart: the keepalive retries through it; the lease lives on.
  assert_true(natcdFixture_RestartNats(&g_fx));
  natcdFixture_SleepMs(2500);
  bool alive = false;
  ASSERT_OK(natcdKeepAlive_IsAlive(&alive, NULL, ka));
  assert_true(alive);
  assert_int_equal(atomic_load(&lost.calls), 0);
  assert_int_equal(test_Count(g_client, "/rka/"), 1);

  // natcd gone for longer than the TTL: reported within a TTL.
  const long long gone = natcdFixture_NowMs();
  natcdFixture_KillNatcd(&g_fx);
  assert_true(WAIT_FOR(atomic_load(&lost.calls) == 1, 5000));
  assert_int_equal(atomic_load(&lost.reason), natcdStatus_Timeout);
  const long long after = atomic_load(&lost.at_ms) - gone;
  assert_true(after > 2000 / 3);     // not before the last renewal's TTL ran out...
  assert_true(after <= 2000 + 300);  // ...and not much later
  ASSERT_OK(natcdKeepAlive_IsAlive(&alive, NULL, ka));
  assert_false(alive);
  assert_true(natcdFixture_StartNatcd(&g_fx));
  natcdKeepAlive_Destroy(ka);
  natcdLease_Revoke(c, id);
  natcdClient_Destroy(c);
}

const struct CMUnitTest resilience_tests[] = {
    cmocka_unit_test(test_watch_survives_natcd_kill),
    cmocka_unit_test(test_watch_survives_nats_restart),
    cmocka_unit_test(test_watch_compaction_during_outage),
    cmocka_unit_test(test_keepalive_through_outages),
    cmocka_unit_test(test_group_join_midstream),
};
const size_t resilience_tests_count = sizeof resilience_tests / sizeof resilience_tests[0];

// --- slow consumer (natcd with a tiny window and queue) ---------------------------

static void test_watch_slow_consumer_resumes_exactly(void** state) {
  (void)state;
  enum { kWrites = 80 };
  const char* prefix = "/sc/";
  const int64_t from = test_Revision(g_client) + 1;
  recorder rec;
  recorder_Init(&rec);
  rec.sleep_ms = 10;  // slower than the writes
  natcdWatchOptions o = _opts();
  o.no_group = true;  // natcd's flow control of a watch's own stream
  natcdWatch* w = NULL;
  ASSERT_OK(
      natcdWatch_Create(&w, g_client, NATCD_STR(prefix), NULL, 0, 0, &o, recorder_Handler, &rec));
  writer wr = {.client = g_client, .prefix = prefix, .n = kWrites};
  _writerMain(&wr);
  if (wr.status != natcdStatus_OK) fail_msg("writer: %s", wr.error);
  _expectExactlyOnce(&rec, w, prefix, kWrites, from, wr.last_revision);
  _printStats(prefix, w);
  natcdWatchStats st;
  ASSERT_OK(natcdWatch_GetStats(&st, w));
  assert_true(st.server_cancels >= 1);
  assert_true(st.resumes >= st.server_cancels);
  assert_string_equal(st.last_cancel_reason, "slow consumer");
  assert_int_equal(st.duplicates, 0);
  natcdWatch_Destroy(w);
  recorder_Destroy(&rec);
}

// Two members of one group: the slow one falls more than its pending limit
// behind, NATS drops group messages for it, and it resumes from history;
// the other gets every event at once, never waiting for it.
static void test_group_slow_member_resumes_exactly(void** state) {
  (void)state;
  enum { kWrites = 80 };
  const char* prefix = "/gsc/";
  const int64_t from = test_Revision(g_client) + 1;
  recorder fast_rec, slow_rec;
  recorder_Init(&fast_rec);
  recorder_Init(&slow_rec);
  slow_rec.sleep_ms = 10;  // slower than the writes
  natcdWatchOptions o = _opts();
  natcdWatch* fast = NULL;
  ASSERT_OK(natcdWatch_Create(&fast, g_client, NATCD_STR(prefix), NULL, 0, from, &o,
                              recorder_Handler, &fast_rec));
  o.group_pending_msgs = 2;
  natcdWatch* slow = NULL;
  ASSERT_OK(natcdWatch_Create(&slow, g_client, NATCD_STR(prefix), NULL, 0, from, &o,
                              recorder_Handler, &slow_rec));
  assert_true(WAIT_FOR(_inGroup(fast) && _inGroup(slow), 5000));
  writer wr = {.client = g_client, .prefix = prefix, .n = kWrites};
  _writerMain(&wr);
  if (wr.status != natcdStatus_OK) fail_msg("writer: %s", wr.error);
  // The fast member has everything while the slow one is still far behind
  // (80 events at 10 ms each).
  assert_true(WAIT_FOR(_lastRevision(fast) >= wr.last_revision, 5000));
  assert_true(_lastRevision(slow) < wr.last_revision);
  _expectExactlyOnce(&fast_rec, fast, prefix, kWrites, from, wr.last_revision);
  _expectExactlyOnce(&slow_rec, slow, prefix, kWrites, from, wr.last_revision);
  _printStats("fast member", fast);
  _printStats("slow member", slow);
  natcdWatchStats st;
  ASSERT_OK(natcdWatch_GetStats(&st, fast));
  assert_int_equal(st.resumes, 0);
  assert_int_equal(st.group_joins, 1);
  ASSERT_OK(natcdWatch_GetStats(&st, slow));
  assert_true(st.gaps >= 1);
  assert_true(st.resumes >= 1);
  assert_int_equal(st.duplicates, 0);
  natcdWatch_Destroy(fast);
  natcdWatch_Destroy(slow);
  recorder_Destroy(&fast_rec);
  recorder_Destroy(&slow_rec);
}

const struct CMUnitTest slow_consumer_tests[] = {
    cmocka_unit_test(test_watch_slow_consumer_resumes_exactly),
    cmocka_unit_test(test_group_slow_member_resumes_exactly),
};
const size_t slow_consumer_tests_count = sizeof slow_consumer_tests / sizeof slow_consumer_tests[0];
