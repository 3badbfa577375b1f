// The member's parts on their own: proposals and their deadlines,
// linearizable reads and their retries, the membership checks (etcd's
// errors), and where a new leader starts publishing events.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "core/engine_fixture.h"
#include "raft/raft.h"
#include "server/event_continuity.h"
#include "server/linearizable_reads.h"
#include "server/membership.h"
#include "server/proposals.h"

namespace natcd::server {
namespace {

std::unique_ptr<Request> Req(int64_t received_ms = 0) {
  auto r = std::make_unique<Request>();
  r->received_ms = received_ms;
  return r;
}

TEST(ProposalsTest, TakenOnceAndExpiredByDeadline) {
  Proposals p;
  const uint64_t a = p.Next(), b = p.Next(), c = p.Next();
  EXPECT_LT(a, b);
  p.Add(a, 2, Req(), 100);
  p.Add(b, 2, Req(), 200);
  p.Add(c, 2, Req(), 300);
  EXPECT_NE(p.Take(b, 2), nullptr);
  EXPECT_EQ(p.Take(b, 2), nullptr) << "answered once";
  EXPECT_EQ(p.TakeExpired(99).size(), 0u);
  EXPECT_EQ(p.TakeExpired(100).size(), 1u) << "a deadline is inclusive";
  EXPECT_EQ(p.Take(a, 2), nullptr);
  EXPECT_EQ(p.TakeAll().size(), 1u);
  EXPECT_EQ(p.size(), 0u);
}

// Found by the simulator: after a restart proposal numbers start at 1
// again, and the entries of the member's earlier life (same numbers, an
// earlier term) were applied as answers to the new requests.
TEST(ProposalsTest, OnlyAnEntryOfTheProposalsTermAnswersIt) {
  Proposals p;
  const uint64_t seq = p.Next();
  p.Add(seq, /*term=*/5, Req(), 1'000);
  EXPECT_EQ(p.Take(seq, /*term=*/3), nullptr) << "an entry of an earlier incarnation";
  EXPECT_NE(p.Take(seq, 5), nullptr);
  p.Add(p.Next(), 5, Req(), 1'000);
  EXPECT_NE(p.TakeAnyTerm(2), nullptr) << "a batch Raft refused answers whatever the term";
}

// A Raft of one voter (id 1), optionally with a learner (id 4).
struct OneVoter {
  raft::MemoryStorage storage;
  std::unique_ptr<raft::Raft> raft;

  explicit OneVoter(bool with_learner = false) {
    raft::Snapshot boot;
    boot.meta.index = 1;
    boot.meta.term = 1;
    boot.meta.conf_state.voters = {1};
    if (with_learner) boot.meta.conf_state.learners = {4};
    EXPECT_TRUE(storage.ApplySnapshot(boot).ok());
    storage.SetHardState(raft::HardState{1, raft::kNoNode, 1});
    raft::Config cfg;
    cfg.id = 1;
    cfg.storage = &storage;
    raft = raft::Raft::Create(cfg).value();
  }
  // Persist and advance every Ready; the read states it produced.
  std::vector<raft::ReadState> Settle() {
    std::vector<raft::ReadState> states;
    while (raft->HasReady()) {
      raft::Ready rd = raft->GetReady();
      EXPECT_TRUE(storage.Append(rd.entries).ok());
      if (rd.hard_state) storage.SetHardState(*rd.hard_state);
      for (auto& s : rd.read_states) states.push_back(s);
      raft->Advance(rd);
    }
    return states;
  }
  void Lead() {
    ASSERT_TRUE(raft->Campaign().ok());
    Settle();
    ASSERT_EQ(raft->lead(), 1u);
  }
};

TEST(LinearizableReadsTest, WithoutALeaderTheReadsWaitForOne) {
  OneVoter v;
  LinearizableReads reads(1);
  reads.Add(Req());
  reads.Add(Req());
  std::vector<std::unique_ptr<Request>> no_leader, refused;
  Status refusal;
  reads.Ask(*v.raft, 0, &no_leader, &refused, &refusal);
  EXPECT_EQ(no_leader.size(), 2u);
  EXPECT_TRUE(refused.empty());
}

TEST(LinearizableReadsTest, ServedOnceTheReadIndexIsApplied) {
  OneVoter v;
  v.Lead();
  LinearizableReads reads(1);
  reads.Add(Req());
  reads.Add(Req());
  std::vector<std::unique_ptr<Request>> no_leader, refused;
  Status refusal;
  reads.Ask(*v.raft, 0, &no_leader, &refused, &refusal);
  ASSERT_TRUE(no_leader.empty() && refused.empty()) << refusal.ToString();
  std::vector<raft::ReadState> states = v.Settle();
  ASSERT_EQ(states.size(), 1u) << "one read index for the turn's reads";
  reads.OnReadStates(states);
  EXPECT_TRUE(reads.TakeServable(states[0].index - 1).empty()) << "not applied that far yet";
  EXPECT_EQ(reads.TakeServable(states[0].index).size(), 2u);
  EXPECT_TRUE(reads.TakeAll().empty());
}

TEST(LinearizableReadsTest, AskedAgainWhenUnansweredAndTimedOutAtTheirDeadline) {
  OneVoter v;
  v.Lead();
  LinearizableReads reads(1);
  reads.Add(Req(/*received_ms=*/0));
  reads.Add(Req(/*received_ms=*/900));
  std::vector<std::unique_ptr<Request>> no_leader, refused;
  Status refusal;
  reads.Ask(*v.raft, 0, &no_leader, &refused, &refusal);
  (void)v.Settle();  // the answer is lost
  EXPECT_TRUE(reads.Retry(1, 500, /*retry_ms=*/1'000, /*timeout=*/5'000).empty())
      << "the same leader, within the retry interval: still waiting";
  std::vector<std::unique_ptr<Request>> timed_out = reads.Retry(1, 5'500, 1'000, 5'000);
  EXPECT_EQ(timed_out.size(), 1u) << "the first read is past its deadline";
  // The other is asked again, and answered this time.
  reads.Ask(*v.raft, 5'500, &no_leader, &refused, &refusal);
  reads.OnReadStates(v.Settle());
  EXPECT_EQ(reads.TakeServable(v.raft->committed()).size(), 1u);
}

TEST(MembershipTest, ChecksAsEtcd) {
  OneVoter v(/*with_learner=*/true);
  v.Lead();
  std::string name;
  Result<raft::ConfChange> add = Membership::Prepare(MemberAddRequest{"", false}, *v.raft, &name);
  EXPECT_EQ(add.status().code(), Status::Code::kInvalidArgument);
  add = Membership::Prepare(MemberAddRequest{"n5", true}, *v.raft, &name);
  ASSERT_TRUE(add.ok());
  EXPECT_EQ(add->type, raft::ConfChangeType::kAddLearnerNode);
  EXPECT_EQ(name, "n5");
  EXPECT_EQ(Membership::Prepare(MemberRemoveRequest{99}, *v.raft, &name).status().message(),
            "etcdserver: member not found");
  EXPECT_EQ(Membership::Prepare(MemberPromoteRequest{1}, *v.raft, &name).status().message(),
            "etcdserver: can only promote a learner member");
  EXPECT_EQ(Membership::Prepare(MemberPromoteRequest{4}, *v.raft, &name).status().message(),
            "etcdserver: can only promote a learner member which is in sync with leader")
      << "a learner that never answered is not in sync";
  EXPECT_TRUE(Membership::CheckTransferee(1, v.raft->conf_state()).ok());
  EXPECT_EQ(Membership::CheckTransferee(4, v.raft->conf_state()).message(),
            "etcdserver: bad leader transferee")
      << "a learner cannot lead";
}

TEST(MembershipTest, NamesAndHistory) {
  Membership m;
  raft::ConfState cs;
  cs.voters = {1, 2};
  cs.learners = {3};
  m.SetName(1, "n1");
  std::vector<MemberInfo> members = m.Members(cs);
  ASSERT_EQ(members.size(), 3u);
  EXPECT_EQ(members[0].name, "n1");
  EXPECT_EQ(members[1].name, "0000000000000002") << "unnamed: the ID in hex";
  EXPECT_TRUE(members[2].is_learner);
  m.ResetHistory(1, cs);
  EXPECT_TRUE(m.is_cluster());
  for (uint64_t i = 2; i < 40; i++) m.Record(i, cs);
  EXPECT_LE(m.history().size(), 16u) << "bounded";
  EXPECT_EQ(m.history().rbegin()->first, 39u);
}

// etcd's checks of a ConfChangeUpdateNode (membership.ValidateConfigurationChange).
TEST(MembershipTest, PeerUrlsAreCheckedAndListedAsEtcd) {
  Membership m;
  raft::ConfState cs;
  cs.voters = {1, 2};
  cs.learners = {3};
  EXPECT_TRUE(m.CheckPeerUrls(3, {"http://n3:2380"}, cs).ok()) << "a learner too";
  m.SetPeerUrls(2, {"http://n2:2380", "http://10.0.0.2:2380"});
  m.SetPeerUrls(9, {"http://gone:2380"});  // a member removed since
  EXPECT_EQ(m.CheckPeerUrls(99, {"http://x:2380"}, cs).code(), Status::Code::kNotFound);
  EXPECT_EQ(m.CheckPeerUrls(99, {"http://x:2380"}, cs).message(), "etcdserver: member not found");
  const Status taken = m.CheckPeerUrls(1, {"http://n1:2380", "http://10.0.0.2:2380"}, cs);
  EXPECT_EQ(taken.name(), "ErrPeerURLExist");
  EXPECT_EQ(taken.message(), "etcdserver: Peer URLs already exists");
  EXPECT_TRUE(m.CheckPeerUrls(2, {"http://10.0.0.2:2380"}, cs).ok()) << "its own URLs";
  EXPECT_TRUE(m.CheckPeerUrls(1, {"http://gone:2380"}, cs).ok()) << "not a member any more";
  const std::vector<MemberInfo> members = m.Members(cs);
  ASSERT_EQ(members.size(), 3u);
  EXPECT_TRUE(members[0].peer_urls.empty()) << "none set: the front end names its endpoint";
  EXPECT_EQ(members[1].peer_urls,
            (std::vector<std::string>{"http://n2:2380", "http://10.0.0.2:2380"}));
}

class FakeSink final : public EventSink {
 public:
  void Publish(std::shared_ptr<const std::vector<Event>> events) override {
    for (const Event& e : *events) published.push_back(e.kv.mod_revision);
  }
  int64_t published_revision() const override { return published.empty() ? 0 : published.back(); }
  void SetAnnouncing(bool on) override { announcing = on; }
  int64_t announced_revision() const override { return announced; }
  void Flush() override {}
  std::vector<int64_t> published;
  bool announcing = false;
  int64_t announced = -1;
};

class EventContinuityTest : public testing::EngineTest {
 protected:
  EngineOptions Options() override {
    EngineOptions options = EngineTest::Options();
    options.retain_committed_events = true;
    return options;
  }
};

TEST_F(EventContinuityTest, ANewLeaderContinuesAfterTheLaterOfRecordedAndAnnounced) {
  std::vector<int64_t> recorded;
  EventContinuity c("n1", [&](int64_t r) { recorded.push_back(r); });
  FakeSink sink;
  for (int i = 1; i <= 12; i++) Put("/k" + std::to_string(i), "v");  // revisions 2 to 13
  // A follower publishes nothing (and drops what it committed).
  c.Publish(*engine_, &sink, /*leader=*/false, true, 20, 0, 1'000);
  EXPECT_TRUE(sink.announcing) << "a cluster announces";
  EXPECT_TRUE(sink.published.empty());
  c.OnRecorded(7);
  sink.announced = 9;
  c.BecameLeader(/*now_ms=*/0, /*last_index=*/20, /*current_revision=*/13,
                 /*several_voters=*/true, true, /*heartbeat_ms=*/100, &sink);
  EXPECT_TRUE(recorded.empty()) << "something is known: decided later";
  c.Publish(*engine_, &sink, true, true, 20, /*now_ms=*/50, 1'000);
  EXPECT_TRUE(sink.published.empty()) << "waits a heartbeat for the old leader's last word";
  c.Publish(*engine_, &sink, true, true, /*applied=*/20, /*now_ms=*/150, 1'000);
  EXPECT_EQ(recorded, std::vector<int64_t>{9}) << "decided, and recorded at once";
  EXPECT_EQ(sink.published, (std::vector<int64_t>{10, 11, 12, 13})) << "read back after 9";
  Put("/k13", "v");
  c.Publish(*engine_, &sink, true, true, 21, 200, 1'000);
  EXPECT_EQ(sink.published.back(), 14);
  EXPECT_EQ(sink.published.size(), 5u) << "each revision once";
}

TEST_F(EventContinuityTest, UndecidedForAtMostAnElectionTimeout) {
  EventContinuity c("n1", [](int64_t) {});
  FakeSink sink;
  Put("/a", "v");  // revision 2
  c.Publish(*engine_, &sink, false, true, 5, 0, 1'000);
  c.OnRecorded(0);
  c.BecameLeader(0, /*last_index=*/10, 2, true, true, 100, &sink);
  c.Publish(*engine_, &sink, true, true, /*applied=*/5, /*now_ms=*/900, 1'000);
  EXPECT_TRUE(sink.published.empty()) << "entries of earlier terms not applied yet";
  c.Publish(*engine_, &sink, true, true, 5, /*now_ms=*/1'200, 1'000);
  EXPECT_EQ(sink.published, std::vector<int64_t>{2}) << "decided with what is known";
}

TEST_F(EventContinuityTest, AFirstLeaderOfANewClusterRecordsAndPublishesFromTheStart) {
  std::vector<int64_t> recorded;
  EventContinuity c("n1", [&](int64_t r) { recorded.push_back(r); });
  FakeSink sink;
  c.BecameLeader(0, 1, /*current_revision=*/kEmptyStoreRevision, true, true, 100, &sink);
  ASSERT_EQ(recorded, std::vector<int64_t>{kEmptyStoreRevision})
      << "a successor must know where it started";
  c.RecordDropped();
  c.MaybeRecord(0, 100, sink, true);
  EXPECT_EQ(recorded.size(), 2u) << "decided (cursor 0): the dropped record is made again";
  EventContinuity alone("n1", [&](int64_t r) { recorded.push_back(r); });
  alone.BecameLeader(0, 1, kEmptyStoreRevision, false, false, 100, &sink);
  EXPECT_EQ(recorded.size(), 2u) << "a member alone records nothing";
}

}  // namespace
}  // namespace natcd::server
