// Publishes every committed event once on P.ev.<key tokens>, with the raw
// value as the body and the Natcd-* headers (docs/PROTOCOL.md "Live event
// subjects"). Best-effort, like any core NATS publish. Engine thread only.
#pragma once

#include <nats/nats.h>

#include <cstdint>
#include <string>
#include <vector>

#include "natcd/types.h"

namespace natcd::nats {

class EventPublisher {
 public:
  EventPublisher(natsConnection* nc, std::string prefix) : nc_(nc), prefix_(std::move(prefix)) {}

  // Publishes the events in order. Returns how many could not be handed to
  // the connection (it was closed or its reconnect buffer was full).
  size_t Publish(const std::vector<Event>& events);
  uint64_t published() const { return published_; }
  // Events not published because their subject would be longer than
  // kEventSubjectBytesMax (keys of about 4 KB and more).
  uint64_t skipped() const { return skipped_; }

 private:
  natsConnection* nc_;
  std::string prefix_;
  uint64_t published_ = 0;
  uint64_t skipped_ = 0;
};

}  // namespace natcd::nats
