#include "raft/test_network.h"

#include <gtest/gtest.h>

namespace natcd::raft::testing {

TestNetwork::TestNetwork(int voters, Config base) : base_(base) {
  Snapshot boot;
  boot.meta.index = 1;
  boot.meta.term = 1;
  for (int i = 1; i <= voters; i++) boot.meta.conf_state.voters.push_back(i);
  for (int i = 1; i <= voters; i++) {
    auto m = std::make_unique<TestMember>();
    EXPECT_TRUE(m->storage.ApplySnapshot(boot).ok());
    m->storage.SetHardState(HardState{1, kNoNode, 1});
    members_[i] = std::move(m);
    Start(i);
  }
}

TestMember& TestNetwork::AddEmpty(NodeId id) {
  members_[id] = std::make_unique<TestMember>();
  Start(id);
  return *members_[id];
}

void TestNetwork::Start(NodeId id) {
  Config cfg = base_;
  cfg.id = id;
  cfg.storage = &members_[id]->storage;
  cfg.seed = id;
  cfg.applied = members_[id]->storage.GetSnapshot().value().meta.index;
  auto raft = Raft::Create(cfg);
  ASSERT_TRUE(raft.ok()) << raft.status().ToString();
  members_[id]->raft = std::move(raft.value());
}

bool TestNetwork::ProcessReady(NodeId id) {
  if (down_.count(id) || !members_[id]->raft->HasReady()) return false;
  for (Message& msg : TakeReady(id)) queue_.push_back(std::move(msg));
  return true;
}

std::vector<Message> TestNetwork::TakeReady(NodeId id) {
  TestMember& m = *members_.at(id);
  if (!m.raft->HasReady()) return {};
  Ready rd = m.raft->GetReady();
  if (!rd.snapshot.empty()) {
    EXPECT_TRUE(m.storage.ApplySnapshot(rd.snapshot).ok());
  }
  EXPECT_TRUE(m.storage.Append(rd.entries).ok());
  if (rd.hard_state) m.storage.SetHardState(*rd.hard_state);
  for (const ReadState& rs : rd.read_states) m.reads.push_back(rs);
  for (const Entry& e : rd.committed_entries) {
    if (e.type == EntryType::kConfChange) {
      ConfChange cc;
      EXPECT_TRUE(DecodeConfChange(e.data, &cc));
      m.raft->ApplyConfChange(cc);
    } else if (!e.data.empty()) {
      m.applied.push_back(e);
    }
  }
  std::vector<Message> sent = std::move(rd.messages);
  m.raft->Advance(rd);
  return sent;
}

void TestNetwork::Settle() {
  for (int round = 0; round < 10000; round++) {
    bool any = false;
    for (auto& [id, m] : members_) any |= ProcessReady(id);
    std::vector<Message> batch = std::move(queue_);
    queue_.clear();
    for (Message& msg : batch) {
      sent_[msg.type]++;
      if (down_.count(msg.to) || down_.count(msg.from) || cut_.count({msg.from, msg.to}) ||
          dropped_types_.count(msg.type) || members_.count(msg.to) == 0) {
        continue;
      }
      any = true;
      (void)members_[msg.to]->raft->Step(std::move(msg));
    }
    if (!any) return;
  }
  ADD_FAILURE() << "the network never went quiet";
}

void TestNetwork::Campaign(NodeId id) {
  (void)members_.at(id)->raft->Campaign();
  Settle();
}

void TestNetwork::TickAll(int ticks) {
  for (int i = 0; i < ticks; i++) {
    for (auto& [id, m] : members_) {
      if (!down_.count(id)) m->raft->Tick();
    }
    Settle();
  }
}

void TestNetwork::Cut(NodeId a, NodeId b) {
  cut_.insert({a, b});
  cut_.insert({b, a});
}

void TestNetwork::Isolate(NodeId id) {
  for (auto& [other, m] : members_) {
    if (other != id) Cut(id, other);
  }
}

void TestNetwork::Crash(NodeId id) {
  down_.insert(id);
  members_[id]->raft.reset();
  members_[id]->applied.clear();
}

void TestNetwork::Restart(NodeId id) {
  down_.erase(id);
  Start(id);
}

size_t TestNetwork::Sent(MessageType type) const {
  auto it = sent_.find(type);
  return it == sent_.end() ? 0 : it->second;
}

}  // namespace natcd::raft::testing
