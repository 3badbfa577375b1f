// Test helpers for the watch hub: an in-memory key-value store that keeps an
// append-only event log (the EventSource), a hub harness that feeds its
// commits to a WatchHub, and a reference model of what a watcher must see.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "natcd/status.h"
#include "natcd/types.h"
#include "natcd/watch_hub.h"

namespace natcd::watch_testing {

inline bool InRange(const std::string& key, const std::string& range_end, const std::string& k) {
  if (range_end.empty()) return k == key;
  if (k < key) return false;
  return (range_end.size() == 1 && range_end[0] == '\0') || k < range_end;
}

// A tiny MVCC store: each commit (put, delete, txn) takes one revision and
// appends its events, with prev_kv, to a log. Compact(rev) drops the log below
// rev, as the real store does, so ReadEvents below it fails with ErrCompacted.
// A second, never-compacted copy of the log is the tests' ground truth.
class MemEventSource : public EventSource {
 public:
  // One operation of a commit: a put (value set) or a delete of
  // [key, range_end).
  struct Op {
    std::string key;
    std::optional<std::string> value;
    std::string range_end;  // deletes only
  };

  int64_t CurrentRevision() const override { return revision_; }
  int64_t CompactRevision() const override { return compact_revision_; }

  Status ReadEvents(const std::string& key, const std::string& range_end, int64_t from_revision,
                    int64_t to_revision, size_t max_events, bool with_prev_kv,
                    std::vector<Event>* out) override {
    ++reads_;
    EXPECT_LE(to_revision, revision_);
    if (from_revision < compact_revision_) {
      return Status::Compacted(from_revision, compact_revision_);
    }
    auto it = std::lower_bound(log_.begin(), log_.end(), from_revision,
                               [](const Event& e, int64_t r) { return e.kv.mod_revision < r; });
    size_t n = 0;
    int64_t stop_after = 0;  // the revision during which max_events was reached
    for (; it != log_.end() && it->kv.mod_revision <= to_revision; ++it) {
      if (stop_after != 0 && it->kv.mod_revision > stop_after) break;
      if (!InRange(key, range_end, it->kv.key)) continue;
      Event e = *it;
      if (!with_prev_kv) {
        e.has_prev_kv = false;
        e.prev_kv = KeyValue();
      }
      out->push_back(std::move(e));
      if (++n >= max_events && stop_after == 0) stop_after = it->kv.mod_revision;
    }
    return Status::OK();
  }

  // Applies ops as one commit. Returns its events (empty, and no revision,
  // when nothing changed, e.g. deleting an absent key).
  std::vector<Event> Commit(const std::vector<Op>& ops) {
    std::vector<Event> events;
    const int64_t revision = revision_ + 1;
    for (const Op& op : ops) {
      if (op.value.has_value()) {
        Event e;
        e.type = Event::Type::kPut;
        auto it = live_.find(op.key);
        KeyValue kv;
        kv.key = op.key;
        kv.value = *op.value;
        kv.mod_revision = revision;
        if (it != live_.end()) {
          e.has_prev_kv = true;
          e.prev_kv = it->second;
          kv.create_revision = it->second.create_revision;
          kv.version = it->second.version + 1;
        } else {
          kv.create_revision = revision;
          kv.version = 1;
        }
        live_[op.key] = kv;
        e.kv = kv;
        events.push_back(std::move(e));
      } else {
        std::vector<std::string> doomed;
        for (const auto& [k, kv] : live_) {
          if (InRange(op.key, op.range_end, k)) doomed.push_back(k);
        }
        for (const std::string& k : doomed) {
          Event e;
          e.type = Event::Type::kDelete;
          e.kv.key = k;
          e.kv.mod_revision = revision;
          e.has_prev_kv = true;
          e.prev_kv = live_[k];
          live_.erase(k);
          events.push_back(std::move(e));
        }
      }
    }
    if (events.empty()) return events;
    revision_ = revision;
    log_.insert(log_.end(), events.begin(), events.end());
    all_.insert(all_.end(), events.begin(), events.end());
    return events;
  }

  std::vector<Event> Put(const std::string& key, const std::string& value) {
    return Commit({Op{key, value, ""}});
  }
  std::vector<Event> Delete(const std::string& key, const std::string& range_end = "") {
    return Commit({Op{key, std::nullopt, range_end}});
  }

  // Forgets the events below revision (revision <= CurrentRevision() + 1).
  void Compact(int64_t revision) {
    ASSERT_LE(revision, revision_ + 1);
    if (revision <= compact_revision_) return;
    compact_revision_ = revision;
    auto it = std::lower_bound(log_.begin(), log_.end(), revision,
                               [](const Event& e, int64_t r) { return e.kv.mod_revision < r; });
    log_.erase(log_.begin(), it);
  }

  // Every event ever committed, ascending.
  const std::vector<Event>& all_events() const { return all_; }
  int reads() const { return reads_; }

 private:
  int64_t revision_ = 0;
  int64_t compact_revision_ = 0;
  std::map<std::string, KeyValue> live_;
  std::vector<Event> log_;  // compacted
  std::vector<Event> all_;  // never compacted
  int reads_ = 0;
};

// The events a watcher must see: every committed event on its range with
// revision >= from, after its filters, in order.
inline std::vector<Event> Expected(const MemEventSource& source, const WatchOptions& o,
                                   int64_t from, int64_t to = INT64_MAX) {
  std::vector<Event> out;
  for (const Event& e : source.all_events()) {
    if (e.kv.mod_revision < from || e.kv.mod_revision > to) continue;
    if (!InRange(o.key, o.range_end, e.kv.key)) continue;
    if (e.type == Event::Type::kPut && o.no_put) continue;
    if (e.type == Event::Type::kDelete && o.no_delete) continue;
    out.push_back(e);
  }
  return out;
}

// A store plus a hub fed with its commits. Commits can be held back and
// handed to the hub later in one Notify, as the engine batches a group commit.
struct Harness {
  explicit Harness(WatchHubOptions options = {}, int64_t preload_revisions = 0) {
    for (int64_t i = 0; i < preload_revisions; ++i) {
      source.Put("pre/" + std::to_string(i % 5), "v" + std::to_string(i));
    }
    hub = std::make_unique<WatchHub>(&source, options);
    notified = source.CurrentRevision();
  }

  // Commits and (unless hold) notifies the hub.
  std::vector<Event> Commit(const std::vector<MemEventSource::Op>& ops, bool hold = false) {
    std::vector<Event> events = source.Commit(ops);
    held.insert(held.end(), events.begin(), events.end());
    if (!hold) Flush();
    return events;
  }
  std::vector<Event> Put(const std::string& key, const std::string& value, bool hold = false) {
    return Commit({MemEventSource::Op{key, value, ""}}, hold);
  }
  std::vector<Event> Delete(const std::string& key, const std::string& range_end = "",
                            bool hold = false) {
    return Commit({MemEventSource::Op{key, std::nullopt, range_end}}, hold);
  }
  // Hands every held commit to the hub.
  void Flush() {
    if (held.empty() && notified == source.CurrentRevision()) return;
    hub->Notify(std::make_shared<const std::vector<Event>>(std::move(held)),
                source.CurrentRevision());
    held.clear();
    notified = source.CurrentRevision();
  }
  // Catch-up steps until every watcher is synced (a queue bound may stop it:
  // then use CatchUp).
  void SyncAll() {
    for (int i = 0; i < 100'000; ++i) {
      if (!hub->SyncUnsynced(1'000)) return;
    }
    ADD_FAILURE() << "catch-up does not end";
  }
  // Catch-up steps and Polls of one watcher until every watcher is synced;
  // returns the watcher's messages.
  std::vector<WatchMessage> CatchUp(WatchId id, size_t max_events = 1'000'000) {
    std::vector<WatchMessage> out;
    for (int i = 0; i < 100'000; ++i) {
      const bool more = hub->SyncUnsynced(1'000);
      for (WatchMessage& m : PollAll(id, max_events)) out.push_back(std::move(m));
      if (!more) return out;
    }
    ADD_FAILURE() << "catch-up does not end";
    return out;
  }
  WatchId MustCreate(const WatchOptions& o, WatchId id = 0) {
    Result<WatchId> r = hub->Create(o, id);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? r.value() : -1;
  }
  // Every message the watcher has now, one Poll each.
  std::vector<WatchMessage> PollAll(WatchId id, size_t max_events = 1'000'000) {
    std::vector<WatchMessage> out;
    WatchMessage m;
    while (hub->Poll(id, max_events, &m)) out.push_back(std::move(m));
    return out;
  }
  // The events of all messages, in order.
  static std::vector<Event> EventsOf(const std::vector<WatchMessage>& messages) {
    std::vector<Event> out;
    for (const WatchMessage& m : messages) {
      for (const EventRef& e : m.events) out.push_back(*e);
    }
    return out;
  }

  MemEventSource source;
  std::unique_ptr<WatchHub> hub;
  std::vector<Event> held;
  int64_t notified = 0;
};

// Compares what a watcher got with what it must get: key, type, revision,
// value, version and, when the watcher asked for it, prev_kv.
inline void ExpectSameEvents(const std::vector<Event>& want, const std::vector<Event>& got,
                             bool check_prev_kv) {
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE("event " + std::to_string(i));
    EXPECT_EQ(want[i].type, got[i].type);
    EXPECT_EQ(want[i].kv, got[i].kv);
    if (check_prev_kv) {
      EXPECT_EQ(want[i].has_prev_kv, got[i].has_prev_kv);
      if (want[i].has_prev_kv) {
        EXPECT_EQ(want[i].prev_kv, got[i].prev_kv);
      }
    }
  }
}

}  // namespace natcd::watch_testing
