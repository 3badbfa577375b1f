// Randomized WatchHub test: writes (some held back and notified in batches),
// catch-up steps, Polls, compactions, progress requests, cancels,
// slow-consumer cancels and slow watchers falling behind to catch up
// (catch_up_when_slow) are interleaved at random. Each client resumes a
// canceled watch from the reported revision + 1, like a real client, and must
// see exactly the events of its range from its start revision: in order, no
// gap, no duplicate, revisions never split across messages.
// Reference: etcd API guarantees for watch (Ordered, Unique, Reliable, Atomic,
// Resumable, Bookmarkable).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "mem_event_source.h"
#include "natcd/watch_hub.h"

namespace natcd {
namespace {

using watch_testing::Harness;
using watch_testing::InRange;
using Op = watch_testing::MemEventSource::Op;

constexpr const char* kCompacted = "etcdserver: mvcc: required revision has been compacted";
constexpr const char* kNoLeader = "etcdserver: no leader";

const std::vector<std::string>& Keys() {
  static const auto* keys = new std::vector<std::string>{
      "a", "ab", "b", "b/x", "b/y", "b/y/z", "c", "d\xff", std::string("\x01", 1)};
  return *keys;
}

struct Client {
  WatchOptions options;       // start_revision: the resolved first revision
  WatchId id = 0;             // the current watcher
  bool slow = false;          // polls rarely
  bool done = false;          // canceled for good (compaction or Cancel)
  size_t cursor = 0;          // next index into all_events() to consider
  int64_t last_revision = 0;  // of the last event received
  bool progress_outstanding = false;
};

class RandomRun {
 public:
  // What the runs exercised, summed over runs.
  struct Stats {
    int64_t events = 0;
    int64_t progress = 0;
    int64_t slow_consumer = 0;
    int64_t fell_behind = 0;
    int64_t no_leader = 0;
    int64_t compacted = 0;
    int64_t source_reads = 0;
  };

  RandomRun(uint64_t seed, Stats& stats_out) : stats(stats_out), rng_(seed) {}

  void Run(int steps) {
    WatchHubOptions options;
    options.history_events_max = Pick<size_t>({0, 1, 5, 20, 1000});
    // About one, a few and any number of small events.
    options.history_bytes_max = Pick<size_t>({0, sizeof(Event) + 16, 8 * sizeof(Event), 1 << 20});
    options.catchup_events_max = Pick<size_t>({1, 2, 5, 100});
    options.watch_queue_events_max = Pick<size_t>({1, 2, 4, 8, 64});
    h_ = std::make_unique<Harness>(options, Uniform(0, 15));
    if (Chance(0.3)) h_->source.Compact(Uniform(1, h_->source.CurrentRevision() + 1));

    for (int step = 0; step < steps; ++step) {
      SCOPED_TRACE("step " + std::to_string(step));
      Step();
      h_->hub->TEST_CheckInvariants();
      if (::testing::Test::HasFatalFailure()) return;
    }
    Drain();
  }

 private:
  template <typename T>
  T Pick(std::initializer_list<T> values) {
    auto it = values.begin();
    std::advance(it, Uniform(0, static_cast<int64_t>(values.size()) - 1));
    return *it;
  }
  int64_t Uniform(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }
  bool Chance(double p) { return std::bernoulli_distribution(p)(rng_); }

  void Step() {
    const int dice = static_cast<int>(Uniform(0, 999));
    if (dice < 300) {
      Write();
    } else if (dice < 370) {
      if (clients_.size() < 14) NewClient();
    } else if (dice < 560) {
      h_->hub->SyncUnsynced(Uniform(1, 3));
    } else if (dice < 850) {
      PollSome();
    } else if (dice < 865) {
      h_->source.Compact(Uniform(h_->source.CompactRevision(), h_->source.CurrentRevision() + 1));
    } else if (dice < 920) {
      RequestProgress();
    } else if (dice < 935) {
      h_->hub->NotifyProgressAll();
    } else if (dice < 955) {
      CancelOne();
    } else if (dice < 960) {
      h_->hub->CancelAll(kNoLeader);
    } else {
      Flush();
    }
  }

  // Notify only ever adds unsynced watchers by a synced one falling behind.
  void Flush() {
    const size_t before = h_->hub->unsynced_size();
    h_->Flush();
    stats.fell_behind += static_cast<int64_t>(h_->hub->unsynced_size() - before);
  }

  void Write() {
    std::vector<Op> ops;
    const int n = static_cast<int>(Uniform(1, 3));
    for (int i = 0; i < n; ++i) {
      const std::string& key = Keys()[Uniform(0, Keys().size() - 1)];
      if (Chance(0.7)) {
        ops.push_back(Op{key, "v" + std::to_string(++values_), ""});
      } else if (Chance(0.7)) {
        ops.push_back(Op{key, std::nullopt, ""});
      } else {
        ops.push_back(Op{"b", std::nullopt, "c"});  // a delete-range
      }
    }
    // One key at most once per commit, as etcd requires.
    std::vector<Op> unique;
    for (const Op& op : ops) {
      bool seen = false;
      for (const Op& u : unique) seen |= u.key == op.key;
      if (!seen) unique.push_back(op);
    }
    const bool hold = Chance(0.3);
    h_->Commit(unique, /*hold=*/true);
    if (!hold) Flush();
  }

  void NewClient() {
    Client c;
    switch (Uniform(0, 4)) {
      case 0:
        c.options.key = Keys()[Uniform(0, Keys().size() - 1)];
        break;
      case 1:
        c.options.key = "a";
        c.options.range_end = "c";
        break;
      case 2:
        c.options.key = "b/";
        c.options.range_end = "b0";
        break;
      case 3:
        c.options.key = "b";
        c.options.range_end = std::string(1, '\0');
        break;
      default:
        c.options.key = std::string(1, '\0');
        c.options.range_end = std::string(1, '\0');
        break;
    }
    c.options.no_put = Chance(0.15);
    c.options.no_delete = Chance(0.15);
    c.options.prev_kv = Chance(0.5);
    c.options.progress_notify = Chance(0.3);
    c.options.catch_up_when_slow = Chance(0.4);
    c.slow = Chance(0.3);
    const int64_t current = h_->source.CurrentRevision();
    c.options.start_revision = Chance(0.3) ? 0 : Uniform(1, current + 2);
    WatchOptions o = c.options;
    // What the hub resolves "now" to.
    if (c.options.start_revision <= 0) c.options.start_revision = current + 1;
    WatchId requested = 0;
    if (Chance(0.2)) {
      requested = Uniform(1, 40);
      for (const Client& other : clients_) {
        if (!other.done && other.id == requested) {
          EXPECT_TRUE(h_->hub->Create(o, requested).status().IsInvalidArgument());
          return;
        }
      }
    }
    Result<WatchId> r = h_->hub->Create(o, requested);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    if (requested != 0) {
      EXPECT_EQ(r.value(), requested);
    }
    c.id = r.value();
    clients_.push_back(c);
  }

  Client* RandomLiveClient() {
    std::vector<Client*> live;
    for (Client& c : clients_) {
      if (!c.done) live.push_back(&c);
    }
    if (live.empty()) return nullptr;
    return live[Uniform(0, live.size() - 1)];
  }

  void PollSome() {
    Client* c = RandomLiveClient();
    if (c == nullptr || (c->slow && !Chance(0.15))) return;
    const std::vector<WatchId> ready = h_->hub->Ready();
    ASSERT_TRUE(std::is_sorted(ready.begin(), ready.end()));
    const bool is_ready = std::binary_search(ready.begin(), ready.end(), c->id);
    const size_t max_events = Uniform(1, 5);
    const int polls = static_cast<int>(Uniform(1, 4));
    WatchMessage m;
    for (int i = 0; i < polls && !c->done; ++i) {
      const bool got = h_->hub->Poll(c->id, max_events, &m);
      if (i == 0) {
        EXPECT_EQ(got, is_ready);
      }
      if (!got) return;
      Handle(*c, m, max_events);
    }
  }

  // The next event the client must see, or nullptr.
  const Event* NextExpected(Client& c) {
    const std::vector<Event>& all = h_->source.all_events();
    for (; c.cursor < all.size(); ++c.cursor) {
      const Event& e = all[c.cursor];
      if (e.kv.mod_revision < c.options.start_revision) continue;
      if (!InRange(c.options.key, c.options.range_end, e.kv.key)) continue;
      if (e.type == Event::Type::kPut && c.options.no_put) continue;
      if (e.type == Event::Type::kDelete && c.options.no_delete) continue;
      return &e;
    }
    return nullptr;
  }

  // Everything up to revision was received, nothing after it.
  void ExpectDeliveredUpTo(Client& c, int64_t revision) {
    EXPECT_LE(c.last_revision, revision);
    const Event* next = NextExpected(c);
    if (next != nullptr) {
      EXPECT_GT(next->kv.mod_revision, revision) << "missed an event at or below " << revision;
    }
  }

  void Handle(Client& c, const WatchMessage& m, size_t max_events) {
    SCOPED_TRACE("client " + std::to_string(c.id) + " key " + c.options.key);
    ASSERT_EQ(m.watch_id, c.id);
    EXPECT_EQ(m.prev_kv, c.options.prev_kv);
    if (m.progress) {
      EXPECT_FALSE(m.canceled);
      EXPECT_TRUE(m.events.empty());
      EXPECT_LE(m.revision, h_->notified);
      ExpectDeliveredUpTo(c, m.revision);
      c.progress_outstanding = false;
      ++stats.progress;
      return;
    }
    if (m.canceled) {
      EXPECT_TRUE(m.events.empty());
      ExpectDeliveredUpTo(c, m.revision);
      c.progress_outstanding = false;
      if (m.cancel_reason == kCompacted) {
        EXPECT_GT(m.compact_revision, m.revision + 1);
        EXPECT_LE(m.compact_revision, h_->source.CompactRevision());
        c.done = true;
        ++stats.compacted;
        return;
      }
      EXPECT_EQ(m.compact_revision, 0);
      EXPECT_TRUE(m.cancel_reason == "slow consumer" || m.cancel_reason == kNoLeader)
          << m.cancel_reason;
      EXPECT_FALSE(c.options.catch_up_when_slow && m.cancel_reason == "slow consumer")
          << "a watcher that catches up is never canceled for being slow";
      // Resume, as a client does.
      WatchOptions o = c.options;
      o.start_revision = m.revision + 1;
      Result<WatchId> r = h_->hub->Create(o);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      c.id = r.value();
      ++(m.cancel_reason == kNoLeader ? stats.no_leader : stats.slow_consumer);
      return;
    }
    ASSERT_FALSE(m.events.empty());
    EXPECT_EQ(m.revision, h_->notified);
    // Whole revisions: the first revision is new, and the message stops at
    // max_events unless the last revision goes on.
    EXPECT_GT(m.events.front()->kv.mod_revision, c.last_revision) << "split or repeated revision";
    if (m.events.size() > max_events) {
      EXPECT_EQ(m.events[max_events - 1]->kv.mod_revision, m.events.back()->kv.mod_revision);
    }
    for (const EventRef& ref : m.events) {
      const Event& e = *ref;
      const Event* want = NextExpected(c);
      ASSERT_NE(want, nullptr) << "unexpected event at " << e.kv.mod_revision;
      ASSERT_EQ(e.kv.mod_revision, want->kv.mod_revision) << "gap, duplicate or disorder";
      ASSERT_EQ(e.kv, want->kv);
      ASSERT_EQ(e.type, want->type);
      if (c.options.prev_kv) {
        ASSERT_EQ(e.has_prev_kv, want->has_prev_kv);
        if (want->has_prev_kv) {
          ASSERT_EQ(e.prev_kv, want->prev_kv);
        }
      }
      EXPECT_GE(e.kv.mod_revision, c.last_revision);
      c.last_revision = e.kv.mod_revision;
      ++c.cursor;
      ++stats.events;
    }
  }

  void RequestProgress() {
    Client* c = RandomLiveClient();
    if (c == nullptr) return;
    ASSERT_TRUE(h_->hub->RequestProgress(c->id).ok());
    c->progress_outstanding = true;
  }

  void CancelOne() {
    Client* c = RandomLiveClient();
    if (c == nullptr) return;
    ASSERT_TRUE(h_->hub->Cancel(c->id).ok());
    EXPECT_TRUE(h_->hub->Cancel(c->id).IsNotFound());
    c->done = true;
  }

  // No more writes: everything must arrive.
  void Drain() {
    Flush();
    for (int round = 0;; ++round) {
      ASSERT_LT(round, 100'000) << "the hub does not drain";
      const bool more = h_->hub->SyncUnsynced(Uniform(1, 3));
      bool polled = false;
      for (Client& c : clients_) {
        WatchMessage m;
        while (!c.done && h_->hub->Poll(c.id, 3, &m)) {
          Handle(c, m, 3);
          if (::testing::Test::HasFatalFailure()) return;
          polled = true;
        }
      }
      h_->hub->TEST_CheckInvariants();
      if (!more && !polled && h_->hub->unsynced_size() == 0) break;
    }
    EXPECT_TRUE(h_->hub->Ready().empty());
    size_t live = 0;
    for (Client& c : clients_) {
      if (c.done) continue;
      ++live;
      SCOPED_TRACE("client " + std::to_string(c.id));
      EXPECT_EQ(NextExpected(c), nullptr) << "events never delivered";
      EXPECT_FALSE(c.progress_outstanding) << "progress request never answered";
    }
    EXPECT_EQ(h_->hub->size(), live);
    stats.source_reads += h_->source.reads();
  }

 private:
  Stats& stats;
  std::mt19937_64 rng_;
  std::unique_ptr<Harness> h_;
  std::vector<Client> clients_;
  int64_t values_ = 0;
};

TEST(WatchHubRandomTest, EveryWatcherSeesExactlyItsEvents) {
  RandomRun::Stats stats;
  for (uint64_t seed = 1; seed <= 400; ++seed) {
    SCOPED_TRACE("seed=" + std::to_string(seed));
    RandomRun run(seed, stats);
    run.Run(500);
    if (::testing::Test::HasFailure()) {
      ADD_FAILURE() << "reproduce with seed=" << seed;
      return;
    }
  }
  // The runs must exercise what they claim to.
  RecordProperty("events", std::to_string(stats.events));
  RecordProperty("progress", std::to_string(stats.progress));
  RecordProperty("slow_consumer", std::to_string(stats.slow_consumer));
  RecordProperty("fell_behind", std::to_string(stats.fell_behind));
  RecordProperty("no_leader", std::to_string(stats.no_leader));
  RecordProperty("compacted", std::to_string(stats.compacted));
  RecordProperty("source_reads", std::to_string(stats.source_reads));
  EXPECT_GT(stats.events, 10'000);
  EXPECT_GT(stats.progress, 300);
  EXPECT_GT(stats.slow_consumer, 300);
  EXPECT_GT(stats.fell_behind, 300);
  EXPECT_GT(stats.no_leader, 100);
  EXPECT_GT(stats.compacted, 100);
  EXPECT_GT(stats.source_reads, 1'000);
}

}  // namespace
}  // namespace natcd
