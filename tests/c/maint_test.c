// Maintenance and cluster calls: status, hashkv, hash and defragment
// (through any member and of one member by its ID), move-leader, member
// list/add/remove/promote.
#include "common.h"
#include "compat_header.h"
#include "tests.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void test_null_destroy_and_args(void** state) {
  (void)state;
  natcdStatusResponse_Destroy(NULL);
  natcdMemberResponse_Destroy(NULL);
  natcdStatusResponse* st = NULL;
  ASSERT_STATUS(natcdStatus_InvalidArg, natcdMaint_Status(NULL, g_client));
  ASSERT_STATUS(natcdStatus_InvalidArg, natcdMaint_Status(&st, NULL));
  ASSERT_STATUS(natcdStatus_InvalidArg, natcdMaint_MemberStatus(&st, g_client, 0));
  ASSERT_STATUS(natcdStatus_InvalidArg, natcdMember_List(NULL, g_client));
  ASSERT_STATUS(natcdStatus_InvalidArg, natcdMember_Add(NULL, g_client, "", false));
  ASSERT_STATUS(natcdStatus_InvalidArg, natcdMember_Add(NULL, g_client, NULL, false));
  // The compatibility include declares the same API.
  assert_string_equal(compat_StatusText(natcdStatus_NoLeader), "No leader");
}

static void test_status(void** state) {
  (void)state;
  int64_t rev = test_Put(g_client, "/maint/a", "1");
  natcdStatusResponse* st = NULL;
  ASSERT_OK(natcdMaint_Status(&st, g_client));
  assert_non_null(st->version);
  assert_true(strlen(st->version) > 0);
  assert_true(st->db_size > 0);
  assert_true(st->db_size_in_use > 0 && st->db_size_in_use <= st->db_size);
  assert_true(st->header.member_id != 0);
  assert_int_equal(st->leader, st->header.member_id);  // one member: it leads
  assert_false(st->is_learner);
  assert_true(st->raft_term >= 1);
  assert_true(st->raft_applied_index >= 1 && st->raft_applied_index <= st->raft_index);
  assert_true(st->header.revision >= rev);
  assert_int_equal(st->n_errors, 0);
  const uint64_t me = st->header.member_id;
  natcdStatusResponse_Destroy(st);

  // The same member asked by its ID, on P.to.<id>.maint.status.
  ASSERT_OK(natcdMaint_MemberStatus(&st, g_client, me));
  assert_int_equal(st->header.member_id, me);
  assert_int_equal(st->leader, me);
  natcdStatusResponse_Destroy(st);
  // Nobody answers for a member that does not exist.
  st = (natcdStatusResponse*)1;
  ASSERT_STATUS(natcdStatus_NoResponders, natcdMaint_MemberStatus(&st, g_client, 0x1234));
  assert_null(st);
}

static void test_hash_kv(void** state) {
  (void)state;
  natcdHashKVResponse h;
  ASSERT_STATUS(natcdStatus_InvalidArg, natcdMaint_HashKV(NULL, g_client, 0));
  ASSERT_STATUS(natcdStatus_InvalidArg, natcdMaint_HashKV(&h, NULL, 0));
  ASSERT_STATUS(natcdStatus_InvalidArg, natcdMaint_HashKV(&h, g_client, -1));
  ASSERT_STATUS(natcdStatus_InvalidArg, natcdMaint_MemberHashKV(&h, g_client, 0, 0));

  const int64_t rev = test_Put(g_client, "/maint/hash", "1");
  ASSERT_OK(natcdMaint_HashKV(&h, g_client, 0));
  assert_true(h.header.member_id != 0);
  assert_true(h.hash_revision >= rev);
  assert_int_equal(h.hash_revision, h.header.revision);
  natcdHashKVResponse at_rev;
  ASSERT_OK(natcdMaint_HashKV(&at_rev, g_client, rev));
  assert_int_equal(at_rev.hash_revision, rev);

  // Later writes leave the hash at rev alone; the current one changes.
  test_Put(g_client, "/maint/hash", "2");
  natcdHashKVResponse again;
  ASSERT_OK(natcdMaint_HashKV(&again, g_client, rev));
  assert_int_equal(again.hash, at_rev.hash);
  ASSERT_OK(natcdMaint_HashKV(&again, g_client, 0));
  assert_int_not_equal(again.hash, at_rev.hash);
  // The member by its ID answers the same.
  natcdHashKVResponse mine;
  ASSERT_OK(natcdMaint_MemberHashKV(&mine, g_client, h.header.member_id, rev));
  assert_int_equal(mine.hash, at_rev.hash);
  assert_int_equal(mine.header.member_id, h.header.member_id);
  ASSERT_STATUS(natcdStatus_NoResponders, natcdMaint_MemberHashKV(&mine, g_client, 0x1234, 0));

  // etcd's errors: a future revision, a compacted one.
  ASSERT_STATUS(natcdStatus_BadRequest,
                natcdMaint_HashKV(&h, g_client, again.header.revision + 1000));
  const int64_t now = test_Put(g_client, "/maint/hash", "3");
  ASSERT_OK(natcdKV_Compact(NULL, g_client, now, false));
  ASSERT_STATUS(natcdStatus_Compacted, natcdMaint_HashKV(&h, g_client, rev));
  ASSERT_OK(natcdMaint_HashKV(&h, g_client, now));
  assert_int_equal(h.compact_revision, now);

  uint32_t whole = 0;
  natcdHeader header = {0};
  ASSERT_STATUS(natcdStatus_InvalidArg, natcdMaint_Hash(NULL, NULL, g_client));
  ASSERT_OK(natcdMaint_Hash(&whole, &header, g_client));
  assert_int_equal(header.member_id, h.header.member_id);
  ASSERT_OK(natcdMaint_Hash(&whole, NULL, g_client));
}

static void test_defragment(void** state) {
  (void)state;
  ASSERT_STATUS(natcdStatus_InvalidArg, natcdMaint_Defragment(NULL, NULL));
  ASSERT_STATUS(natcdStatus_InvalidArg, natcdMaint_MemberDefragment(NULL, g_client, 0));
  char value[1024];
  memset(value, 'v', sizeof value - 1);
  value[sizeof value - 1] = '\0';
  int64_t rev = 0;
  for (int i = 0; i < 500; ++i) rev = test_Put(g_client, "/maint/defrag", value);
  ASSERT_OK(natcdKV_Compact(NULL, g_client, rev, true));
  natcdHashKVResponse before;
  ASSERT_OK(natcdMaint_HashKV(&before, g_client, 0));
  natcdStatusResponse* st = NULL;
  ASSERT_OK(natcdMaint_Status(&st, g_client));
  const int64_t size = st->db_size;
  assert_true(st->db_size_in_use < size);  // compaction freed pages
  natcdStatusResponse_Destroy(st);

  natcdHeader h = {0};
  ASSERT_OK(natcdMaint_Defragment(&h, g_client));
  assert_int_equal(h.member_id, before.header.member_id);
  ASSERT_OK(natcdMaint_Status(&st, g_client));
  assert_true(st->db_size < size);
  assert_int_equal(st->db_size_in_use, st->db_size);
  natcdStatusResponse_Destroy(st);
  natcdHashKVResponse after;
  ASSERT_OK(natcdMaint_HashKV(&after, g_client, 0));
  assert_int_equal(after.hash, before.hash);  // the same state, in fewer pages
  ASSERT_OK(natcdMaint_MemberDefragment(NULL, g_client, h.member_id));
  ASSERT_STATUS(natcdStatus_NoResponders, natcdMaint_MemberDefragment(NULL, g_client, 0x1234));
}

static void test_move_leader(void** state) {
  (void)state;
  natcdStatusResponse* st = NULL;
  ASSERT_OK(natcdMaint_Status(&st, g_client));
  const uint64_t me = st->header.member_id;
  natcdStatusResponse_Destroy(st);
  natcdHeader h = {0};
  ASSERT_OK(natcdMaint_MoveLeader(&h, g_client, me));  // it leads already: a no-op
  assert_int_equal(h.member_id, me);
  ASSERT_OK(natcdMaint_MoveLeader(NULL, g_client, me));
  // An unknown member cannot lead (etcd's ErrBadLeaderTransferee).
  natcdStatus s = natcdMaint_MoveLeader(NULL, g_client, 0x1234);
  assert_int_not_equal(s, natcdStatus_OK);
  natcdError e;
  natcd_GetLastError(&e);
  assert_non_null(strstr(e.text, "bad leader transferee"));
}

static const natcdMember* _find(const natcdMemberResponse* r, const char* name) {
  for (size_t i = 0; i < r->n_members; ++i) {
    if (strcmp(r->members[i].name, name) == 0) return &r->members[i];
  }
  return NULL;
}

static void test_members(void** state) {
  (void)state;
  natcdMemberResponse* r = NULL;
  ASSERT_OK(natcdMember_List(&r, g_client));
  assert_int_equal(r->n_members, 1);
  const natcdMember* self = &r->members[0];
  assert_string_equal(self->name, "natcd-1");
  assert_false(self->is_learner);
  assert_int_equal(self->n_peer_urls, 1);  // its Raft subject
  assert_non_null(strstr(self->peer_urls[0], ".raft."));
  assert_int_equal(self->n_client_urls, 0);
  assert_null(r->added);
  const uint64_t self_id = self->id;
  assert_true(r->header.cluster_id != 0);
  natcdMemberResponse_Destroy(r);

  // A learner added to a single member commits at once (it need not run).
  ASSERT_OK(natcdMember_Add(&r, g_client, "n9", true));
  assert_non_null(r->added);
  assert_string_equal(r->added->name, "n9");
  assert_true(r->added->is_learner);
  const uint64_t n9 = r->added->id;
  assert_true(n9 != 0 && n9 != self_id);
  assert_int_equal(r->n_members, 2);
  assert_non_null(_find(r, "n9"));
  natcdMemberResponse_Destroy(r);
  // A second add of the same name is refused, not retried into success.
  assert_int_not_equal(natcdMember_Add(NULL, g_client, "n9", true), natcdStatus_OK);

  // Promoting it is refused until it has caught up (it never runs here).
  assert_int_not_equal(natcdMember_Promote(NULL, g_client, n9), natcdStatus_OK);
  natcdError e;
  natcd_GetLastError(&e);
  assert_non_null(strstr(e.text, "in sync with leader"));

  // Its peer URLs (etcd's MemberUpdate) replace its Raft subject in the lists.
  const char* urls[] = {"http://n9:2380", "http://10.0.0.9:2380"};
  ASSERT_OK(natcdMember_Update(&r, g_client, n9, urls, 2));
  const natcdMember* updated = _find(r, "n9");
  assert_non_null(updated);
  assert_int_equal(updated->n_peer_urls, 2);
  assert_string_equal(updated->peer_urls[0], "http://n9:2380");
  assert_string_equal(updated->peer_urls[1], "http://10.0.0.9:2380");
  assert_non_null(strstr(_find(r, "natcd-1")->peer_urls[0], ".raft."));
  natcdMemberResponse_Destroy(r);
  ASSERT_OK(natcdMember_List(&r, g_client));
  assert_string_equal(_find(r, "n9")->peer_urls[1], "http://10.0.0.9:2380");
  natcdMemberResponse_Destroy(r);
  // etcd's refusals: a URL another member has, an unknown member.
  assert_int_equal(natcdMember_Update(NULL, g_client, self_id, urls + 1, 1),
                   natcdStatus_BadRequest);
  natcd_GetLastError(&e);
  assert_non_null(strstr(e.text, "etcdserver: Peer URLs already exists"));
  assert_int_equal(natcdMember_Update(NULL, g_client, 0x1234, urls, 1), natcdStatus_BadRequest);
  natcd_GetLastError(&e);
  assert_non_null(strstr(e.text, "etcdserver: member not found"));
  assert_int_equal(natcdMember_Update(NULL, g_client, n9, urls, 0), natcdStatus_InvalidArg);

  ASSERT_OK(natcdMember_Remove(&r, g_client, n9));
  assert_int_equal(r->n_members, 1);
  assert_null(_find(r, "n9"));
  assert_null(r->added);
  natcdMemberResponse_Destroy(r);
  ASSERT_OK(natcdMember_List(&r, g_client));
  assert_int_equal(r->n_members, 1);
  natcdMemberResponse_Destroy(r);
  // Removing it again: no such member.
  assert_int_not_equal(natcdMember_Remove(NULL, g_client, n9), natcdStatus_OK);
}

typedef struct _snapshotSink {
  uint64_t bytes;
  unsigned char tail[32];  // the last 32 bytes seen
  int calls;
  bool refuse;  // stop the backup at once
} _snapshotSink;

static bool _takeChunk(const void* data, size_t len, void* closure) {
  _snapshotSink* sink = closure;
  if (sink->refuse) return false;
  ++sink->calls;
  const unsigned char* p = data;
  for (size_t i = 0; i < len; ++i) {
    memmove(sink->tail, sink->tail + 1, sizeof sink->tail - 1);
    sink->tail[sizeof sink->tail - 1] = p[i];
  }
  sink->bytes += len;
  return true;
}

// An online backup (P.maint.snapshot): the whole stream, its checksum
// checked, to a handler and to a file.
static void test_snapshot(void** state) {
  (void)state;
  ASSERT_STATUS(natcdStatus_InvalidArg, natcdMaint_Snapshot(NULL, g_client, 0, NULL, NULL));
  ASSERT_STATUS(natcdStatus_InvalidArg, natcdMaint_SnapshotSave(NULL, g_client, 0, ""));
  int64_t rev = test_Put(g_client, "/maint/snap", "1");
  natcdSnapshotInfo info;
  _snapshotSink sink = {0};
  ASSERT_OK(natcdMaint_Snapshot(&info, g_client, 0, _takeChunk, &sink));
  assert_true(info.header.member_id != 0);
  assert_true(info.header.revision >= rev);
  assert_int_equal(info.total_bytes, sink.bytes);
  assert_int_equal(info.total_bytes % 512, 32);
  char tail_hex[65];
  for (int i = 0; i < 32; ++i) snprintf(tail_hex + 2 * i, 3, "%02x", sink.tail[i]);
  assert_string_equal(info.sha256_hex, tail_hex);

  // Of one member by its ID; nobody answers for a member that is not.
  memset(&sink, 0, sizeof sink);
  ASSERT_OK(natcdMaint_Snapshot(NULL, g_client, info.header.member_id, _takeChunk, &sink));
  ASSERT_STATUS(natcdStatus_NoResponders,
                natcdMaint_Snapshot(NULL, g_client, 0x1234, _takeChunk, &sink));
  // A handler that stops ends the call.
  memset(&sink, 0, sizeof sink);
  sink.refuse = true;
  ASSERT_STATUS(natcdStatus_Canceled, natcdMaint_Snapshot(NULL, g_client, 0, _takeChunk, &sink));

  char dir[] = "/tmp/natcd-c-snapshot-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char path[128];
  snprintf(path, sizeof path, "%s/backup.db", dir);
  ASSERT_OK(natcdMaint_SnapshotSave(&info, g_client, 0, path));
  FILE* f = fopen(path, "rb");
  assert_non_null(f);
  fseek(f, 0, SEEK_END);
  assert_int_equal((uint64_t)ftell(f), info.total_bytes);
  fclose(f);
  char part[160];
  snprintf(part, sizeof part, "%s.part", path);
  assert_int_not_equal(access(part, F_OK), 0);
  unlink(path);
  rmdir(dir);
}

// Alarms: raise NOSPACE by hand (the quota's own test fills a small one,
// tests/natcd/alarm_test.cc), see what it refuses and what it serves, bad
// requests refused without a change, then disarm.
static void test_alarms(void** state) {
  (void)state;
  natcdAlarmResponse_Destroy(NULL);
  natcdAlarmResponse* a = NULL;
  ASSERT_STATUS(natcdStatus_InvalidArg,
                natcdMaint_Alarm(NULL, g_client, natcdAlarmAction_Get, 0, natcdAlarm_None));
  ASSERT_STATUS(natcdStatus_InvalidArg,
                natcdMaint_Alarm(&a, NULL, natcdAlarmAction_Get, 0, natcdAlarm_None));
  assert_string_equal(natcdAlarmType_GetText(natcdAlarm_NoSpace), "NOSPACE");
  assert_string_equal(natcdAlarmType_GetText(natcdAlarm_Corrupt), "CORRUPT");
  assert_string_equal(natcdAlarmType_GetText((natcdAlarmType)7), "UNKNOWN");

  test_Put(g_client, "/alarm/k", "1");
  ASSERT_OK(natcdMaint_Alarm(&a, g_client, natcdAlarmAction_Get, 0, natcdAlarm_None));
  assert_int_equal(a->n_alarms, 0);
  const uint64_t me = a->header.member_id;
  assert_true(me != 0);
  natcdAlarmResponse_Destroy(a);

  ASSERT_OK(natcdMaint_Alarm(&a, g_client, natcdAlarmAction_Activate, me, natcdAlarm_NoSpace));
  assert_int_equal(a->n_alarms, 1);
  assert_int_equal(a->alarms[0].member_id, me);
  assert_int_equal(a->alarms[0].alarm, natcdAlarm_NoSpace);
  natcdAlarmResponse_Destroy(a);

  // Bad requests: refused, nothing changes.
  ASSERT_STATUS(natcdStatus_BadRequest,
                natcdMaint_Alarm(&a, g_client, natcdAlarmAction_Activate, me, natcdAlarm_None));
  natcdError err;
  natcd_GetLastError(&err);
  assert_int_equal(err.code, 400);
  assert_string_equal(err.text,
                      "ErrInvalidArgument: etcdserver: unknown alarm type 0 (NOSPACE or CORRUPT)");
  assert_null(a);
  ASSERT_STATUS(natcdStatus_BadRequest,
                natcdMaint_Alarm(&a, g_client, (natcdAlarmAction)9, me, natcdAlarm_NoSpace));
  natcd_GetLastError(&err);
  assert_string_equal(err.text, "ErrInvalidArgument: etcdserver: unknown alarm action 9");
  ASSERT_STATUS(natcdStatus_BadRequest, natcdMaint_Alarm(&a, g_client, natcdAlarmAction_Activate,
                                                         0x1234, natcdAlarm_Corrupt));
  natcd_GetLastError(&err);
  assert_string_equal(err.text, "ErrMemberNotFound: etcdserver: member not found");

  ASSERT_OK(natcdMaint_Alarm(&a, g_client, natcdAlarmAction_Get, 0, natcdAlarm_None));
  assert_int_equal(a->n_alarms, 1);
  natcdAlarmResponse_Destroy(a);
  natcdStatusResponse* st = NULL;
  ASSERT_OK(natcdMaint_Status(&st, g_client));
  assert_int_equal(st->n_errors, 1);
  char want[96];
  snprintf(want, sizeof want, "memberID:%" PRIu64 " alarm:NOSPACE ", me);
  assert_string_equal(st->errors[0], want);
  natcdStatusResponse_Destroy(st);

  // NOSPACE refuses what grows the store, serves the rest.
  ASSERT_STATUS(natcdStatus_NoSpace,
                natcdKV_Put(NULL, g_client, NATCD_STR("/alarm/k"), NATCD_STR("2"), NULL));
  natcd_GetLastError(&err);
  assert_int_equal(err.code, 507);
  assert_string_equal(err.text, "ErrNoSpace: etcdserver: mvcc: database space exceeded");
  natcdRangeResponse* got = NULL;
  ASSERT_OK(natcdKV_Get(&got, g_client, NATCD_STR("/alarm/k"), NULL));
  natcdRangeResponse_Destroy(got);
  ASSERT_OK(natcdKV_Delete(NULL, g_client, NATCD_STR("/alarm/k"), NULL));

  ASSERT_OK(natcdMaint_Alarm(&a, g_client, natcdAlarmAction_Deactivate, me, natcdAlarm_NoSpace));
  assert_int_equal(a->n_alarms, 1);
  natcdAlarmResponse_Destroy(a);
  ASSERT_OK(natcdMaint_Alarm(&a, g_client, natcdAlarmAction_Get, 0, natcdAlarm_None));
  assert_int_equal(a->n_alarms, 0);
  natcdAlarmResponse_Destroy(a);
  test_Put(g_client, "/alarm/k", "3");
}

const struct CMUnitTest maint_tests[] = {
    cmocka_unit_test(test_null_destroy_and_args),
    cmocka_unit_test(test_status),
    cmocka_unit_test(test_hash_kv),
    cmocka_unit_test(test_defragment),
    cmocka_unit_test(test_move_leader),
    cmocka_unit_test(test_members),
    cmocka_unit_test(test_snapshot),
    cmocka_unit_test(test_alarms),
};
const size_t maint_tests_count = sizeof maint_tests / sizeof maint_tests[0];
