// A small synchronous cluster for Raft unit tests: members with memory
// storage, a network that delivers every message at once unless a link is
// cut, and the application loop (persist, send, apply, advance). Unlike
// the simulator it has no randomness of its own: each test drives it step
// by step and asserts on the exact states Raft goes through.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "raft/raft.h"

namespace natcd::raft::testing {

struct TestMember {
  MemoryStorage storage;
  std::unique_ptr<Raft> raft;
  std::vector<Entry> applied;  // normal entries with data, in order
  std::vector<ReadState> reads;
};

class TestNetwork {
 public:
  // Members 1..voters, all voters, bootstrapped from a snapshot at index 1.
  explicit TestNetwork(int voters, Config base = Config());
  // Adds an empty member (not yet in any configuration).
  TestMember& AddEmpty(NodeId id);

  TestMember& operator[](NodeId id) { return *members_.at(id); }
  Raft& raft(NodeId id) { return *members_.at(id)->raft; }

  // Runs every member's Ready loop and delivers messages until quiet.
  void Settle();
  void Campaign(NodeId id);
  void TickAll(int ticks);
  // Cuts / restores both directions between a and b.
  void Cut(NodeId a, NodeId b);
  void Isolate(NodeId id);
  void HealAll() { cut_.clear(); }
  // Stops delivering to and from id, and drops its volatile state; Restart
  // brings it back from its storage.
  void Crash(NodeId id);
  void Restart(NodeId id);
  // Runs id's Ready once as Settle does (persist, apply, advance) and
  // returns the messages it sends, undelivered: for tests that deliver by
  // hand. Empty when it has no Ready.
  std::vector<Message> TakeReady(NodeId id);
  // Messages sent so far of a given type (for assertions).
  size_t Sent(MessageType type) const;
  // Drops every message of type (until AllowAll).
  void Drop(MessageType type) { dropped_types_.insert(type); }
  void AllowAll() { dropped_types_.clear(); }

 private:
  void Start(NodeId id);
  bool ProcessReady(NodeId id);

  Config base_;
  std::map<NodeId, std::unique_ptr<TestMember>> members_;
  std::set<std::pair<NodeId, NodeId>> cut_;
  std::set<NodeId> down_;
  std::set<MessageType> dropped_types_;
  std::vector<Message> queue_;
  std::map<MessageType, size_t> sent_;
};

}  // namespace natcd::raft::testing
