// Divergences from etcd found by the model-based test (model_test.cc), each
// pinned by a small deterministic case. Reference: etcd
// server/etcdserver/txn/range.go (sortRangeResults, asembleRangeResponse),
// txn.go (compareToPath, checkRequests), api/v3rpc/key.go (Txn,
// checkIntervals).
#include <memory>
#include <string>
#include <vector>

#include "core/engine_fixture.h"
#include "core/model/model.h"

namespace natcd::testing {
namespace {

using ModelFindings = EngineTest;

RequestOp Nested(std::vector<RequestOp> success) {
  auto txn = std::make_shared<TxnRequest>();
  txn->success = std::move(success);
  RequestOp op;
  op.op = txn;
  return op;
}

RequestOp PutOp(const std::string& key, const std::string& value, int64_t lease = 0) {
  PutRequest put;
  put.key = key;
  put.value = value;
  put.lease = lease;
  RequestOp op;
  op.op = put;
  return op;
}

// etcd sorts, then cuts to limit, then drops the values of a keys_only read:
// sorting by value still orders by the values it does not return.
TEST_F(ModelFindings, KeysOnlySortedByValueIsInValueOrder) {
  Put("k1", "c");
  Put("k2", "a");
  Put("k3", "b");
  RangeRequest r;
  r.key = "k";
  r.range_end = "l";
  r.keys_only = true;
  r.sort_order = SortOrder::kAscend;
  r.sort_target = SortTarget::kValue;
  r.limit = 2;
  Result<RangeResponse> got = engine_->Range(r);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_EQ(got->kvs.size(), 2u);
  EXPECT_EQ(got->kvs[0].key, "k2");
  EXPECT_EQ(got->kvs[1].key, "k3");
  EXPECT_EQ(got->kvs[0].value, "");
  EXPECT_TRUE(got->more);
}

// etcd checkRequests validates every put on the txn's path before any range:
// with both kinds of error, the put's error is the answer.
TEST_F(ModelFindings, TxnPutErrorWinsOverRangeError) {
  Put("k", "v");
  TxnRequest txn;
  RangeRequest future;
  future.key = "k";
  future.revision = 5;  // ErrFutureRev
  RequestOp range;
  range.op = future;
  txn.success = {range, PutOp("x", "v", /*lease=*/99)};  // ErrLeaseNotFound
  Result<TxnResponse> got = engine_->Txn(txn);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().name(), "ErrLeaseNotFound");
}

// etcd checks the whole request's shape (checkTxnRequest) before the
// duplicate-key rule (checkIntervals, once, from the top).
TEST_F(ModelFindings, TxnShapeErrorWinsOverNestedDuplicateKey) {
  TxnRequest txn;
  txn.success = {Nested({PutOp("a", "1"), PutOp("a", "2")})};  // ErrDuplicateKey
  txn.failure = {PutOp("", "v")};                              // ErrEmptyKey
  Result<TxnResponse> got = engine_->Txn(txn);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().name(), "ErrEmptyKey");
}

// checkIntervals checks a nested txn's puts only against the deletes seen
// before it, so a put in one nested txn and a delete of the same key in a
// later one are allowed (etcd issue #16380; natcd keeps etcd's rule): two
// writes of one key in one revision. The delete's
// prev_kv is then the put of the same revision, in the txn's response, in
// the live event, and in the catch-up history (ReadEvents), which used to
// skip it and answer with the state before the revision.
TEST_F(ModelFindings, PutThenDeleteOfOneKeyInOneRevision) {
  Put("k", "old");  // revision 2
  TxnRequest txn;
  DeleteRangeRequest del;
  del.key = "k";
  del.prev_kv = true;
  RequestOp del_op;
  del_op.op = del;
  txn.success = {Nested({PutOp("k", "new")}), Nested({del_op})};
  Result<TxnResponse> got = engine_->Txn(txn);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_OK(engine_->Commit());
  EXPECT_EQ(got->header.revision, 3);
  const auto& second = std::get<std::shared_ptr<TxnResponse>>(got->responses[1].response);
  const auto& deleted = std::get<DeleteRangeResponse>(second->responses[0].response);
  ASSERT_EQ(deleted.prev_kvs.size(), 1u);
  const KeyValue put_at_3{"k", 2, 3, 2, "new", 0};
  EXPECT_EQ(Str(deleted.prev_kvs[0]), Str(put_at_3));

  std::vector<Event> events;
  ASSERT_OK(engine_->ReadEvents("k", "", 3, 3, 100, true, &events));
  ASSERT_EQ(events.size(), 2u) << Str(events);
  EXPECT_EQ(events[0].type, Event::Type::kPut);
  EXPECT_EQ(Str(events[0].kv), Str(put_at_3));
  EXPECT_EQ(events[1].type, Event::Type::kDelete);
  ASSERT_TRUE(events[1].has_prev_kv);
  EXPECT_EQ(Str(events[1].prev_kv), Str(put_at_3));
  EXPECT_EQ(Get("k").version, 0);
  EXPECT_EQ(Get("k", 2).value, "old");
}

// engine.h: "Errors that come from the request ... change nothing." A
// checkpoint entry with a negative TTL was rejected only after the entries
// before it were applied (core/engine.cc, Engine::ApplyLeaseCheckpoint), so
// the first lease kept a 3 s checkpoint that survived a restart.
TEST_F(ModelFindings, CheckpointWithANegativeEntryChangesNothing) {
  Grant(10, 1);
  LeaseCheckpointRequest bad;
  bad.checkpoints = {{1, 3'000}, {1, -1}};
  Result<WriteResponse> got = engine_->Apply(bad);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().name(), "ErrLeaseCheckpoint");
  ASSERT_OK(engine_->Commit());
  Reopen();
  EXPECT_EQ(engine_->LeaseTimeToLive({1, false}).ttl, 10);
}

}  // namespace
}  // namespace natcd::testing
