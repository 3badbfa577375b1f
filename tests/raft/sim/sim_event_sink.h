// SimEventSink: server::EventSink for a simulated member. What the leader
// publishes goes to the simulation's EventLog (which checks it); what a
// member announces as published reaches the others at once (the NATS sink
// announces over P.raft.<cluster>.published).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "raft/sim/sim_network.h"
#include "server/event_sink.h"

namespace natcd::raft::sim {

// The sinks of every member: what they announce, and where their events go.
struct EventLog {
  // (member, its events, oldest first) for each Publish.
  std::function<void(NodeId, const std::vector<Event>&)> on_publish;
  // Member -> the last revision it announced as published (what the others
  // heard: it outlives the announcer, as a marker already sent does).
  std::map<NodeId, int64_t> announcing;
};

class SimEventSink final : public server::EventSink {
 public:
  SimEventSink(EventLog* log, NodeId self) : log_(log), self_(self) {}

  void Publish(std::shared_ptr<const std::vector<Event>> events) override {
    if (events->empty()) return;
    log_->on_publish(self_, *events);
    published_ = std::max(published_, events->back().kv.mod_revision);
    if (announcing_) log_->announcing[self_] = std::max(log_->announcing[self_], published_);
  }
  int64_t published_revision() const override { return published_; }
  void SetAnnouncing(bool announcing) override {
    announcing_ = announcing;
    if (announcing) log_->announcing[self_] = std::max(log_->announcing[self_], published_);
  }
  int64_t announced_revision() const override {
    int64_t best = -1;
    for (const auto& [id, revision] : log_->announcing) {
      if (id != self_) best = std::max(best, revision);
    }
    return best;
  }
  void Flush() override {}

 private:
  EventLog* log_;
  NodeId self_;
  bool announcing_ = false;
  int64_t published_ = 0;
};

}  // namespace natcd::raft::sim
