// WatchHub: see natcd/watch_hub.h for the contract.
//
// Structure:
//   - Every watcher lives in watchers_ (by id) and is in exactly one state:
//     unsynced (in unsynced_, catching up), synced (in the group of its
//     (key, range_end), fed by Notify) or canceled (in neither; only its
//     cancel message is left for Poll).
//   - Synced watchers that share (key, range_end) share a Group, so Notify
//     matches an event once per group, not once per watcher. Single-key
//     groups are found by a hash lookup; range groups by a RangeIndex.
//   - Events are never copied: Notify wraps each event of the commit in an
//     aliasing shared_ptr that owns the commit's vector, and the history ring
//     and every queue hold those pointers.
//   - ready_ holds exactly the watchers that have something for Poll, so
//     Ready() costs O(ready), not O(watchers).
//
// The ordering argument: each watcher has a next revision (the first revision
// it has not been handed yet). Only two paths hand it events: Notify (synced
// watchers only, events at or above the next revision, which for a synced
// watcher is always above notified_revision_) and a catch-up step (unsynced
// watchers only, events from the next revision up to at most
// notified_revision_). A catch-up step hands whole revisions and then moves
// the next revision past them; a watcher joins the synced group only when its
// next revision is notified_revision_ + 1, i.e. exactly where the next Notify
// starts. Since everything runs on one thread, no Notify can slip between the
// last catch-up step and the join. So each revision is handed once, in order.
// A synced watcher whose queue overflows (catch_up_when_slow) goes back to
// unsynced with the overflowing revision as its next one, none of that
// revision queued: catch-up resumes exactly there.

#include "natcd/watch_hub.h"

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <list>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "natcd/key_range.h"

namespace natcd {

namespace watch_internal {

constexpr size_t kNoPos = static_cast<size_t>(-1);

// A catch-up step from the ring scans at most this many times its event
// budget, so a watcher on a rarely written key does not walk the whole ring
// in one step.
constexpr size_t kRingScanFactor = 8;

constexpr const char* kCompactedReason = "etcdserver: mvcc: required revision has been compacted";
constexpr const char* kSlowConsumerReason = "slow consumer";

[[noreturn]] void CheckFailed(const char* condition, const char* file, int line) {
  std::fprintf(stderr, "%s:%d: WatchHub invariant failed: %s\n", file, line, condition);
  std::abort();
}

inline int64_t RevisionOf(const Event& e) { return e.kv.mod_revision; }
inline int64_t RevisionOf(const EventRef& e) { return e->kv.mod_revision; }

// What an event in the history ring counts against history_bytes_max.
inline size_t RingBytesOf(const Event& e) {
  return sizeof(Event) + e.kv.key.size() + e.kv.value.size() + e.prev_kv.key.size() +
         e.prev_kv.value.size();
}

// range_end "\0": every key >= key.
inline bool IsFromKey(std::string_view range_end) {
  return range_end.size() == 1 && range_end[0] == '\0';
}

struct Watcher;

// The synced watchers of one (key, range_end).
struct Group {
  std::string key;
  std::string range_end;  // empty: the single key
  // Invariant: not empty while the group exists; watchers[i]->group_pos == i.
  std::vector<Watcher*> watchers;
  // Notify scratch: indexes into the commit of the events in this group's
  // range. Empty outside Notify.
  std::vector<uint32_t> matched;
  size_t index_pos = kNoPos;  // position in RangeIndex::groups_
};

// Finds the range groups that contain a key: O(log groups + matches) for
// disjoint ranges such as sibling prefixes. Range groups are few and change
// rarely compared to events, so the sorted arrays are rebuilt lazily.
class RangeIndex {
 public:
  bool empty() const { return groups_.empty(); }

  void Add(Group* g) {
    g->index_pos = groups_.size();
    groups_.push_back(g);
    dirty_ = true;
  }

  void Remove(Group* g) {
    assert(g->index_pos < groups_.size() && groups_[g->index_pos] == g);
    groups_[g->index_pos] = groups_.back();
    groups_[g->index_pos]->index_pos = g->index_pos;
    groups_.pop_back();
    g->index_pos = kNoPos;
    dirty_ = true;
  }

  template <typename F>
  void ForEachContaining(std::string_view key, F&& f) {
    if (dirty_) Rebuild();
    // from_key_ is sorted by key: every group whose key <= key contains it.
    for (Group* g : from_key_) {
      if (key < std::string_view(g->key)) break;
      f(g);
    }
    // bounded_ is sorted by key; end_max_[i] is the largest range_end of
    // bounded_[0..i], so the backward scan stops once nothing earlier can
    // reach key.
    auto it = std::upper_bound(bounded_.begin(), bounded_.end(), key,
                               [](std::string_view k, const Group* g) { return k < g->key; });
    for (size_t i = static_cast<size_t>(it - bounded_.begin()); i-- > 0;) {
      if (std::string_view(*end_max_[i]) <= key) break;
      if (key < std::string_view(bounded_[i]->range_end)) f(bounded_[i]);
    }
  }

  size_t size() const { return groups_.size(); }
  const std::vector<Group*>& groups() const { return groups_; }

 private:
  void Rebuild() {
    from_key_.clear();
    bounded_.clear();
    for (Group* g : groups_) (IsFromKey(g->range_end) ? from_key_ : bounded_).push_back(g);
    auto by_key = [](const Group* a, const Group* b) { return a->key < b->key; };
    std::sort(from_key_.begin(), from_key_.end(), by_key);
    std::sort(bounded_.begin(), bounded_.end(), by_key);
    end_max_.resize(bounded_.size());
    for (size_t i = 0; i < bounded_.size(); ++i) {
      const std::string* end = &bounded_[i]->range_end;
      end_max_[i] = (i > 0 && *end_max_[i - 1] > *end) ? end_max_[i - 1] : end;
    }
    dirty_ = false;
  }

  std::vector<Group*> groups_;  // unordered; Group::index_pos
  bool dirty_ = false;
  std::vector<Group*> from_key_;
  std::vector<Group*> bounded_;
  std::vector<const std::string*> end_max_;
};

enum class WatcherState : uint8_t { kUnsynced, kSynced, kCanceled };

struct Watcher {
  WatchId id = 0;
  std::string key;
  std::string range_end;
  bool prev_kv = false;
  bool no_put = false;
  bool no_delete = false;
  bool progress_notify = false;
  bool catch_up_when_slow = false;
  WatcherState state = WatcherState::kUnsynced;

  // Unsynced: the next revision to hand to the watcher.
  // Synced: the start revision; the next revision is
  // max(next_revision, notified_revision_ + 1) (kept implicit so Notify
  // does not touch watchers its events do not match).
  // Invariant: every event of the watcher's range and filters below the next
  // revision (and >= its start) is queued or was taken by Poll.
  int64_t next_revision = 0;

  // Events not yet taken by Poll, ascending, whole revisions.
  std::deque<EventRef> queue;

  Group* group = nullptr;  // synced only
  size_t group_pos = kNoPos;
  std::list<Watcher*>::iterator unsynced_it;  // unsynced only
  size_t ready_pos = kNoPos;                  // position in ready_, kNoPos if absent

  // RequestProgress that waits for the watcher to be synced and drained.
  bool progress_requested = false;
  // A progress notification queued before every event now in queue.
  bool progress_pending = false;
  int64_t progress_revision = 0;

  // Notify scratch: the watcher's queue overflowed at overflow_revision
  // (none of that revision's events is queued); it is canceled or falls
  // behind at the end of Notify.
  bool overflowed = false;
  int64_t overflow_revision = 0;

  // Canceled only.
  std::string cancel_reason;
  int64_t cancel_revision = 0;
  int64_t compact_revision = 0;

  bool Wants(const Event& e) const { return e.type == Event::Type::kPut ? !no_put : !no_delete; }
  bool HasMessage() const {
    return progress_pending || !queue.empty() || state == WatcherState::kCanceled;
  }
};

}  // namespace watch_internal

using watch_internal::Group;
using watch_internal::IsFromKey;
using watch_internal::kNoPos;
using watch_internal::RevisionOf;
using watch_internal::Watcher;
using watch_internal::WatcherState;

struct WatchHub::Impl {
  Impl(EventSource* source, WatchHubOptions options);

  Result<WatchId> Create(const WatchOptions& options, WatchId requested_id);
  Status Cancel(WatchId id);
  void Notify(std::shared_ptr<const std::vector<Event>> events, int64_t new_revision);
  bool SyncUnsynced(size_t max_watchers);
  bool Poll(WatchId id, size_t max_events, WatchMessage* out);
  std::vector<WatchId> Ready() const;
  Status RequestProgress(WatchId id);
  void NotifyProgressAll();
  void CancelAll(const std::string& reason);
  void CheckInvariants() const;

  int64_t NextRevision(const Watcher& w) const {
    return w.state == WatcherState::kSynced ? std::max(w.next_revision, notified_revision_ + 1)
                                            : w.next_revision;
  }
  // The largest revision whose events (of this watcher) were all taken by
  // Poll.
  int64_t DeliveredRevision(const Watcher& w) const {
    return w.queue.empty() ? NextRevision(w) - 1 : RevisionOf(w.queue.front()) - 1;
  }

  void MarkReady(Watcher* w);
  void UnmarkReady(Watcher* w);
  void JoinSynced(Watcher* w);
  void LeaveSynced(Watcher* w);
  // A synced watcher whose queue overflowed catches up from next_revision.
  void FallBehind(Watcher* w, int64_t next_revision);
  void CancelWatcher(Watcher* w, std::string_view reason, int64_t compact_revision);
  void Remove(Watcher* w);
  void QueueProgress(Watcher* w);
  void MaybeQueueRequestedProgress(Watcher* w);
  void SyncStep(Watcher* w);
  void CatchUpFromRing(Watcher* w, size_t budget);
  void CatchUpFromSource(Watcher* w, size_t budget);
  void Deliver(Watcher* w, const std::vector<uint32_t>& matched);
  void NoteMatch(Group* g, uint32_t index);

  // Constant after construction.
  EventSource* const source_;
  const WatchHubOptions options_;

  std::unordered_map<WatchId, std::unique_ptr<Watcher>> watchers_;
  WatchId next_auto_id_ = 1;

  // The last new_revision given to Notify (the source's revision at
  // construction before the first Notify). Events above it reach the hub
  // only through Notify.
  int64_t notified_revision_ = 0;

  // Invariant: holds every event with ring_start_ <= revision <=
  // notified_revision_, ascending; at most history_events_max events and
  // history_bytes_max bytes (RingBytesOf), ring_bytes_ in all.
  std::deque<EventRef> ring_;
  int64_t ring_start_ = 1;
  size_t ring_bytes_ = 0;

  // Groups of synced watchers, keyed by key (single key) or (key, range_end).
  std::unordered_map<std::string, std::unique_ptr<Group>> key_groups_;
  std::map<std::pair<std::string, std::string>, std::unique_ptr<Group>> range_groups_;
  watch_internal::RangeIndex range_index_;

  // Round-robin order of catch-up.
  std::list<Watcher*> unsynced_;

  // Exactly the watchers with HasMessage(); Watcher::ready_pos.
  std::vector<Watcher*> ready_;

  // Notify scratch, kept to reuse their capacity.
  std::vector<EventRef> batch_;
  std::vector<Group*> touched_;
  std::vector<Watcher*> overflowed_;
  std::vector<Event> read_;
};

namespace {

WatchHubOptions Sanitized(WatchHubOptions options) {
  // A zero bound would make every watcher a slow consumer or stall catch-up.
  options.watch_queue_events_max = std::max<size_t>(options.watch_queue_events_max, 1);
  options.catchup_events_max = std::max<size_t>(options.catchup_events_max, 1);
  return options;
}

}  // namespace

WatchHub::Impl::Impl(EventSource* source, WatchHubOptions options)
    : source_(source), options_(Sanitized(options)) {
  assert(source_ != nullptr);
  notified_revision_ = source_->CurrentRevision();
  ring_start_ = notified_revision_ + 1;
}

void WatchHub::Impl::MarkReady(Watcher* w) {
  if (w->ready_pos != kNoPos) return;
  w->ready_pos = ready_.size();
  ready_.push_back(w);
}

void WatchHub::Impl::UnmarkReady(Watcher* w) {
  if (w->ready_pos == kNoPos) return;
  assert(ready_[w->ready_pos] == w);
  ready_[w->ready_pos] = ready_.back();
  ready_[w->ready_pos]->ready_pos = w->ready_pos;
  ready_.pop_back();
  w->ready_pos = kNoPos;
}

Result<WatchId> WatchHub::Impl::Create(const WatchOptions& options, WatchId requested_id) {
  if (options.key.empty()) {
    return Status::InvalidArgument("ErrEmptyKey", "etcdserver: key is not provided");
  }
  if (!options.range_end.empty() && !IsFromKey(options.range_end) &&
      options.range_end <= options.key) {
    return Status::InvalidArgument("ErrEmptyWatcherRange", "mvcc: watcher range is empty");
  }
  if (requested_id < 0) {
    return Status::InvalidArgument("ErrInvalidWatchID",
                                   "natcd: watch ID must be positive (0: the server picks)");
  }
  if (watchers_.size() >= options_.watchers_max) {
    return Status::InvalidArgument(
        "ErrTooManyWatchers",
        "natcd: too many watchers (max " + std::to_string(options_.watchers_max) + ")");
  }
  WatchId id = requested_id;
  if (id == 0) {
    while (watchers_.count(next_auto_id_) != 0) ++next_auto_id_;
    id = next_auto_id_++;
  } else if (watchers_.count(id) != 0) {
    return Status::InvalidArgument("ErrWatcherDuplicateID",
                                   "etcdserver: mvcc: duplicate watch ID provided on the "
                                   "WatchStream");
  }

  auto owned = std::make_unique<Watcher>();
  Watcher* w = owned.get();
  w->id = id;
  w->key = options.key;
  w->range_end = options.range_end;
  w->prev_kv = options.prev_kv;
  w->no_put = options.no_put;
  w->no_delete = options.no_delete;
  w->progress_notify = options.progress_notify;
  w->catch_up_when_slow = options.catch_up_when_slow;
  w->next_revision =
      options.start_revision > 0 ? options.start_revision : source_->CurrentRevision() + 1;
  watchers_.emplace(id, std::move(owned));

  // Every watcher starts unsynced; the checks below move it on.
  w->state = WatcherState::kUnsynced;
  w->unsynced_it = unsynced_.insert(unsynced_.end(), w);
  const int64_t compact_revision = source_->CompactRevision();
  if (options.start_revision > 0 && options.start_revision < compact_revision) {
    // As etcd: the watcher exists and its first message is the cancel.
    CancelWatcher(w, watch_internal::kCompactedReason, compact_revision);
  } else if (w->next_revision > notified_revision_) {
    JoinSynced(w);
  }
  return id;
}

void WatchHub::Impl::JoinSynced(Watcher* w) {
  assert(w->state == WatcherState::kUnsynced && w->group == nullptr);
  unsynced_.erase(w->unsynced_it);
  w->state = WatcherState::kSynced;
  std::unique_ptr<Group>* slot;
  if (w->range_end.empty()) {
    slot = &key_groups_[w->key];
  } else {
    slot = &range_groups_[{w->key, w->range_end}];
  }
  if (*slot == nullptr) {
    *slot = std::make_unique<Group>();
    (*slot)->key = w->key;
    (*slot)->range_end = w->range_end;
    if (!w->range_end.empty()) range_index_.Add(slot->get());
  }
  Group* g = slot->get();
  w->group = g;
  w->group_pos = g->watchers.size();
  g->watchers.push_back(w);
  MaybeQueueRequestedProgress(w);
}

void WatchHub::Impl::LeaveSynced(Watcher* w) {
  assert(w->state == WatcherState::kSynced);
  // The next revision was implicit while synced; make it explicit.
  w->next_revision = NextRevision(*w);
  Group* g = w->group;
  assert(g->watchers[w->group_pos] == w);
  g->watchers[w->group_pos] = g->watchers.back();
  g->watchers[w->group_pos]->group_pos = w->group_pos;
  g->watchers.pop_back();
  w->group = nullptr;
  w->group_pos = kNoPos;
  if (g->watchers.empty()) {
    assert(g->matched.empty());
    // Erase by a copy of the key: erasing frees g.
    if (g->range_end.empty()) {
      key_groups_.erase(std::string(g->key));
    } else {
      range_index_.Remove(g);
      range_groups_.erase(std::pair<std::string, std::string>(g->key, g->range_end));
    }
  }
}

void WatchHub::Impl::FallBehind(Watcher* w, int64_t next_revision) {
  LeaveSynced(w);
  // Every event below next_revision is queued or was taken; none at or
  // above it is (Deliver dropped the part of that revision it had queued).
  w->next_revision = next_revision;
  w->state = WatcherState::kUnsynced;
  w->unsynced_it = unsynced_.insert(unsynced_.end(), w);
}

void WatchHub::Impl::CancelWatcher(Watcher* w, std::string_view reason, int64_t compact_revision) {
  assert(w->state != WatcherState::kCanceled);
  w->cancel_revision = DeliveredRevision(*w);
  if (w->state == WatcherState::kSynced) {
    LeaveSynced(w);
  } else {
    unsynced_.erase(w->unsynced_it);
  }
  w->state = WatcherState::kCanceled;
  w->cancel_reason = reason;
  w->compact_revision = compact_revision;
  // Free at once: a canceled slow consumer must not pin a queue's worth of
  // commits until its client comes back.
  std::deque<EventRef>().swap(w->queue);
  w->progress_requested = false;
  w->progress_pending = false;
  MarkReady(w);
}

void WatchHub::Impl::Remove(Watcher* w) {
  if (w->state == WatcherState::kSynced) {
    LeaveSynced(w);
  } else if (w->state == WatcherState::kUnsynced) {
    unsynced_.erase(w->unsynced_it);
  }
  UnmarkReady(w);
  watchers_.erase(w->id);  // frees w
}

Status WatchHub::Impl::Cancel(WatchId id) {
  auto it = watchers_.find(id);
  if (it == watchers_.end()) {
    return Status::NotFound("ErrWatcherNotExist", "mvcc: watcher does not exist");
  }
  Remove(it->second.get());
  return Status::OK();
}

void WatchHub::Impl::NoteMatch(Group* g, uint32_t index) {
  if (g->matched.empty()) touched_.push_back(g);
  g->matched.push_back(index);
}

void WatchHub::Impl::Deliver(Watcher* w, const std::vector<uint32_t>& matched) {
  const size_t queue_max = options_.watch_queue_events_max;
  const int64_t min_revision = w->next_revision;
  for (uint32_t index : matched) {
    const EventRef& ref = batch_[index];
    const Event& e = *ref;
    const int64_t revision = RevisionOf(e);
    if (revision < min_revision) continue;  // a watcher waiting for a future start revision
    if (!w->Wants(e)) continue;
    if (w->queue.size() >= queue_max && RevisionOf(w->queue.front()) != revision) {
      // Whole revisions only: the part of this one already queued goes
      // (the queue's front is older, so the queue is not left empty).
      while (RevisionOf(w->queue.back()) == revision) w->queue.pop_back();
      // Dealt with after the loop: the group's watcher list must not change
      // while Notify walks it.
      w->overflowed = true;
      w->overflow_revision = revision;
      overflowed_.push_back(w);
      return;
    }
    if (w->queue.empty()) MarkReady(w);
    w->queue.push_back(ref);
  }
}

void WatchHub::Impl::Notify(std::shared_ptr<const std::vector<Event>> events,
                            int64_t new_revision) {
  assert(events != nullptr);
  assert(new_revision >= notified_revision_);
  const std::vector<Event>& evs = *events;
  assert(evs.size() <= UINT32_MAX);
  assert(evs.empty() || RevisionOf(evs.front()) > notified_revision_);
  assert(evs.empty() || RevisionOf(evs.back()) <= new_revision);

  batch_.clear();
  batch_.reserve(evs.size());
  for (size_t i = 0; i < evs.size(); ++i) {
    assert(i == 0 || RevisionOf(evs[i - 1]) <= RevisionOf(evs[i]));
    // Aliasing: shares ownership of the commit, points at one event.
    batch_.emplace_back(events, &evs[i]);
  }

  // Match each event once per group...
  if (!key_groups_.empty() || !range_index_.empty()) {
    for (uint32_t i = 0; i < evs.size(); ++i) {
      const std::string& key = evs[i].kv.key;
      if (!key_groups_.empty()) {
        auto it = key_groups_.find(key);
        if (it != key_groups_.end()) NoteMatch(it->second.get(), i);
      }
      if (!range_index_.empty()) {
        range_index_.ForEachContaining(key, [&](Group* g) { NoteMatch(g, i); });
      }
    }
  }
  // ...then hand each group's matches to its watchers, one watcher at a time
  // (a watcher is in one group, so its events stay in revision order).
  for (Group* g : touched_) {
    for (Watcher* w : g->watchers) Deliver(w, g->matched);
    g->matched.clear();
  }
  touched_.clear();

  if (options_.history_events_max > 0 && options_.history_bytes_max > 0) {
    for (EventRef& ref : batch_) {
      ring_bytes_ += watch_internal::RingBytesOf(*ref);
      ring_.push_back(std::move(ref));
    }
  }
  batch_.clear();
  notified_revision_ = new_revision;
  // Trim whole revisions so the ring covers [ring_start_, notified_revision_].
  while (ring_.size() > options_.history_events_max || ring_bytes_ > options_.history_bytes_max) {
    const int64_t revision = RevisionOf(ring_.front());
    while (!ring_.empty() && RevisionOf(ring_.front()) == revision) {
      ring_bytes_ -= watch_internal::RingBytesOf(*ring_.front());
      ring_.pop_front();
    }
    ring_start_ = revision + 1;
  }
  if (ring_.empty()) ring_start_ = notified_revision_ + 1;

  for (Watcher* w : overflowed_) {
    w->overflowed = false;
    if (w->catch_up_when_slow) {
      FallBehind(w, w->overflow_revision);
    } else {
      CancelWatcher(w, watch_internal::kSlowConsumerReason, 0);
    }
  }
  overflowed_.clear();
}

bool WatchHub::Impl::SyncUnsynced(size_t max_watchers) {
  const size_t n = std::min(max_watchers, unsynced_.size());
  for (size_t i = 0; i < n && !unsynced_.empty(); ++i) {
    Watcher* w = unsynced_.front();
    // Round-robin: to the back first (SyncStep may take it out of the list).
    unsynced_.splice(unsynced_.end(), unsynced_, unsynced_.begin());
    SyncStep(w);
  }
  return !unsynced_.empty();
}

void WatchHub::Impl::SyncStep(Watcher* w) {
  assert(w->state == WatcherState::kUnsynced);
  const size_t queue_max = options_.watch_queue_events_max;
  if (w->queue.size() >= queue_max) return;  // the consumer must take some first
  const size_t budget = std::min(options_.catchup_events_max, queue_max - w->queue.size());
  if (w->next_revision <= notified_revision_) {
    if (w->next_revision >= ring_start_) {
      CatchUpFromRing(w, budget);
    } else {
      CatchUpFromSource(w, budget);
    }
  }
  if (w->state == WatcherState::kUnsynced && w->next_revision > notified_revision_) {
    assert(w->next_revision == notified_revision_ + 1);
    JoinSynced(w);
  }
}

void WatchHub::Impl::CatchUpFromRing(Watcher* w, size_t budget) {
  const size_t scan_max = budget * watch_internal::kRingScanFactor;
  auto it = std::lower_bound(
      ring_.begin(), ring_.end(), w->next_revision,
      [](const EventRef& e, int64_t revision) { return RevisionOf(e) < revision; });
  size_t matched = 0;
  size_t scanned = 0;
  int64_t next = w->next_revision;
  while (it != ring_.end()) {
    const int64_t revision = RevisionOf(*it);
    for (; it != ring_.end() && RevisionOf(*it) == revision; ++it) {
      ++scanned;
      const Event& e = **it;
      if (!KeyInRange(e.kv.key, w->key, w->range_end) || !w->Wants(e)) continue;
      if (w->queue.empty()) MarkReady(w);
      w->queue.push_back(*it);
      ++matched;
    }
    next = revision + 1;
    if (matched >= budget || scanned >= scan_max) break;
  }
  w->next_revision = it == ring_.end() ? notified_revision_ + 1 : next;
}

void WatchHub::Impl::CatchUpFromSource(Watcher* w, size_t budget) {
  const int64_t from = w->next_revision;
  const int64_t to = notified_revision_;
  read_.clear();
  Status s = source_->ReadEvents(w->key, w->range_end, from, to, budget, w->prev_kv, &read_);
  if (s.IsCompacted()) {
    const int64_t compact_revision =
        s.compact_revision() > 0 ? s.compact_revision() : source_->CompactRevision();
    CancelWatcher(w, watch_internal::kCompactedReason, compact_revision);
    return;
  }
  if (s.code() == Status::Code::kBusy) return;  // transient: the next step retries
  if (!s.ok()) {
    CancelWatcher(w, s.ToString(), 0);
    return;
  }
  // The source stops after the revision where it reached budget; below the
  // budget it returned everything up to `to`.
  const int64_t next = read_.size() >= budget ? RevisionOf(read_.back()) + 1 : to + 1;
  auto kept = std::make_shared<std::vector<Event>>();
  kept->reserve(read_.size());
  for (size_t i = 0; i < read_.size(); ++i) {
    Event& e = read_[i];
    assert(RevisionOf(e) >= from && RevisionOf(e) <= to);
    assert(i == 0 || RevisionOf(read_[i - 1]) <= RevisionOf(e));
    assert(KeyInRange(e.kv.key, w->key, w->range_end));
    if (w->Wants(e)) kept->push_back(std::move(e));
  }
  read_.clear();
  if (!kept->empty() && w->queue.empty()) MarkReady(w);
  std::shared_ptr<const std::vector<Event>> owner = std::move(kept);
  for (const Event& e : *owner) w->queue.emplace_back(owner, &e);
  w->next_revision = next;
}

bool WatchHub::Impl::Poll(WatchId id, size_t max_events, WatchMessage* out) {
  auto found = watchers_.find(id);
  if (found == watchers_.end()) return false;
  Watcher* w = found->second.get();
  if (!w->HasMessage()) return false;

  out->watch_id = id;
  out->events.clear();
  out->prev_kv = w->prev_kv;
  out->progress = false;
  out->canceled = false;
  out->cancel_reason.clear();
  out->compact_revision = 0;

  if (w->progress_pending) {
    // Queued when the queue was empty: it comes before every queued event.
    out->progress = true;
    out->revision = w->progress_revision;
    w->progress_pending = false;
  } else if (!w->queue.empty()) {
    out->revision = notified_revision_;
    if (max_events == 0) max_events = 1;
    int64_t last = 0;
    while (!w->queue.empty() &&
           (out->events.size() < max_events || RevisionOf(w->queue.front()) == last)) {
      last = RevisionOf(w->queue.front());
      out->events.push_back(std::move(w->queue.front()));
      w->queue.pop_front();
    }
    if (w->queue.empty()) MaybeQueueRequestedProgress(w);
  } else {
    assert(w->state == WatcherState::kCanceled);
    out->revision = w->cancel_revision;
    out->canceled = true;
    out->cancel_reason = std::move(w->cancel_reason);
    out->compact_revision = w->compact_revision;
    Remove(w);
    return true;
  }
  if (!w->HasMessage()) UnmarkReady(w);
  return true;
}

std::vector<WatchId> WatchHub::Impl::Ready() const {
  std::vector<WatchId> ids;
  ids.reserve(ready_.size());
  for (const Watcher* w : ready_) ids.push_back(w->id);
  std::sort(ids.begin(), ids.end());
  return ids;
}

void WatchHub::Impl::QueueProgress(Watcher* w) {
  assert(w->state == WatcherState::kSynced && w->queue.empty());
  // Synced with nothing queued: every event up to notified_revision_ was
  // taken (or filtered), and every later one will be queued after this.
  w->progress_pending = true;
  w->progress_revision = notified_revision_;
  w->progress_requested = false;
  MarkReady(w);
}

void WatchHub::Impl::MaybeQueueRequestedProgress(Watcher* w) {
  if (w->progress_requested && w->state == WatcherState::kSynced && w->queue.empty()) {
    QueueProgress(w);
  }
}

Status WatchHub::Impl::RequestProgress(WatchId id) {
  auto it = watchers_.find(id);
  if (it == watchers_.end()) {
    return Status::NotFound("ErrWatcherNotExist", "mvcc: watcher does not exist");
  }
  Watcher* w = it->second.get();
  if (w->state == WatcherState::kCanceled) return Status::OK();  // its last message is queued
  w->progress_requested = true;
  MaybeQueueRequestedProgress(w);
  return Status::OK();
}

void WatchHub::Impl::NotifyProgressAll() {
  // Periodic (minutes), so a walk over all watchers is fine here.
  for (auto& [id, owned] : watchers_) {
    Watcher* w = owned.get();
    if (w->progress_notify && w->state == WatcherState::kSynced && w->queue.empty()) {
      QueueProgress(w);
    }
  }
}

void WatchHub::Impl::CancelAll(const std::string& reason) {
  for (auto& [id, owned] : watchers_) {
    if (owned->state != WatcherState::kCanceled) CancelWatcher(owned.get(), reason, 0);
  }
}

// Checked even with NDEBUG: this is a test hook, not a hot path.
#define NATCD_WATCH_CHECK(cond) \
  ((cond) ? (void)0 : watch_internal::CheckFailed(#cond, __FILE__, __LINE__))

void WatchHub::Impl::CheckInvariants() const {
  // The ring.
  NATCD_WATCH_CHECK(ring_.size() <= options_.history_events_max);
  NATCD_WATCH_CHECK(ring_bytes_ <= options_.history_bytes_max);
  NATCD_WATCH_CHECK(ring_start_ <= notified_revision_ + 1);
  size_t ring_bytes = 0;
  for (size_t i = 0; i < ring_.size(); ++i) {
    NATCD_WATCH_CHECK(RevisionOf(ring_[i]) >= ring_start_);
    NATCD_WATCH_CHECK(RevisionOf(ring_[i]) <= notified_revision_);
    NATCD_WATCH_CHECK(i == 0 || RevisionOf(ring_[i - 1]) <= RevisionOf(ring_[i]));
    ring_bytes += watch_internal::RingBytesOf(*ring_[i]);
  }
  NATCD_WATCH_CHECK(ring_bytes == ring_bytes_);
  // Groups.
  size_t synced = 0;
  for (const auto& [key, g] : key_groups_) {
    NATCD_WATCH_CHECK(g->key == key);
    NATCD_WATCH_CHECK(g->range_end.empty());
    NATCD_WATCH_CHECK(!g->watchers.empty());
    NATCD_WATCH_CHECK(g->matched.empty());
    synced += g->watchers.size();
  }
  for (const auto& [k, g] : range_groups_) {
    NATCD_WATCH_CHECK(g->key == k.first);
    NATCD_WATCH_CHECK(g->range_end == k.second);
    NATCD_WATCH_CHECK(!g->range_end.empty());
    NATCD_WATCH_CHECK(!g->watchers.empty());
    NATCD_WATCH_CHECK(g->matched.empty());
    NATCD_WATCH_CHECK(g->index_pos < range_index_.size());
    NATCD_WATCH_CHECK(range_index_.groups()[g->index_pos] == g.get());
    synced += g->watchers.size();
  }
  NATCD_WATCH_CHECK(range_index_.size() == range_groups_.size());
  NATCD_WATCH_CHECK(touched_.empty());
  NATCD_WATCH_CHECK(overflowed_.empty());
  // Watchers.
  size_t unsynced = 0;
  size_t ready = 0;
  for (const auto& [id, owned] : watchers_) {
    const Watcher& w = *owned;
    NATCD_WATCH_CHECK(w.id == id);
    NATCD_WATCH_CHECK(id > 0);
    NATCD_WATCH_CHECK(!w.overflowed);
    switch (w.state) {
      case WatcherState::kSynced:
        NATCD_WATCH_CHECK(w.group != nullptr);
        NATCD_WATCH_CHECK(w.group->watchers[w.group_pos] == &w);
        NATCD_WATCH_CHECK(w.group->key == w.key);
        NATCD_WATCH_CHECK(w.group->range_end == w.range_end);
        // A request on a synced watcher waits only for its queue to drain.
        NATCD_WATCH_CHECK(!w.progress_requested || !w.queue.empty());
        NATCD_WATCH_CHECK(synced > 0);
        --synced;
        break;
      case WatcherState::kUnsynced:
        NATCD_WATCH_CHECK(w.group == nullptr);
        NATCD_WATCH_CHECK(*w.unsynced_it == &w);
        // Else it would have joined the synced group.
        NATCD_WATCH_CHECK(w.next_revision <= notified_revision_);
        // Only one that fell behind may still have a progress notification
        // queued (before its events; still truthful), so never with an empty
        // queue: a new watcher gets none before it is synced.
        NATCD_WATCH_CHECK(!w.progress_pending || !w.queue.empty());
        ++unsynced;
        break;
      case WatcherState::kCanceled:
        NATCD_WATCH_CHECK(w.group == nullptr);
        NATCD_WATCH_CHECK(w.queue.empty());
        NATCD_WATCH_CHECK(!w.progress_pending);
        NATCD_WATCH_CHECK(!w.progress_requested);
        break;
    }
    NATCD_WATCH_CHECK(!w.progress_pending || w.progress_revision <= notified_revision_);
    const int64_t next = NextRevision(w);
    for (size_t i = 0; i < w.queue.size(); ++i) {
      const Event& e = *w.queue[i];
      NATCD_WATCH_CHECK(KeyInRange(e.kv.key, w.key, w.range_end));
      NATCD_WATCH_CHECK(w.Wants(e));
      NATCD_WATCH_CHECK(RevisionOf(e) < next);
      NATCD_WATCH_CHECK(i == 0 || RevisionOf(*w.queue[i - 1]) <= RevisionOf(e));
    }
    if (w.HasMessage()) {
      NATCD_WATCH_CHECK(w.ready_pos < ready_.size());
      NATCD_WATCH_CHECK(ready_[w.ready_pos] == &w);
      ++ready;
    } else {
      NATCD_WATCH_CHECK(w.ready_pos == kNoPos);
    }
  }
  NATCD_WATCH_CHECK(synced == 0);
  NATCD_WATCH_CHECK(unsynced == unsynced_.size());
  NATCD_WATCH_CHECK(ready == ready_.size());
}

#undef NATCD_WATCH_CHECK

// ---- WatchHub: forwards to Impl --------------------------------------------

WatchHub::WatchHub(EventSource* source, WatchHubOptions options)
    : impl_(std::make_unique<Impl>(source, options)) {}

WatchHub::~WatchHub() = default;

Result<WatchId> WatchHub::Create(const WatchOptions& options, WatchId requested_id) {
  return impl_->Create(options, requested_id);
}

Status WatchHub::Cancel(WatchId id) { return impl_->Cancel(id); }

void WatchHub::Notify(std::shared_ptr<const std::vector<Event>> events, int64_t new_revision) {
  impl_->Notify(std::move(events), new_revision);
}

bool WatchHub::SyncUnsynced(size_t max_watchers) { return impl_->SyncUnsynced(max_watchers); }

bool WatchHub::Poll(WatchId id, size_t max_events, WatchMessage* out) {
  return impl_->Poll(id, max_events, out);
}

std::vector<WatchId> WatchHub::Ready() const { return impl_->Ready(); }

bool WatchHub::CancelPending(WatchId id) const {
  auto found = impl_->watchers_.find(id);
  return found != impl_->watchers_.end() && found->second->state == WatcherState::kCanceled;
}

WatchHub::Backlog WatchHub::BacklogOf(WatchId id) const {
  auto found = impl_->watchers_.find(id);
  if (found == impl_->watchers_.end()) return {};
  const Watcher& w = *found->second;
  return {w.queue.size(), w.progress_pending};
}

bool WatchHub::Drained(WatchId id, int64_t* revision) const {
  auto found = impl_->watchers_.find(id);
  if (found == impl_->watchers_.end()) return false;
  const Watcher& w = *found->second;
  if (w.state != WatcherState::kSynced || !w.queue.empty() || w.progress_pending) return false;
  // A watcher waiting for a future start revision is not where the others are.
  if (impl_->NextRevision(w) != impl_->notified_revision_ + 1) return false;
  *revision = impl_->notified_revision_;
  return true;
}

Status WatchHub::RequestProgress(WatchId id) { return impl_->RequestProgress(id); }

void WatchHub::NotifyProgressAll() { impl_->NotifyProgressAll(); }

void WatchHub::CancelAll(const std::string& reason) { impl_->CancelAll(reason); }

size_t WatchHub::size() const { return impl_->watchers_.size(); }

size_t WatchHub::unsynced_size() const { return impl_->unsynced_.size(); }

void WatchHub::TEST_CheckInvariants() const { impl_->CheckInvariants(); }

}  // namespace natcd
