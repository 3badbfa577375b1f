// Txn: compares, branches, nesting, atomicity, etcd's duplicate-key and
// too-many-ops rules. Reference: etcd rpc.proto TxnRequest, v3rpc/key.go
// checkTxnRequest/checkIntervals, apply.go compareToPath.
#include <memory>
#include <string>

#include "core/engine_fixture.h"
#include "natcd/key_range.h"

namespace natcd::testing {
namespace {

using TxnTest = EngineTest;

Compare Cmp(Compare::Target target, Compare::Result result, const std::string& key) {
  Compare c;
  c.target = target;
  c.result = result;
  c.key = key;
  return c;
}

Compare VersionIs(const std::string& key, int64_t version,
                  Compare::Result result = Compare::Result::kEqual) {
  Compare c = Cmp(Compare::Target::kVersion, result, key);
  c.version = version;
  return c;
}

RequestOp PutOp(const std::string& key, const std::string& value) {
  return RequestOp{PutRequest{key, value}};
}

RequestOp GetOp(const std::string& key) {
  RangeRequest r;
  r.key = key;
  return RequestOp{r};
}

RequestOp DelOp(const std::string& key, const std::string& end = "") {
  return RequestOp{DeleteRangeRequest{key, end}};
}

TEST_F(TxnTest, CreateIfAbsentThenElse) {
  TxnRequest txn;
  txn.compare = {VersionIs("lock", 0)};
  txn.success = {PutOp("lock", "me")};
  txn.failure = {GetOp("lock")};
  Result<TxnResponse> first = engine_->Txn(txn);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_TRUE(first->succeeded);
  EXPECT_EQ(first->header.revision, 2);
  Result<TxnResponse> second = engine_->Txn(txn);
  ASSERT_TRUE(second.ok());
  EXPECT_FALSE(second->succeeded);
  EXPECT_EQ(second->header.revision, 2);  // reads only: no new revision
  auto& range = std::get<RangeResponse>(second->responses[0].response);
  ASSERT_EQ(range.kvs.size(), 1u);
  EXPECT_EQ(range.kvs[0].value, "me");
}

TEST_F(TxnTest, AllWritesShareOneRevisionWithSubRevisions) {
  Put("x", "0");
  TxnRequest txn;
  txn.success = {PutOp("a", "1"), PutOp("b", "2"), DelOp("x")};
  Result<TxnResponse> r = engine_->Txn(txn);
  ASSERT_TRUE(r.ok());
  ASSERT_OK(engine_->Commit());
  EXPECT_EQ(r->header.revision, 3);
  EXPECT_EQ(Get("a").mod_revision, 3);
  EXPECT_EQ(Get("b").mod_revision, 3);
  EXPECT_EQ(Get("x").version, 0);
  EXPECT_EQ(Get("x", 2).value, "0");
}

TEST_F(TxnTest, CompareTargetsAndResults) {
  Put("k", "m");  // rev 2, version 1
  Put("k", "n");  // rev 3, version 2
  int64_t lease = Grant(100);
  Put("l", "v", lease);  // rev 4
  struct Case {
    Compare c;
    bool want;
  };
  auto with = [](Compare c, auto setter) {
    setter(c);
    return c;
  };
  using R = Compare::Result;
  using T = Compare::Target;
  Case cases[] = {
      {VersionIs("k", 2), true},
      {VersionIs("k", 1, R::kGreater), true},
      {VersionIs("k", 3, R::kLess), true},
      {VersionIs("k", 2, R::kNotEqual), false},
      {with(Cmp(T::kCreate, R::kEqual, "k"), [](Compare& c) { c.create_revision = 2; }), true},
      {with(Cmp(T::kMod, R::kEqual, "k"), [](Compare& c) { c.mod_revision = 3; }), true},
      {with(Cmp(T::kMod, R::kLess, "k"), [](Compare& c) { c.mod_revision = 3; }), false},
      {with(Cmp(T::kValue, R::kEqual, "k"), [](Compare& c) { c.value = "n"; }), true},
      {with(Cmp(T::kValue, R::kGreater, "k"), [](Compare& c) { c.value = "m"; }), true},
      {with(Cmp(T::kValue, R::kLess, "k"), [](Compare& c) { c.value = "m"; }), false},
      {with(Cmp(T::kLease, R::kEqual, "l"), [lease](Compare& c) { c.lease = lease; }), true},
      {with(Cmp(T::kLease, R::kEqual, "k"), [](Compare& c) { c.lease = 0; }), true},
      // Missing key: compares against the zero KeyValue...
      {VersionIs("missing", 0), true},
      {with(Cmp(T::kCreate, R::kEqual, "missing"), [](Compare& c) { c.create_revision = 0; }),
       true},
      // ...except a value compare, which always fails (etcd applyCompare).
      {with(Cmp(T::kValue, R::kEqual, "missing"), [](Compare& c) { c.value = ""; }), false},
      {with(Cmp(T::kValue, R::kNotEqual, "missing"), [](Compare& c) { c.value = "x"; }), false},
  };
  for (const Case& tc : cases) {
    TxnRequest txn;
    txn.compare = {tc.c};
    Result<TxnResponse> r = engine_->Txn(txn);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->succeeded, tc.want)
        << "key " << tc.c.key << " target " << static_cast<int>(tc.c.target) << " result "
        << static_cast<int>(tc.c.result);
  }
}

TEST_F(TxnTest, RangeCompareChecksEveryKey) {
  Put("r/1", "a");
  Put("r/2", "a");
  Put("r/3", "b");
  Compare c = Cmp(Compare::Target::kValue, Compare::Result::kEqual, "r/");
  c.range_end = PrefixRangeEnd("r/");
  c.value = "a";
  TxnRequest txn;
  txn.compare = {c};
  EXPECT_FALSE(engine_->Txn(txn)->succeeded);
  c.range_end = "r/3";
  txn.compare = {c};
  EXPECT_TRUE(engine_->Txn(txn)->succeeded);
}

TEST_F(TxnTest, ReadsInsideTxnSeeEarlierWrites) {
  TxnRequest txn;
  txn.success = {PutOp("a", "1"), GetOp("a")};
  Result<TxnResponse> r = engine_->Txn(txn);
  ASSERT_TRUE(r.ok());
  auto& range = std::get<RangeResponse>(r->responses[1].response);
  ASSERT_EQ(range.kvs.size(), 1u);
  EXPECT_EQ(range.kvs[0].value, "1");
  EXPECT_EQ(range.kvs[0].mod_revision, 2);
}

TEST_F(TxnTest, NestedTxnComparesSeeStateBeforeTheTxn) {
  // etcd evaluates every compare on the chosen path before executing
  // anything (compareToPath).
  auto nested = std::make_shared<TxnRequest>();
  nested->compare = {VersionIs("a", 0)};
  nested->success = {PutOp("saw-absent", "yes")};
  nested->failure = {PutOp("saw-present", "yes")};
  TxnRequest txn;
  txn.success = {PutOp("a", "1"), RequestOp{nested}};
  Result<TxnResponse> r = engine_->Txn(txn);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(Get("saw-absent").value, "yes");
  EXPECT_EQ(Get("saw-present").version, 0);
  auto& inner = std::get<std::shared_ptr<TxnResponse>>(r->responses[1].response);
  EXPECT_TRUE(inner->succeeded);
  EXPECT_EQ(Get("a").mod_revision, Get("saw-absent").mod_revision);
}

TEST_F(TxnTest, DuplicateKeyRules) {
  auto expect_dup = [this](TxnRequest txn) {
    Result<TxnResponse> r = engine_->Txn(txn);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().name(), "ErrDuplicateKey");
  };
  TxnRequest two_puts;
  two_puts.success = {PutOp("k", "1"), PutOp("k", "2")};
  expect_dup(two_puts);
  TxnRequest put_in_delete;
  put_in_delete.failure = {DelOp("a", "z"), PutOp("k", "1")};
  expect_dup(put_in_delete);
  auto nested = std::make_shared<TxnRequest>();
  nested->success = {PutOp("k", "n")};
  TxnRequest nested_dup;
  nested_dup.success = {PutOp("k", "1"), RequestOp{nested}};
  expect_dup(nested_dup);
  EXPECT_EQ(engine_->revision(), kEmptyStoreRevision);

  // Allowed: overlapping deletes; the same key in a nested then and else.
  TxnRequest overlapping_deletes;
  overlapping_deletes.success = {DelOp("a", "m"), DelOp("c", "z")};
  EXPECT_TRUE(engine_->Txn(overlapping_deletes).ok());
  auto branches = std::make_shared<TxnRequest>();
  branches->success = {PutOp("k", "then")};
  branches->failure = {PutOp("k", "else")};
  TxnRequest ok;
  ok.success = {RequestOp{branches}};
  EXPECT_TRUE(engine_->Txn(ok).ok());
  // The same key in success and failure of one txn is fine.
  TxnRequest both_branches;
  both_branches.success = {PutOp("k", "1")};
  both_branches.failure = {PutOp("k", "2")};
  EXPECT_TRUE(engine_->Txn(both_branches).ok());
}

TEST_F(TxnTest, TooManyOps) {
  TxnRequest txn;
  for (int i = 0; i < 129; ++i) txn.success.push_back(PutOp("k" + std::to_string(i), "v"));
  Result<TxnResponse> r = engine_->Txn(txn);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().name(), "ErrTooManyOps");
  txn.success.pop_back();
  EXPECT_TRUE(engine_->Txn(txn).ok());

  // Nested txns share the budget left by their parent.
  auto nested = std::make_shared<TxnRequest>();
  for (int i = 0; i < 64; ++i) nested->success.push_back(PutOp("n" + std::to_string(i), "v"));
  TxnRequest outer;
  for (int i = 0; i < 64; ++i) outer.success.push_back(PutOp("o" + std::to_string(i), "v"));
  outer.success.push_back(RequestOp{nested});
  r = engine_->Txn(outer);  // 65 at the top leaves 63 for the nested 64
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().name(), "ErrTooManyOps");
}

TEST_F(TxnTest, FailedTxnChangesNothing) {
  Put("keep", "v");
  TxnRequest txn;
  txn.success = {PutOp("a", "1"), RequestOp{PutRequest{"b", "2", /*lease=*/999}}};
  Result<TxnResponse> r = engine_->Txn(txn);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsLeaseNotFound());
  ASSERT_OK(engine_->Commit());
  EXPECT_EQ(engine_->revision(), 2);
  EXPECT_EQ(Get("a").version, 0);
  Reopen();
  EXPECT_EQ(engine_->revision(), 2);
  EXPECT_EQ(Get("a").version, 0);
}

TEST_F(TxnTest, InvalidOpOnUntakenBranchDoesNotMatter) {
  // etcd validates leases and ignore_* only on the path taken.
  TxnRequest txn;
  txn.compare = {VersionIs("x", 0)};
  txn.success = {PutOp("a", "1")};
  txn.failure = {RequestOp{PutRequest{"b", "2", /*lease=*/999}}};
  Result<TxnResponse> r = engine_->Txn(txn);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->succeeded);
}

TEST_F(TxnTest, TxnDeleteRangeAndPrevKv) {
  Put("d/1", "a");
  Put("d/2", "b");
  TxnRequest txn;
  DeleteRangeRequest del{"d/", PrefixRangeEnd("d/"), /*prev_kv=*/true};
  txn.success = {RequestOp{del}};
  Result<TxnResponse> r = engine_->Txn(txn);
  ASSERT_TRUE(r.ok());
  auto& d = std::get<DeleteRangeResponse>(r->responses[0].response);
  EXPECT_EQ(d.deleted, 2);
  ASSERT_EQ(d.prev_kvs.size(), 2u);
  EXPECT_EQ(d.prev_kvs[1].value, "b");
  EXPECT_EQ(d.header.revision, 4);
}

}  // namespace
}  // namespace natcd::testing
