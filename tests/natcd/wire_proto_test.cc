// Every request-reply subject in protobuf: the KV calls with their options,
// txn (nested), compaction, the lease calls, watch control, status and the
// member calls.
#include "natcd/natcd_fixture.h"
#include "natcd/natcd_helpers.h"

namespace natcd::testing {
namespace {

using WireProtoTest = NatcdTest;

Unpacked<Natcd__V1__RangeResponse> RangeWith(WireClient* c, void (*set)(Natcd__V1__RangeRequest*),
                                             const std::string& key = "/r/",
                                             const std::string& end = "/r0") {
  Natcd__V1__RangeRequest req;
  natcd__v1__range_request__init(&req);
  req.key = Bytes(key);
  req.range_end = Bytes(end);
  set(&req);
  return CallOk<Natcd__V1__RangeResponse>(c, "kv.range", &req.base,
                                          &natcd__v1__range_response__descriptor);
}

std::vector<std::string> Keys(const Natcd__V1__RangeResponse& r) {
  std::vector<std::string> out;
  for (size_t i = 0; i < r.n_kvs; ++i) out.push_back(Str(r.kvs[i]->key));
  return out;
}

TEST_F(WireProtoTest, RangeOptions) {
  EXPECT_EQ(client_->Put("/r/a", "3"), 2);
  EXPECT_EQ(client_->Put("/r/b", "1"), 3);
  EXPECT_EQ(client_->Put("/r/c", "2"), 4);
  EXPECT_EQ(client_->Put("/r/a", "4"), 5);
  EXPECT_EQ(client_->Put("/other", "x"), 6);

  auto all = RangeWith(client_.get(), [](Natcd__V1__RangeRequest*) {});
  ASSERT_TRUE(all);
  EXPECT_EQ(Keys(*all), (std::vector<std::string>{"/r/a", "/r/b", "/r/c"}));
  EXPECT_EQ(all->count, 3);
  EXPECT_FALSE(all->more);
  EXPECT_EQ(all->header->revision, 6);
  EXPECT_NE(all->header->member_id, 0u);
  EXPECT_NE(all->header->cluster_id, 0u);
  EXPECT_EQ(Str(all->kvs[0]->value), "4");
  EXPECT_EQ(all->kvs[0]->create_revision, 2);
  EXPECT_EQ(all->kvs[0]->mod_revision, 5);
  EXPECT_EQ(all->kvs[0]->version, 2);

  auto limited = RangeWith(client_.get(), [](Natcd__V1__RangeRequest* r) { r->limit = 2; });
  ASSERT_TRUE(limited);
  EXPECT_EQ(Keys(*limited), (std::vector<std::string>{"/r/a", "/r/b"}));
  EXPECT_TRUE(limited->more);
  EXPECT_EQ(limited->count, 3);

  auto descend = RangeWith(client_.get(), [](Natcd__V1__RangeRequest* r) {
    r->sort_order = NATCD__V1__RANGE_REQUEST__SORT_ORDER__DESCEND;
    r->sort_target = NATCD__V1__RANGE_REQUEST__SORT_TARGET__KEY;
  });
  ASSERT_TRUE(descend);
  EXPECT_EQ(Keys(*descend), (std::vector<std::string>{"/r/c", "/r/b", "/r/a"}));

  auto by_value = RangeWith(client_.get(), [](Natcd__V1__RangeRequest* r) {
    r->sort_order = NATCD__V1__RANGE_REQUEST__SORT_ORDER__ASCEND;
    r->sort_target = NATCD__V1__RANGE_REQUEST__SORT_TARGET__VALUE;
  });
  ASSERT_TRUE(by_value);
  EXPECT_EQ(Keys(*by_value), (std::vector<std::string>{"/r/b", "/r/c", "/r/a"}));

  auto by_mod = RangeWith(client_.get(), [](Natcd__V1__RangeRequest* r) {
    r->sort_order = NATCD__V1__RANGE_REQUEST__SORT_ORDER__DESCEND;
    r->sort_target = NATCD__V1__RANGE_REQUEST__SORT_TARGET__MOD;
    r->limit = 1;
  });
  ASSERT_TRUE(by_mod);
  EXPECT_EQ(Keys(*by_mod), (std::vector<std::string>{"/r/a"}));

  auto keys_only =
      RangeWith(client_.get(), [](Natcd__V1__RangeRequest* r) { r->keys_only = true; });
  ASSERT_TRUE(keys_only);
  ASSERT_EQ(keys_only->n_kvs, 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(keys_only->kvs[i]->value.len, 0u);
  EXPECT_EQ(keys_only->kvs[0]->mod_revision, 5);

  auto count_only =
      RangeWith(client_.get(), [](Natcd__V1__RangeRequest* r) { r->count_only = true; });
  ASSERT_TRUE(count_only);
  EXPECT_EQ(count_only->n_kvs, 0u);
  EXPECT_EQ(count_only->count, 3);

  auto at3 = RangeWith(client_.get(), [](Natcd__V1__RangeRequest* r) { r->revision = 3; });
  ASSERT_TRUE(at3);
  EXPECT_EQ(Keys(*at3), (std::vector<std::string>{"/r/a", "/r/b"}));
  EXPECT_EQ(Str(at3->kvs[0]->value), "3");
  EXPECT_EQ(at3->kvs[0]->version, 1);

  // "\0" as range_end: every key >= key.
  auto from = RangeWith(
      client_.get(), [](Natcd__V1__RangeRequest*) {}, "/r/b", std::string(1, '\0'));
  ASSERT_TRUE(from);
  EXPECT_EQ(Keys(*from), (std::vector<std::string>{"/r/b", "/r/c"}));

  auto single = client_->Range("/r/b");
  ASSERT_TRUE(single);
  EXPECT_EQ(Keys(*single), (std::vector<std::string>{"/r/b"}));
}

TEST_F(WireProtoTest, PutPrevKvAndIgnoreValue) {
  int64_t lease = client_->Grant(30);
  ASSERT_NE(lease, 0);
  EXPECT_EQ(client_->Put("/p", "one", lease), 2);  // a grant makes no revision

  Natcd__V1__PutRequest put;
  natcd__v1__put_request__init(&put);
  put.key = Bytes("/p");
  put.value = Bytes("two");
  put.prev_kv = true;
  auto r = CallOk<Natcd__V1__PutResponse>(client_.get(), "kv.put", &put.base,
                                          &natcd__v1__put_response__descriptor);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->header->revision, 3);
  ASSERT_NE(r->prev_kv, nullptr);
  EXPECT_EQ(Str(r->prev_kv->value), "one");
  EXPECT_EQ(r->prev_kv->lease, lease);
  EXPECT_EQ(r->prev_kv->version, 1);

  // A put without prev_kv returns none; on a new key prev_kv is unset.
  put.key = Bytes("/p-new");
  auto fresh = CallOk<Natcd__V1__PutResponse>(client_.get(), "kv.put", &put.base,
                                              &natcd__v1__put_response__descriptor);
  ASSERT_TRUE(fresh);
  EXPECT_EQ(fresh->prev_kv, nullptr);

  // ignore_value keeps the value, bumps the version.
  Natcd__V1__PutRequest keep;
  natcd__v1__put_request__init(&keep);
  keep.key = Bytes("/p");
  keep.ignore_value = true;
  ASSERT_TRUE(CallOk<Natcd__V1__PutResponse>(client_.get(), "kv.put", &keep.base,
                                             &natcd__v1__put_response__descriptor));
  auto now = client_->Range("/p");
  ASSERT_EQ(now->n_kvs, 1u);
  EXPECT_EQ(Str(now->kvs[0]->value), "two");
  EXPECT_EQ(now->kvs[0]->version, 3);
  EXPECT_EQ(now->kvs[0]->lease, 0);  // the second put detached it

  // ignore_value on a missing key fails (etcd's ErrKeyNotFound) and
  // changes nothing.
  int64_t before = Revision(client_.get());
  keep.key = Bytes("/missing");
  WireReply missing = client_->Call("kv.put", &keep.base);
  EXPECT_EQ(missing.code, 400) << missing.error;
  EXPECT_EQ(Revision(client_.get()), before);
}

TEST_F(WireProtoTest, DeleteRangeWithPrevKv) {
  client_->Put("/d/a", "1");
  client_->Put("/d/b", "2");
  client_->Put("/d/c", "3");
  Natcd__V1__DeleteRangeRequest del;
  natcd__v1__delete_range_request__init(&del);
  del.key = Bytes("/d/a");
  del.range_end = Bytes("/d/c");
  del.prev_kv = true;
  auto r = CallOk<Natcd__V1__DeleteRangeResponse>(client_.get(), "kv.delete", &del.base,
                                                  &natcd__v1__delete_range_response__descriptor);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->deleted, 2);
  EXPECT_EQ(r->header->revision, 5);
  ASSERT_EQ(r->n_prev_kvs, 2u);
  EXPECT_EQ(Str(r->prev_kvs[0]->key), "/d/a");
  EXPECT_EQ(Str(r->prev_kvs[0]->value), "1");
  EXPECT_EQ(Str(r->prev_kvs[1]->key), "/d/b");
  auto left = client_->Range("/d/", "/d0");
  EXPECT_EQ(Keys(*left), (std::vector<std::string>{"/d/c"}));

  // Deleting nothing: deleted 0, and no new revision.
  del.key = Bytes("/d/zz");
  del.range_end = Bytes("");
  auto none = CallOk<Natcd__V1__DeleteRangeResponse>(client_.get(), "kv.delete", &del.base,
                                                     &natcd__v1__delete_range_response__descriptor);
  ASSERT_TRUE(none);
  EXPECT_EQ(none->deleted, 0);
  EXPECT_EQ(Revision(client_.get()), 5);
}

// Builders for txn pieces (storage owned by the test).
struct TxnParts {
  std::vector<std::unique_ptr<Natcd__V1__Compare>> compares;
  std::vector<std::unique_ptr<Natcd__V1__RequestOp>> ops;
  std::vector<std::unique_ptr<Natcd__V1__PutRequest>> puts;
  std::vector<std::unique_ptr<Natcd__V1__RangeRequest>> ranges;
  std::vector<std::unique_ptr<Natcd__V1__DeleteRangeRequest>> deletes;
  std::vector<std::unique_ptr<std::string>> strings;

  ProtobufCBinaryData B(const std::string& s) {
    strings.push_back(std::make_unique<std::string>(s));
    return Bytes(*strings.back());
  }
  Natcd__V1__Compare* ValueEq(const std::string& key, const std::string& value) {
    auto c = std::make_unique<Natcd__V1__Compare>();
    natcd__v1__compare__init(c.get());
    c->result = NATCD__V1__COMPARE__COMPARE_RESULT__EQUAL;
    c->target = NATCD__V1__COMPARE__COMPARE_TARGET__VALUE;
    c->key = B(key);
    c->target_union_case = NATCD__V1__COMPARE__TARGET_UNION_VALUE;
    c->value = B(value);
    compares.push_back(std::move(c));
    return compares.back().get();
  }
  Natcd__V1__Compare* VersionIs(
      const std::string& key, int64_t version,
      Natcd__V1__Compare__CompareResult result = NATCD__V1__COMPARE__COMPARE_RESULT__EQUAL) {
    auto c = std::make_unique<Natcd__V1__Compare>();
    natcd__v1__compare__init(c.get());
    c->result = result;
    c->target = NATCD__V1__COMPARE__COMPARE_TARGET__VERSION;
    c->key = B(key);
    c->target_union_case = NATCD__V1__COMPARE__TARGET_UNION_VERSION;
    c->version = version;
    compares.push_back(std::move(c));
    return compares.back().get();
  }
  Natcd__V1__RequestOp* Op() {
    ops.push_back(std::make_unique<Natcd__V1__RequestOp>());
    natcd__v1__request_op__init(ops.back().get());
    return ops.back().get();
  }
  Natcd__V1__RequestOp* Put(const std::string& key, const std::string& value) {
    auto p = std::make_unique<Natcd__V1__PutRequest>();
    natcd__v1__put_request__init(p.get());
    p->key = B(key);
    p->value = B(value);
    Natcd__V1__RequestOp* op = Op();
    op->request_case = NATCD__V1__REQUEST_OP__REQUEST_REQUEST_PUT;
    op->request_put = p.get();
    puts.push_back(std::move(p));
    return op;
  }
  Natcd__V1__RequestOp* Range(const std::string& key) {
    auto r = std::make_unique<Natcd__V1__RangeRequest>();
    natcd__v1__range_request__init(r.get());
    r->key = B(key);
    Natcd__V1__RequestOp* op = Op();
    op->request_case = NATCD__V1__REQUEST_OP__REQUEST_REQUEST_RANGE;
    op->request_range = r.get();
    ranges.push_back(std::move(r));
    return op;
  }
  Natcd__V1__RequestOp* Delete(const std::string& key) {
    auto d = std::make_unique<Natcd__V1__DeleteRangeRequest>();
    natcd__v1__delete_range_request__init(d.get());
    d->key = B(key);
    Natcd__V1__RequestOp* op = Op();
    op->request_case = NATCD__V1__REQUEST_OP__REQUEST_REQUEST_DELETE_RANGE;
    op->request_delete_range = d.get();
    deletes.push_back(std::move(d));
    return op;
  }
  Natcd__V1__RequestOp* Txn(Natcd__V1__TxnRequest* txn) {
    Natcd__V1__RequestOp* op = Op();
    op->request_case = NATCD__V1__REQUEST_OP__REQUEST_REQUEST_TXN;
    op->request_txn = txn;
    return op;
  }
};

TEST_F(WireProtoTest, TxnCompareSuccessFailureNested) {
  client_->Put("/t/c", "3");  // rev 1
  TxnParts parts;
  // Inner txn: /t/c has version 1 -> put /t/e, else put /t/never.
  Natcd__V1__Compare* inner_cmp[] = {parts.VersionIs("/t/c", 1)};
  Natcd__V1__RequestOp* inner_ok[] = {parts.Put("/t/e", "E")};
  Natcd__V1__RequestOp* inner_fail[] = {parts.Put("/t/never", "N")};
  Natcd__V1__TxnRequest inner;
  natcd__v1__txn_request__init(&inner);
  inner.n_compare = 1;
  inner.compare = inner_cmp;
  inner.n_success = 1;
  inner.success = inner_ok;
  inner.n_failure = 1;
  inner.failure = inner_fail;

  Natcd__V1__Compare* cmp[] = {parts.ValueEq("/t/c", "3")};
  Natcd__V1__RequestOp* success[] = {parts.Put("/t/d", "D"), parts.Range("/t/c"),
                                     parts.Txn(&inner)};
  Natcd__V1__RequestOp* failure[] = {parts.Put("/t/f", "F")};
  Natcd__V1__TxnRequest txn;
  natcd__v1__txn_request__init(&txn);
  txn.n_compare = 1;
  txn.compare = cmp;
  txn.n_success = 3;
  txn.success = success;
  txn.n_failure = 1;
  txn.failure = failure;
  auto r = CallOk<Natcd__V1__TxnResponse>(client_.get(), "kv.txn", &txn.base,
                                          &natcd__v1__txn_response__descriptor);
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->succeeded);
  EXPECT_EQ(r->header->revision, 3);  // one revision for the whole txn
  ASSERT_EQ(r->n_responses, 3u);
  EXPECT_EQ(r->responses[0]->response_case, NATCD__V1__RESPONSE_OP__RESPONSE_RESPONSE_PUT);
  ASSERT_EQ(r->responses[1]->response_case, NATCD__V1__RESPONSE_OP__RESPONSE_RESPONSE_RANGE);
  ASSERT_EQ(r->responses[1]->response_range->n_kvs, 1u);
  EXPECT_EQ(Str(r->responses[1]->response_range->kvs[0]->value), "3");
  ASSERT_EQ(r->responses[2]->response_case, NATCD__V1__RESPONSE_OP__RESPONSE_RESPONSE_TXN);
  EXPECT_TRUE(r->responses[2]->response_txn->succeeded);
  ASSERT_EQ(r->responses[2]->response_txn->n_responses, 1u);
  auto keys = client_->Range("/t/", "/t0");
  EXPECT_EQ(Keys(*keys), (std::vector<std::string>{"/t/c", "/t/d", "/t/e"}));
  EXPECT_EQ(keys->kvs[1]->mod_revision, 3);
  EXPECT_EQ(keys->kvs[2]->mod_revision, 3);

  // The compare fails now: the failure branch runs.
  Natcd__V1__Compare* cmp2[] = {parts.ValueEq("/t/c", "not 3")};
  Natcd__V1__RequestOp* success2[] = {parts.Put("/t/x", "X")};
  Natcd__V1__RequestOp* failure2[] = {parts.Delete("/t/c"), parts.Range("/t/d")};
  Natcd__V1__TxnRequest txn2;
  natcd__v1__txn_request__init(&txn2);
  txn2.n_compare = 1;
  txn2.compare = cmp2;
  txn2.n_success = 1;
  txn2.success = success2;
  txn2.n_failure = 2;
  txn2.failure = failure2;
  auto r2 = CallOk<Natcd__V1__TxnResponse>(client_.get(), "kv.txn", &txn2.base,
                                           &natcd__v1__txn_response__descriptor);
  ASSERT_TRUE(r2);
  EXPECT_FALSE(r2->succeeded);
  EXPECT_EQ(r2->header->revision, 4);
  ASSERT_EQ(r2->n_responses, 2u);
  ASSERT_EQ(r2->responses[0]->response_case,
            NATCD__V1__RESPONSE_OP__RESPONSE_RESPONSE_DELETE_RANGE);
  EXPECT_EQ(r2->responses[0]->response_delete_range->deleted, 1);
  EXPECT_EQ(r2->responses[1]->response_range->n_kvs, 1u);
  EXPECT_EQ(client_->Range("/t/x")->n_kvs, 0u);
  EXPECT_EQ(client_->Range("/t/c")->n_kvs, 0u);

  // A read-only txn makes no revision.
  Natcd__V1__RequestOp* reads[] = {parts.Range("/t/d")};
  Natcd__V1__TxnRequest ro;
  natcd__v1__txn_request__init(&ro);
  ro.n_success = 1;
  ro.success = reads;
  auto r3 = CallOk<Natcd__V1__TxnResponse>(client_.get(), "kv.txn", &ro.base,
                                           &natcd__v1__txn_response__descriptor);
  ASSERT_TRUE(r3);
  EXPECT_TRUE(r3->succeeded);
  EXPECT_EQ(r3->header->revision, 4);
}

TEST_F(WireProtoTest, Compact) {
  client_->Put("/c", "1");
  client_->Put("/c", "2");
  client_->Put("/c", "3");
  Natcd__V1__CompactionRequest compact;
  natcd__v1__compaction_request__init(&compact);
  compact.revision = 4;
  compact.physical = true;
  auto r = CallOk<Natcd__V1__CompactionResponse>(client_.get(), "kv.compact", &compact.base,
                                                 &natcd__v1__compaction_response__descriptor);
  ASSERT_TRUE(r);
  ASSERT_NE(r->header, nullptr);
  // At the compact revision reads still work; below it they are gone.
  auto at4 = client_->Range("/c", "", 4);
  ASSERT_EQ(at4->n_kvs, 1u);
  EXPECT_EQ(Str(at4->kvs[0]->value), "3");
  Natcd__V1__RangeRequest old;
  natcd__v1__range_request__init(&old);
  old.key = Bytes("/c");
  old.revision = 3;
  WireReply gone = client_->Call("kv.range", &old.base);
  EXPECT_EQ(gone.code, 410) << gone.error;
  // Compacting again at the same revision is an error (etcd: ErrCompacted).
  WireReply again = client_->Call("kv.compact", &compact.base);
  EXPECT_EQ(again.code, 410) << again.error;
}

TEST_F(WireProtoTest, LeaseCalls) {
  Natcd__V1__LeaseGrantRequest grant;
  natcd__v1__lease_grant_request__init(&grant);
  grant.ttl = 30;
  grant.id = 0x1234;
  auto granted = CallOk<Natcd__V1__LeaseGrantResponse>(
      client_.get(), "lease.grant", &grant.base, &natcd__v1__lease_grant_response__descriptor);
  ASSERT_TRUE(granted);
  EXPECT_EQ(granted->id, 0x1234);
  EXPECT_EQ(granted->ttl, 30);
  int64_t chosen = client_->Grant(20);
  EXPECT_GT(chosen, 0);
  EXPECT_NE(chosen, 0x1234);
  client_->Put("/l/a", "1", 0x1234);
  client_->Put("/l/b", "2", 0x1234);

  auto ttl = TimeToLive(client_.get(), 0x1234, true);
  ASSERT_TRUE(ttl);
  EXPECT_EQ(ttl->id, 0x1234);
  EXPECT_EQ(ttl->grantedttl, 30);
  EXPECT_GE(ttl->ttl, 28);
  EXPECT_LE(ttl->ttl, 30);
  ASSERT_EQ(ttl->n_keys, 2u);
  EXPECT_EQ(Str(ttl->keys[0]), "/l/a");
  EXPECT_EQ(Str(ttl->keys[1]), "/l/b");
  auto no_keys = TimeToLive(client_.get(), 0x1234, false);
  EXPECT_EQ(no_keys->n_keys, 0u);
  auto missing = TimeToLive(client_.get(), 0x999, false);
  EXPECT_EQ(missing->ttl, -1);

  Natcd__V1__LeaseKeepAliveRequest keep;
  natcd__v1__lease_keep_alive_request__init(&keep);
  keep.id = 0x1234;
  auto kept =
      CallOk<Natcd__V1__LeaseKeepAliveResponse>(client_.get(), "lease.keepalive", &keep.base,
                                                &natcd__v1__lease_keep_alive_response__descriptor);
  ASSERT_TRUE(kept);
  EXPECT_EQ(kept->id, 0x1234);
  EXPECT_EQ(kept->ttl, 30);

  Natcd__V1__LeaseLeasesRequest list;
  natcd__v1__lease_leases_request__init(&list);
  auto leases = CallOk<Natcd__V1__LeaseLeasesResponse>(
      client_.get(), "lease.leases", &list.base, &natcd__v1__lease_leases_response__descriptor);
  ASSERT_TRUE(leases);
  std::vector<int64_t> ids;
  for (size_t i = 0; i < leases->n_leases; ++i) ids.push_back(leases->leases[i]->id);
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(ids, (std::vector<int64_t>{0x1234, chosen}));

  int64_t before = Revision(client_.get());
  Natcd__V1__LeaseRevokeRequest revoke;
  natcd__v1__lease_revoke_request__init(&revoke);
  revoke.id = 0x1234;
  auto revoked = CallOk<Natcd__V1__LeaseRevokeResponse>(
      client_.get(), "lease.revoke", &revoke.base, &natcd__v1__lease_revoke_response__descriptor);
  ASSERT_TRUE(revoked);
  EXPECT_EQ(revoked->header->revision, before + 1);  // both keys in one revision
  EXPECT_EQ(client_->Range("/l/", "/l0")->n_kvs, 0u);
  EXPECT_EQ(TimeToLive(client_.get(), 0x1234)->ttl, -1);
}

TEST_F(WireProtoTest, WatchControl) {
  client_->Put("/w", "0");
  WatchClient watch(client_.get(), On("/w"));
  ASSERT_TRUE(watch.ok()) << watch.create_reply.code << " " << watch.create_reply.error;
  EXPECT_NE(watch.id, 0);
  EXPECT_EQ(watch.created->header->revision, 2);
  client_->Put("/w", "1");
  auto events = watch.Events(1);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].value, "1");

  WireReply progress = watch.Progress();
  ASSERT_TRUE(progress.ok()) << progress.error;
  auto p = WireClient::Decode<Natcd__V1__WatchResponse>(&natcd__v1__watch_response__descriptor,
                                                        progress);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->watch_id, watch.id);
  WatchMsg note = watch.Next();
  ASSERT_TRUE(note);
  EXPECT_EQ(note->n_events, 0u);
  EXPECT_FALSE(note->canceled);
  EXPECT_EQ(note->header->revision, 3);

  WireReply cancel = watch.Cancel();
  ASSERT_TRUE(cancel.ok()) << cancel.error;
  auto c =
      WireClient::Decode<Natcd__V1__WatchResponse>(&natcd__v1__watch_response__descriptor, cancel);
  ASSERT_TRUE(c);
  EXPECT_TRUE(c->canceled);
  EXPECT_EQ(c->watch_id, watch.id);
  client_->Put("/w", "2");
  EXPECT_FALSE(watch.inbox().Next(300)) << "a canceled watch keeps delivering";
  // Canceling again: no such watch.
  WireReply again = watch.Cancel();
  EXPECT_EQ(again.code, 400);
  EXPECT_NE(again.error.find("ErrWatchNotFound"), std::string::npos) << again.error;
  WireReply progress_gone = watch.Progress();
  EXPECT_EQ(progress_gone.code, 400);

  // A requested watch id is honoured.
  WatchSpec spec = On("/w");
  spec.watch_id = 77;
  WatchClient chosen(client_.get(), spec);
  ASSERT_TRUE(chosen.ok());
  EXPECT_EQ(chosen.id, 77);
}

TEST_F(WireProtoTest, StatusAndMembers) {
  client_->Put("/s", "1");
  Natcd__V1__StatusRequest status;
  natcd__v1__status_request__init(&status);
  auto s = CallOk<Natcd__V1__StatusResponse>(client_.get(), "maint.status", &status.base,
                                             &natcd__v1__status_response__descriptor);
  ASSERT_TRUE(s);
  EXPECT_STRNE(s->version, "");
  EXPECT_GT(s->dbsize, 0);
  EXPECT_EQ(s->leader, s->header->member_id);
  EXPECT_EQ(s->header->revision, 2);
  EXPECT_GE(s->raftterm, 1u);
  EXPECT_FALSE(s->islearner);

  Natcd__V1__MemberListRequest list;
  natcd__v1__member_list_request__init(&list);
  auto members =
      CallOk<Natcd__V1__MemberListResponse>(client_.get(), "cluster.member.list", &list.base,
                                            &natcd__v1__member_list_response__descriptor);
  ASSERT_TRUE(members);
  ASSERT_EQ(members->n_members, 1u);
  EXPECT_STREQ(members->members[0]->name, "natcd-1");
  EXPECT_EQ(members->members[0]->id, s->header->member_id);

  // Membership changes are checked before anything is proposed.
  Natcd__V1__MemberAddRequest add;
  natcd__v1__member_add_request__init(&add);
  WireReply added = client_->Call("cluster.member.add", &add.base);
  EXPECT_EQ(added.code, 400);
  EXPECT_NE(added.error.find("member name required"), std::string::npos) << added.error;
  EXPECT_TRUE(added.body.empty());
  add.name = const_cast<char*>("natcd-1");
  added = client_->Call("cluster.member.add", &add.base);
  EXPECT_NE(added.error.find("ErrMemberExist"), std::string::npos) << added.error;
  Natcd__V1__MemberRemoveRequest remove;
  natcd__v1__member_remove_request__init(&remove);
  remove.id = 5;
  WireReply removed = client_->Call("cluster.member.remove", &remove.base);
  EXPECT_EQ(removed.code, 400);
  EXPECT_NE(removed.error.find("ErrMemberNotFound"), std::string::npos) << removed.error;
  Natcd__V1__MemberPromoteRequest promote;
  natcd__v1__member_promote_request__init(&promote);
  promote.id = s->header->member_id;
  WireReply promoted = client_->Call("cluster.member.promote", &promote.base);
  EXPECT_EQ(promoted.code, 400);
  EXPECT_NE(promoted.error.find("can only promote a learner"), std::string::npos) << promoted.error;
}

}  // namespace
}  // namespace natcd::testing
