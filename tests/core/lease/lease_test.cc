// Leases: grant, revoke, keepalive, time-to-live, list, expiry on the
// injected clock, batched expiry, checkpoints, and survival of a restart.
// Reference: etcd lessor.go, v3rpc/lease.go, rpctypes/error.go.
#include <string>

#include "core/engine_fixture.h"
#include "natcd/key_range.h"

namespace natcd::testing {
namespace {

using LeaseTest = EngineTest;

TEST_F(LeaseTest, GrantChoosesIdAndAppliesMinimumTtl) {
  Result<LeaseGrantResponse> r = engine_->LeaseGrant({1, 0});
  ASSERT_TRUE(r.ok());
  EXPECT_GT(r->id, 0);
  EXPECT_EQ(r->ttl, 2);  // raised to the minimum
  Result<LeaseGrantResponse> chosen = engine_->LeaseGrant({30, 42});
  ASSERT_TRUE(chosen.ok());
  EXPECT_EQ(chosen->id, 42);
  EXPECT_EQ(chosen->ttl, 30);
  Result<LeaseGrantResponse> dup = engine_->LeaseGrant({30, 42});
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.status().name(), "ErrLeaseExist");
  Result<LeaseGrantResponse> huge = engine_->LeaseGrant({9'000'000'001, 43});
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.status().name(), "ErrLeaseTTLTooLarge");
  EXPECT_EQ(engine_->lease_count(), 2u);
}

TEST_F(LeaseTest, GrantDoesNotCreateARevision) {
  Grant(10);
  EXPECT_EQ(engine_->revision(), 0);
}

TEST_F(LeaseTest, RevokeDeletesAttachedKeysAtOneRevision) {
  int64_t lease = Grant(10);
  Put("s/a", "1", lease);  // 1
  Put("s/b", "2", lease);  // 2
  Put("other", "3");       // 3
  Result<LeaseRevokeResponse> r = engine_->LeaseRevoke({lease});
  ASSERT_TRUE(r.ok());
  ASSERT_OK(engine_->Commit());
  EXPECT_EQ(r->header.revision, 4);
  EXPECT_EQ(Get("s/a").version, 0);
  EXPECT_EQ(Get("s/b").version, 0);
  EXPECT_EQ(Get("other").value, "3");
  EXPECT_EQ(engine_->lease_count(), 0u);
  Result<LeaseRevokeResponse> again = engine_->LeaseRevoke({lease});
  ASSERT_FALSE(again.ok());
  EXPECT_TRUE(again.status().IsLeaseNotFound());

  // The revoke's deletes are events at revision 4.
  std::vector<Event> events;
  ASSERT_OK(engine_->ReadEvents("s/", PrefixRangeEnd("s/"), 4, 4, 100, true, &events));
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].type, Event::Type::kDelete);
  EXPECT_EQ(events[0].kv.mod_revision, 4);
  EXPECT_EQ(events[0].prev_kv.lease, lease);
}

TEST_F(LeaseTest, RevokeWithoutKeysKeepsTheRevision) {
  int64_t lease = Grant(10);
  ASSERT_TRUE(engine_->LeaseRevoke({lease}).ok());
  EXPECT_EQ(engine_->revision(), 0);
}

TEST_F(LeaseTest, ReattachingAKeyMovesIt) {
  int64_t l1 = Grant(10);
  int64_t l2 = Grant(10);
  Put("k", "v", l1);
  Put("k", "v", l2);
  ASSERT_TRUE(engine_->LeaseRevoke({l1}).ok());
  EXPECT_EQ(Get("k").value, "v");  // no longer attached to l1
  LeaseTimeToLiveResponse ttl = engine_->LeaseTimeToLive({l2, true});
  ASSERT_EQ(ttl.keys.size(), 1u);
  EXPECT_EQ(ttl.keys[0], "k");
  Put("k", "v");  // no lease now
  EXPECT_TRUE(engine_->LeaseTimeToLive({l2, true}).keys.empty());
}

TEST_F(LeaseTest, DeletedKeyIsDetached) {
  int64_t lease = Grant(10);
  Put("k", "v", lease);
  Delete("k");
  EXPECT_TRUE(engine_->LeaseTimeToLive({lease, true}).keys.empty());
  Put("k", "again");
  ASSERT_TRUE(engine_->LeaseRevoke({lease}).ok());
  EXPECT_EQ(Get("k").value, "again");
}

TEST_F(LeaseTest, KeepAliveAndTimeToLive) {
  int64_t lease = Grant(10);
  clock_.AdvanceMs(4'000);
  LeaseTimeToLiveResponse ttl = engine_->LeaseTimeToLive({lease, false});
  EXPECT_EQ(ttl.ttl, 6);
  EXPECT_EQ(ttl.granted_ttl, 10);
  LeaseKeepAliveResponse ka = engine_->LeaseKeepAlive({lease});
  EXPECT_EQ(ka.id, lease);
  EXPECT_EQ(ka.ttl, 10);
  EXPECT_EQ(engine_->LeaseTimeToLive({lease, false}).ttl, 10);
  // etcd: keepalive of an unknown lease answers TTL 0; time-to-live answers -1.
  EXPECT_EQ(engine_->LeaseKeepAlive({777}).ttl, 0);
  EXPECT_EQ(engine_->LeaseTimeToLive({777, false}).ttl, -1);
}

TEST_F(LeaseTest, LeasesListsIds) {
  Grant(10, 5);
  Grant(10, 3);
  Grant(10, 9);
  EXPECT_EQ(engine_->LeaseLeases().ids, (std::vector<int64_t>{3, 5, 9}));
}

TEST_F(LeaseTest, ExpiryFollowsTheClock) {
  int64_t lease = Grant(10);
  Put("k", "v", lease);
  clock_.AdvanceMs(9'999);
  EXPECT_FALSE(engine_->ExpiredLeases().has_value());
  clock_.AdvanceMs(1);
  std::optional<LeaseExpireRequest> due = engine_->ExpiredLeases();
  ASSERT_TRUE(due.has_value());
  EXPECT_EQ(due->ids, std::vector<int64_t>{lease});
  // Offered once; a keepalive cannot revive it while the revoke is pending.
  EXPECT_FALSE(engine_->ExpiredLeases().has_value());
  EXPECT_EQ(engine_->LeaseKeepAlive({lease}).ttl, 0);
  ASSERT_TRUE(engine_->Apply(*due).ok());
  ASSERT_OK(engine_->Commit());
  EXPECT_EQ(Get("k").version, 0);
  EXPECT_EQ(engine_->lease_count(), 0u);
}

TEST_F(LeaseTest, UnappliedExpiryIsOfferedAgain) {
  int64_t lease = Grant(10);
  clock_.AdvanceMs(10'000);
  ASSERT_TRUE(engine_->ExpiredLeases().has_value());
  clock_.AdvanceMs(3'000);  // lease_expire_retry_ms
  std::optional<LeaseExpireRequest> again = engine_->ExpiredLeases();
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->ids, std::vector<int64_t>{lease});
}

TEST_F(LeaseTest, KeepAliveDefersExpiry) {
  int64_t lease = Grant(10);
  for (int i = 0; i < 5; ++i) {
    clock_.AdvanceMs(6'000);
    EXPECT_EQ(engine_->LeaseKeepAlive({lease}).ttl, 10);
    EXPECT_FALSE(engine_->ExpiredLeases().has_value());
  }
}

TEST_F(LeaseTest, BatchedExpiryIsOneEntryWithOneRevisionPerLease) {
  constexpr int kLeases = 2'000;
  std::vector<int64_t> ids;
  for (int i = 0; i < kLeases; ++i) {
    int64_t id = Grant(5);
    ids.push_back(id);
    Put("svc/" + std::to_string(i), "x", id);
  }
  int64_t before = engine_->revision();
  clock_.AdvanceMs(5'000);
  std::optional<LeaseExpireRequest> due = engine_->ExpiredLeases();
  ASSERT_TRUE(due.has_value());
  EXPECT_EQ(due->ids.size(), static_cast<size_t>(kLeases));
  Result<WriteResponse> r = engine_->Apply(*due);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(std::get<LeaseExpireResponse>(r.value()).revoked, kLeases);
  ASSERT_OK(engine_->Commit());
  EXPECT_EQ(engine_->revision(), before + kLeases);
  EXPECT_EQ(engine_->key_count(), static_cast<size_t>(kLeases));  // tombstones until compaction
  RangeRequest all;
  all.key = "svc/";
  all.range_end = PrefixRangeEnd("svc/");
  all.count_only = true;
  EXPECT_EQ(engine_->Range(all)->count, 0);
}

TEST_F(LeaseTest, LeasesAndKeysSurviveRestart) {
  int64_t lease = Grant(60);
  Put("a", "1", lease);
  Put("b", "2", lease);
  Reopen();
  EXPECT_EQ(engine_->lease_count(), 1u);
  LeaseTimeToLiveResponse ttl = engine_->LeaseTimeToLive({lease, true});
  EXPECT_EQ(ttl.granted_ttl, 60);
  EXPECT_EQ(ttl.keys, (std::vector<std::string>{"a", "b"}));
  ASSERT_TRUE(engine_->LeaseRevoke({lease}).ok());
  ASSERT_OK(engine_->Commit());
  EXPECT_EQ(Get("a").version, 0);
}

TEST_F(LeaseTest, CheckpointedRemainingTtlSurvivesRestart) {
  int64_t abandoned = Grant(60);
  int64_t kept = Grant(60);
  clock_.AdvanceMs(45'000);  // abandoned: 15 s left
  EXPECT_EQ(engine_->LeaseKeepAlive({kept}).ttl, 60);
  std::optional<LeaseCheckpointRequest> cps = engine_->LeaseCheckpoints();
  ASSERT_TRUE(cps.has_value());
  ASSERT_EQ(cps->checkpoints.size(), 1u);  // the kept lease needs none
  EXPECT_EQ(cps->checkpoints[0].id, abandoned);
  EXPECT_EQ(cps->checkpoints[0].remaining_ms, 15'000);
  ASSERT_TRUE(engine_->Apply(*cps).ok());
  ASSERT_OK(engine_->Commit());
  EXPECT_FALSE(engine_->LeaseCheckpoints().has_value());  // nothing stale now

  Reopen();  // promotes with extend 0
  EXPECT_EQ(engine_->LeaseTimeToLive({abandoned, false}).ttl, 15);
  EXPECT_EQ(engine_->LeaseTimeToLive({kept, false}).ttl, 60);
  clock_.AdvanceMs(15'000);
  std::optional<LeaseExpireRequest> due = engine_->ExpiredLeases();
  ASSERT_TRUE(due.has_value());
  EXPECT_EQ(due->ids, std::vector<int64_t>{abandoned});
}

TEST_F(LeaseTest, RenewedLeaseClearsItsCheckpoint) {
  int64_t lease = Grant(60);
  clock_.AdvanceMs(40'000);
  ASSERT_TRUE(engine_->Apply(*engine_->LeaseCheckpoints()).ok());
  ASSERT_OK(engine_->Commit());
  EXPECT_EQ(engine_->LeaseKeepAlive({lease}).ttl, 60);
  std::optional<LeaseCheckpointRequest> clear = engine_->LeaseCheckpoints();
  ASSERT_TRUE(clear.has_value());
  EXPECT_EQ(clear->checkpoints[0].remaining_ms, 0);
  ASSERT_TRUE(engine_->Apply(*clear).ok());
  ASSERT_OK(engine_->Commit());
  Reopen();
  EXPECT_EQ(engine_->LeaseTimeToLive({lease, false}).ttl, 60);
}

TEST_F(LeaseTest, PromoteExtendsEveryLease) {
  int64_t lease = Grant(10);
  engine_->DemoteLeases();
  EXPECT_FALSE(engine_->ExpiredLeases().has_value());
  clock_.AdvanceMs(60'000);
  engine_->PromoteLeases(1'000);
  EXPECT_EQ(engine_->LeaseTimeToLive({lease, false}).ttl, 11);
  clock_.AdvanceMs(10'999);
  EXPECT_FALSE(engine_->ExpiredLeases().has_value());
  clock_.AdvanceMs(1);
  EXPECT_TRUE(engine_->ExpiredLeases().has_value());
}

}  // namespace
}  // namespace natcd::testing
