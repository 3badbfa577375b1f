// Publishes every committed event once on P.ev.<key tokens>, with the raw
// value as the body and the Natcd-* headers (docs/PROTOCOL.md "Live event
// subjects"). Best-effort, like any core NATS publish.
//
// Publishing runs on a thread of its own, fed in commit order by the engine
// thread: building and sending a message with six headers costs about as much
// as applying the write it describes (less since the headers are encoded
// here: header_msg.h), and it must not delay the replies. The queue is
// bounded: past events_pending_max the oldest batches are dropped (and
// counted), which a subscriber sees as missed events, as with any slow core
// NATS subscription.
//
// In a cluster (a marker subject is set), each time the queue runs dry the
// publisher flushes the connection (a round trip: the server then has every
// event before it), counts every revision so far as published
// (published_revision()), and says so on the marker subject
// (P.raft.<cluster>.published, the revision in decimal). The leader records
// that revision in the log now and then, and the other members hear the
// markers at once: a new leader continues from the later of the two, so
// P.ev.* has no gap across leaders, and repeats nothing in a handover
// (docs/PROTOCOL.md "Clusters").
#pragma once

#include <nats/nats.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "adapters/nats/codec/header_msg.h"
#include "metrics/counter.h"
#include "natcd/mutex.h"
#include "natcd/types.h"

namespace natcd::nats {

class EventPublisher {
 public:
  using Batch = std::shared_ptr<const std::vector<Event>>;

  // published_counter (may be null) counts every event sent.
  EventPublisher(natsConnection* nc, std::string prefix, size_t events_pending_max = 1'000'000,
                 metrics::Counter* published_counter = nullptr);
  // Publishes what is queued, then stops.
  ~EventPublisher();
  EventPublisher(const EventPublisher&) = delete;
  EventPublisher& operator=(const EventPublisher&) = delete;

  // Queues one commit's events (engine thread).
  void Enqueue(Batch batch);
  // Waits until everything queued so far was handed to the connection.
  void Flush();
  // The marker subject; empty (a single member): no flushes, no markers.
  void SetMarkerSubject(std::string subject);
  // With a marker subject: the last revision the NATS server has received.
  int64_t published_revision() const { return published_revision_.load(); }

  uint64_t published() const;
  // Events not published: queue overflow, or a subject longer than
  // kEventSubjectBytesMax (keys of about 4 KB and more), or a failed publish.
  uint64_t dropped() const;

 private:
  void Run();
  void Publish(const std::vector<Event>& events) REQUIRES(publisher_thread_);

  natsConnection* const nc_;
  const std::string prefix_;
  const size_t events_pending_max_;
  metrics::Counter* const published_counter_;
  mutable Mutex mu_;
  CondVar wake_;
  CondVar idle_;
  std::deque<Batch> queue_ GUARDED_BY(mu_);
  size_t queued_events_ GUARDED_BY(mu_) = 0;
  bool busy_ GUARDED_BY(mu_) = false;  // a batch is being published
  bool stopping_ GUARDED_BY(mu_) = false;
  std::string marker_subject_ GUARDED_BY(mu_);
  // The publisher thread's own.
  ThreadRole publisher_thread_;
  HeaderMsgBuilder headers_ GUARDED_BY(publisher_thread_);
  int64_t last_revision_ GUARDED_BY(publisher_thread_) = 0;  // the last revision handed to nc_
  std::atomic<int64_t> published_revision_{0};
  uint64_t published_ GUARDED_BY(mu_) = 0;
  uint64_t dropped_ GUARDED_BY(mu_) = 0;
  std::thread thread_;
};

}  // namespace natcd::nats
