#include "server/event_continuity.h"

#include <cstdio>
#include <memory>
#include <vector>

namespace natcd::server {

void EventContinuity::BecameLeader(int64_t now_ms, uint64_t last_index, int64_t current_revision,
                                   bool several_voters, bool cluster, int64_t heartbeat_ms,
                                   const EventSink* sink) {
  cursor_ = -1;
  decide_index_ = last_index;
  promoted_revision_ = current_revision;
  decide_ms_ = several_voters ? now_ms + heartbeat_ms : 0;
  recorded_ = -1;
  const int64_t announced = sink ? sink->announced_revision() : -1;
  // Nothing known yet (a new cluster): record where this leader starts at
  // once, so that a successor knows it even if this leader is gone before
  // it has decided and published anything.
  if (std::max(replicated_, announced) < 0) {
    Record(promoted_revision_, cluster);
    // Nothing was ever written here either: nothing to wait for, publish
    // from the first write on. (Waiting a heartbeat let a quick first
    // leader hand over before it had published anything, and its
    // successor, killed in turn, left all of it to a third.)
    if (promoted_revision_ <= kEmptyStoreRevision) cursor_ = 0;
  }
}

// In a cluster the leader records how far events reached the network (an
// entry at most every interval, only when it moved: under load it shares
// the group commit of the writes).
void EventContinuity::Record(int64_t revision, bool cluster) {
  if (!cluster || revision <= recorded_) return;
  record_(revision);
  recorded_ = revision;  // unless the batch is dropped (RecordDropped)
}

void EventContinuity::MaybeRecord(int64_t now_ms, int64_t interval_ms, const EventSink& sink,
                                  bool cluster) {
  if (cursor_ < 0 || now_ms < next_record_ms_) return;
  next_record_ms_ = now_ms + interval_ms;
  Record(sink.published_revision(), cluster);
}

void EventContinuity::Publish(Engine& engine, EventSink* sink, bool leader, bool cluster,
                              uint64_t applied_index, int64_t now_ms, int64_t election_timeout_ms) {
  std::vector<std::shared_ptr<const std::vector<Event>>> committed = engine.TakeCommittedEvents();
  if (sink == nullptr) return;
  if (cluster != announcing_) {
    announcing_ = cluster;
    sink->SetAnnouncing(cluster);
  }
  if (!leader) return;
  if (cursor_ < 0) {
    if (now_ms < decide_ms_) return;
    if (applied_index < decide_index_ && now_ms < decide_ms_ + election_timeout_ms) return;
    const int64_t known = std::max(replicated_, sink->announced_revision());
    cursor_ = known >= 0 ? known : promoted_revision_;
    // Recorded at once: a leader after this one then knows where to start
    // even if this one publishes nothing.
    Record(cursor_, cluster);
  }
  for (auto& batch : committed) {
    if (batch->empty() || batch->back().kv.mod_revision <= cursor_) continue;
    if (batch->front().kv.mod_revision != cursor_ + 1) break;  // a gap: read back
    cursor_ = batch->back().kv.mod_revision;
    sink->Publish(std::move(batch));
  }
  // Behind: read the missing revisions back, a bounded amount per turn.
  const int64_t target = engine.CurrentRevision();
  if (cursor_ >= target) return;
  auto missing = std::make_shared<std::vector<Event>>();
  Status s = engine.ReadEvents(std::string(1, '\0'), std::string(1, '\0'), cursor_ + 1, target,
                               10'000, false, missing.get());
  if (s.code() == Status::Code::kCompacted) {
    fprintf(stderr, "natcd %s: events %lld..%lld were compacted before being published\n",
            log_name_.c_str(), static_cast<long long>(cursor_ + 1),
            static_cast<long long>(engine.CompactRevision() - 1));
    cursor_ = engine.CompactRevision() - 1;
    return;
  }
  if (!s.ok()) return;  // the engine failed: health() says why
  cursor_ = missing->empty() ? target : missing->back().kv.mod_revision;
  sink->Publish(std::move(missing));
}

}  // namespace natcd::server
