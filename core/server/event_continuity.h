// EventContinuity: only the leader publishes events (to the EventSink), each
// revision once, in order, and the stream has no gap across leaders. In a
// cluster the leader records in the log, now and then, how far its events
// reached the network (an EVENTS_PUBLISHED entry), and its sink announces
// it to the other members as it moves; a new leader continues from the
// later of the two once it has applied every entry of earlier terms (or an
// election timeout passed: deciding with what is known costs at most
// repeats). When neither is known it starts after the revision it had when
// it became leader. A cursor behind the committed revision reads the
// missing revisions back from the store, a bounded amount per turn.
//
// Thread safety: none; the member thread owns it.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

#include "natcd/engine.h"
#include "server/event_sink.h"

namespace natcd::server {

class EventContinuity {
 public:
  // `record` proposes an EVENTS_PUBLISHED entry for a revision.
  EventContinuity(std::string log_name, std::function<void(int64_t revision)> record)
      : log_name_(std::move(log_name)), record_(std::move(record)) {}

  // An EVENTS_PUBLISHED entry was applied.
  void OnRecorded(int64_t revision) { replicated_ = std::max(replicated_, revision); }
  // This member became leader: decide where to start (see above).
  // last_index: Raft's last log index now; several_voters: another voter
  // may have led before (wait a heartbeat for its last announcement);
  // cluster: more than one member (voters and learners: record).
  void BecameLeader(int64_t now_ms, uint64_t last_index, int64_t current_revision,
                    bool several_voters, bool cluster, int64_t heartbeat_ms, const EventSink* sink);
  // The database was replaced (a snapshot from the leader): nothing
  // recorded is known any more.
  void Reset() { replicated_ = -1; }
  // The turn's batch of proposals was dropped (the record with it).
  void RecordDropped() { recorded_ = -1; }

  // After each turn's commit: publish what the turn committed (leader), and
  // tell the sink whether to announce (cluster).
  void Publish(Engine& engine, EventSink* sink, bool leader, bool cluster, uint64_t applied_index,
               int64_t now_ms, int64_t election_timeout_ms);
  // Now and then (the leader's timers): record how far events reached.
  void MaybeRecord(int64_t now_ms, int64_t interval_ms, const EventSink& sink, bool cluster);

 private:
  void Record(int64_t revision, bool cluster);

  const std::string log_name_;
  const std::function<void(int64_t)> record_;
  int64_t replicated_ = -1;  // the last revision a leader recorded as published; -1: none
  bool announcing_ = false;
  // As leader: the last revision handed to the sink; -1: not decided yet.
  int64_t cursor_ = -1;
  uint64_t decide_index_ = 0;      // ... until the entries up to here are applied
  int64_t decide_ms_ = 0;          // ... and the old leader's last announcement had time to arrive
  int64_t promoted_revision_ = 0;  // when neither is known: start after it
  int64_t recorded_ = -1;          // the last value this leader proposed
  int64_t next_record_ms_ = 0;
};

}  // namespace natcd::server
