// WatchHub scenarios. Reference: etcd API guarantees for watch (Ordered,
// Unique, Reliable, Atomic, Resumable, Bookmarkable) and
// server/storage/mvcc/watchable_store.go (synced/unsynced groups).
#include "natcd/watch_hub.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "mem_event_source.h"

namespace natcd {
namespace {

using watch_testing::Expected;
using watch_testing::ExpectSameEvents;
using watch_testing::Harness;
using Op = watch_testing::MemEventSource::Op;

constexpr const char* kCompacted = "etcdserver: mvcc: required revision has been compacted";

WatchOptions Opts(std::string key, std::string range_end = "", int64_t start = 0) {
  WatchOptions o;
  o.key = std::move(key);
  o.range_end = std::move(range_end);
  o.start_revision = start;
  return o;
}

std::vector<std::string> KeysOf(const std::vector<Event>& events) {
  std::vector<std::string> keys;
  for (const Event& e : events) keys.push_back(e.kv.key);
  return keys;
}

// Writes a fixed mix of keys, one commit each.
void WriteMix(Harness& h) {
  h.Put("a", "1");
  h.Put("ab", "2");
  h.Put("b", "3");
  h.Put("b/x", "4");
  h.Put("c", "5");
  h.Put("a", "6");
  h.Delete("b");
  h.Put("zz", "7");
}

// ---- Ranges -------------------------------------------------------------------

TEST(WatchHubTest, SingleKey) {
  Harness h;
  WatchId id = h.MustCreate(Opts("a"));
  EXPECT_EQ(h.hub->unsynced_size(), 0u);
  WriteMix(h);
  h.hub->TEST_CheckInvariants();
  std::vector<Event> got = Harness::EventsOf(h.PollAll(id));
  EXPECT_EQ(KeysOf(got), (std::vector<std::string>{"a", "a"}));
  ExpectSameEvents(Expected(h.source, Opts("a"), 1), got, false);
  EXPECT_EQ(got[1].kv.version, 2);
}

TEST(WatchHubTest, Range) {
  Harness h;
  WatchId id = h.MustCreate(Opts("a", "c"));
  WriteMix(h);
  std::vector<Event> got = Harness::EventsOf(h.PollAll(id));
  EXPECT_EQ(KeysOf(got), (std::vector<std::string>{"a", "ab", "b", "b/x", "a", "b"}));
  EXPECT_EQ(got.back().type, Event::Type::kDelete);
  ExpectSameEvents(Expected(h.source, Opts("a", "c"), 1), got, false);
}

TEST(WatchHubTest, Prefix) {
  Harness h;
  WatchId id = h.MustCreate(Opts("b/", "b0"));
  WriteMix(h);
  h.Put("b/y/z", "8");
  h.Put("b0", "9");
  h.Put("b.", "10");
  EXPECT_EQ(KeysOf(Harness::EventsOf(h.PollAll(id))), (std::vector<std::string>{"b/x", "b/y/z"}));
}

TEST(WatchHubTest, FromKey) {
  Harness h;
  WatchId id = h.MustCreate(Opts("b", std::string(1, '\0')));
  WatchId all = h.MustCreate(Opts(std::string(1, '\0'), std::string(1, '\0')));
  WriteMix(h);
  EXPECT_EQ(KeysOf(Harness::EventsOf(h.PollAll(id))),
            (std::vector<std::string>{"b", "b/x", "c", "b", "zz"}));
  EXPECT_EQ(Harness::EventsOf(h.PollAll(all)).size(), h.source.all_events().size());
}

TEST(WatchHubTest, OverlappingRangesAndKeys) {
  Harness h;
  WatchId k = h.MustCreate(Opts("b/x"));
  WatchId k2 = h.MustCreate(Opts("b/x"));  // same group
  WatchId r1 = h.MustCreate(Opts("a", "bz"));
  WatchId r2 = h.MustCreate(Opts("b", "c"));
  WatchId r3 = h.MustCreate(Opts("b/", "b0"));
  WatchId r4 = h.MustCreate(Opts("0", "1"));  // nothing
  WatchId f = h.MustCreate(Opts("b/", std::string(1, '\0')));
  WriteMix(h);
  h.hub->TEST_CheckInvariants();
  for (WatchId id : {k, k2}) {
    EXPECT_EQ(KeysOf(Harness::EventsOf(h.PollAll(id))), (std::vector<std::string>{"b/x"}));
  }
  EXPECT_EQ(KeysOf(Harness::EventsOf(h.PollAll(r1))),
            (std::vector<std::string>{"a", "ab", "b", "b/x", "a", "b"}));
  EXPECT_EQ(KeysOf(Harness::EventsOf(h.PollAll(r2))), (std::vector<std::string>{"b", "b/x", "b"}));
  EXPECT_EQ(KeysOf(Harness::EventsOf(h.PollAll(r3))), (std::vector<std::string>{"b/x"}));
  EXPECT_TRUE(h.PollAll(r4).empty());
  EXPECT_EQ(KeysOf(Harness::EventsOf(h.PollAll(f))), (std::vector<std::string>{"b/x", "c", "zz"}));
}

// ---- Start revisions ----------------------------------------------------------

TEST(WatchHubTest, StartAtZeroIsNow) {
  Harness h;
  WriteMix(h);
  WatchId id = h.MustCreate(Opts("a", "zzz"));
  EXPECT_EQ(h.hub->unsynced_size(), 0u);
  EXPECT_TRUE(h.PollAll(id).empty());
  h.Put("a", "new");
  std::vector<WatchMessage> got = h.PollAll(id);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].events[0]->kv.value, "new");
  EXPECT_EQ(got[0].revision, h.source.CurrentRevision());
}

TEST(WatchHubTest, StartInsideRingNeedsNoSourceRead) {
  Harness h;
  WriteMix(h);
  WatchOptions o = Opts("a", "c", 2);
  o.prev_kv = true;
  WatchId id = h.MustCreate(o);
  EXPECT_EQ(h.hub->unsynced_size(), 1u);
  EXPECT_TRUE(h.PollAll(id).empty());  // nothing before a catch-up step
  EXPECT_FALSE(h.hub->SyncUnsynced(10));
  EXPECT_EQ(h.hub->unsynced_size(), 0u);
  h.Put("b/y", "after");
  ExpectSameEvents(Expected(h.source, o, 2), Harness::EventsOf(h.PollAll(id)), true);
  EXPECT_EQ(h.source.reads(), 0);
}

TEST(WatchHubTest, StartBelowRingReadsSource) {
  WatchHubOptions options;
  options.history_events_max = 3;
  options.catchup_events_max = 2;
  Harness h(options, /*preload_revisions=*/10);  // history from before the hub
  WriteMix(h);
  for (bool prev_kv : {false, true}) {
    SCOPED_TRACE(prev_kv);
    WatchOptions o = Opts(std::string(1, '\0'), std::string(1, '\0'), 1);
    o.prev_kv = prev_kv;
    WatchId id = h.MustCreate(o);
    std::vector<WatchMessage> messages;
    int steps = 0;
    while (h.hub->SyncUnsynced(1)) {
      ++steps;
      for (WatchMessage& m : h.PollAll(id)) messages.push_back(std::move(m));
    }
    for (WatchMessage& m : h.PollAll(id)) messages.push_back(std::move(m));
    EXPECT_GE(steps, 5);  // 18 events, 2 per step
    for (const WatchMessage& m : messages) EXPECT_EQ(m.prev_kv, prev_kv);
    std::vector<Event> got = Harness::EventsOf(messages);
    ExpectSameEvents(Expected(h.source, o, 1), got, prev_kv);
    // The source is asked for prev_kv only when the watcher wants it (ring
    // events, shared with every watcher, always carry it).
    const int64_t ring_start = h.source.CurrentRevision() - 2;
    bool any_prev_from_source = false;
    for (const Event& e : got) {
      if (e.kv.mod_revision < ring_start) any_prev_from_source |= e.has_prev_kv;
    }
    EXPECT_EQ(any_prev_from_source, prev_kv);
  }
  EXPECT_GT(h.source.reads(), 0);
}

// Large values fill the ring's byte bound long before its event bound: the
// ring keeps only the newest revisions that fit, and a watcher from below
// them still gets every event, read from the source.
TEST(WatchHubTest, RingBoundedByBytes) {
  WatchHubOptions options;
  options.history_events_max = 1'000;
  // Each overwrite: key and value, now and before (1 + 1,001 bytes each).
  options.history_bytes_max = 3 * (sizeof(Event) + 2 * 1'002);
  Harness h(options);
  const std::string big(1'000, 'v');
  for (int i = 0; i < 10; ++i) h.Put("k", big + std::to_string(i));
  h.hub->TEST_CheckInvariants();
  // The last three revisions (8, 9, 10) come from the ring...
  WatchId recent = h.MustCreate(Opts("k", "", 8));
  h.SyncAll();
  ExpectSameEvents(Expected(h.source, Opts("k"), 8), Harness::EventsOf(h.PollAll(recent)), false);
  EXPECT_EQ(h.source.reads(), 0);
  // ...anything older from the source, exactly.
  WatchOptions o = Opts("k", "", 1);
  o.prev_kv = true;
  WatchId old = h.MustCreate(o);
  h.SyncAll();
  ExpectSameEvents(Expected(h.source, o, 1), Harness::EventsOf(h.PollAll(old)), true);
  EXPECT_GT(h.source.reads(), 0);
  // One revision larger than the whole bound is not kept at all.
  h.Put("k", std::string(options.history_bytes_max, 'x'));
  h.hub->TEST_CheckInvariants();
  const int reads = h.source.reads();
  WatchId last = h.MustCreate(Opts("k", "", h.source.CurrentRevision()));
  h.SyncAll();
  EXPECT_EQ(Harness::EventsOf(h.PollAll(last)).size(), 1u);
  EXPECT_GT(h.source.reads(), reads);
}

// Writes land between every catch-up step, from the source and then from the
// ring, and keep landing after the watcher joins the synced group.
TEST(WatchHubTest, CatchUpRacingNotify) {
  for (size_t ring : {size_t{0}, size_t{4}, size_t{1000}}) {
    SCOPED_TRACE("ring " + std::to_string(ring));
    WatchHubOptions options;
    options.history_events_max = ring;
    options.catchup_events_max = 2;
    Harness h(options);
    for (int i = 0; i < 30; ++i) h.Put("k" + std::to_string(i % 4), std::to_string(i));
    WatchOptions o = Opts("k", "l", 3);
    o.prev_kv = true;
    WatchId id = h.MustCreate(o);
    std::vector<Event> got;
    int steps = 0;
    for (int i = 0; i < 60; ++i) {
      h.Put("k" + std::to_string(i % 5), "w" + std::to_string(i), /*hold=*/i % 3 == 0);
      if (i % 4 == 0) h.Flush();
      steps += h.hub->SyncUnsynced(1) ? 1 : 0;
      for (const Event& e : Harness::EventsOf(h.PollAll(id, 1))) got.push_back(e);
      h.hub->TEST_CheckInvariants();
    }
    h.Flush();
    for (const Event& e : Harness::EventsOf(h.CatchUp(id))) got.push_back(e);
    EXPECT_GT(steps, 10);
    ExpectSameEvents(Expected(h.source, o, 3), got, true);
  }
}

TEST(WatchHubTest, BacklogOfCountsWhatPollWouldTake) {
  Harness h;
  WatchId id = h.MustCreate(Opts("a", "b"));
  EXPECT_EQ(h.hub->BacklogOf(id).events, 0u);
  h.Put("a1", "1");
  h.Put("a2", "2");
  h.Put("c", "not watched");
  EXPECT_EQ(h.hub->BacklogOf(id).events, 2u);
  EXPECT_FALSE(h.hub->BacklogOf(id).progress_first);
  EXPECT_EQ(Harness::EventsOf(h.PollAll(id)).size(), 2u);
  ASSERT_TRUE(h.hub->RequestProgress(id).ok());
  EXPECT_TRUE(h.hub->BacklogOf(id).progress_first);
  EXPECT_EQ(h.hub->BacklogOf(id).events, 0u);
  EXPECT_EQ(h.hub->BacklogOf(12345).events, 0u) << "unknown watcher";
}

// Drained: synced, nothing left for Poll, and at the last notified revision
// (what a consumer needs to hand a watcher's client over to another
// watcher's stream: watch groups).
TEST(WatchHubTest, DrainedMeansEveryEventUpToTheNotifiedRevisionWasTaken) {
  Harness h;
  h.Put("a1", "1");
  WatchId id = h.MustCreate(Opts("a", "b", 1));
  int64_t revision = -1;
  EXPECT_FALSE(h.hub->Drained(id, &revision)) << "unsynced";
  h.SyncAll();
  EXPECT_FALSE(h.hub->Drained(id, &revision)) << "its event is still queued";
  EXPECT_EQ(Harness::EventsOf(h.PollAll(id)).size(), 1u);
  ASSERT_TRUE(h.hub->Drained(id, &revision));
  EXPECT_EQ(revision, 1);
  h.Put("c", "not watched");
  ASSERT_TRUE(h.hub->Drained(id, &revision)) << "nothing of its own came";
  EXPECT_EQ(revision, 2);
  h.Put("a2", "2");
  EXPECT_FALSE(h.hub->Drained(id, &revision));
  ASSERT_TRUE(h.hub->RequestProgress(id).ok());
  EXPECT_EQ(Harness::EventsOf(h.PollAll(id)).size(), 1u);
  ASSERT_TRUE(h.hub->Drained(id, &revision));
  EXPECT_EQ(revision, 3);
  ASSERT_TRUE(h.hub->RequestProgress(id).ok());
  EXPECT_FALSE(h.hub->Drained(id, &revision)) << "a progress notification is queued";
  h.PollAll(id);
  EXPECT_TRUE(h.hub->Drained(id, &revision));
  // Not where the others are: a watcher from a future revision, and one
  // from "now" while a commit is on its way to Notify.
  WatchId future = h.MustCreate(Opts("a", "b", 10));
  EXPECT_FALSE(h.hub->Drained(future, &revision));
  h.Put("x", "held", /*hold=*/true);
  WatchId now = h.MustCreate(Opts("a", "b"));
  EXPECT_FALSE(h.hub->Drained(now, &revision));
  h.Flush();
  ASSERT_TRUE(h.hub->Drained(now, &revision));
  EXPECT_EQ(revision, 4);
  EXPECT_FALSE(h.hub->Drained(12345, &revision)) << "unknown watcher";
}

TEST(WatchHubTest, FutureStartRevisionWaits) {
  Harness h;
  WriteMix(h);
  const int64_t start = h.source.CurrentRevision() + 3;
  WatchId id = h.MustCreate(Opts("a", "zzz", start));
  EXPECT_EQ(h.hub->unsynced_size(), 0u);
  h.Put("a", "x");
  h.Put("a", "y");
  EXPECT_TRUE(h.PollAll(id).empty());
  h.Put("a", "z");
  h.Put("b", "w");
  std::vector<Event> got = Harness::EventsOf(h.PollAll(id));
  EXPECT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].kv.mod_revision, start);
}

// The engine commits before it notifies: a watch created "now" while a commit
// is on its way to Notify must not get that commit.
TEST(WatchHubTest, StartAtZeroWhileNotifyIsPending) {
  Harness h;
  h.Put("a", "1");
  h.Put("a", "2", /*hold=*/true);
  WatchId now = h.MustCreate(Opts("a"));
  WatchId from1 = h.MustCreate(Opts("a", "", 1));
  h.Flush();
  h.Put("a", "3");
  h.SyncAll();
  std::vector<Event> got = Harness::EventsOf(h.PollAll(now));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].kv.value, "3");
  EXPECT_EQ(Harness::EventsOf(h.PollAll(from1)).size(), 3u);
}

// ---- Compaction -----------------------------------------------------------------

TEST(WatchHubTest, StartBelowCompactionIsCanceled) {
  Harness h;
  WriteMix(h);
  h.source.Compact(5);
  Result<WatchId> r = h.hub->Create(Opts("a", "", 4));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(h.hub->Ready(), std::vector<WatchId>{r.value()});
  std::vector<WatchMessage> got = h.PollAll(r.value());
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(got[0].canceled);
  EXPECT_EQ(got[0].compact_revision, 5);
  EXPECT_EQ(got[0].cancel_reason, kCompacted);
  EXPECT_EQ(got[0].revision, 3);  // resume point - 1
  EXPECT_EQ(h.hub->size(), 0u);
  // At the compact revision itself the history is still there.
  WatchId ok = h.MustCreate(Opts("a", "zzz", 5));
  h.SyncAll();
  ExpectSameEvents(Expected(h.source, Opts("a", "zzz"), 5), Harness::EventsOf(h.PollAll(ok)),
                   false);
}

TEST(WatchHubTest, CompactionDuringCatchUpFromSource) {
  WatchHubOptions options;
  options.history_events_max = 0;  // every catch-up reads the source
  options.catchup_events_max = 2;
  Harness h(options);
  for (int i = 0; i < 20; ++i) h.Put("k" + std::to_string(i % 3), std::to_string(i));
  WatchId id = h.MustCreate(Opts("k", "l", 1));
  EXPECT_TRUE(h.hub->SyncUnsynced(1));
  std::vector<Event> got = Harness::EventsOf(h.PollAll(id));
  EXPECT_EQ(got.size(), 2u);
  h.Put("k1", "more");
  h.source.Compact(10);
  h.hub->SyncUnsynced(1);
  std::vector<WatchMessage> rest = h.PollAll(id);
  ASSERT_EQ(rest.size(), 1u);
  EXPECT_TRUE(rest[0].canceled);
  EXPECT_EQ(rest[0].cancel_reason, kCompacted);
  EXPECT_EQ(rest[0].compact_revision, 10);
  EXPECT_EQ(rest[0].revision, 2);  // revisions 1 and 2 were delivered
  EXPECT_EQ(h.hub->size(), 0u);
  EXPECT_EQ(h.hub->unsynced_size(), 0u);
}

// Catch-up served from the ring has every event it needs: no cancel.
TEST(WatchHubTest, CompactionBelowRingCatchUpIsHarmless) {
  Harness h;
  WriteMix(h);
  WatchOptions o = Opts("a", "zzz", 2);
  WatchId id = h.MustCreate(o);
  h.source.Compact(6);
  h.SyncAll();
  ExpectSameEvents(Expected(h.source, o, 2), Harness::EventsOf(h.PollAll(id)), false);
  EXPECT_EQ(h.hub->size(), 1u);
}

// ---- Filters and prev_kv --------------------------------------------------------

TEST(WatchHubTest, Filters) {
  Harness h;
  WatchOptions no_put = Opts("a", "zzz");
  no_put.no_put = true;
  WatchOptions no_delete = no_put;
  no_delete.no_put = false;
  no_delete.no_delete = true;
  WatchOptions neither = no_put;
  neither.no_delete = true;
  WatchId p = h.MustCreate(no_put);
  WatchId d = h.MustCreate(no_delete);
  WatchId n = h.MustCreate(neither);
  WriteMix(h);
  std::vector<Event> got = Harness::EventsOf(h.PollAll(p));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].type, Event::Type::kDelete);
  EXPECT_EQ(Harness::EventsOf(h.PollAll(d)).size(), 7u);
  EXPECT_TRUE(h.PollAll(n).empty());

  // Filtered events still move the watcher on: the catch-up ends, and the
  // progress bookmark and the cancel point cover them.
  neither.start_revision = 1;
  WatchId late = h.MustCreate(neither);
  h.SyncAll();
  ASSERT_TRUE(h.hub->RequestProgress(late).ok());
  std::vector<WatchMessage> m = h.PollAll(late);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_TRUE(m[0].progress);
  EXPECT_EQ(m[0].revision, h.source.CurrentRevision());
  h.hub->CancelAll("bye");
  m = h.PollAll(n);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].revision, h.source.CurrentRevision());
}

TEST(WatchHubTest, PrevKvFlag) {
  Harness h;
  WatchOptions with = Opts("a");
  with.prev_kv = true;
  WatchId w = h.MustCreate(with);
  WatchId wo = h.MustCreate(Opts("a"));
  h.Put("a", "1");
  h.Put("a", "2");
  h.Delete("a");
  std::vector<WatchMessage> mw = h.PollAll(w);
  std::vector<WatchMessage> mwo = h.PollAll(wo);
  ASSERT_EQ(mw.size(), 1u);
  ASSERT_EQ(mwo.size(), 1u);
  EXPECT_TRUE(mw[0].prev_kv);
  EXPECT_FALSE(mwo[0].prev_kv);
  // The events are shared: the flag, not the event, says whether to send it.
  EXPECT_EQ(mw[0].events[1].get(), mwo[0].events[1].get());
  ASSERT_EQ(mw[0].events.size(), 3u);
  EXPECT_FALSE(mw[0].events[0]->has_prev_kv);
  EXPECT_EQ(mw[0].events[1]->prev_kv.value, "1");
  EXPECT_EQ(mw[0].events[2]->prev_kv.value, "2");
}

// ---- Flow control ---------------------------------------------------------------

TEST(WatchHubTest, SlowConsumerIsCanceledAndResumesExactly) {
  WatchHubOptions options;
  options.watch_queue_events_max = 5;
  Harness h(options);
  WatchOptions o = Opts("k", "l");
  const int64_t start = h.source.CurrentRevision() + 1;
  WatchId slow = h.MustCreate(o);
  WatchId fast = h.MustCreate(o);
  std::vector<Event> got;
  for (int i = 0; i < 3; ++i) h.Put("k" + std::to_string(i), "v");
  WatchMessage first;
  ASSERT_TRUE(h.hub->Poll(slow, 2, &first));  // takes revisions 1 and 2 only
  for (const EventRef& e : first.events) got.push_back(*e);
  ASSERT_EQ(got.size(), 2u);
  for (int i = 3; i < 12; ++i) {
    h.Put("k" + std::to_string(i), "v");
    EXPECT_EQ(h.PollAll(fast).size(), 1u);  // never slowed, never canceled
  }
  std::vector<WatchMessage> m = h.PollAll(slow);
  ASSERT_EQ(m.size(), 1u) << "queued events are dropped with the cancel";
  EXPECT_TRUE(m[0].canceled);
  EXPECT_EQ(m[0].cancel_reason, "slow consumer");
  EXPECT_EQ(m[0].compact_revision, 0);
  EXPECT_EQ(m[0].revision, got.back().kv.mod_revision);
  EXPECT_EQ(h.hub->size(), 1u);

  o.start_revision = m[0].revision + 1;
  WatchId resumed = h.MustCreate(o);
  for (const Event& e : Harness::EventsOf(h.CatchUp(resumed))) got.push_back(e);
  ExpectSameEvents(Expected(h.source, o, start), got, false);
  h.hub->TEST_CheckInvariants();
}

TEST(WatchHubTest, SlowConsumerThatTookNothing) {
  WatchHubOptions options;
  options.watch_queue_events_max = 2;
  Harness h(options);
  h.Put("x", "0");
  WatchId id = h.MustCreate(Opts("k"));
  const int64_t start = h.source.CurrentRevision() + 1;
  for (int i = 0; i < 3; ++i) h.Put("k", "v");
  std::vector<WatchMessage> m = h.PollAll(id);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_TRUE(m[0].canceled);
  EXPECT_EQ(m[0].revision, start - 1);
}

// etcd's watch API: a slow watcher is never canceled; it falls behind and
// catches up, from the ring or from the source, with nothing lost or
// repeated and revisions whole.
TEST(WatchHubTest, SlowWatcherThatCatchesUpLosesNothing) {
  for (size_t ring : {size_t{0}, size_t{10'000}}) {
    SCOPED_TRACE(ring == 0 ? "catch-up from the source" : "catch-up from the ring");
    WatchHubOptions options;
    options.watch_queue_events_max = 5;
    options.history_events_max = ring;
    Harness h(options);
    WatchOptions o = Opts("k", "l");
    o.catch_up_when_slow = true;
    const int64_t start = h.source.CurrentRevision() + 1;
    WatchId slow = h.MustCreate(o);
    WatchId fast = h.MustCreate(Opts("k", "l"));
    std::vector<Event> got;
    for (int i = 0; i < 3; ++i) h.Put("k" + std::to_string(i), "v");
    for (const Event& e : Harness::EventsOf(h.PollAll(slow, 2))) got.push_back(e);
    EXPECT_EQ(Harness::EventsOf(h.PollAll(fast)).size(), 3u);
    // Three-event revisions: the one that overflows is dropped whole, not cut.
    for (int i = 0; i < 12; ++i) {
      const std::string k = "k" + std::to_string(i);
      h.Commit({Op{k + "a", "v", ""}, Op{k + "b", "v", ""}, Op{k + "c", "v", ""}});
      EXPECT_EQ(Harness::EventsOf(h.PollAll(fast)).size(), 3u);
      h.hub->TEST_CheckInvariants();
    }
    EXPECT_EQ(h.hub->unsynced_size(), 1u);
    for (const WatchMessage& m : h.CatchUp(slow, 4)) {
      EXPECT_FALSE(m.canceled);
      for (const EventRef& e : m.events) got.push_back(*e);
    }
    EXPECT_EQ(h.hub->unsynced_size(), 0u);
    ExpectSameEvents(Expected(h.source, o, start), got, false);
    // Synced again: live events come as for any watcher.
    h.Put("k", "v");
    EXPECT_EQ(Harness::EventsOf(h.PollAll(slow)).size(), 1u);
    h.hub->TEST_CheckInvariants();
  }
}

// One revision larger than the queue bound still gets through when nothing
// older is queued; else the watcher could never pass it.
TEST(WatchHubTest, RevisionLargerThanQueueBound) {
  WatchHubOptions options;
  options.watch_queue_events_max = 3;
  Harness h(options);
  WatchId id = h.MustCreate(Opts("k", "l"));
  std::vector<Op> ops;
  for (int i = 0; i < 10; ++i) ops.push_back(Op{"k" + std::to_string(i), "v", ""});
  h.Commit(ops);
  std::vector<WatchMessage> m = h.PollAll(id, 2);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].events.size(), 10u);
  EXPECT_FALSE(m[0].canceled);

  // From history too: catch-up hands whole revisions.
  WatchOptions o = Opts("k", "l", 1);
  WatchId late = h.MustCreate(o);
  h.SyncAll();
  EXPECT_EQ(Harness::EventsOf(h.PollAll(late, 1)).size(), 10u);
}

// Catch-up never overflows a queue; it waits for the consumer.
TEST(WatchHubTest, CatchUpWaitsForConsumer) {
  WatchHubOptions options;
  options.watch_queue_events_max = 4;
  options.catchup_events_max = 3;
  Harness h(options);
  for (int i = 0; i < 20; ++i) h.Put("k", std::to_string(i));
  WatchOptions o = Opts("k", "", 1);
  WatchId id = h.MustCreate(o);
  for (int i = 0; i < 10; ++i) h.hub->SyncUnsynced(10);
  EXPECT_EQ(h.hub->unsynced_size(), 1u);
  std::vector<Event> got = Harness::EventsOf(h.PollAll(id));
  EXPECT_EQ(got.size(), 4u);  // the queue bound, not 10 steps' worth
  while (true) {
    bool more = h.hub->SyncUnsynced(10);
    std::vector<WatchMessage> m = h.PollAll(id, 1);
    for (const WatchMessage& msg : m) EXPECT_FALSE(msg.canceled);
    for (const Event& e : Harness::EventsOf(m)) got.push_back(e);
    if (!more) break;
  }
  for (const Event& e : Harness::EventsOf(h.PollAll(id))) got.push_back(e);
  ExpectSameEvents(Expected(h.source, o, 1), got, false);
}

// ---- Atomic revisions -------------------------------------------------------------

TEST(WatchHubTest, PollNeverSplitsARevision) {
  Harness h;
  WatchId id = h.MustCreate(Opts("k", "l"));
  h.Put("k", "1");
  h.Commit({Op{"ka", "1", ""}, Op{"kb", "1", ""}, Op{"kc", "1", ""}, Op{"kd", "1", ""}});
  h.Put("k", "2");
  h.Put("k", "3");
  h.Put("k", "4");
  std::vector<WatchMessage> m = h.PollAll(id, 2);
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0].events.size(), 5u);  // rev 1 (1 event) + rev 2 (4 events), whole
  EXPECT_EQ(m[1].events.size(), 2u);
  EXPECT_EQ(m[2].events.size(), 1u);
  // One Notify with several commits behaves the same.
  h.Put("k", "5", true);
  h.Commit({Op{"ka", "2", ""}, Op{"kb", "2", ""}}, true);
  h.Flush();
  m = h.PollAll(id, 1);
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[1].events.size(), 2u);
}

// ---- Progress -----------------------------------------------------------------------

TEST(WatchHubTest, RequestProgressWhenSyncedAndIdle) {
  Harness h;
  WriteMix(h);
  WatchId id = h.MustCreate(Opts("a"));
  ASSERT_TRUE(h.hub->RequestProgress(id).ok());
  EXPECT_EQ(h.hub->Ready(), std::vector<WatchId>{id});
  // Events after the request come after the notification.
  h.Put("a", "later");
  std::vector<WatchMessage> m = h.PollAll(id);
  ASSERT_EQ(m.size(), 2u);
  EXPECT_TRUE(m[0].progress);
  EXPECT_TRUE(m[0].events.empty());
  EXPECT_EQ(m[0].revision, h.source.CurrentRevision() - 1);
  EXPECT_FALSE(m[1].progress);
  EXPECT_EQ(m[1].events[0]->kv.mod_revision, h.source.CurrentRevision());
  EXPECT_TRUE(h.hub->RequestProgress(999).IsNotFound());
}

TEST(WatchHubTest, RequestProgressWaitsForQueueToDrain) {
  Harness h;
  WatchId id = h.MustCreate(Opts("a"));
  h.Put("a", "1");
  h.Put("a", "2");
  ASSERT_TRUE(h.hub->RequestProgress(id).ok());
  WatchMessage m;
  ASSERT_TRUE(h.hub->Poll(id, 1, &m));
  EXPECT_FALSE(m.progress);
  h.Put("b", "unrelated");  // moves the bookmark without an event
  ASSERT_TRUE(h.hub->Poll(id, 1, &m));
  EXPECT_FALSE(m.progress);
  EXPECT_EQ(m.events[0]->kv.value, "2");
  ASSERT_TRUE(h.hub->Poll(id, 1, &m));
  EXPECT_TRUE(m.progress);
  EXPECT_EQ(m.revision, h.source.CurrentRevision());
  EXPECT_FALSE(h.hub->Poll(id, 1, &m));
  EXPECT_TRUE(h.hub->Ready().empty());
}

TEST(WatchHubTest, RequestProgressWaitsForSync) {
  WatchHubOptions options;
  options.catchup_events_max = 1;
  Harness h(options);
  WriteMix(h);
  WatchOptions o = Opts("a", "zzz", 1);
  WatchId id = h.MustCreate(o);
  ASSERT_TRUE(h.hub->RequestProgress(id).ok());
  std::vector<WatchMessage> all;
  while (h.hub->SyncUnsynced(1)) {
    for (WatchMessage& m : h.PollAll(id)) {
      EXPECT_FALSE(m.progress) << "a bookmark before the catch-up ends would lie";
      all.push_back(std::move(m));
    }
  }
  for (WatchMessage& m : h.PollAll(id)) all.push_back(std::move(m));
  ASSERT_FALSE(all.empty());
  EXPECT_TRUE(all.back().progress);
  EXPECT_EQ(all.back().revision, h.source.CurrentRevision());
  all.pop_back();
  ExpectSameEvents(Expected(h.source, o, 1), Harness::EventsOf(all), false);
}

TEST(WatchHubTest, NotifyProgressAll) {
  Harness h;
  WriteMix(h);
  WatchOptions o = Opts("a");
  o.progress_notify = true;
  WatchId idle = h.MustCreate(o);
  WatchId busy = h.MustCreate(o);
  WatchId plain = h.MustCreate(Opts("a"));
  o.start_revision = 1;
  WatchId unsynced = h.MustCreate(o);
  h.PollAll(idle);
  h.hub->TEST_CheckInvariants();
  h.Put("a", "x");
  h.PollAll(idle);
  h.hub->NotifyProgressAll();
  std::vector<WatchMessage> m = h.PollAll(idle);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_TRUE(m[0].progress);
  EXPECT_EQ(m[0].revision, h.source.CurrentRevision());
  m = h.PollAll(busy);  // had an event queued: no notification
  ASSERT_EQ(m.size(), 1u);
  EXPECT_FALSE(m[0].progress);
  m = h.PollAll(plain);  // not created with progress_notify
  ASSERT_EQ(m.size(), 1u);
  EXPECT_FALSE(m[0].progress);
  EXPECT_TRUE(h.PollAll(unsynced).empty());
}

// ---- Cancel -----------------------------------------------------------------------------

TEST(WatchHubTest, Cancel) {
  Harness h;
  WatchId a = h.MustCreate(Opts("a"));
  WatchId b = h.MustCreate(Opts("a"));
  h.Put("a", "1");
  EXPECT_EQ(h.hub->Ready(), (std::vector<WatchId>{a, b}));
  ASSERT_TRUE(h.hub->Cancel(a).ok());
  EXPECT_EQ(h.hub->Ready(), std::vector<WatchId>{b});
  EXPECT_TRUE(h.PollAll(a).empty());
  EXPECT_TRUE(h.hub->Cancel(a).IsNotFound());
  h.Put("a", "2");
  EXPECT_EQ(Harness::EventsOf(h.PollAll(b)).size(), 2u);
  EXPECT_EQ(h.hub->size(), 1u);
  // Unsynced watchers and ones with a pending cancel message too.
  WatchId u = h.MustCreate(Opts("a", "", 1));
  ASSERT_TRUE(h.hub->Cancel(u).ok());
  EXPECT_EQ(h.hub->unsynced_size(), 0u);
  h.hub->CancelAll("x");
  ASSERT_TRUE(h.hub->Cancel(b).ok());
  EXPECT_TRUE(h.hub->Ready().empty());
  EXPECT_EQ(h.hub->size(), 0u);
  h.hub->TEST_CheckInvariants();
}

TEST(WatchHubTest, CancelAll) {
  WatchHubOptions options;
  options.catchup_events_max = 1;
  Harness h(options);
  WriteMix(h);
  WatchId synced = h.MustCreate(Opts("a"));
  WatchId unsynced = h.MustCreate(Opts("a", "zzz", 2));
  h.hub->SyncUnsynced(1);  // delivers revision 2 only
  h.Put("a", "q");
  h.hub->CancelAll("etcdserver: no leader");
  EXPECT_EQ(h.hub->unsynced_size(), 0u);
  EXPECT_EQ(h.hub->Ready(), (std::vector<WatchId>{synced, unsynced}));
  std::vector<WatchMessage> m = h.PollAll(synced);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_TRUE(m[0].canceled);
  EXPECT_EQ(m[0].cancel_reason, "etcdserver: no leader");
  EXPECT_EQ(m[0].revision, h.source.CurrentRevision() - 1);  // the "q" put was dropped
  m = h.PollAll(unsynced);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_TRUE(m[0].canceled);
  EXPECT_EQ(m[0].revision, 1);
  EXPECT_EQ(h.hub->size(), 0u);
  h.Put("a", "after");
  EXPECT_TRUE(h.hub->Ready().empty());
}

// ---- Ids and arguments ----------------------------------------------------------------

TEST(WatchHubTest, WatchIds) {
  WatchHubOptions options;
  options.watchers_max = 5;
  Harness h(options);
  EXPECT_EQ(h.MustCreate(Opts("a"), 2), 2);
  EXPECT_EQ(h.MustCreate(Opts("a")), 1);
  EXPECT_EQ(h.MustCreate(Opts("a")), 3);  // 2 is taken
  Result<WatchId> dup = h.hub->Create(Opts("b"), 3);
  ASSERT_FALSE(dup.ok());
  EXPECT_TRUE(dup.status().IsInvalidArgument());
  EXPECT_NE(dup.status().message().find("duplicate watch ID"), std::string::npos);
  EXPECT_TRUE(h.hub->Create(Opts("b"), -1).status().IsInvalidArgument());
  EXPECT_TRUE(h.hub->Create(Opts("")).status().IsInvalidArgument());
  EXPECT_TRUE(h.hub->Create(Opts("b", "a")).status().IsInvalidArgument());
  EXPECT_TRUE(h.hub->Create(Opts("b", "b")).status().IsInvalidArgument());
  EXPECT_EQ(h.MustCreate(Opts("a")), 4);
  EXPECT_EQ(h.MustCreate(Opts("a")), 5);
  EXPECT_TRUE(h.hub->Create(Opts("a")).status().IsInvalidArgument());  // watchers_max
  ASSERT_TRUE(h.hub->Cancel(2).ok());
  EXPECT_EQ(h.MustCreate(Opts("a"), 2), 2);  // free again
  EXPECT_EQ(h.hub->size(), 5u);
}

// ---- Scale ----------------------------------------------------------------------------

TEST(WatchHubTest, ManyWatchersOnOnePrefix) {
  Harness h;
  std::vector<WatchId> ids;
  for (int i = 0; i < 1000; ++i) {
    WatchOptions o = Opts("/registry/pods/", "/registry/pods0");
    o.prev_kv = i % 2 == 0;
    ids.push_back(h.MustCreate(o));
  }
  for (int i = 0; i < 50; ++i) {
    h.Put("/registry/pods/p" + std::to_string(i % 7), std::to_string(i));
    h.Put("/registry/svc/s", std::to_string(i));
  }
  h.hub->TEST_CheckInvariants();
  EXPECT_EQ(h.hub->Ready(), ids);
  const std::vector<Event> want = Expected(h.source, Opts("/registry/pods/", "/registry/pods0"), 1);
  for (WatchId id : ids) {
    std::vector<WatchMessage> m = h.PollAll(id, 16);
    ASSERT_EQ(m.size(), 4u);
    ExpectSameEvents(want, Harness::EventsOf(m), true);
  }
  EXPECT_TRUE(h.hub->Ready().empty());
  for (WatchId id : ids) ASSERT_TRUE(h.hub->Cancel(id).ok());
  h.hub->TEST_CheckInvariants();
}

}  // namespace
}  // namespace natcd
