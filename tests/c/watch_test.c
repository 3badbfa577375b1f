// Watches: events in order with prev_kv, filters, history, progress,
// compaction at creation, cancel.
#include "adapters/nats/natcd.pb-c.h"
#include "common.h"
#include "tests.h"

static natcdWatchOptions _opts(void) {
  natcdWatchOptions o;
  memset(&o, 0, sizeof o);
  o.heartbeat_ms = TEST_HEARTBEAT_MS;
  return o;
}

static void test_watch_events(void** state) {
  (void)state;
  recorder rec;
  recorder_Init(&rec);
  natcdWatchOptions o = _opts();
  o.prefix = true;
  o.prev_kv = true;
  natcdWatch* w = NULL;
  ASSERT_OK(
      natcdWatch_Create(&w, g_client, NATCD_STR("/wb/"), NULL, 0, 0, &o, recorder_Handler, &rec));
  const int64_t r1 = test_Put(g_client, "/wb/a", "1");
  const int64_t r2 = test_Put(g_client, "/wb/a", "2");
  test_Put(g_client, "/wc", "not watched");
  natcdDeleteResponse* d = NULL;
  ASSERT_OK(natcdKV_Delete(&d, g_client, NATCD_STR("/wb/a"), NULL));
  const int64_t r3 = d->header.revision;
  natcdDeleteResponse_Destroy(d);
  natcdTxn* txn = NULL;
  ASSERT_OK(natcdTxn_Create(&txn));
  ASSERT_OK(natcdTxn_ThenPut(txn, NATCD_STR("/wb/x"), NATCD_STR("x"), NULL));
  ASSERT_OK(natcdTxn_ThenPut(txn, NATCD_STR("/wb/y"), NATCD_STR("y"), NULL));
  natcdTxnResponse* tr = NULL;
  ASSERT_OK(natcdTxn_Commit(&tr, g_client, txn));
  const int64_t r4 = tr->header.revision;
  natcdTxnResponse_Destroy(tr);
  natcdTxn_Destroy(txn);

  assert_true(WAIT_FOR(recorder_CountKind(&rec, natcdWatchNotice_Event) >= 5, 3000));
  natcdFixture_SleepMs(3 * TEST_HEARTBEAT_MS);  // heartbeats come and go unseen
  assert_int_equal(recorder_Count(&rec), 5);
  recordedNotice n = recorder_At(&rec, 0);
  assert_int_equal(n.kind, natcdWatchNotice_Event);
  assert_int_equal(n.type, natcdEventType_Put);
  assert_int_equal(n.revision, r1);
  assert_string_equal(n.key, "/wb/a");
  assert_string_equal(n.value, "1");
  assert_false(n.has_prev);
  assert_true(n.last_in_revision);
  n = recorder_At(&rec, 1);
  assert_int_equal(n.revision, r2);
  assert_true(n.has_prev);
  assert_string_equal(n.prev_value, "1");
  n = recorder_At(&rec, 2);
  assert_int_equal(n.type, natcdEventType_Delete);
  assert_int_equal(n.revision, r3);
  assert_string_equal(n.key, "/wb/a");
  assert_string_equal(n.prev_value, "2");
  n = recorder_At(&rec, 3);
  assert_int_equal(n.revision, r4);
  assert_string_equal(n.key, "/wb/x");
  assert_false(n.last_in_revision);  // the txn's two puts share a revision
  n = recorder_At(&rec, 4);
  assert_int_equal(n.revision, r4);
  assert_true(n.last_in_revision);

  natcdWatchStats st;
  ASSERT_OK(natcdWatch_GetStats(&st, w));
  assert_int_equal(st.events, 5);
  assert_true(st.last_revision >= r4);  // heartbeats are bookmarks too
  assert_int_equal(st.resumes, 0);
  assert_false(st.ended);

  natcdWatch_Cancel(w);
  ASSERT_OK(natcdWatch_GetStats(&st, w));
  assert_true(st.ended);
  test_Put(g_client, "/wb/after", "cancel");
  natcdFixture_SleepMs(100);
  assert_int_equal(recorder_Count(&rec), 5);
  ASSERT_STATUS(natcdStatus_Canceled, natcdWatch_RequestProgress(w));
  natcdWatch_Destroy(w);
  recorder_Destroy(&rec);
}

static void test_watch_filters_and_history(void** state) {
  (void)state;
  const int64_t start = test_Put(g_client, "/wf/a", "1");
  test_Put(g_client, "/wf/a", "2");
  natcdKV_Delete(NULL, g_client, NATCD_STR("/wf/a"), NULL);
  test_Put(g_client, "/wf/b", "3");
  recorder puts, deletes, history;
  recorder_Init(&puts);
  recorder_Init(&deletes);
  recorder_Init(&history);
  natcdWatchOptions o = _opts();
  o.prefix = true;
  o.no_delete = true;
  natcdWatch *wp = NULL, *wd = NULL, *wh = NULL;
  ASSERT_OK(natcdWatch_Create(&wp, g_client, NATCD_STR("/wf/"), NULL, 0, start, &o,
                              recorder_Handler, &puts));
  o.no_delete = false;
  o.no_put = true;
  ASSERT_OK(natcdWatch_Create(&wd, g_client, NATCD_STR("/wf/"), NULL, 0, start, &o,
                              recorder_Handler, &deletes));
  // A range given by its end: [/wf/a, /wf/b) from the second revision.
  natcdWatchOptions plain = _opts();
  ASSERT_OK(natcdWatch_Create(&wh, g_client, NATCD_STR("/wf/a"), NATCD_STR("/wf/b"), start + 1,
                              &plain, recorder_Handler, &history));
  assert_true(WAIT_FOR(
      recorder_Count(&puts) == 3 && recorder_Count(&deletes) == 1 && recorder_Count(&history) == 2,
      3000));
  assert_int_equal(recorder_At(&puts, 0).revision, start);
  assert_string_equal(recorder_At(&puts, 2).key, "/wf/b");
  assert_int_equal(recorder_At(&deletes, 0).type, natcdEventType_Delete);
  assert_int_equal(recorder_At(&history, 0).revision, start + 1);
  assert_int_equal(recorder_At(&history, 1).type, natcdEventType_Delete);
  natcdWatch_Destroy(wp);
  natcdWatch_Destroy(wd);
  natcdWatch_Destroy(wh);
  recorder_Destroy(&puts);
  recorder_Destroy(&deletes);
  recorder_Destroy(&history);
}

static void test_watch_progress(void** state) {
  (void)state;
  recorder quiet, notify;
  recorder_Init(&quiet);
  recorder_Init(&notify);
  natcdWatchOptions o = _opts();
  natcdWatch *wq = NULL, *wn = NULL;
  ASSERT_OK(natcdWatch_Create(&wq, g_client, NATCD_STR("/wp/q"), NULL, 0, 0, &o, recorder_Handler,
                              &quiet));
  o.progress_notify = true;
  ASSERT_OK(natcdWatch_Create(&wn, g_client, NATCD_STR("/wp/n"), NULL, 0, 0, &o, recorder_Handler,
                              &notify));
  const int64_t rev = test_Put(g_client, "/wp/other", "x");
  // Asked for: one progress notice, a bookmark at or after the last write.
  ASSERT_OK(natcdWatch_RequestProgress(wq));
  assert_true(WAIT_FOR(recorder_Count(&quiet) >= 1, 3000));
  recordedNotice n = recorder_At(&quiet, 0);
  assert_int_equal(n.kind, natcdWatchNotice_Progress);
  assert_true(n.revision >= rev);
  // With progress_notify, natcd's periodic notices (here its heartbeats)
  // reach the handler; without, they do not.
  assert_true(WAIT_FOR(recorder_CountKind(&notify, natcdWatchNotice_Progress) >= 2, 3000));
  assert_int_equal(recorder_Count(&quiet), 1);
  natcdWatch_Destroy(wq);
  natcdWatch_Destroy(wn);
  recorder_Destroy(&quiet);
  recorder_Destroy(&notify);
}

static void test_watch_compacted_at_create(void** state) {
  (void)state;
  const int64_t old = test_Put(g_client, "/wcc/a", "1");
  const int64_t now = test_Put(g_client, "/wcc/a", "2");
  ASSERT_OK(natcdKV_Compact(NULL, g_client, now, false));
  recorder rec;
  recorder_Init(&rec);
  natcdWatchOptions o = _opts();
  natcdWatch* w = NULL;
  ASSERT_STATUS(natcdStatus_Compacted, natcdWatch_Create(&w, g_client, NATCD_STR("/wcc/a"), NULL, 0,
                                                         old, &o, recorder_Handler, &rec));
  assert_null(w);
  natcdError e;
  natcd_GetLastError(&e);
  assert_int_equal(e.code, 410);
  assert_int_equal(e.compact_revision, now);
  assert_non_null(strstr(e.text, "ErrCompacted"));
  // From the compact revision on it works.
  ASSERT_OK(natcdWatch_Create(&w, g_client, NATCD_STR("/wcc/a"), NULL, 0, now, &o, recorder_Handler,
                              &rec));
  assert_true(WAIT_FOR(recorder_Count(&rec) == 1, 3000));
  assert_string_equal(recorder_At(&rec, 0).value, "2");
  natcdWatch_Destroy(w);
  recorder_Destroy(&rec);
}

// --- the stream logic against a scripted fake natcd --------------------------------

// Serves fake.watch.* and publishes a scripted stream per create, to check
// gaps, fragments, duplicates and cancels precisely.
typedef struct fakeNatcd {
  pthread_mutex_t mu;
  int creates;
  int64_t start_revisions[8];
  int64_t acked_watch;
  uint64_t acked_seq;
  int64_t canceled[8];
  int n_canceled;
} fakeNatcd;

typedef struct fakeEvent {
  int64_t revision;
  const char* key;
} fakeEvent;

static void _fakeSend(natsConnection* nc, const char* deliver, int64_t watch_id, uint64_t seq,
                      bool fragment, const fakeEvent* events, size_t n, int64_t header_revision,
                      const char* cancel_reason) {
  Natcd__V1__WatchResponse r;
  natcd__v1__watch_response__init(&r);
  Natcd__V1__ResponseHeader h;
  natcd__v1__response_header__init(&h);
  h.revision = header_revision;
  r.header = &h;
  r.watch_id = watch_id;
  r.seq = seq;
  r.fragment = fragment;
  Natcd__V1__Event ev[8];
  Natcd__V1__KeyValue kv[8];
  Natcd__V1__Event* evp[8];
  for (size_t i = 0; i < n; ++i) {
    natcd__v1__event__init(&ev[i]);
    natcd__v1__key_value__init(&kv[i]);
    kv[i].key.data = (uint8_t*)events[i].key;
    kv[i].key.len = strlen(events[i].key);
    kv[i].value = kv[i].key;
    kv[i].mod_revision = events[i].revision;
    kv[i].create_revision = events[i].revision;
    kv[i].version = 1;
    ev[i].kv = &kv[i];
    evp[i] = &ev[i];
  }
  r.n_events = n;
  r.events = evp;
  if (cancel_reason != NULL) {
    r.canceled = true;
    r.cancel_reason = (char*)cancel_reason;
  }
  uint8_t buf[2048];
  size_t len = natcd__v1__watch_response__pack(&r, buf);
  natsConnection_Publish(nc, deliver, buf, (int)len);
}

static void _fakeNatcd(natsConnection* nc, natsSubscription* sub, natsMsg* msg, void* closure) {
  (void)sub;
  fakeNatcd* f = closure;
  const char* subject = natsMsg_GetSubject(msg);
  const uint8_t* data = (const uint8_t*)natsMsg_GetData(msg);
  const size_t len = (size_t)natsMsg_GetDataLength(msg);
  if (strcmp(subject, "fake.watch.ack") == 0) {
    Natcd__V1__WatchAckRequest* a = natcd__v1__watch_ack_request__unpack(NULL, len, data);
    pthread_mutex_lock(&f->mu);
    f->acked_watch = a->watch_id;
    f->acked_seq = a->seq;
    pthread_mutex_unlock(&f->mu);
    natcd__v1__watch_ack_request__free_unpacked(a, NULL);
  } else if (strcmp(subject, "fake.watch.cancel") == 0) {
    Natcd__V1__WatchCancelRequest* c = natcd__v1__watch_cancel_request__unpack(NULL, len, data);
    pthread_mutex_lock(&f->mu);
    if (f->n_canceled < 8) f->canceled[f->n_canceled++] = c->watch_id;
    pthread_mutex_unlock(&f->mu);
    natcd__v1__watch_cancel_request__free_unpacked(c, NULL);
  } else if (strcmp(subject, "fake.watch.create") == 0) {
    Natcd__V1__WatchCreateRequest* c = natcd__v1__watch_create_request__unpack(NULL, len, data);
    pthread_mutex_lock(&f->mu);
    const int n = f->creates++;
    if (n < 8) f->start_revisions[n] = c->start_revision;
    pthread_mutex_unlock(&f->mu);
    char deliver[256];
    snprintf(deliver, sizeof deliver, "%s", c->deliver_subject);
    natcd__v1__watch_create_request__free_unpacked(c, NULL);
    const int64_t id = 100 + n;
    Natcd__V1__WatchResponse created;
    natcd__v1__watch_response__init(&created);
    Natcd__V1__ResponseHeader h;
    natcd__v1__response_header__init(&h);
    h.revision = 10;
    created.header = &h;
    created.watch_id = id;
    created.created = true;
    uint8_t buf[256];
    size_t out = natcd__v1__watch_response__pack(&created, buf);
    natsConnection_Publish(nc, natsMsg_GetReply(msg), buf, (int)out);
    if (n == 0) {
      // 11; 12 in two fragments, then 13; then seq 4 is "lost".
      _fakeSend(nc, deliver, id, 1, false, (fakeEvent[]){{11, "a"}}, 1, 11, NULL);
      _fakeSend(nc, deliver, id, 2, true, (fakeEvent[]){{12, "k1"}, {12, "k2"}}, 2, 13, NULL);
      _fakeSend(nc, deliver, id, 3, false, (fakeEvent[]){{12, "k3"}, {13, "k4"}}, 2, 13, NULL);
      _fakeSend(nc, deliver, id, 5, false, (fakeEvent[]){{15, "lost"}}, 1, 15, NULL);
    } else if (n == 1) {
      // Replays 13 (already delivered), 14; the start of 15, then a cancel.
      _fakeSend(nc, deliver, id, 1, false, (fakeEvent[]){{13, "k4"}, {14, "k5"}}, 2, 15, NULL);
      _fakeSend(nc, deliver, id, 2, true, (fakeEvent[]){{15, "k6"}}, 1, 15, NULL);
      _fakeSend(nc, deliver, id, 3, false, NULL, 0, 14, "slow consumer");
    } else {
      // 15 whole, then a progress bookmark.
      _fakeSend(nc, deliver, id, 1, false, (fakeEvent[]){{15, "k6"}, {15, "k7"}}, 2, 15, NULL);
      _fakeSend(nc, deliver, id, 2, false, NULL, 0, 20, NULL);
    }
  }
  natsMsg_Destroy(msg);
}

static int _fakeCancels(fakeNatcd* f) {
  pthread_mutex_lock(&f->mu);
  int n = f->n_canceled;
  pthread_mutex_unlock(&f->mu);
  return n;
}

static void test_watch_stream_logic(void** state) {
  (void)state;
  natsConnection* nc = natcdClient_GetConnection(g_client);
  fakeNatcd f = {.creates = 0};
  pthread_mutex_init(&f.mu, NULL);
  natsSubscription* sub = NULL;
  assert_int_equal(natsConnection_Subscribe(&sub, nc, "fake.watch.*", _fakeNatcd, &f), NATS_OK);
  natsConnection_Flush(nc);
  natcdClientOptions co;
  natcdClientOptions_Init(&co);
  co.prefix = "fake";
  co.backoff_ms = 10;
  natcdClient* fake = NULL;
  ASSERT_OK(natcdClient_Create(&fake, nc, &co));
  recorder rec;
  recorder_Init(&rec);
  natcdWatchOptions o = _opts();
  o.heartbeat_ms = 60000;  // no silence resumes here
  natcdWatch* w = NULL;
  ASSERT_OK(natcdWatch_Create(&w, fake, NATCD_STR("k"), NULL, 0, 0, &o, recorder_Handler, &rec));
  if (!WAIT_FOR(recorder_Count(&rec) == 8, 3000)) {
    natcdWatchStats st;
    natcdWatch_GetStats(&st, w);
    for (size_t i = 0; i < recorder_Count(&rec); ++i) {
      recordedNotice n = recorder_At(&rec, i);
      print_error("notice %zu: kind %d rev %lld key %s\n", i, n.kind, (long long)n.revision, n.key);
    }
    fail_msg("%zu notices; resumes %lld gaps %lld cancels %lld dups %lld ended %d",
             recorder_Count(&rec), (long long)st.resumes, (long long)st.gaps,
             (long long)st.server_cancels, (long long)st.duplicates, st.ended);
  }
  const struct {
    int64_t revision;
    const char* key;
    bool last;
  } want[] = {{11, "a", true},  {12, "k1", false}, {12, "k2", false}, {12, "k3", true},
              {13, "k4", true}, {14, "k5", true},  {15, "k6", false}, {15, "k7", true}};
  for (size_t i = 0; i < 8; ++i) {
    recordedNotice n = recorder_At(&rec, i);
    assert_int_equal(n.kind, natcdWatchNotice_Event);
    assert_int_equal(n.revision, want[i].revision);
    assert_string_equal(n.key, want[i].key);
    assert_int_equal(n.last_in_revision, want[i].last);
  }
  natcdWatchStats st;
  assert_true(WAIT_FOR((natcdWatch_GetStats(&st, w), st.last_revision == 20), 2000));
  assert_int_equal(st.events, 8);
  assert_int_equal(st.gaps, 1);
  assert_int_equal(st.server_cancels, 1);
  assert_int_equal(st.resumes, 2);
  assert_int_equal(st.duplicates, 1);
  assert_string_equal(st.last_cancel_reason, "slow consumer");
  natcdWatch_Destroy(w);
  assert_true(WAIT_FOR(_fakeCancels(&f) >= 2, 2000));
  pthread_mutex_lock(&f.mu);
  assert_int_equal(f.creates, 3);
  assert_int_equal(f.start_revisions[0], 0);   // from now (the reply says 10)
  assert_int_equal(f.start_revisions[1], 14);  // after the gap: 13 was the last whole revision
  assert_int_equal(f.start_revisions[2], 15);  // the fragment of 15 was not delivered
  assert_int_equal(f.acked_watch, 102);
  assert_int_equal(f.acked_seq, 2);
  // The stream with the gap is dropped, and the last one by Destroy; the
  // one natcd canceled needs no cancel.
  assert_int_equal(f.n_canceled, 2);
  assert_int_equal(f.canceled[0], 100);
  assert_int_equal(f.canceled[1], 102);
  pthread_mutex_unlock(&f.mu);
  natsSubscription_Destroy(sub);
  natcdClient_Destroy(fake);
  recorder_Destroy(&rec);
  pthread_mutex_destroy(&f.mu);
}

static bool _inGroup(natcdWatch* w) {
  natcdWatchStats st;
  natcdWatch_GetStats(&st, w);
  return st.in_group;
}

// Watches of one prefix that differ in prev_kv or filters get different
// groups: each sees exactly what it asked for; one that opts out keeps its
// own stream.
static void test_group_shapes_never_mix(void** state) {
  (void)state;
  enum { kPlain, kPrevKv, kNoPut, kNoDelete, kNoGroup, kWatches };
  recorder recs[kWatches];
  natcdWatch* ws[kWatches];
  for (int i = 0; i < kWatches; ++i) {
    recorder_Init(&recs[i]);
    natcdWatchOptions o = _opts();
    o.prefix = true;
    o.prev_kv = i == kPrevKv;
    o.no_put = i == kNoPut;
    o.no_delete = i == kNoDelete;
    o.no_group = i == kNoGroup;
    ASSERT_OK(natcdWatch_Create(&ws[i], g_client, NATCD_STR("/gm/"), NULL, 0, 0, &o,
                                recorder_Handler, &recs[i]));
  }
  for (int i = 0; i < kWatches; ++i) {
    if (i != kNoGroup) assert_true(WAIT_FOR(_inGroup(ws[i]), 5000));
  }
  const int64_t r1 = test_Put(g_client, "/gm/a", "1");
  const int64_t r2 = test_Put(g_client, "/gm/a", "2");
  natcdDeleteResponse* d = NULL;
  ASSERT_OK(natcdKV_Delete(&d, g_client, NATCD_STR("/gm/a"), NULL));
  const int64_t r3 = d->header.revision;
  natcdDeleteResponse_Destroy(d);
  const size_t expected[kWatches] = {3, 3, 1, 2, 3};
  for (int i = 0; i < kWatches; ++i) {
    assert_true(
        WAIT_FOR(recorder_CountKind(&recs[i], natcdWatchNotice_Event) >= expected[i], 3000));
  }
  natcdFixture_SleepMs(3 * TEST_HEARTBEAT_MS);  // nothing else comes
  for (int i = 0; i < kWatches; ++i) {
    assert_int_equal(recorder_CountKind(&recs[i], natcdWatchNotice_Event), expected[i]);
    for (size_t e = 0; e < expected[i]; ++e) {
      recordedNotice n = recorder_At(&recs[i], e);
      // prev_kv only where asked for (r1 had no previous value).
      assert_int_equal(n.has_prev, i == kPrevKv && n.revision != r1);
    }
  }
  assert_int_equal(recorder_At(&recs[kNoPut], 0).revision, r3);
  assert_int_equal(recorder_At(&recs[kNoPut], 0).type, natcdEventType_Delete);
  assert_int_equal(recorder_At(&recs[kNoDelete], 1).revision, r2);
  assert_int_equal(recorder_At(&recs[kPrevKv], 2).revision, r3);
  assert_string_equal(recorder_At(&recs[kPrevKv], 2).prev_value, "2");
  for (int i = 0; i < kWatches; ++i) {
    natcdWatchStats st;
    ASSERT_OK(natcdWatch_GetStats(&st, ws[i]));
    assert_int_equal(st.in_group, i != kNoGroup);
    assert_int_equal(st.group_joins, i != kNoGroup ? 1 : 0);
    assert_int_equal(st.resumes, 0);
    natcdWatch_Destroy(ws[i]);
    recorder_Destroy(&recs[i]);
  }
}

// What a member of the thousand saw: events counted, in order, once.
typedef struct counter {
  atomic_int events;
  atomic_bool bad;
  int64_t last;  // the watch's own thread only
} counter;

static void _countHandler(natcdWatch* w, const natcdWatchNotice* n, void* closure) {
  (void)w;
  counter* c = closure;
  if (n->kind != natcdWatchNotice_Event) return;
  if (n->revision <= c->last) atomic_store(&c->bad, true);
  c->last = n->revision;
  atomic_fetch_add(&c->events, 1);
}

// 1,000 watches of one prefix share one group and all get every event.
static void test_group_thousand_watchers(void** state) {
  (void)state;
  enum { kWatches = 1000, kWrites = 20 };
  counter* counts = calloc(kWatches, sizeof *counts);
  natcdWatch** ws = calloc(kWatches, sizeof *ws);
  assert_non_null(counts);
  assert_non_null(ws);
  const int64_t started = natcdFixture_NowMs();
  natcdWatchOptions o = _opts();
  o.prefix = true;
  for (int i = 0; i < kWatches; ++i) {
    ASSERT_OK(natcdWatch_Create(&ws[i], g_client, NATCD_STR("/g1k/"), NULL, 0, 0, &o, _countHandler,
                                &counts[i]));
  }
  for (int i = 0; i < kWatches; ++i) assert_true(WAIT_FOR(_inGroup(ws[i]), 10000));
  for (int i = 0; i < kWrites; ++i) test_Put(g_client, "/g1k/k", "v");
  for (int i = 0; i < kWatches; ++i) {
    assert_true(WAIT_FOR(atomic_load(&counts[i].events) >= kWrites, 10000));
  }
  print_message("  1,000 members: created, joined and delivered in %lld ms\n",
                (long long)(natcdFixture_NowMs() - started));
  natcdFixture_SleepMs(3 * TEST_HEARTBEAT_MS);
  for (int i = 0; i < kWatches; ++i) {
    assert_int_equal(atomic_load(&counts[i].events), kWrites);
    assert_false(atomic_load(&counts[i].bad));
    natcdWatchStats st;
    ASSERT_OK(natcdWatch_GetStats(&st, ws[i]));
    assert_int_equal(st.resumes, 0);
  }
  for (int i = 0; i < kWatches; ++i) natcdWatch_Destroy(ws[i]);
  free(ws);
  free(counts);
}

const struct CMUnitTest watch_tests[] = {
    cmocka_unit_test(test_group_shapes_never_mix),
    cmocka_unit_test(test_group_thousand_watchers),
    cmocka_unit_test(test_watch_stream_logic),
    cmocka_unit_test(test_watch_events),
    cmocka_unit_test(test_watch_filters_and_history),
    cmocka_unit_test(test_watch_progress),
    cmocka_unit_test(test_watch_compacted_at_create),
};
const size_t watch_tests_count = sizeof watch_tests / sizeof watch_tests[0];
