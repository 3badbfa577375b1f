#include "raft/sim/linearizability.h"

#include <gtest/gtest.h>

namespace natcd::raft::sim {
namespace {

KvOp Put(const std::string& key, const std::string& v, int64_t call, int64_t ret) {
  KvOp op;
  op.kind = OpKind::kPut;
  op.key = key;
  op.value = v;
  op.call = call;
  op.ret = ret;
  op.ok = true;
  return op;
}
KvOp Get(const std::string& key, const std::string& out, int64_t call, int64_t ret) {
  KvOp op;
  op.kind = OpKind::kGet;
  op.key = key;
  op.output = out;
  op.call = call;
  op.ret = ret;
  op.ok = true;
  return op;
}
KvOp Cas(const std::string& key, const std::string& expected, const std::string& v, bool ok,
         int64_t call, int64_t ret) {
  KvOp op;
  op.kind = OpKind::kCas;
  op.key = key;
  op.expected = expected;
  op.value = v;
  op.ok = ok;
  op.call = call;
  op.ret = ret;
  return op;
}

TEST(Linearizability, SequentialHistory) {
  EXPECT_TRUE(CheckLinearizable({Put("k", "a", 1, 2), Get("k", "a", 3, 4),
                                 Cas("k", "a", "b", true, 5, 6), Get("k", "b", 7, 8)})
                  .linearizable);
}

TEST(Linearizability, StaleReadAfterAWriteReturnedIsNot) {
  // The put returned before the get began: the get must see it.
  CheckResult r = CheckLinearizable({Put("k", "a", 1, 2), Get("k", "", 3, 4)});
  EXPECT_FALSE(r.linearizable);
  EXPECT_FALSE(r.gave_up);
  EXPECT_EQ(r.key, "k");
}

TEST(Linearizability, ConcurrentOperationsMayOrderEitherWay) {
  EXPECT_TRUE(CheckLinearizable({Put("k", "a", 1, 10), Get("k", "", 2, 3)}).linearizable);
  EXPECT_TRUE(CheckLinearizable({Put("k", "a", 1, 10), Get("k", "a", 2, 3)}).linearizable);
}

TEST(Linearizability, ReadsMustNotGoBackInTime) {
  // Two reads after a concurrent write: once one saw it, a later one must.
  EXPECT_FALSE(CheckLinearizable({Put("k", "a", 1, 100), Get("k", "a", 2, 3), Get("k", "", 4, 5)})
                   .linearizable);
}

TEST(Linearizability, CompareAndSwapOutcomesMustAgreeWithTheState) {
  EXPECT_FALSE(
      CheckLinearizable({Put("k", "a", 1, 2), Cas("k", "a", "b", false, 3, 4)}).linearizable);
  EXPECT_FALSE(CheckLinearizable({Cas("k", "a", "b", true, 1, 2)}).linearizable);
  // Two swaps from the same value cannot both succeed.
  EXPECT_FALSE(CheckLinearizable({Put("k", "a", 1, 2), Cas("k", "a", "b", true, 3, 10),
                                  Cas("k", "a", "c", true, 4, 11)})
                   .linearizable);
}

TEST(Linearizability, AnOperationThatNeverReturnedMayOrMayNotHaveHappened) {
  KvOp pending = Put("k", "a", 1, KvOp::kNever);
  EXPECT_TRUE(CheckLinearizable({pending, Get("k", "", 2, 3)}).linearizable);
  EXPECT_TRUE(CheckLinearizable({pending, Get("k", "a", 2, 3)}).linearizable);
  // But not before it was called.
  KvOp later = Put("k", "a", 5, KvOp::kNever);
  EXPECT_FALSE(CheckLinearizable({Get("k", "a", 0, 1), later}).linearizable);
  // Equal times count as concurrent.
  EXPECT_TRUE(
      CheckLinearizable({Get("k", "a", 0, 1), Put("k", "a", 1, KvOp::kNever)}).linearizable);
}

TEST(Linearizability, KeysAreCheckedIndependently) {
  CheckResult r = CheckLinearizable(
      {Put("x", "1", 1, 2), Get("x", "1", 3, 4), Put("y", "1", 1, 2), Get("y", "2", 3, 4)});
  EXPECT_FALSE(r.linearizable);
  EXPECT_EQ(r.key, "y");
}

TEST(Linearizability, ManyConcurrentWritersStayTractable) {
  // 12 overlapping writes and reads: memoization keeps the search small.
  std::vector<KvOp> h;
  for (int i = 0; i < 12; i++) h.push_back(Put("k", "v" + std::to_string(i), i, 100 + i));
  h.push_back(Get("k", "v7", 200, 201));
  h.push_back(Get("k", "v7", 202, 203));
  CheckResult r = CheckLinearizable(h, 1'000'000);
  EXPECT_TRUE(r.linearizable);
  EXPECT_FALSE(r.gave_up);
}

}  // namespace
}  // namespace natcd::raft::sim
