// Raft's behaviour, one rule per test, on a synchronous in-memory cluster.
// The randomized simulator (sim_test.cc) checks the safety properties
// under faults; these pin down the individual rules it relies on.
#include "raft/raft.h"

#include <gtest/gtest.h>

#include "raft/test_network.h"

namespace natcd::raft {
namespace {

using testing::TestNetwork;

std::vector<std::string> AppliedData(const testing::TestMember& m) {
  std::vector<std::string> out;
  for (const Entry& e : m.applied) out.push_back(e.data);
  return out;
}

TEST(Raft, CreateRejectsBadConfig) {
  MemoryStorage storage;
  Config cfg;
  cfg.storage = &storage;
  EXPECT_FALSE(Raft::Create(cfg).ok());  // id 0
  cfg.id = 1;
  cfg.election_tick = 1;
  cfg.heartbeat_tick = 1;
  EXPECT_FALSE(Raft::Create(cfg).ok());  // election tick must exceed heartbeat tick
  cfg.election_tick = 10;
  cfg.applied = 5;
  EXPECT_FALSE(Raft::Create(cfg).ok());  // applied beyond the log
  cfg.applied = 0;
  cfg.storage = nullptr;
  EXPECT_FALSE(Raft::Create(cfg).ok());
}

TEST(Raft, SingleVoterLeadsAndCommitsAlone) {
  TestNetwork net(1);
  net.Campaign(1);
  EXPECT_EQ(net.raft(1).role(), Role::kLeader);
  ASSERT_TRUE(net.raft(1).Propose("a").ok());
  net.Settle();
  EXPECT_EQ(AppliedData(net[1]), std::vector<std::string>{"a"});
}

TEST(Raft, ElectionChoosesOneLeaderAndReplicates) {
  TestNetwork net(3);
  net.Campaign(1);
  EXPECT_EQ(net.raft(1).role(), Role::kLeader);
  EXPECT_EQ(net.raft(2).lead(), 1u);
  EXPECT_EQ(net.raft(3).lead(), 1u);
  EXPECT_EQ(net.raft(1).term(), net.raft(2).term());
  ASSERT_TRUE(net.raft(1).Propose("x").ok());
  net.Settle();
  for (NodeId id : {1, 2, 3}) EXPECT_EQ(AppliedData(net[id]), std::vector<std::string>{"x"});
}

TEST(Raft, ABatchOfProposalsGoesToEachFollowerInOneAppend) {
  TestNetwork net(3);
  net.Campaign(1);
  net.Settle();
  ASSERT_TRUE(net.raft(1).ProposeBatch({"a", "b"}).ok());
  net.Settle();
  for (NodeId id : {1, 2, 3}) EXPECT_EQ(AppliedData(net[id]), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(net.raft(1).ProposeBatch({}).name(), "ErrProposalDropped") << "nothing to append";
  ASSERT_TRUE(net.raft(1).ProposeBatch({"c", "d", "e"}).ok());
  Ready rd = net.raft(1).GetReady();
  size_t appends = 0;
  for (const Message& m : rd.messages) {
    if (m.type != MessageType::kApp) continue;
    appends++;
    ASSERT_EQ(m.entries.size(), 3u);
    EXPECT_EQ(m.entries[0].data, "c");
    EXPECT_EQ(m.entries[2].data, "e");
  }
  EXPECT_EQ(appends, 2u);
  EXPECT_EQ(rd.entries.size(), 3u);
}

// The acknowledgements that commit a batch do not each send an append:
// the commit index goes out with the next Ready, in the append that
// carries the entries proposed meanwhile, or alone when there are none.
TEST(Raft, ACommitReachesEachFollowerInOneAppend) {
  TestNetwork net(3);
  net.Campaign(1);
  net.Settle();
  // Delivers the leader's appends; returns the followers' acknowledgements.
  auto replicate = [&](std::vector<Message> appends) {
    std::vector<Message> acks;
    for (Message& m : appends) {
      const NodeId to = m.to;
      EXPECT_TRUE(net.raft(to).Step(std::move(m)).ok());
      for (Message& ack : net.TakeReady(to)) acks.push_back(std::move(ack));
    }
    return acks;
  };

  ASSERT_TRUE(net.raft(1).Propose("a").ok());
  const uint64_t a = net.raft(1).last_index();
  std::vector<Message> acks = replicate(net.TakeReady(1));
  ASSERT_EQ(acks.size(), 2u);
  for (Message& ack : acks) ASSERT_TRUE(net.raft(1).Step(std::move(ack)).ok());
  EXPECT_EQ(net.raft(1).committed(), a);

  ASSERT_TRUE(net.raft(1).Propose("b").ok());
  const uint64_t b = net.raft(1).last_index();
  std::vector<Message> appends = net.TakeReady(1);
  ASSERT_EQ(appends.size(), 2u) << "one append per follower, with b and a's commit";
  for (const Message& m : appends) {
    EXPECT_EQ(m.type, MessageType::kApp);
    ASSERT_EQ(m.entries.size(), 1u);
    EXPECT_EQ(m.entries[0].data, "b");
    EXPECT_EQ(m.commit, a);
  }

  acks = replicate(std::move(appends));
  for (Message& ack : acks) ASSERT_TRUE(net.raft(1).Step(std::move(ack)).ok());
  EXPECT_EQ(net.raft(1).committed(), b);
  appends = net.TakeReady(1);
  ASSERT_EQ(appends.size(), 2u) << "nothing new to send: the commit index alone, once";
  for (const Message& m : appends) {
    EXPECT_EQ(m.type, MessageType::kApp);
    EXPECT_TRUE(m.entries.empty());
    EXPECT_EQ(m.commit, b);
  }
  acks = replicate(std::move(appends));
  for (Message& ack : acks) ASSERT_TRUE(net.raft(1).Step(std::move(ack)).ok());
  EXPECT_TRUE(net.TakeReady(1).empty()) << "every follower knows the commit index";
  net.Settle();
  for (NodeId id : {1, 2, 3}) EXPECT_EQ(AppliedData(net[id]), (std::vector<std::string>{"a", "b"}));
}

TEST(Raft, FollowerForwardsProposalsToTheLeader) {
  TestNetwork net(3);
  net.Campaign(1);
  ASSERT_TRUE(net.raft(3).Propose("from-3").ok());
  net.Settle();
  for (NodeId id : {1, 2, 3}) EXPECT_EQ(AppliedData(net[id]), std::vector<std::string>{"from-3"});
}

TEST(Raft, ProposalWithoutLeaderIsDropped) {
  TestNetwork net(3);
  EXPECT_EQ(net.raft(2).Propose("nobody").name(), "ErrProposalDropped");
}

TEST(Raft, ElectionTimeoutStartsAnElection) {
  TestNetwork net(3);
  net.TickAll(40);  // more than two election timeouts
  int leaders = 0;
  for (NodeId id : {1, 2, 3}) leaders += net.raft(id).role() == Role::kLeader;
  EXPECT_EQ(leaders, 1);
}

TEST(Raft, LeaderCommitsOnlyEntriesOfItsOwnTermByCounting) {
  // Raft §5.4.2 (the paper's Figure 8): an entry of an older term is not
  // committed because a majority stores it; only one of the current term
  // is, and with it everything before.
  MemoryStorage storage;
  ASSERT_TRUE(storage.Append({Entry{1, 1, EntryType::kNormal, "old"}}).ok());
  RaftLog log(&storage, UINT64_MAX);
  log.Append({Entry{2, 2, EntryType::kNormal, "mine"}});
  EXPECT_FALSE(log.MaybeCommit(1, 2));
  EXPECT_EQ(log.committed(), 0u);
  EXPECT_TRUE(log.MaybeCommit(2, 2));
  EXPECT_EQ(log.committed(), 2u);
}

TEST(Raft, ElectionRestrictionRefusesVotesToShorterLogs) {
  TestNetwork net(3);
  net.Campaign(1);
  net.Isolate(3);
  ASSERT_TRUE(net.raft(1).Propose("a").ok());
  net.Settle();
  net.HealAll();
  // 3 missed "a": 1 and 2 must not vote for it. Its term is not higher,
  // so ask through a forced election (no pre-vote, no lease).
  Message vote;
  vote.type = MessageType::kVote;
  vote.from = 3;
  vote.to = 2;
  vote.term = net.raft(2).term() + 1;
  vote.index = net.raft(3).last_index();
  vote.log_term = net.raft(3).log().LastTerm();
  vote.context = "CampaignTransfer";
  ASSERT_TRUE(net.raft(2).Step(vote).ok());
  Ready rd = net.raft(2).GetReady();
  bool rejected = false;
  for (const Message& m : rd.messages) {
    if (m.type == MessageType::kVoteResp && m.to == 3) rejected = m.reject;
  }
  EXPECT_TRUE(rejected);
  net.raft(2).Advance(rd);
}

TEST(Raft, RestartKeepsTheVote) {
  TestNetwork net(3);
  net.Campaign(1);
  uint64_t term = net.raft(3).term();
  net.Crash(3);
  net.Restart(3);
  EXPECT_EQ(net.raft(3).term(), term);
  Message vote;
  vote.type = MessageType::kVote;
  vote.from = 2;
  vote.to = 3;
  vote.term = term;
  vote.index = 100;
  vote.log_term = term;
  ASSERT_TRUE(net.raft(3).Step(vote).ok());
  Ready rd = net.raft(3).GetReady();
  ASSERT_EQ(rd.messages.size(), 1u);
  EXPECT_EQ(rd.messages[0].type, MessageType::kVoteResp);
  EXPECT_TRUE(rd.messages[0].reject) << "voted twice in term " << term;
}

TEST(Raft, PreVoteKeepsAnIsolatedMemberFromRaisingTheTerm) {
  TestNetwork net(3);
  net.Campaign(1);
  uint64_t term = net.raft(1).term();
  net.Isolate(3);
  net.TickAll(60);
  EXPECT_EQ(net.raft(3).term(), term) << "pre-elections must not move the term";
  EXPECT_EQ(net.raft(3).role(), Role::kPreCandidate);
  net.HealAll();
  net.TickAll(5);
  EXPECT_EQ(net.raft(1).role(), Role::kLeader);
  EXPECT_EQ(net.raft(1).term(), term) << "the returning member deposed the leader";
  EXPECT_EQ(net.raft(3).lead(), 1u);
}

TEST(Raft, CheckQuorumMakesAnIsolatedLeaderStepDown) {
  TestNetwork net(3);
  net.Campaign(1);
  net.Isolate(1);
  net.TickAll(30);
  EXPECT_NE(net.raft(1).role(), Role::kLeader);
  int leaders = (net.raft(2).role() == Role::kLeader) + (net.raft(3).role() == Role::kLeader);
  EXPECT_EQ(leaders, 1);
}

TEST(Raft, MembersThatHearFromALeaderIgnoreVotes) {
  TestNetwork net(3);
  net.Campaign(1);
  uint64_t term = net.raft(1).term();
  net.Cut(1, 3);  // 3 no longer hears the leader, 2 still does
  net.TickAll(40);
  EXPECT_EQ(net.raft(1).role(), Role::kLeader);
  EXPECT_EQ(net.raft(1).term(), term);
}

TEST(Raft, ReadIndexOnLeaderAndFollower) {
  TestNetwork net(3);
  net.Campaign(1);
  ASSERT_TRUE(net.raft(1).Propose("a").ok());
  net.Settle();
  uint64_t commit = net.raft(1).committed();
  ASSERT_TRUE(net.raft(1).ReadIndex("r1").ok());
  net.Settle();
  ASSERT_EQ(net[1].reads.size(), 1u);
  EXPECT_EQ(net[1].reads[0], (ReadState{commit, "r1"}));
  ASSERT_TRUE(net.raft(2).ReadIndex("r2").ok());
  net.Settle();
  ASSERT_EQ(net[2].reads.size(), 1u);
  EXPECT_EQ(net[2].reads[0], (ReadState{commit, "r2"}));
}

TEST(Raft, ReadIndexNeedsAQuorumToConfirmLeadership) {
  TestNetwork net(3);
  net.Campaign(1);
  net.Isolate(1);
  ASSERT_TRUE(net.raft(1).ReadIndex("stale?").ok());
  net.Settle();
  EXPECT_TRUE(net[1].reads.empty()) << "a deposed leader could serve a stale read";
}

TEST(Raft, ReadIndexWaitsForTheLeadersFirstCommit) {
  TestNetwork net(3);
  net.Drop(MessageType::kAppResp);
  net.Campaign(1);
  ASSERT_EQ(net.raft(1).role(), Role::kLeader);
  ASSERT_TRUE(net.raft(1).ReadIndex("early").ok());
  net.Settle();
  EXPECT_TRUE(net[1].reads.empty());
  net.AllowAll();
  net.TickAll(2);  // heartbeats: followers answer, the leader re-sends, commits
  ASSERT_EQ(net[1].reads.size(), 1u);
  EXPECT_EQ(net[1].reads[0].index, net.raft(1).committed());
}

TEST(Raft, LeadershipTransfer) {
  TestNetwork net(3);
  net.Campaign(1);
  net.raft(1).TransferLeader(2);
  net.Settle();
  EXPECT_EQ(net.raft(2).role(), Role::kLeader);
  EXPECT_EQ(net.raft(1).lead(), 2u);
}

TEST(Raft, ProposalsAreDroppedDuringATransferUntilItTimesOut) {
  TestNetwork net(3);
  net.Campaign(1);
  net.Drop(MessageType::kTimeoutNow);
  net.raft(1).TransferLeader(2);
  net.Settle();
  EXPECT_EQ(net.raft(1).lead_transferee(), 2u);
  EXPECT_EQ(net.raft(1).Propose("during").name(), "ErrProposalDropped");
  net.AllowAll();
  net.TickAll(11);  // one election timeout: the transfer is abandoned
  EXPECT_EQ(net.raft(1).role(), Role::kLeader);
  EXPECT_EQ(net.raft(1).lead_transferee(), kNoNode);
  EXPECT_TRUE(net.raft(1).Propose("after").ok());
}

TEST(Raft, LearnerReplicatesButDoesNotVoteUntilPromoted) {
  TestNetwork net(3);
  net.Campaign(1);
  net.AddEmpty(4);
  ASSERT_TRUE(net.raft(1).ProposeConfChange({ConfChangeType::kAddLearnerNode, 4, ""}).ok());
  net.Settle();
  ASSERT_TRUE(net.raft(1).Propose("a").ok());
  net.Settle();
  EXPECT_EQ(AppliedData(net[4]), std::vector<std::string>{"a"});
  EXPECT_EQ(net.raft(1).conf_state().learners, std::vector<NodeId>{4});
  // A learner never campaigns.
  net.Campaign(4);
  EXPECT_EQ(net.raft(4).role(), Role::kFollower);
  // Nor counts toward a quorum: with 2 and 3 cut off, nothing commits.
  net.Cut(1, 2);
  net.Cut(1, 3);
  uint64_t commit = net.raft(1).committed();
  ASSERT_TRUE(net.raft(1).Propose("b").ok());
  net.Settle();
  EXPECT_EQ(net.raft(1).committed(), commit);
  net.HealAll();
  net.TickAll(1);
  ASSERT_TRUE(net.raft(1).ProposeConfChange({ConfChangeType::kAddNode, 4, ""}).ok());
  net.Settle();
  EXPECT_EQ(net.raft(1).conf_state().voters, (std::vector<NodeId>{1, 2, 3, 4}));
  EXPECT_TRUE(net.raft(4).conf_state().learners.empty());
}

// A new member may get the leader's snapshot from before the change that
// added it more than once (a new leader, a snapshot taken meanwhile): each
// is installed, or it would refuse them forever. A member its own
// configuration names refuses a snapshot without it.
TEST(Raft, ANewMemberInstallsSnapshotsThatPredateItsAddition) {
  MemoryStorage storage;
  Config cfg;
  cfg.id = 4;
  cfg.storage = &storage;
  auto created = Raft::Create(cfg);
  ASSERT_TRUE(created.ok());
  Raft& raft = *created.value();
  // Delivers a snapshot from leader 1; returns the index it acknowledges.
  auto deliver = [&](uint64_t index, std::vector<NodeId> voters) {
    Message m;
    m.type = MessageType::kSnap;
    m.from = 1;
    m.to = 4;
    m.term = 2;
    m.snapshot.meta = SnapshotMeta{index, 2, ConfState{voters, {}}};
    EXPECT_TRUE(raft.Step(std::move(m)).ok());
    Ready rd = raft.GetReady();
    if (!rd.snapshot.empty()) {
      EXPECT_TRUE(storage.ApplySnapshot(rd.snapshot).ok());
    }
    uint64_t acknowledged = 0;
    for (const Message& out : rd.messages) {
      if (out.type == MessageType::kAppResp) acknowledged = out.index;
    }
    raft.Advance(rd);
    return acknowledged;
  };
  EXPECT_EQ(deliver(10, {1, 2, 3}), 10u);
  EXPECT_EQ(deliver(20, {1, 2, 3}), 20u) << "still not named by its own configuration";
  EXPECT_EQ(deliver(30, {1, 2, 3, 4}), 30u);
  EXPECT_EQ(deliver(40, {1, 2, 3}), 30u) << "named now: a snapshot without it is refused";
}

TEST(Raft, OneMembershipChangeAtATime) {
  TestNetwork net(3);
  net.Campaign(1);
  net.Drop(MessageType::kApp);  // keep the first change from committing
  ASSERT_TRUE(net.raft(1).ProposeConfChange({ConfChangeType::kAddLearnerNode, 4, ""}).ok());
  net.Settle();
  EXPECT_EQ(net.raft(1).ProposeConfChange({ConfChangeType::kAddLearnerNode, 5, ""}).name(),
            "ErrProposalDropped");
  net.AllowAll();
  net.TickAll(2);
  EXPECT_TRUE(net.raft(1).ProposeConfChange({ConfChangeType::kAddLearnerNode, 5, ""}).ok());
}

TEST(Raft, RemovedLeaderStepsDownAndTheRestElect) {
  TestNetwork net(3);
  net.Campaign(1);
  ASSERT_TRUE(net.raft(1).ProposeConfChange({ConfChangeType::kRemoveNode, 1, ""}).ok());
  net.Settle();
  EXPECT_NE(net.raft(1).role(), Role::kLeader);
  net.Crash(1);
  net.TickAll(40);
  int leaders = (net.raft(2).role() == Role::kLeader) + (net.raft(3).role() == Role::kLeader);
  EXPECT_EQ(leaders, 1);
  NodeId leader = net.raft(2).role() == Role::kLeader ? 2 : 3;
  EXPECT_EQ(net.raft(leader).conf_state().voters, (std::vector<NodeId>{2, 3}));
  ASSERT_TRUE(net.raft(leader).Propose("two").ok());
  net.Settle();
  EXPECT_EQ(AppliedData(net[5 - leader]), std::vector<std::string>{"two"});
}

TEST(Raft, LaggingMemberIsCaughtUpFromASnapshot) {
  TestNetwork net(3);
  net.Campaign(1);
  net.Crash(3);
  for (int i = 0; i < 10; i++) ASSERT_TRUE(net.raft(1).Propose("e" + std::to_string(i)).ok());
  net.Settle();
  uint64_t applied = net.raft(1).applied();
  ASSERT_TRUE(net[1].storage.CreateSnapshot(applied, net.raft(1).conf_state(), "state").ok());
  ASSERT_TRUE(net[1].storage.Compact(applied).ok());
  net.Restart(3);
  net.TickAll(3);
  EXPECT_GE(net.Sent(MessageType::kSnap), 1u);
  EXPECT_EQ(net[3].storage.GetSnapshot().value().meta.index, applied);
  EXPECT_EQ(net[3].storage.GetSnapshot().value().data, "state");
  ASSERT_TRUE(net.raft(1).Propose("after").ok());
  net.Settle();
  EXPECT_EQ(AppliedData(net[3]), std::vector<std::string>{"after"});
  EXPECT_EQ(net.raft(3).committed(), net.raft(1).committed());
}

TEST(Raft, ConflictingUncommittedEntriesAreReplaced) {
  TestNetwork net(3);
  net.Campaign(1);
  net.Isolate(1);
  ASSERT_TRUE(net.raft(1).Propose("lost").ok());
  net.Settle();
  net.TickAll(30);  // 2 or 3 takes over
  NodeId leader = net.raft(2).role() == Role::kLeader ? 2 : 3;
  ASSERT_EQ(net.raft(leader).role(), Role::kLeader);
  ASSERT_TRUE(net.raft(leader).Propose("kept").ok());
  net.Settle();
  net.HealAll();
  net.TickAll(3);
  EXPECT_EQ(net.raft(1).lead(), leader);
  EXPECT_EQ(AppliedData(net[1]), std::vector<std::string>{"kept"});
}

TEST(Raft, StepRefusesLocalMessagesAndStrangers) {
  TestNetwork net(3);
  Message hup;
  hup.type = MessageType::kHup;
  EXPECT_EQ(net.raft(1).Step(hup).name(), "ErrStepLocalMsg");
  Message resp;
  resp.type = MessageType::kAppResp;
  resp.from = 9;
  resp.term = 5;
  EXPECT_EQ(net.raft(1).Step(resp).name(), "ErrStepPeerNotFound");
  EXPECT_EQ(net.raft(1).term(), 1u) << "a stranger's message moved the term";
}

TEST(Raft, UncommittedSizeLimitDropsProposals) {
  Config cfg;
  cfg.max_uncommitted_entries_size = 10;
  TestNetwork net(3, cfg);
  net.Campaign(1);
  net.Isolate(1);  // nothing commits
  EXPECT_TRUE(net.raft(1).Propose("12345678").ok());
  EXPECT_EQ(net.raft(1).Propose("12345678").name(), "ErrProposalDropped");
}

TEST(Raft, ConfChangeEncoding) {
  ConfChange cc{ConfChangeType::kAddLearnerNode, 0x0102030405060708ull, "name"};
  ConfChange back;
  ASSERT_TRUE(DecodeConfChange(EncodeConfChange(cc), &back));
  EXPECT_EQ(back, cc);
  EXPECT_FALSE(DecodeConfChange("short", &back));
  std::string bad = EncodeConfChange(cc);
  bad[0] = 9;
  EXPECT_FALSE(DecodeConfChange(bad, &back));
}

}  // namespace
}  // namespace natcd::raft
