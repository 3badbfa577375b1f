// A watch destroyed while nats.c's reader thread is delivering one of its
// messages: nats.c 3.4 looks the subscription up, lets go of the table's
// lock, and only then locks the subscription (nats-io/nats.c#637), so the
// client must not free it in between (adapters/nats/client/subscription.c).
#include "common.h"
#include "tests.h"

// nats.c's own test hook (exported by libnats, declared in none of its
// installed headers): the reader calls the filter for every message after
// it has looked the subscription up and before it locks it, the very window
// of the race. A filter that sleeps there holds the window open.
typedef void (*natsMsgFilter)(natsConnection* nc, natsMsg** msg, void* closure);
void natsConn_setFilterWithClosure(natsConnection* nc, natsMsgFilter filter, void* closure);

enum { kHoldMs = 500 };

typedef struct hold {
  atomic_bool armed;     // hold the next watch message
  atomic_bool holding;   // the reader is in the window
  atomic_bool released;  // and out of it
} hold;

// A request's reply comes on the connection's response inbox,
// "_INBOX.<id>.<token>"; a watch's own deliver subject is "_INBOX.<id>",
// its group's "<prefix>.watch.group.<member>.<group>".
static bool _isReply(const char* subject) {
  return strncmp(subject, "_INBOX.", 7) == 0 && strchr(subject + 7, '.') != NULL;
}

static void _holdOne(natsConnection* nc, natsMsg** msg, void* closure) {
  (void)nc;
  hold* h = closure;
  if (_isReply(natsMsg_GetSubject(*msg))) return;
  bool armed = true;
  if (!atomic_compare_exchange_strong(&h->armed, &armed, false)) return;
  atomic_store(&h->holding, true);
  natcdFixture_SleepMs(kHoldMs);
  atomic_store(&h->released, true);
}

static bool _inGroup(natcdWatch* w) {
  natcdWatchStats st;
  natcdWatch_GetStats(&st, w);
  return st.in_group;
}

static void _ignore(natcdWatch* w, const natcdWatchNotice* n, void* closure) {
  (void)w;
  (void)n;
  (void)closure;
}

// Destroys a watch while the reader holds one of its messages. Before the
// fix its subscriptions were freed at once, and the reader, out of the
// window, locked a freed mutex: the process died (SEGV, or glibc's
// "__pthread_tpp_change_priority: Assertion ... failed").
static void _destroyWhileDelivering(bool group) {
  natcdClient* c = test_Connect(NULL, 3);
  assert_non_null(c);
  natsConnection* nc = natcdClient_GetConnection(c);
  static hold h;  // not on the stack: a failed test leaves the filter installed
  atomic_init(&h.armed, false);
  atomic_init(&h.holding, false);
  atomic_init(&h.released, false);
  natsConn_setFilterWithClosure(nc, _holdOne, &h);

  natcdWatchOptions o;
  memset(&o, 0, sizeof o);
  o.heartbeat_ms = TEST_HEARTBEAT_MS;
  o.no_group = !group;
  natcdWatch* w = NULL;
  ASSERT_OK(natcdWatch_Create(&w, c, NATCD_STR("/rr/k"), NULL, 0, 0, &o, _ignore, NULL));
  if (group) assert_true(WAIT_FOR(_inGroup(w), 5000));
  atomic_store(&h.armed, true);
  test_Put(g_client, "/rr/k", "v");  // an event for the watch (else a heartbeat)
  assert_true(WAIT_FOR(atomic_load(&h.holding), 5000));
  natcdWatch_Destroy(w);
  assert_true(WAIT_FOR(atomic_load(&h.released), 5000));
  test_Put(c, "/rr/after", "a reply: the retired subscriptions are freed");
  test_Put(c, "/rr/after", "and the reader lives");
  natsConn_setFilterWithClosure(nc, NULL, NULL);
  natcdClient_Destroy(c);
}

static void test_destroy_while_delivering_own_stream(void** state) {
  (void)state;
  _destroyWhileDelivering(false);
}

static void test_destroy_while_delivering_group(void** state) {
  (void)state;
  _destroyWhileDelivering(true);
}

static bool _answers(natcdClient* c) {
  natcdRangeResponse* r = NULL;
  if (natcdKV_Get(&r, c, NATCD_STR("/rr/none"), NULL) != natcdStatus_OK) return false;
  natcdRangeResponse_Destroy(r);
  return true;
}

// Without a connection no reply can tell that the reader is done: the
// subscriptions wait, and go with the first reply once it is back (or with
// the client; LeakSanitizer checks that they do).
static void test_destroy_while_disconnected(void** state) {
  (void)state;
  natcdClient* c = test_Connect(NULL, 3);
  assert_non_null(c);
  natsConnection* nc = natcdClient_GetConnection(c);
  natcdWatchOptions o;
  memset(&o, 0, sizeof o);
  o.heartbeat_ms = TEST_HEARTBEAT_MS;
  natcdWatch* w = NULL;
  ASSERT_OK(natcdWatch_Create(&w, c, NATCD_STR("/rr/down"), NULL, 0, 0, &o, _ignore, NULL));
  natcdFixture_StopNats(&g_fx);
  assert_true(WAIT_FOR(natsConnection_Status(nc) != NATS_CONN_STATUS_CONNECTED, 5000));
  natcdWatch_Destroy(w);
  assert_true(natcdFixture_RestartNats(&g_fx));
  assert_true(WAIT_FOR(natsConnection_Status(nc) == NATS_CONN_STATUS_CONNECTED, 10000));
  assert_true(WAIT_FOR(_answers(c), 10000));  // natcd is back on NATS too
  natcdWatch* last = NULL;
  ASSERT_OK(natcdWatch_Create(&last, c, NATCD_STR("/rr/down"), NULL, 0, 0, &o, _ignore, NULL));
  natcdFixture_StopNats(&g_fx);
  assert_true(WAIT_FOR(natsConnection_Status(nc) != NATS_CONN_STATUS_CONNECTED, 5000));
  natcdWatch_Destroy(last);
  natcdClient_Destroy(c);  // frees what still waits
  assert_true(natcdFixture_RestartNats(&g_fx));
  assert_true(WAIT_FOR(_answers(g_client), 10000));
}

const struct CMUnitTest reader_race_tests[] = {
    cmocka_unit_test(test_destroy_while_delivering_own_stream),
    cmocka_unit_test(test_destroy_while_delivering_group),
    cmocka_unit_test(test_destroy_while_disconnected),
};
const size_t reader_race_tests_count = sizeof reader_race_tests / sizeof reader_race_tests[0];
