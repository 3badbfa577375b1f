// The member's EventSink over NATS: the P.ev.* publisher (event_publisher.h)
// and, in a cluster, the markers by which a leader announces how far its
// events reached the NATS server (P.raft.<cluster>.published, the revision
// in decimal); every member hears them, so whichever leads next continues
// from there.
//
// Thread safety: the member thread calls the EventSink methods; markers
// arrive on a nats.c thread and only raise an atomic.
#pragma once

#include <nats/nats.h>

#include <atomic>
#include <memory>
#include <string>

#include "adapters/nats/front_end/event_publisher.h"
#include "natcd/status.h"
#include "server/event_sink.h"

namespace natcd::nats {

class NatsEventSink final : public server::EventSink {
 public:
  // Events go out on `nc` (a connection that batches: best-effort
  // publishes); markers are heard on `markers_nc`.
  // published_counter (may be null) counts the events sent.
  NatsEventSink(natsConnection* nc, std::string prefix, std::string cluster_name,
                metrics::Counter* published_counter);
  ~NatsEventSink() override;
  NatsEventSink(const NatsEventSink&) = delete;
  NatsEventSink& operator=(const NatsEventSink&) = delete;

  // Subscribes the marker subject.
  Status Subscribe(natsConnection* markers_nc);
  // Stops hearing markers (before the connection goes).
  void Unsubscribe();

  void Publish(std::shared_ptr<const std::vector<Event>> events) override;
  int64_t published_revision() const override { return publisher_.published_revision(); }
  void SetAnnouncing(bool announcing) override;
  int64_t announced_revision() const override { return announced_.load(); }
  void Flush() override { publisher_.Flush(); }

 private:
  static void OnMarker(natsConnection* nc, natsSubscription* sub, natsMsg* msg, void* closure);

  const std::string marker_subject_;
  EventPublisher publisher_;
  natsSubscription* sub_ = nullptr;
  std::atomic<int64_t> announced_{-1};
};

}  // namespace natcd::nats
