// WatchHub: watchers on a key or a range [key, range_end) from a start
// revision, delivering every event exactly once, in revision order.
//
// Thread safety: none. The hub lives on the engine thread, like the store it
// watches; the consumer (the NATS adapter) calls Poll on that thread too.
//
// Life of a watcher:
//   Create -> unsynced (start_revision <= current revision: it must catch up
//   on history) or synced (start_revision is the next revision).
//   An unsynced watcher catches up in bounded steps (SyncUnsynced), first
//   from the in-memory history ring when it reaches back far enough, else
//   from the EventSource (SQLite). When it has seen the current revision it
//   joins the synced group and receives live events from Notify.
//   Writes racing the catch-up cannot cause a gap or a duplicate: every
//   watcher remembers the next revision it must deliver (next_revision) and
//   Notify/catch-up only ever hand it events at or above that revision.
//
// Flow control: each watcher's queue of events not yet taken by Poll is
// bounded by watch_queue_events_max. When a Notify would exceed it, the
// watcher is canceled with the reason "slow consumer" (its queued events are
// dropped, the cancel message says the last revision delivered so the client
// resumes from there + 1), or, created with catch_up_when_slow, it leaves the
// synced group and catches up like a new watcher from the first revision it
// could not queue (etcd moves a slow watcher to its unsynced set and never
// cancels it). Writes and other watchers never wait. One
// exception keeps a watcher live: a single revision with more events than the
// bound is still queued whole when the queue holds nothing older (else that
// watcher could never get past it). Catch-up never overflows a queue: an
// unsynced watcher whose queue is full waits for the consumer.
//
// Compaction: a watcher created below the compact revision, or whose
// catch-up must read the EventSource below it (ErrCompacted), is canceled
// with compact_revision set. Catch-up served from the history ring is not
// canceled: those events are still there, so nothing is lost.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "natcd/status.h"
#include "natcd/types.h"

namespace natcd {

using WatchId = int64_t;
using EventRef = std::shared_ptr<const Event>;

// Where catch-up events below the history ring come from (the MVCC store).
class EventSource {
 public:
  virtual ~EventSource() = default;
  virtual int64_t CurrentRevision() const = 0;
  virtual int64_t CompactRevision() const = 0;
  // Appends to *out the events with from_revision <= revision <= to_revision
  // on keys in [key, range_end) (range_end as in RangeRequest), ascending by
  // (revision, sub-revision). Stops after the revision during which
  // max_events was reached, so a revision is never split. Each event carries
  // prev_kv when with_prev_kv and the key had a previous live state.
  // ErrCompacted when from_revision < CompactRevision().
  virtual Status ReadEvents(const std::string& key, const std::string& range_end,
                            int64_t from_revision, int64_t to_revision, size_t max_events,
                            bool with_prev_kv, std::vector<Event>* out) = 0;
};

struct WatchOptions {
  std::string key;
  std::string range_end;       // as in RangeRequest
  int64_t start_revision = 0;  // inclusive; <= 0: the next revision ("now")
  bool prev_kv = false;
  bool no_put = false;     // filter out PUT events
  bool no_delete = false;  // filter out DELETE events
  bool progress_notify = false;
  // A full queue makes the watcher catch up from history instead of
  // canceling it (etcd's watch API); the NATS contract cancels instead, so
  // that a client that fell behind learns it (docs/PROTOCOL.md).
  bool catch_up_when_slow = false;
};

struct WatchHubOptions {
  size_t watch_queue_events_max = 10'000;  // per watcher, before "slow consumer"
  // The in-memory ring of recent events, bounded both ways (whichever is
  // reached first). It only spares a catching-up watcher reads of the
  // EventSource, which deliver the same events, so it is kept small: it
  // holds every event with its previous value (about 350 bytes each for
  // 100-byte values), so a ring of 100,000 events was a third of the
  // server's memory after 100,000 writes, and a count alone does not bound
  // memory when values are large. history_bytes_max counts keys and values
  // (current and previous) plus the Event itself.
  size_t history_events_max = 10'000;
  size_t history_bytes_max = 2 << 20;
  size_t catchup_events_max = 1'000;  // events read per watcher per catch-up step
  size_t watchers_max = 1'000'000;
};

// One message for the consumer: events of whole revisions, or a progress
// notification, or the cancellation (always the watcher's last message).
struct WatchMessage {
  WatchId watch_id = 0;
  // Events: the store revision known to the hub (the last Notify's
  // new_revision) when the message was formed.
  // Progress: the bookmark. Every event of the watcher at or below it was in
  // this or an earlier message (none is still queued), and every later event
  // comes in a later message. It is the revision known to the hub when the
  // notification was queued.
  // Canceled: the resume point minus one. Every event of the watcher at or
  // below it was taken by Poll in an earlier message and none above it was
  // (queued events are dropped on cancel), so a new watcher from revision + 1
  // continues exactly where this one stopped (for a compaction cancel that
  // revision is below compact_revision).
  int64_t revision = 0;
  std::vector<EventRef> events;  // ascending; whole revisions
  // When false the consumer must not send events[i]->prev_kv (the watcher
  // did not ask for it; events are shared between watchers).
  bool prev_kv = false;
  bool progress = false;
  bool canceled = false;
  std::string cancel_reason;
  int64_t compact_revision = 0;  // set when canceled because of compaction
};

class WatchHub {
 public:
  WatchHub(EventSource* source, WatchHubOptions options);
  ~WatchHub();
  WatchHub(const WatchHub&) = delete;
  WatchHub& operator=(const WatchHub&) = delete;

  // Creates a watcher. requested_id 0 lets the hub choose an unused id.
  // Errors: InvalidArgument (empty key, empty range: range_end <= key,
  // negative or duplicate requested id, too many watchers). A
  // start_revision below the compact revision still creates the watcher,
  // which is then canceled at once with compact_revision set (as etcd
  // does); Poll returns that cancel message. A start_revision beyond the
  // next revision is allowed: the watcher waits for it.
  Result<WatchId> Create(const WatchOptions& options, WatchId requested_id = 0);

  // Removes the watcher at once; nothing more is delivered for it.
  // NotFound when there is no such watcher.
  Status Cancel(WatchId id);

  // Hands the hub the events of one commit (one or more revisions,
  // ascending), after they are durable. Events carry prev_kv where the key
  // had a previous live state. new_revision is the store revision after them.
  void Notify(std::shared_ptr<const std::vector<Event>> events, int64_t new_revision);

  // One bounded catch-up step for up to max_watchers unsynced watchers,
  // taken round-robin: each gets whole revisions, up to about
  // catchup_events_max matching events (and never more than its free queue
  // room), from the ring when it covers the watcher's next revision, else
  // from the EventSource up to the last notified revision. A watcher that
  // reaches the last notified revision joins the synced group. Returns true
  // while unsynced watchers remain.
  bool SyncUnsynced(size_t max_watchers);

  // Moves the next message for the watcher into *out: at most about
  // max_events events (whole revisions, so a single large revision may
  // exceed it), or a progress notification, or the cancel message. Returns
  // false when there is nothing to take now. After the cancel message is
  // taken the watcher no longer exists.
  bool Poll(WatchId id, size_t max_events, WatchMessage* out);

  // Watchers that have something for Poll, in id order.
  std::vector<WatchId> Ready() const;
  // True when the watcher is canceled and only its cancel message is left
  // for Poll (a consumer holding back events may still take it at once).
  bool CancelPending(WatchId id) const;
  // What the watcher has for Poll besides a cancel message (zeros for an
  // unknown watcher): for a consumer that holds events back to send them
  // together, whether a full message is waiting and whether the next
  // message is a progress notification.
  struct Backlog {
    size_t events = 0;            // queued events not yet taken by Poll
    bool progress_first = false;  // Poll's next message is a progress notification
  };
  Backlog BacklogOf(WatchId id) const;
  // True when the watcher is synced, every one of its events up to the last
  // notified revision was taken by Poll and nothing else is queued for it;
  // *revision is then that revision. Two drained watchers of the same range
  // and filters have had exactly the same events, so a consumer may hand
  // one's client over to the other's stream (watch groups) at *revision.
  bool Drained(WatchId id, int64_t* revision) const;

  // etcd's RequestProgress for one watcher: queues a progress notification
  // once the watcher is synced and has nothing queued (so the bookmark is
  // truthful); until then the request is remembered.
  Status RequestProgress(WatchId id);
  // The periodic progress notification: every synced watcher created with
  // progress_notify that has nothing queued gets one.
  void NotifyProgressAll();

  // Cancels every watcher with the reason (shutdown, leadership loss...).
  // As for every cancel, queued events are dropped and each cancel message
  // carries the revision to resume after.
  void CancelAll(const std::string& reason);

  // Watchers that exist, including canceled ones whose cancel message has
  // not been taken yet.
  size_t size() const;
  size_t unsynced_size() const;

  // Test hook: asserts every internal invariant (O(watchers + queued events
  // + history)).
  void TEST_CheckInvariants() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace natcd
