// Leases: grant, revoke, keepalive, time-to-live, list, expiry on the
// injected clock, batched expiry, checkpoints, and survival of a restart.
// Reference: etcd lessor.go, v3rpc/lease.go, rpctypes/error.go.
#include <algorithm>
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
  EXPECT_EQ(engine_->revision(), kEmptyStoreRevision);
}

TEST_F(LeaseTest, RevokeDeletesAttachedKeysAtOneRevision) {
  int64_t lease = Grant(10);
  Put("s/a", "1", lease);  // 2
  Put("s/b", "2", lease);  // 3
  Put("other", "3");       // 4
  Result<LeaseRevokeResponse> r = engine_->LeaseRevoke({lease});
  ASSERT_TRUE(r.ok());
  ASSERT_OK(engine_->Commit());
  EXPECT_EQ(r->header.revision, 5);
  EXPECT_EQ(Get("s/a").version, 0);
  EXPECT_EQ(Get("s/b").version, 0);
  EXPECT_EQ(Get("other").value, "3");
  EXPECT_EQ(engine_->lease_count(), 0u);
  Result<LeaseRevokeResponse> again = engine_->LeaseRevoke({lease});
  ASSERT_FALSE(again.ok());
  EXPECT_TRUE(again.status().IsLeaseNotFound());

  // The revoke's deletes are events at revision 5.
  std::vector<Event> events;
  ASSERT_OK(engine_->ReadEvents("s/", PrefixRangeEnd("s/"), 5, 5, 100, true, &events));
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].type, Event::Type::kDelete);
  EXPECT_EQ(events[0].kv.mod_revision, 5);
  EXPECT_EQ(events[0].prev_kv.lease, lease);
}

TEST_F(LeaseTest, RevokeWithoutKeysKeepsTheRevision) {
  int64_t lease = Grant(10);
  ASSERT_TRUE(engine_->LeaseRevoke({lease}).ok());
  EXPECT_EQ(engine_->revision(), kEmptyStoreRevision);
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
  // The abandoned lease's stale TTL is found by the full scan; the kept
  // one, renewed 45 s past its replicated deadline, is due either way.
  std::optional<LeaseCheckpointRequest> cps = engine_->LeaseCheckpoints(true);
  ASSERT_TRUE(cps.has_value());
  ASSERT_EQ(cps->checkpoints.size(), 2u);
  EXPECT_EQ(cps->checkpoints[0].id, std::min(abandoned, kept));
  EXPECT_EQ(cps->checkpoints[1].id, std::max(abandoned, kept));
  for (const auto& cp : cps->checkpoints) {
    EXPECT_EQ(cp.remaining_ms, cp.id == abandoned ? 15'000 : 60'000);
  }
  ASSERT_TRUE(engine_->Apply(*cps).ok());
  ASSERT_OK(engine_->Commit());
  EXPECT_FALSE(engine_->LeaseCheckpoints(true).has_value());  // nothing stale now

  Reopen();  // promotes with extend 0
  EXPECT_EQ(engine_->LeaseTimeToLive({abandoned, false}).ttl, 15);
  EXPECT_EQ(engine_->LeaseTimeToLive({kept, false}).ttl, 60);
  clock_.AdvanceMs(15'000);
  std::optional<LeaseExpireRequest> due = engine_->ExpiredLeases();
  ASSERT_TRUE(due.has_value());
  EXPECT_EQ(due->ids, std::vector<int64_t>{abandoned});
}

TEST_F(LeaseTest, RenewalFarAheadOfTheReplicatedDeadlineIsCheckpointed) {
  int64_t lease = Grant(60);
  clock_.AdvanceMs(20'000);
  EXPECT_EQ(engine_->LeaseKeepAlive({lease}).ttl, 60);  // 20 s ahead: not yet
  EXPECT_FALSE(engine_->LeaseCheckpoints(false).has_value());
  clock_.AdvanceMs(20'000);
  EXPECT_EQ(engine_->LeaseKeepAlive({lease}).ttl, 60);  // 40 s ahead
  std::optional<LeaseCheckpointRequest> cp = engine_->LeaseCheckpoints(false);
  ASSERT_TRUE(cp.has_value());
  ASSERT_EQ(cp->checkpoints.size(), 1u);
  EXPECT_EQ(cp->checkpoints[0].remaining_ms, 60'000);
  EXPECT_FALSE(engine_->LeaseCheckpoints(false).has_value()) << "offered once per renewal";
  ASSERT_TRUE(engine_->Apply(*cp).ok());
  ASSERT_OK(engine_->Commit());
  clock_.AdvanceMs(10'000);
  Reopen();
  EXPECT_EQ(engine_->LeaseTimeToLive({lease, false}).ttl, 60);
}

// A renewal a new leader would not honour (more than half a TTL past the
// replicated deadline) is answered only once its checkpoint is applied
// (server/held_renewals.h); one within half a TTL at once.
TEST_F(LeaseTest, ARenewalFarAheadIsRecordedOnceItsCheckpointIsApplied) {
  int64_t lease = Grant(60);
  clock_.AdvanceMs(20'000);
  ASSERT_EQ(engine_->LeaseKeepAlive({lease}).ttl, 60);
  EXPECT_TRUE(engine_->LeaseRenewalRecorded(lease, clock_.MonotonicMs())) << "20 s ahead";
  EXPECT_FALSE(engine_->LeaseCheckpoints(false).has_value());
  clock_.AdvanceMs(20'000);
  const int64_t renewed_at = clock_.MonotonicMs();
  ASSERT_EQ(engine_->LeaseKeepAlive({lease}).ttl, 60);
  EXPECT_FALSE(engine_->LeaseRenewalRecorded(lease, renewed_at)) << "40 s ahead";
  std::optional<LeaseCheckpointRequest> cp = engine_->LeaseCheckpoints(false);
  ASSERT_TRUE(cp.has_value());
  // Applied 5 s later: counted from the offer, where every member counts it
  // from at the earliest.
  clock_.AdvanceMs(5'000);
  EXPECT_FALSE(engine_->LeaseRenewalRecorded(lease, renewed_at)) << "in flight";
  ASSERT_TRUE(engine_->Apply(*cp).ok());
  EXPECT_TRUE(engine_->LeaseRenewalRecorded(lease, renewed_at));
  EXPECT_TRUE(engine_->LeaseRenewalRecorded(lease, renewed_at + 30'000));
  EXPECT_FALSE(engine_->LeaseRenewalRecorded(lease, renewed_at + 30'001));
  EXPECT_TRUE(engine_->LeaseRenewalRecorded(777, 0)) << "gone: nothing to wait for";
}

// One checkpoint per lease in flight: renewals meanwhile wait for it (and
// one it does not cover gets the next); a dropped one is offered again.
TEST_F(LeaseTest, OneCheckpointPerLeaseIsInFlight) {
  int64_t lease = Grant(10);
  clock_.AdvanceMs(6'000);
  const int64_t first = clock_.MonotonicMs();
  ASSERT_EQ(engine_->LeaseKeepAlive({lease}).ttl, 10);
  std::optional<LeaseCheckpointRequest> cp = engine_->LeaseCheckpoints(false);
  ASSERT_TRUE(cp.has_value());
  engine_->LeaseCheckpointsDropped(*cp);
  EXPECT_FALSE(engine_->LeaseRenewalRecorded(lease, first));
  cp = engine_->LeaseCheckpoints(false);
  ASSERT_TRUE(cp.has_value()) << "dropped: offered again";
  EXPECT_EQ(cp->checkpoints[0].remaining_ms, 10'000);
  clock_.AdvanceMs(6'000);
  const int64_t second = clock_.MonotonicMs();
  ASSERT_EQ(engine_->LeaseKeepAlive({lease}).ttl, 10);
  EXPECT_FALSE(engine_->LeaseCheckpoints(false).has_value()) << "one in flight";
  ASSERT_TRUE(engine_->Apply(*cp).ok());
  EXPECT_TRUE(engine_->LeaseRenewalRecorded(lease, first));
  EXPECT_FALSE(engine_->LeaseRenewalRecorded(lease, second)) << "6 s past what it recorded";
  std::optional<LeaseCheckpointRequest> next = engine_->LeaseCheckpoints(false);
  ASSERT_TRUE(next.has_value()) << "the renewal made meanwhile";
  EXPECT_EQ(next->checkpoints[0].remaining_ms, 10'000);
  ASSERT_TRUE(engine_->Apply(*next).ok());
  EXPECT_TRUE(engine_->LeaseRenewalRecorded(lease, second));
}

// After a promotion every lease's first renewal needs its checkpoint: this
// member's replicated deadline may be later than the others'.
TEST_F(LeaseTest, TheFirstRenewalAfterAPromotionIsRecordedByItsCheckpoint) {
  int64_t lease = Grant(10);
  engine_->DemoteLeases();
  engine_->PromoteLeases(0);
  ASSERT_EQ(engine_->LeaseKeepAlive({lease}).ttl, 10);
  EXPECT_FALSE(engine_->LeaseRenewalRecorded(lease, clock_.MonotonicMs()));
  std::optional<LeaseCheckpointRequest> cp = engine_->LeaseCheckpoints(false);
  ASSERT_TRUE(cp.has_value());
  ASSERT_TRUE(engine_->Apply(*cp).ok());
  EXPECT_TRUE(engine_->LeaseRenewalRecorded(lease, clock_.MonotonicMs()));
  engine_->DemoteLeases();
  EXPECT_FALSE(engine_->LeaseRenewalRecorded(lease, clock_.MonotonicMs())) << "not the primary";
}

TEST_F(LeaseTest, PromoteExtendsEveryLease) {
  int64_t lease = Grant(10);
  engine_->DemoteLeases();
  EXPECT_FALSE(engine_->ExpiredLeases().has_value());
  clock_.AdvanceMs(60'000);  // no leader for a minute, then one more grace
  engine_->PromoteLeases(60'000 + 1'000);
  EXPECT_EQ(engine_->LeaseTimeToLive({lease, false}).ttl, 11);
  clock_.AdvanceMs(10'999);
  EXPECT_FALSE(engine_->ExpiredLeases().has_value());
  clock_.AdvanceMs(1);
  EXPECT_TRUE(engine_->ExpiredLeases().has_value());
}

// One engine stands for the cluster: Demote/Promote is a leader change, and
// what it applied (grants, checkpoints) is what every member applied.
// Each election gives every lease one more election timeout; a lease must
// not live on those graces when elections come faster than its TTL.
TEST_F(LeaseTest, RepeatedElectionsDoNotKeepAnAbandonedLeaseAlive) {
  constexpr int64_t kElectionMs = 1'000;
  int64_t lease = Grant(10);
  int64_t expired_at = -1;
  for (int64_t t = 0; t <= 30'000 && expired_at < 0; t += 100) {
    if (t % 900 == 0 && t / 900 <= 10) {  // ten elections, 0.9 s apart
      engine_->DemoteLeases();
      engine_->PromoteLeases(kElectionMs);
    }
    if (std::optional<LeaseCheckpointRequest> cp = engine_->LeaseCheckpoints(t % 5'000 == 0)) {
      ASSERT_TRUE(engine_->Apply(*cp).ok());
      ASSERT_OK(engine_->Commit());
    }
    if (std::optional<LeaseExpireRequest> due = engine_->ExpiredLeases()) {
      EXPECT_EQ(due->ids, std::vector<int64_t>{lease});
      expired_at = t;
    }
    clock_.AdvanceMs(100);
  }
  EXPECT_GE(expired_at, 10'000);
  EXPECT_LE(expired_at, 10'000 + kElectionMs) << "TTL + one election timeout";
}

TEST_F(LeaseTest, KeptLeaseSurvivesRepeatedElections) {
  constexpr int64_t kElectionMs = 500;
  int64_t kept = Grant(3);
  bool leading = true;
  bool renew_due = false;
  for (int64_t t = 100; t <= 20'000; t += 100) {
    clock_.AdvanceMs(100);
    // An election every 0.7 s; no leader for 200 ms each time.
    if (t % 700 == 0) {
      engine_->DemoteLeases();
      leading = false;
    } else if (!leading && t % 700 == 200) {
      engine_->PromoteLeases(kElectionMs);
      leading = true;
    }
    if (t % 1'000 == 0) renew_due = true;  // the holder renews every TTL/3
    if (!leading) continue;                // its keepalive waits for a leader
    if (renew_due) {
      ASSERT_EQ(engine_->LeaseKeepAlive({kept}).ttl, 3) << "at " << t << " ms";
      renew_due = false;
    }
    if (std::optional<LeaseCheckpointRequest> cp = engine_->LeaseCheckpoints(t % 5'000 == 0)) {
      ASSERT_TRUE(engine_->Apply(*cp).ok());
      ASSERT_OK(engine_->Commit());
    }
    ASSERT_FALSE(engine_->ExpiredLeases().has_value()) << "kept lease expired at " << t << " ms";
  }
}

}  // namespace
}  // namespace natcd::testing
