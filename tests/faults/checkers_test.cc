// The fault harness's checkers on hand-made histories: each finds the
// anomaly it exists for, and passes the same history without it.
#include "faults/checkers.h"

#include <gtest/gtest.h>

namespace natcd::testing {
namespace {

KvRecord Put(int client, const std::string& key, const std::string& value, int64_t call,
             int64_t ret, Outcome outcome, int64_t revision = 0) {
  KvRecord r;
  r.kind = KvRecord::Kind::kPut;
  r.client = client;
  r.key = key;
  r.value = value;
  r.call_us = call;
  r.ret_us = ret;
  r.outcome = outcome;
  r.revision = revision;
  return r;
}

KvRecord Get(int client, const std::string& key, const std::string& output, int64_t call,
             int64_t ret, int64_t mod_revision = 0) {
  KvRecord r;
  r.kind = KvRecord::Kind::kGet;
  r.client = client;
  r.key = key;
  r.output = output;
  r.call_us = call;
  r.ret_us = ret;
  r.outcome = Outcome::kOk;
  r.mod_revision = mod_revision;
  return r;
}

WatchEvent Event(int64_t revision, const std::string& key, const std::string& value) {
  WatchEvent e;
  e.revision = revision;
  e.key = key;
  e.value = value;
  e.last_in_revision = true;
  return e;
}

const std::string kKey = "/f/e00000/k0";

TEST(FaultCheckers, StaleReadIsNotLinearizable) {
  std::vector<KvRecord> history = {Put(0, kKey, "a", 0, 10, Outcome::kOk, 2),
                                   Put(0, kKey, "b", 20, 30, Outcome::kOk, 3),
                                   Get(1, kKey, "a", 40, 50, 2)};
  CheckReport report;
  CheckLinearizable(history, &report);
  EXPECT_FALSE(report.ok());
  history[2].output = "b";
  CheckReport fine;
  CheckLinearizable(history, &fine);
  EXPECT_TRUE(fine.ok()) << fine.ToString();
}

TEST(FaultCheckers, UnknownWriteMayTakeEffectLaterOrNever) {
  // The unknown put of "b" shows up after a later read saw "a": allowed.
  std::vector<KvRecord> history = {Put(0, kKey, "a", 0, 10, Outcome::kOk, 2),
                                   Put(1, kKey, "b", 5, 100, Outcome::kUnknown),
                                   Get(2, kKey, "a", 200, 210, 2), Get(2, kKey, "b", 300, 310, 3)};
  CheckReport report;
  CheckLinearizable(history, &report);
  EXPECT_TRUE(report.ok()) << report.ToString();
  // But it cannot be undone once seen.
  history.push_back(Get(2, kKey, "a", 400, 410, 2));
  CheckReport back;
  CheckLinearizable(history, &back);
  EXPECT_FALSE(back.ok());
}

CommittedHistory Committed(std::vector<WatchEvent> events) {
  CommittedHistory c;
  c.events = std::move(events);
  c.end_revision = c.events.empty() ? 1 : c.events.back().revision;
  for (const WatchEvent& e : c.events) c.final_state[e.key] = {e.value, e.revision};
  return c;
}

TEST(FaultCheckers, AcknowledgedWriteMissingFromTheHistoryIsLost) {
  std::vector<KvRecord> history = {Put(0, kKey, "a", 0, 10, Outcome::kOk, 2),
                                   Put(0, kKey, "b", 20, 30, Outcome::kOk, 3)};
  CheckReport report;
  CheckCommitted(history, Committed({Event(2, kKey, "a")}), &report);
  EXPECT_FALSE(report.ok());
  CheckReport fine;
  CheckCommitted(history, Committed({Event(2, kKey, "a"), Event(3, kKey, "b")}), &fine);
  EXPECT_TRUE(fine.ok()) << fine.ToString();
}

TEST(FaultCheckers, WriteAppliedTwiceOrFailedWriteApplied) {
  std::vector<KvRecord> history = {Put(0, kKey, "a", 0, 10, Outcome::kUnknown),
                                   Put(0, kKey, "b", 20, 30, Outcome::kFailed)};
  CheckReport twice;
  CheckCommitted(history, Committed({Event(2, kKey, "a"), Event(3, kKey, "a")}), &twice);
  EXPECT_FALSE(twice.ok());
  CheckReport failed;
  CheckCommitted(history, Committed({Event(2, kKey, "b")}), &failed);
  EXPECT_FALSE(failed.ok());
  CheckReport fine;
  CheckCommitted(history, Committed({Event(2, kKey, "a")}), &fine);
  EXPECT_TRUE(fine.ok()) << fine.ToString();
}

TEST(FaultCheckers, WatchThatMissesDuplicatesOrReordersEvents) {
  CommittedHistory c = Committed({Event(2, kKey, "a"), Event(3, kKey, "b"), Event(4, kKey, "c")});
  CheckReport missed, dup, reordered, short_of_end, fine;
  CheckWatch("w", {Event(2, kKey, "a"), Event(4, kKey, "c")}, c, &missed);
  CheckWatch("w",
             {Event(2, kKey, "a"), Event(3, kKey, "b"), Event(3, kKey, "b"), Event(4, kKey, "c")},
             c, &dup);
  CheckWatch("w", {Event(3, kKey, "b"), Event(2, kKey, "a"), Event(4, kKey, "c")}, c, &reordered);
  CheckWatch("w", {Event(2, kKey, "a"), Event(3, kKey, "b")}, c, &short_of_end);
  CheckWatch("w", c.events, c, &fine);
  EXPECT_FALSE(missed.ok());
  EXPECT_FALSE(dup.ok());
  EXPECT_FALSE(reordered.ok());
  EXPECT_FALSE(short_of_end.ok());
  EXPECT_TRUE(fine.ok()) << fine.ToString();
}

LeaseRecord Read(int64_t call, int64_t ret, bool present) {
  return LeaseRecord{LeaseRecord::Kind::kRead, call, ret, true, present};
}
LeaseRecord Renewal(int64_t call, int64_t ret, bool present) {
  return LeaseRecord{LeaseRecord::Kind::kKeepAlive, call, ret, true, present};
}

TEST(FaultCheckers, AbandonedLeaseExpiresNeitherEarlyNorLate) {
  LeaseHistory lease;
  lease.id = 1;
  lease.key = "/l/a";
  lease.granted_ttl_s = 2;
  lease.grant_call_us = 0;
  lease.grant_ret_us = 100'000;
  lease.records = {Read(1'000'000, 1'100'000, false)};
  CheckReport early;
  CheckLeases({lease}, 10'000'000, 1'000'000, &early);
  EXPECT_FALSE(early.ok());
  lease.records = {Read(1'000'000, 1'100'000, true), Read(4'000'000, 4'100'000, true)};
  CheckReport late;
  CheckLeases({lease}, 10'000'000, 1'000'000, &late);
  EXPECT_FALSE(late.ok());
  lease.records = {Read(1'000'000, 1'100'000, true), Read(2'500'000, 2'600'000, false)};
  CheckReport fine;
  CheckLeases({lease}, 10'000'000, 1'000'000, &fine);
  EXPECT_TRUE(fine.ok()) << fine.ToString();
}

TEST(FaultCheckers, KeptLeaseKeyGoneWithinATtlOfARenewal) {
  LeaseHistory lease;
  lease.id = 1;
  lease.key = "/l/kept";
  lease.granted_ttl_s = 5;
  lease.kept_alive = true;
  lease.records = {Renewal(1'000'000, 1'100'000, true), Read(3'000'000, 3'100'000, false)};
  CheckReport early;
  CheckLeases({lease}, 10'000'000, 1'000'000, &early);
  EXPECT_FALSE(early.ok());
  // Gone more than a TTL after the last renewal that found it: lost, not a bug.
  lease.records = {Renewal(1'000'000, 1'100'000, true), Read(7'000'000, 7'100'000, false)};
  CheckReport lost;
  CheckLeases({lease}, 10'000'000, 1'000'000, &lost);
  EXPECT_TRUE(lost.ok()) << lost.ToString();
}

TEST(FaultCheckers, AvailabilityCountsWritesFromTheSettleTime) {
  std::vector<KvRecord> history = {Put(0, kKey, "a", 1'000'000, 1'100'000, Outcome::kOk),
                                   Put(0, kKey, "b", 3'000'000, 4'000'000, Outcome::kUnknown),
                                   Put(0, kKey, "c", 4'000'000, 4'100'000, Outcome::kOk),
                                   Get(0, kKey, "c", 4'200'000, 4'300'000)};
  FaultRecord fault{"pause-leader", "m1", 0, 5'000'000};
  Availability a = MeasureAvailability(history, fault, 2'000'000);
  EXPECT_EQ(a.writes, 2);
  EXPECT_EQ(a.writes_ok, 1);
  EXPECT_EQ(a.writes_unknown, 1);
  EXPECT_EQ(a.longest_gap_us, 10'000'000 - 4'100'000);  // to the end + 5 s
  EXPECT_EQ(a.reads, 1);
  EXPECT_EQ(a.reads_ok, 1);
  EXPECT_EQ(a.max_read_us, 100'000);
}

LockHold Hold(int client, int64_t fence, int64_t call, int64_t acquired, int64_t released) {
  LockHold h;
  h.client = client;
  h.fencing_revision = fence;
  h.acquire_call_us = call;
  h.acquired_us = acquired;
  h.released_us = released;
  return h;
}

TEST(FaultCheckers, LockHoldersOneAfterAnotherPass) {
  // Client 1 waits while client 0 holds; client 2 asks after both.
  std::vector<LockHold> holds = {Hold(0, 10, 0, 100, 1000), Hold(1, 12, 50, 1100, 2000),
                                 Hold(2, 15, 2500, 2600, 3000)};
  CheckReport report;
  CheckLocks(holds, 0, &report);
  EXPECT_TRUE(report.ok()) << report.ToString();
}

TEST(FaultCheckers, OverlappingLockHoldersFail) {
  std::vector<LockHold> holds = {Hold(0, 10, 0, 100, 1000), Hold(1, 12, 50, 600, 2000)};
  CheckReport report;
  CheckLocks(holds, 100, &report);
  ASSERT_FALSE(report.ok());
  EXPECT_NE(report.anomalies[0].find("two lock holders at once for 0 ms"), std::string::npos)
      << report.ToString();  // 400 us, printed in ms
  // Within the slack (a lease that ended before its holder noticed): fine.
  CheckReport within;
  CheckLocks(holds, 500, &within);
  EXPECT_TRUE(within.ok()) << within.ToString();
}

TEST(FaultCheckers, LockFencingRevisionsMustGrowWithEachHolder) {
  // Client 1 held and let go before client 0 asked, yet its key is newer.
  std::vector<LockHold> holds = {Hold(0, 10, 2000, 2100, 3000), Hold(1, 12, 0, 100, 1000)};
  CheckReport report;
  CheckLocks(holds, 0, &report);
  ASSERT_FALSE(report.ok());
  EXPECT_NE(report.anomalies[0].find("out of order"), std::string::npos) << report.ToString();
  // Two holders with one fencing revision.
  CheckReport same;
  CheckLocks({Hold(0, 10, 0, 100, 1000), Hold(1, 10, 1500, 1600, 2000)}, 0, &same);
  EXPECT_FALSE(same.ok());
}

}  // namespace
}  // namespace natcd::testing
