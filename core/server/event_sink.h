// EventSink: where the leader sends every committed event, once each, in
// revision order (NATS: the P.ev.* subjects). Best effort towards its
// subscribers, but the member keeps the stream gap-free across leaders: a
// new leader continues from the revision the sink last reported as
// published, or that the previous leader announced.
//
// Thread safety: the member calls it on its own thread, except that an
// implementation may update what it reports from threads of its own.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "natcd/types.h"

namespace natcd::server {

class EventSink {
 public:
  virtual ~EventSink() = default;
  // The events of consecutive revisions, oldest first (one Commit's, or
  // ones read back to fill a gap).
  virtual void Publish(std::shared_ptr<const std::vector<Event>> events) = 0;
  // Every revision up to this one has reached the network.
  virtual int64_t published_revision() const = 0;
  // In a cluster the sink announces published_revision() to the other
  // members as it moves (they may lead next); alone it need not.
  virtual void SetAnnouncing(bool announcing) = 0;
  // The highest revision another leader announced as published; -1: none.
  virtual int64_t announced_revision() const = 0;
  // Waits (boundedly) until what was handed over has left (at shutdown).
  virtual void Flush() = 0;
};

}  // namespace natcd::server
