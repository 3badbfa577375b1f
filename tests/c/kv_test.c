// KV calls, txn, errors and idempotent retries, against a real natcd.
#include "adapters/nats/natcd.pb-c.h"
#include "common.h"
#include "tests.h"

static void test_status_and_null_destroy(void** state) {
  (void)state;
  for (int s = natcdStatus_OK; s <= natcdStatus_NoLeader; ++s) {
    const char* text = natcdStatus_GetText((natcdStatus)s);
    assert_non_null(text);
    assert_true(strcmp(text, "Unknown status") != 0);
  }
  assert_string_equal(natcdStatus_GetText(natcdStatus_Compacted), "Compacted");
  // Every _Destroy takes NULL.
  natcdClient_Destroy(NULL);
  natcdKeyValue_Destroy(NULL);
  natcdRangeResponse_Destroy(NULL);
  natcdPutResponse_Destroy(NULL);
  natcdDeleteResponse_Destroy(NULL);
  natcdTxn_Destroy(NULL);
  natcdTxnResponse_Destroy(NULL);
  natcdLeaseTimeToLive_Destroy(NULL);
  natcdKeepAlive_Destroy(NULL);
  natcdKeepAlive_Stop(NULL);
  natcdWatch_Destroy(NULL);
  natcdWatch_Cancel(NULL);
  natcdSession_Destroy(NULL);
  natcdMutex_Destroy(NULL);
  natcdElection_Destroy(NULL);
  natcdObserver_Destroy(NULL);
  // Bad arguments are refused before anything is sent.
  natcdClient* c = NULL;
  ASSERT_STATUS(natcdStatus_InvalidArg, natcdClient_Create(&c, NULL, NULL));
  ASSERT_STATUS(natcdStatus_InvalidArg, natcdClient_Connect(&c, NULL, NULL));
  // Nothing listens there: the first connection fails.
  ASSERT_STATUS(natcdStatus_ConnectionError, natcdClient_Connect(&c, "nats://127.0.0.1:1", NULL));
  assert_null(c);
  ASSERT_STATUS(natcdStatus_InvalidArg, natcdKV_Get(NULL, g_client, NATCD_STR("/k"), NULL));
  natcdError e;
  assert_int_equal(natcd_GetLastError(&e), natcdStatus_InvalidArg);
  assert_non_null(strstr(e.text, "invalid argument"));
  // The prefix helper.
  char buf[8];
  assert_int_equal(natcdKey_PrefixEnd(buf, "/a", 2), 2);
  assert_memory_equal(buf, "/b", 2);
  assert_int_equal(natcdKey_PrefixEnd(buf, "a\xff\xff", 3), 1);
  assert_memory_equal(buf, "b", 1);
  assert_int_equal(natcdKey_PrefixEnd(buf, "\xff", 1), 1);
  assert_int_equal(buf[0], 0);
}

static void test_put_get(void** state) {
  (void)state;
  natcdPutResponse* put = NULL;
  ASSERT_OK(natcdKV_Put(&put, g_client, NATCD_STR("/kv/a"), NATCD_STR("1"), NULL));
  const int64_t rev1 = put->header.revision;
  assert_true(rev1 > 0);
  assert_null(put->prev_kv);
  assert_true(put->header.member_id != 0);
  natcdPutResponse_Destroy(put);

  natcdPutOptions prev = {.prev_kv = true};
  ASSERT_OK(natcdKV_Put(&put, g_client, NATCD_STR("/kv/a"), NATCD_STR("2"), &prev));
  assert_int_equal(put->header.revision, rev1 + 1);
  assert_non_null(put->prev_kv);
  assert_string_equal(put->prev_kv->value, "1");
  assert_int_equal(put->prev_kv->mod_revision, rev1);
  natcdPutResponse_Destroy(put);

  natcdRangeResponse* r = NULL;
  ASSERT_OK(natcdKV_Get(&r, g_client, NATCD_STR("/kv/a"), NULL));
  assert_int_equal(r->n_kvs, 1);
  assert_int_equal(r->count, 1);
  assert_false(r->more);
  assert_string_equal(r->kvs[0].key, "/kv/a");
  assert_int_equal(r->kvs[0].key_len, 5);
  assert_string_equal(r->kvs[0].value, "2");
  assert_int_equal(r->kvs[0].value_len, 1);
  assert_int_equal(r->kvs[0].create_revision, rev1);
  assert_int_equal(r->kvs[0].mod_revision, rev1 + 1);
  assert_int_equal(r->kvs[0].version, 2);
  assert_int_equal(r->header.revision, rev1 + 1);
  natcdRangeResponse_Destroy(r);

  // Binary keys and values, NUL bytes included.
  ASSERT_OK(natcdKV_Put(NULL, g_client, "/kv/\0bin", 8, "x\0y", 3, NULL));
  ASSERT_OK(natcdKV_Get(&r, g_client, "/kv/\0bin", 8, NULL));
  assert_int_equal(r->n_kvs, 1);
  assert_int_equal(r->kvs[0].value_len, 3);
  assert_memory_equal(r->kvs[0].value, "x\0y", 3);
  natcdRangeResponse_Destroy(r);

  // A missing key: no kvs, count 0.
  ASSERT_OK(natcdKV_Get(&r, g_client, NATCD_STR("/kv/missing"), NULL));
  assert_int_equal(r->n_kvs, 0);
  assert_int_equal(r->count, 0);
  natcdRangeResponse_Destroy(r);
}

static void test_range_options(void** state) {
  (void)state;
  const char* values[] = {"e", "d", "c", "b", "a"};
  int64_t revs[5];
  for (int i = 0; i < 5; ++i) {
    char key[32];
    snprintf(key, sizeof key, "/ro/k%d", i + 1);
    revs[i] = test_Put(g_client, key, values[i]);
  }
  test_Put(g_client, "/ro/k5", "a2");  // k5 version 2
  test_Put(g_client, "/rp", "outside");
  natcdRangeResponse* r = NULL;

  natcdRangeOptions o = {.prefix = true};
  ASSERT_OK(natcdKV_Get(&r, g_client, NATCD_STR("/ro/"), &o));
  assert_int_equal(r->n_kvs, 5);
  assert_string_equal(r->kvs[0].key, "/ro/k1");
  assert_string_equal(r->kvs[4].key, "/ro/k5");
  natcdRangeResponse_Destroy(r);

  o = (natcdRangeOptions){.prefix = true, .limit = 2};
  ASSERT_OK(natcdKV_Get(&r, g_client, NATCD_STR("/ro/"), &o));
  assert_int_equal(r->n_kvs, 2);
  assert_true(r->more);
  assert_int_equal(r->count, 5);
  natcdRangeResponse_Destroy(r);

  o = (natcdRangeOptions){.prefix = true, .sort_order = natcdSortOrder_Descend};
  ASSERT_OK(natcdKV_Get(&r, g_client, NATCD_STR("/ro/"), &o));
  assert_string_equal(r->kvs[0].key, "/ro/k5");
  natcdRangeResponse_Destroy(r);

  o = (natcdRangeOptions){
      .prefix = true, .sort_order = natcdSortOrder_Ascend, .sort_target = natcdSortTarget_Value};
  ASSERT_OK(natcdKV_Get(&r, g_client, NATCD_STR("/ro/"), &o));
  assert_string_equal(r->kvs[0].value, "a2");
  assert_string_equal(r->kvs[4].value, "e");
  natcdRangeResponse_Destroy(r);

  o = (natcdRangeOptions){
      .prefix = true, .sort_order = natcdSortOrder_Descend, .sort_target = natcdSortTarget_Version};
  ASSERT_OK(natcdKV_Get(&r, g_client, NATCD_STR("/ro/"), &o));
  assert_string_equal(r->kvs[0].key, "/ro/k5");
  assert_int_equal(r->kvs[0].version, 2);
  natcdRangeResponse_Destroy(r);

  o = (natcdRangeOptions){.prefix = true, .keys_only = true};
  ASSERT_OK(natcdKV_Get(&r, g_client, NATCD_STR("/ro/"), &o));
  assert_int_equal(r->n_kvs, 5);
  assert_int_equal(r->kvs[0].value_len, 0);
  assert_string_equal(r->kvs[0].value, "");
  natcdRangeResponse_Destroy(r);

  o = (natcdRangeOptions){.prefix = true, .count_only = true};
  ASSERT_OK(natcdKV_Get(&r, g_client, NATCD_STR("/ro/"), &o));
  assert_int_equal(r->n_kvs, 0);
  assert_int_equal(r->count, 5);
  natcdRangeResponse_Destroy(r);

  // As of the revision of the third put: k1..k3, and k5 not yet.
  o = (natcdRangeOptions){.prefix = true, .revision = revs[2]};
  ASSERT_OK(natcdKV_Get(&r, g_client, NATCD_STR("/ro/"), &o));
  assert_int_equal(r->n_kvs, 3);
  natcdRangeResponse_Destroy(r);

  o = (natcdRangeOptions){.prefix = true, .min_mod_revision = revs[3]};
  ASSERT_OK(natcdKV_Get(&r, g_client, NATCD_STR("/ro/"), &o));
  assert_int_equal(r->n_kvs, 2);  // k4, k5
  natcdRangeResponse_Destroy(r);

  o = (natcdRangeOptions){.prefix = true, .max_mod_revision = revs[1]};
  ASSERT_OK(natcdKV_Get(&r, g_client, NATCD_STR("/ro/"), &o));
  assert_int_equal(r->n_kvs, 2);  // k1, k2
  natcdRangeResponse_Destroy(r);

  o = (natcdRangeOptions){
      .prefix = true, .min_create_revision = revs[1], .max_create_revision = revs[3]};
  ASSERT_OK(natcdKV_Get(&r, g_client, NATCD_STR("/ro/"), &o));
  assert_int_equal(r->n_kvs, 3);  // k2, k3, k4
  natcdRangeResponse_Destroy(r);

  o = (natcdRangeOptions){.range_end = "/ro/k4", .range_end_len = 6, .serializable = true};
  ASSERT_OK(natcdKV_Get(&r, g_client, NATCD_STR("/ro/k2"), &o));
  assert_int_equal(r->n_kvs, 2);  // k2, k3
  natcdRangeResponse_Destroy(r);

  o = (natcdRangeOptions){.from_key = true};
  ASSERT_OK(natcdKV_Get(&r, g_client, NATCD_STR("/ro/k4"), &o));
  assert_true(r->n_kvs >= 3);  // k4, k5, /rp and whatever sorts after
  assert_string_equal(r->kvs[0].key, "/ro/k4");
  natcdRangeResponse_Destroy(r);
}

static void test_put_options_and_delete(void** state) {
  (void)state;
  int64_t lease = 0;
  ASSERT_OK(natcdLease_Grant(&lease, NULL, g_client, 30, 0));
  natcdPutOptions with_lease = {.lease = lease};
  ASSERT_OK(natcdKV_Put(NULL, g_client, NATCD_STR("/po/a"), NATCD_STR("v1"), &with_lease));
  // ignore_value keeps the value; ignore_lease keeps the lease.
  natcdPutOptions keep_value = {.ignore_value = true, .lease = lease};
  ASSERT_OK(natcdKV_Put(NULL, g_client, NATCD_STR("/po/a"), "", 0, &keep_value));
  natcdPutOptions keep_lease = {.ignore_lease = true};
  ASSERT_OK(natcdKV_Put(NULL, g_client, NATCD_STR("/po/a"), NATCD_STR("v2"), &keep_lease));
  natcdRangeResponse* r = NULL;
  ASSERT_OK(natcdKV_Get(&r, g_client, NATCD_STR("/po/a"), NULL));
  assert_string_equal(r->kvs[0].value, "v2");
  assert_int_equal(r->kvs[0].lease, lease);
  assert_int_equal(r->kvs[0].version, 3);
  natcdRangeResponse_Destroy(r);

  for (int i = 0; i < 3; ++i) {
    char key[32];
    snprintf(key, sizeof key, "/po/d%d", i);
    test_Put(g_client, key, "x");
  }
  natcdDeleteResponse* d = NULL;
  natcdDeleteOptions prev = {.prev_kv = true};
  ASSERT_OK(natcdKV_Delete(&d, g_client, NATCD_STR("/po/d0"), &prev));
  assert_int_equal(d->deleted, 1);
  assert_int_equal(d->n_prev_kvs, 1);
  assert_string_equal(d->prev_kvs[0].key, "/po/d0");
  natcdDeleteResponse_Destroy(d);
  natcdDeleteOptions pfx = {.prefix = true, .prev_kv = true};
  ASSERT_OK(natcdKV_Delete(&d, g_client, NATCD_STR("/po/d"), &pfx));
  assert_int_equal(d->deleted, 2);
  assert_int_equal(d->n_prev_kvs, 2);
  natcdDeleteResponse_Destroy(d);
  natcdDeleteOptions range = {.range_end = "/po/b", .range_end_len = 5};
  ASSERT_OK(natcdKV_Delete(&d, g_client, NATCD_STR("/po/a"), &range));
  assert_int_equal(d->deleted, 1);
  assert_int_equal(d->n_prev_kvs, 0);
  natcdDeleteResponse_Destroy(d);
  // Nothing to delete: no new revision.
  int64_t before = test_Revision(g_client);
  ASSERT_OK(natcdKV_Delete(&d, g_client, NATCD_STR("/po/none"), NULL));
  assert_int_equal(d->deleted, 0);
  assert_int_equal(d->header.revision, before);
  natcdDeleteResponse_Destroy(d);
  ASSERT_OK(natcdLease_Revoke(g_client, lease));
}

// Checks the last error of this thread.
static void _expectError(natcdStatus status, int code, const char* name) {
  natcdError e;
  assert_int_equal(natcd_GetLastError(&e), status);
  assert_int_equal(e.code, code);
  if (strncmp(e.text, name, strlen(name)) != 0)
    fail_msg("error text '%s', wanted %s", e.text, name);
}

static void test_service_errors(void** state) {
  (void)state;
  ASSERT_STATUS(natcdStatus_BadRequest, natcdKV_Put(NULL, g_client, "", 0, NATCD_STR("v"), NULL));
  _expectError(natcdStatus_BadRequest, 400, "ErrEmptyKey:");

  natcdPutOptions bad_lease = {.lease = 0x7777};
  ASSERT_STATUS(natcdStatus_NotFound,
                natcdKV_Put(NULL, g_client, NATCD_STR("/err/a"), NATCD_STR("v"), &bad_lease));
  _expectError(natcdStatus_NotFound, 404, "ErrLeaseNotFound:");

  natcdPutOptions ignore = {.ignore_value = true};
  ASSERT_STATUS(natcdStatus_BadRequest,
                natcdKV_Put(NULL, g_client, NATCD_STR("/err/missing"), "", 0, &ignore));
  _expectError(natcdStatus_BadRequest, 400, "ErrKeyNotFound:");
  ASSERT_STATUS(natcdStatus_BadRequest,
                natcdKV_Put(NULL, g_client, NATCD_STR("/err/missing"), NATCD_STR("v"), &ignore));
  _expectError(natcdStatus_BadRequest, 400, "ErrValueProvided:");

  natcdRangeResponse* r = NULL;
  natcdRangeOptions future = {.revision = test_Revision(g_client) + 1000};
  ASSERT_STATUS(natcdStatus_BadRequest, natcdKV_Get(&r, g_client, NATCD_STR("/err/a"), &future));
  assert_null(r);
  _expectError(natcdStatus_BadRequest, 400, "ErrFutureRev:");

  int64_t id = 0;
  ASSERT_OK(natcdLease_Grant(&id, NULL, g_client, 10, 0x1234abcd));
  assert_int_equal(id, 0x1234abcd);
  ASSERT_STATUS(natcdStatus_Conflict, natcdLease_Grant(&id, NULL, g_client, 10, 0x1234abcd));
  _expectError(natcdStatus_Conflict, 409, "ErrLeaseExist:");
  ASSERT_OK(natcdLease_Revoke(g_client, 0x1234abcd));
  ASSERT_STATUS(natcdStatus_NotFound, natcdLease_Revoke(g_client, 0x1234abcd));
  _expectError(natcdStatus_NotFound, 404, "ErrLeaseNotFound:");
  ASSERT_STATUS(natcdStatus_BadRequest,
                natcdLease_Grant(&id, NULL, g_client, 9000000001LL * 10, 0));
  _expectError(natcdStatus_BadRequest, 400, "ErrLeaseTTLTooLarge:");

  // Larger than natcd's --max-request-bytes (64 KiB in these tests).
  size_t big = 100 * 1024;
  char* value = calloc(1, big);
  ASSERT_STATUS(natcdStatus_TooLarge,
                natcdKV_Put(NULL, g_client, NATCD_STR("/err/big"), value, big, NULL));
  free(value);
  _expectError(natcdStatus_TooLarge, 413, "ErrRequestTooLarge:");

  natcdTxn* txn = NULL;
  ASSERT_OK(natcdTxn_Create(&txn));
  ASSERT_OK(natcdTxn_ThenPut(txn, NATCD_STR("/err/dup"), NATCD_STR("1"), NULL));
  ASSERT_OK(natcdTxn_ThenPut(txn, NATCD_STR("/err/dup"), NATCD_STR("2"), NULL));
  ASSERT_STATUS(natcdStatus_BadRequest, natcdTxn_Commit(NULL, g_client, txn));
  _expectError(natcdStatus_BadRequest, 400, "ErrDuplicateKey:");
  natcdTxn_Destroy(txn);

  // Compaction: reads below the compact revision fail with it.
  int64_t old = test_Put(g_client, "/err/c", "1");
  int64_t now = test_Put(g_client, "/err/c", "2");
  natcdHeader h;
  ASSERT_OK(natcdKV_Compact(&h, g_client, now, true));
  assert_true(h.revision >= now);
  natcdRangeOptions at_old = {.revision = old};
  ASSERT_STATUS(natcdStatus_Compacted, natcdKV_Get(&r, g_client, NATCD_STR("/err/c"), &at_old));
  _expectError(natcdStatus_Compacted, 410, "ErrCompacted:");
  natcdError e;
  natcd_GetLastError(&e);
  assert_int_equal(e.compact_revision, now);
  ASSERT_STATUS(natcdStatus_Compacted, natcdKV_Compact(NULL, g_client, old, false));
  _expectError(natcdStatus_Compacted, 410, "ErrCompacted:");
  // The latest version survives compaction.
  ASSERT_OK(natcdKV_Get(&r, g_client, NATCD_STR("/err/c"), NULL));
  assert_string_equal(r->kvs[0].value, "2");
  natcdRangeResponse_Destroy(r);
}

// A responder that never answers, counting what it gets.
static void _mute(natsConnection* nc, natsSubscription* sub, natsMsg* msg, void* closure) {
  (void)nc;
  (void)sub;
  atomic_int* n = closure;
  atomic_fetch_add(n, 1);
  natsMsg_Destroy(msg);
}

static void test_transport_errors(void** state) {
  (void)state;
  // Nobody serves the prefix: "no responders", after every retry.
  natcdClient* nobody = test_Connect("nobody", 1);
  assert_non_null(nobody);
  ASSERT_STATUS(natcdStatus_NoResponders, natcdKV_Put(NULL, nobody, NATCD_STR("/a"), "", 0, NULL));
  natcdError e;
  natcd_GetLastError(&e);
  assert_int_equal(e.nats_status, NATS_NO_RESPONDERS);
  assert_int_equal(e.code, 0);
  natcdClient_Destroy(nobody);

  // Somebody listens but never answers: a timeout, after the retries.
  natcdClientOptions opts;
  natcdClientOptions_Init(&opts);
  opts.prefix = "mute";
  opts.timeout_ms = 150;
  opts.retries = 2;
  opts.backoff_ms = 10;
  natcdClient* mute = NULL;
  ASSERT_OK(natcdClient_Create(&mute, natcdClient_GetConnection(g_client), &opts));
  atomic_int seen = 0;
  natsSubscription* sub = NULL;
  assert_int_equal(natsConnection_Subscribe(&sub, natcdClient_GetConnection(g_client),
                                            "mute.kv.range", _mute, &seen),
                   NATS_OK);
  natsConnection_Flush(natcdClient_GetConnection(g_client));
  long long t0 = natcdFixture_NowMs();
  natcdRangeResponse* r = NULL;
  ASSERT_STATUS(natcdStatus_Timeout, natcdKV_Get(&r, mute, NATCD_STR("/a"), NULL));
  long long took = natcdFixture_NowMs() - t0;
  assert_true(took >= 3 * 150);
  assert_true(took < 3000);
  natcd_GetLastError(&e);
  assert_int_equal(e.nats_status, NATS_TIMEOUT);
  assert_true(WAIT_FOR(atomic_load(&seen) == 3, 1000));  // one attempt + 2 retries
  natsSubscription_Destroy(sub);
  natcdClient_Destroy(mute);
}

static void test_txn(void** state) {
  (void)state;
  int64_t lease = 0;
  ASSERT_OK(natcdLease_Grant(&lease, NULL, g_client, 30, 0));
  natcdPutOptions with_lease = {.lease = lease};
  ASSERT_OK(natcdKV_Put(NULL, g_client, NATCD_STR("/tx/a"), NATCD_STR("1"), &with_lease));
  int64_t rev_a = test_Revision(g_client);
  test_Put(g_client, "/tx/b", "x");

  // Every compare target and operator that holds.
  natcdTxn* txn = NULL;
  ASSERT_OK(natcdTxn_Create(&txn));
  ASSERT_OK(natcdTxn_IfVersion(txn, NATCD_STR("/tx/a"), natcdCompare_Equal, 1));
  ASSERT_OK(natcdTxn_IfCreateRevision(txn, NATCD_STR("/tx/a"), natcdCompare_Equal, rev_a));
  ASSERT_OK(natcdTxn_IfModRevision(txn, NATCD_STR("/tx/a"), natcdCompare_Less, rev_a + 1));
  ASSERT_OK(natcdTxn_IfValue(txn, NATCD_STR("/tx/a"), natcdCompare_Equal, NATCD_STR("1")));
  ASSERT_OK(natcdTxn_IfValue(txn, NATCD_STR("/tx/a"), natcdCompare_NotEqual, NATCD_STR("2")));
  ASSERT_OK(natcdTxn_IfLease(txn, NATCD_STR("/tx/a"), natcdCompare_Equal, lease));
  ASSERT_OK(natcdTxn_IfVersion(txn, NATCD_STR("/tx/missing"), natcdCompare_Equal, 0));
  ASSERT_OK(natcdTxn_IfModRevision(txn, NATCD_STR("/tx/b"), natcdCompare_Greater, rev_a));
  // Over a range: every key in [/tx/a, /tx/c) has version > 0.
  ASSERT_OK(natcdTxn_If(txn, natcdCompareTarget_Version, natcdCompare_Greater, NATCD_STR("/tx/a"),
                        NATCD_STR("/tx/c"), 0, NULL, 0));
  ASSERT_OK(natcdTxn_ThenPut(txn, NATCD_STR("/tx/c"), NATCD_STR("then"), NULL));
  natcdRangeOptions pfx = {.prefix = true};
  ASSERT_OK(natcdTxn_ThenGet(txn, NATCD_STR("/tx/"), &pfx));
  natcdDeleteOptions prev = {.prev_kv = true};
  ASSERT_OK(natcdTxn_ThenDelete(txn, NATCD_STR("/tx/b"), &prev));
  natcdTxn* nested = NULL;
  ASSERT_OK(natcdTxn_Create(&nested));
  ASSERT_OK(natcdTxn_IfVersion(nested, NATCD_STR("/tx/a"), natcdCompare_Greater, 5));
  ASSERT_OK(natcdTxn_ThenPut(nested, NATCD_STR("/tx/n"), NATCD_STR("then"), NULL));
  ASSERT_OK(natcdTxn_ElsePut(nested, NATCD_STR("/tx/n"), NATCD_STR("else"), NULL));
  ASSERT_OK(natcdTxn_ThenTxn(txn, nested));
  natcdTxn_Destroy(nested);  // copied
  ASSERT_OK(natcdTxn_ElsePut(txn, NATCD_STR("/tx/c"), NATCD_STR("else"), NULL));

  natcdTxnResponse* r = NULL;
  ASSERT_OK(natcdTxn_Commit(&r, g_client, txn));
  assert_true(r->succeeded);
  assert_int_equal(r->n_responses, 4);
  assert_int_equal(r->responses[0].type, natcdOp_Put);
  assert_non_null(r->responses[0].put);
  assert_int_equal(r->responses[1].type, natcdOp_Range);
  assert_int_equal(r->responses[1].range->n_kvs, 3);  // a, b and the c just put
  assert_int_equal(r->responses[2].type, natcdOp_Delete);
  assert_int_equal(r->responses[2].del->deleted, 1);
  assert_string_equal(r->responses[2].del->prev_kvs[0].value, "x");
  assert_int_equal(r->responses[3].type, natcdOp_Txn);
  assert_false(r->responses[3].txn->succeeded);
  assert_int_equal(r->responses[3].txn->n_responses, 1);
  assert_int_equal(r->responses[3].txn->responses[0].type, natcdOp_Put);
  const int64_t rev = r->header.revision;
  natcdTxnResponse_Destroy(r);
  natcdTxn_Destroy(txn);

  natcdRangeResponse* g = NULL;
  ASSERT_OK(natcdKV_Get(&g, g_client, NATCD_STR("/tx/c"), NULL));
  assert_string_equal(g->kvs[0].value, "then");
  assert_int_equal(g->kvs[0].mod_revision, rev);
  natcdRangeResponse_Destroy(g);
  ASSERT_OK(natcdKV_Get(&g, g_client, NATCD_STR("/tx/n"), NULL));
  assert_string_equal(g->kvs[0].value, "else");
  assert_int_equal(g->kvs[0].mod_revision, rev);  // the whole txn is one revision
  natcdRangeResponse_Destroy(g);

  // A compare that fails: the Else branch, committed twice (the builder is reusable).
  ASSERT_OK(natcdTxn_Create(&txn));
  ASSERT_OK(natcdTxn_IfValue(txn, NATCD_STR("/tx/a"), natcdCompare_Greater, NATCD_STR("5")));
  ASSERT_OK(natcdTxn_ThenPut(txn, NATCD_STR("/tx/d"), NATCD_STR("then"), NULL));
  ASSERT_OK(natcdTxn_ElseGet(txn, NATCD_STR("/tx/a"), NULL));
  ASSERT_OK(natcdTxn_ElseDelete(txn, NATCD_STR("/tx/none"), NULL));
  ASSERT_OK(natcdTxn_Create(&nested));
  ASSERT_OK(natcdTxn_ThenGet(nested, NATCD_STR("/tx/c"), NULL));
  ASSERT_OK(natcdTxn_ElseTxn(txn, nested));
  natcdTxn_Destroy(nested);
  for (int i = 0; i < 2; ++i) {
    ASSERT_OK(natcdTxn_Commit(&r, g_client, txn));
    assert_false(r->succeeded);
    assert_int_equal(r->n_responses, 3);
    assert_string_equal(r->responses[0].range->kvs[0].value, "1");
    assert_int_equal(r->responses[1].del->deleted, 0);
    assert_int_equal(r->responses[2].type, natcdOp_Txn);
    assert_true(r->responses[2].txn->succeeded);
    assert_string_equal(r->responses[2].txn->responses[0].range->kvs[0].value, "then");
    natcdTxnResponse_Destroy(r);
  }
  natcdTxn_Destroy(txn);
  ASSERT_OK(natcdLease_Revoke(g_client, lease));
}

// --- idempotent retries ----------------------------------------------------------

// Forwards flaky.<x> to natcd.<x> with the same body and Natcd-Request-Id,
// and drops the reply of every first attempt of an id (so the client times
// out and retries).
typedef struct flakyProxy {
  natsConnection* nc;
  pthread_mutex_t mu;
  int requests;
  char ids[8][40];
} flakyProxy;

static void _flaky(natsConnection* nc, natsSubscription* sub, natsMsg* msg, void* closure) {
  (void)sub;
  flakyProxy* p = closure;
  const char* id = NULL;
  natsMsgHeader_Get(msg, "Natcd-Request-Id", &id);
  char subject[128];
  snprintf(subject, sizeof subject, "natcd.%s", natsMsg_GetSubject(msg) + strlen("flaky."));
  natsMsg* fwd = NULL;
  natsMsg_Create(&fwd, subject, NULL, natsMsg_GetData(msg), natsMsg_GetDataLength(msg));
  if (id != NULL) natsMsgHeader_Set(fwd, "Natcd-Request-Id", id);
  natsMsg* reply = NULL;
  natsStatus s = natsConnection_RequestMsg(&reply, nc, fwd, 2000);
  natsMsg_Destroy(fwd);
  pthread_mutex_lock(&p->mu);
  int n = p->requests++;
  if (n < 8) snprintf(p->ids[n], sizeof p->ids[n], "%s", id != NULL ? id : "");
  pthread_mutex_unlock(&p->mu);
  if (s == NATS_OK && n % 2 == 1) {
    natsConnection_Publish(nc, natsMsg_GetReply(msg), natsMsg_GetData(reply),
                           natsMsg_GetDataLength(reply));
  }
  natsMsg_Destroy(reply);
  natsMsg_Destroy(msg);
}

// The next KV request `spy` (on natcd.>) saw: on natcd.kv.<x>, or on
// natcd.to.<member>.kv.<x> (a write to the leader the client knows).
static natsStatus _nextKvRequest(natsMsg** out, natsSubscription* spy) {
  for (;;) {
    natsStatus s = natsSubscription_NextMsg(out, spy, 2000);
    if (s != NATS_OK) return s;
    const char* subject = natsMsg_GetSubject(*out);
    if (strncmp(subject, "natcd.kv.", 9) == 0 ||
        (strncmp(subject, "natcd.to.", 9) == 0 && strstr(subject, ".kv.") != NULL)) {
      return NATS_OK;
    }
    natsMsg_Destroy(*out);
  }
}

static void test_request_id_retries(void** state) {
  (void)state;
  natsConnection* nc = natcdClient_GetConnection(g_client);

  // Every write carries a random 128-bit hex id; reads do not.
  natsSubscription* spy = NULL;
  assert_int_equal(natsConnection_SubscribeSync(&spy, nc, "natcd.>"), NATS_OK);
  natsConnection_Flush(nc);
  natcdPutResponse* put = NULL;
  ASSERT_OK(natcdKV_Put(&put, g_client, NATCD_STR("/rid/a"), NATCD_STR("1"), NULL));
  const int64_t rev = put->header.revision;
  natcdPutResponse_Destroy(put);
  natsMsg* seen = NULL;
  assert_int_equal(_nextKvRequest(&seen, spy), NATS_OK);
  const char* id = NULL;
  assert_int_equal(natsMsgHeader_Get(seen, "Natcd-Request-Id", &id), NATS_OK);
  assert_int_equal(strlen(id), 32);
  assert_int_equal(strspn(id, "0123456789abcdef"), 32);
  natcdRangeResponse* r = NULL;
  ASSERT_OK(natcdKV_Get(&r, g_client, NATCD_STR("/rid/a"), NULL));
  natcdRangeResponse_Destroy(r);
  natsMsg* read = NULL;
  assert_int_equal(_nextKvRequest(&read, spy), NATS_OK);
  assert_int_not_equal(natsMsgHeader_Get(read, "Natcd-Request-Id", &id), NATS_OK);
  natsMsg_Destroy(read);
  natsSubscription_Destroy(spy);

  // Resending the same request with the same id by hand: the first outcome,
  // applied once.
  natsMsg* again = NULL;
  natsMsg_Create(&again, "natcd.kv.put", NULL, natsMsg_GetData(seen), natsMsg_GetDataLength(seen));
  natsMsgHeader_Get(seen, "Natcd-Request-Id", &id);
  natsMsgHeader_Set(again, "Natcd-Request-Id", id);
  natsMsg* reply = NULL;
  assert_int_equal(natsConnection_RequestMsg(&reply, nc, again, 2000), NATS_OK);
  natsMsg_Destroy(again);
  natsMsg_Destroy(seen);
  // The reply is the remembered PutResponse: same revision.
  Natcd__V1__PutResponse* remembered = natcd__v1__put_response__unpack(
      NULL, (size_t)natsMsg_GetDataLength(reply), (const uint8_t*)natsMsg_GetData(reply));
  assert_non_null(remembered);
  assert_non_null(remembered->header);
  assert_int_equal(remembered->header->revision, rev);
  natcd__v1__put_response__free_unpacked(remembered, NULL);
  natsMsg_Destroy(reply);
  ASSERT_OK(natcdKV_Get(&r, g_client, NATCD_STR("/rid/a"), NULL));
  assert_int_equal(r->kvs[0].version, 1);
  assert_int_equal(r->kvs[0].mod_revision, rev);
  assert_int_equal(r->header.revision, rev);
  natcdRangeResponse_Destroy(r);

  // The library's own retry: the proxy drops the first reply; the client
  // times out and retries with the same id; natcd applies it once.
  flakyProxy p = {.nc = nc};
  pthread_mutex_init(&p.mu, NULL);
  natsSubscription* sub = NULL;
  assert_int_equal(natsConnection_Subscribe(&sub, nc, "flaky.>", _flaky, &p), NATS_OK);
  natsConnection_Flush(nc);
  natcdClientOptions opts;
  natcdClientOptions_Init(&opts);
  opts.prefix = "flaky";
  opts.timeout_ms = 300;
  opts.retries = 3;
  opts.backoff_ms = 10;
  natcdClient* flaky = NULL;
  ASSERT_OK(natcdClient_Create(&flaky, nc, &opts));
  const int64_t before = test_Revision(g_client);
  ASSERT_OK(natcdKV_Put(&put, flaky, NATCD_STR("/rid/b"), NATCD_STR("1"), NULL));
  assert_int_equal(put->header.revision, before + 1);
  natcdPutResponse_Destroy(put);
  // A delete retried: the retry answers the first outcome (1 deleted), not 0.
  natcdDeleteResponse* d = NULL;
  ASSERT_OK(natcdKV_Delete(&d, flaky, NATCD_STR("/rid/b"), NULL));
  assert_int_equal(d->deleted, 1);
  natcdDeleteResponse_Destroy(d);
  // And a txn.
  natcdTxn* txn = NULL;
  ASSERT_OK(natcdTxn_Create(&txn));
  ASSERT_OK(natcdTxn_IfVersion(txn, NATCD_STR("/rid/c"), natcdCompare_Equal, 0));
  ASSERT_OK(natcdTxn_ThenPut(txn, NATCD_STR("/rid/c"), NATCD_STR("1"), NULL));
  natcdTxnResponse* tr = NULL;
  ASSERT_OK(natcdTxn_Commit(&tr, flaky, txn));
  assert_true(tr->succeeded);  // a second application would have failed the compare
  natcdTxnResponse_Destroy(tr);
  natcdTxn_Destroy(txn);
  natsSubscription_Destroy(sub);
  pthread_mutex_lock(&p.mu);
  assert_int_equal(p.requests, 6);
  for (int i = 0; i < 6; i += 2) {
    assert_string_equal(p.ids[i], p.ids[i + 1]);  // a retry keeps its id
    assert_int_equal(strlen(p.ids[i]), 32);
  }
  assert_string_not_equal(p.ids[0], p.ids[2]);  // a new write gets a new one
  pthread_mutex_unlock(&p.mu);
  assert_int_equal(test_Revision(g_client), before + 3);  // put, delete, txn: once each
  natcdClient_Destroy(flaky);
  pthread_mutex_destroy(&p.mu);
}

const struct CMUnitTest kv_tests[] = {
    cmocka_unit_test(test_status_and_null_destroy),
    cmocka_unit_test(test_put_get),
    cmocka_unit_test(test_range_options),
    cmocka_unit_test(test_put_options_and_delete),
    cmocka_unit_test(test_service_errors),
    cmocka_unit_test(test_transport_errors),
    cmocka_unit_test(test_txn),
    cmocka_unit_test(test_request_id_retries),
};
const size_t kv_tests_count = sizeof kv_tests / sizeof kv_tests[0];
