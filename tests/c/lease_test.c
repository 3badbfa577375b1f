// Leases: grant, revoke, time-to-live, list, keepalive (once and in the background).
#include "common.h"
#include "tests.h"

static void test_lease_calls(void** state) {
  (void)state;
  int64_t id = 0, ttl = 0;
  ASSERT_OK(natcdLease_Grant(&id, &ttl, g_client, 20, 0));
  assert_true(id > 0);
  assert_int_equal(ttl, 20);
  int64_t mine = 0;
  ASSERT_OK(natcdLease_Grant(&mine, NULL, g_client, 20, 0x5eed));
  assert_int_equal(mine, 0x5eed);

  natcdPutOptions o = {.lease = id};
  ASSERT_OK(natcdKV_Put(NULL, g_client, NATCD_STR("/lease/a"), NATCD_STR("1"), &o));
  ASSERT_OK(natcdKV_Put(NULL, g_client, NATCD_STR("/lease/b"), NATCD_STR("2"), &o));

  natcdLeaseTimeToLive* t = NULL;
  ASSERT_OK(natcdLease_TimeToLive(&t, g_client, id, true));
  assert_int_equal(t->id, id);
  assert_true(t->ttl_seconds > 0 && t->ttl_seconds <= 20);
  assert_int_equal(t->granted_ttl_seconds, 20);
  assert_int_equal(t->n_keys, 2);
  assert_string_equal(t->keys[0], "/lease/a");
  assert_int_equal(t->key_lens[1], strlen("/lease/b"));
  natcdLeaseTimeToLive_Destroy(t);
  ASSERT_OK(natcdLease_TimeToLive(&t, g_client, id, false));
  assert_int_equal(t->n_keys, 0);
  natcdLeaseTimeToLive_Destroy(t);

  int64_t* ids = NULL;
  size_t n = 0;
  ASSERT_OK(natcdLease_Leases(&ids, &n, g_client));
  bool found_id = false, found_mine = false;
  for (size_t i = 0; i < n; ++i) {
    found_id |= ids[i] == id;
    found_mine |= ids[i] == mine;
  }
  free(ids);
  assert_true(found_id && found_mine);

  ASSERT_OK(natcdLease_KeepAliveOnce(&ttl, g_client, id));
  assert_int_equal(ttl, 20);

  // Revoking deletes the keys; the lease is then unknown.
  ASSERT_OK(natcdLease_Revoke(g_client, id));
  assert_int_equal(test_Count(g_client, "/lease/"), 0);
  ASSERT_OK(natcdLease_TimeToLive(&t, g_client, id, false));
  assert_int_equal(t->ttl_seconds, -1);
  natcdLeaseTimeToLive_Destroy(t);
  ASSERT_STATUS(natcdStatus_NotFound, natcdLease_KeepAliveOnce(&ttl, g_client, id));
  ASSERT_OK(natcdLease_Revoke(g_client, mine));
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

static void test_keepalive(void** state) {
  (void)state;
  int64_t id = 0, ttl = 0;
  ASSERT_OK(natcdLease_Grant(&id, &ttl, g_client, 1, 0));
  assert_int_equal(ttl, 1);  // --lease-ttl-min 1 in these tests
  natcdPutOptions o = {.lease = id};
  ASSERT_OK(natcdKV_Put(NULL, g_client, NATCD_STR("/ka/a"), NATCD_STR("1"), &o));
  lossRecord lost = {0};
  natcdKeepAlive* ka = NULL;
  ASSERT_OK(natcdKeepAlive_Start(&ka, g_client, id, _onLost, &lost));
  // Three TTLs later the lease and its key are still there.
  natcdFixture_SleepMs(3000);
  bool alive = false;
  ASSERT_OK(natcdKeepAlive_IsAlive(&alive, &ttl, ka));
  assert_true(alive);
  assert_int_equal(ttl, 1);
  assert_int_equal(test_Count(g_client, "/ka/"), 1);
  assert_int_equal(atomic_load(&lost.calls), 0);

  // Revoked behind its back: the next renewal answers TTL 0, reported once.
  long long t0 = natcdFixture_NowMs();
  ASSERT_OK(natcdLease_Revoke(g_client, id));
  assert_true(WAIT_FOR(atomic_load(&lost.calls) == 1, 2000));
  assert_int_equal(atomic_load(&lost.reason), natcdStatus_NotFound);
  assert_true(atomic_load(&lost.at_ms) - t0 < 1000);  // renewals every TTL/3
  ASSERT_OK(natcdKeepAlive_IsAlive(&alive, NULL, ka));
  assert_false(alive);
  natcdKeepAlive_Stop(ka);
  natcdKeepAlive_Stop(ka);  // idempotent
  natcdKeepAlive_Destroy(ka);
  assert_int_equal(atomic_load(&lost.calls), 1);

  // An unknown lease fails at the start.
  ASSERT_STATUS(natcdStatus_NotFound, natcdKeepAlive_Start(&ka, g_client, id, NULL, NULL));
  assert_null(ka);
}

const struct CMUnitTest lease_tests[] = {
    cmocka_unit_test(test_lease_calls),
    cmocka_unit_test(test_keepalive),
};
const size_t lease_tests_count = sizeof lease_tests / sizeof lease_tests[0];
