// etcd's MemberUpdate on a member (core/server/member_peer_urls.cc), and the
// peer URLs a MemberAdd records and a MemberRemove drops: peer
// URLs through the log, answered with the membership, refused as etcd
// refuses them, and listed as they were after a restart. One member of its
// own (a learner added beside it that never runs), driven turn by turn.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/server/one_member_test.h"

namespace natcd::server {
namespace {

using Urls = std::vector<std::string>;

class MemberPeerUrlsTest : public OneMemberTest {
 protected:
  void SetUp() override {
    OneMemberTest::SetUp();
    ASSERT_TRUE(Ask(MemberAddRequest{"natcd-2", true}).ok());
  }

  Result<Response> Ask(RequestPayload payload) {
    std::shared_ptr<Answer> answer = Submit(std::move(payload));
    EXPECT_GT(TurnsUntilAnswered(*answer), 0);
    return answer->result ? *answer->result : Status::Internal("no answer");
  }
  // "OK" or "<etcd name>: <message>".
  std::string Update(NodeId id, Urls urls) {
    Result<Response> r = Ask(MemberUpdateRequest{id, std::move(urls)});
    if (!r.ok()) return std::string(r.status().name()) + ": " + std::string(r.status().message());
    EXPECT_TRUE(std::holds_alternative<MembershipResponse>(r.value()));
    return "OK";
  }
  // A restart. With the learner's addition still to apply again, Raft
  // campaigns only after an election timeout (etcd's raft: no campaign
  // while configuration changes are unapplied).
  void Restart() {
    member_.reset();
    Result<std::unique_ptr<Member>> opened = Member::Open(Options());
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    member_ = std::move(opened).value();
    for (int i = 0; i < 50 && !member_->is_leader(); i++) {
      clock_.AdvanceMs(200);
      member_->RunOneTurn();
    }
    ASSERT_TRUE(member_->is_leader());
  }
  // Each member's recorded peer URLs, as MemberList answers.
  std::map<NodeId, Urls> Listed() {
    std::map<NodeId, Urls> out;
    for (const MemberInfo& m : Call<MemberListResponse>(MemberListRequest{}).members) {
      out[m.id] = m.peer_urls;
    }
    return out;
  }

  const NodeId n1_ = MemberIdOf("natcd-1");
  const NodeId n2_ = MemberIdOf("natcd-2");
};

TEST_F(MemberPeerUrlsTest, SetThroughTheLogAndAnsweredWithTheMembership) {
  Result<Response> r = Ask(MemberUpdateRequest{n2_, {"http://n2:2380", "http://10.0.0.2:2380"}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const MembershipResponse& members = std::get<MembershipResponse>(r.value());
  ASSERT_EQ(members.members.size(), 2u);
  EXPECT_EQ(members.members[1].id, n2_);
  EXPECT_EQ(members.members[1].peer_urls, (Urls{"http://n2:2380", "http://10.0.0.2:2380"}));
  EXPECT_TRUE(members.members[1].is_learner);
  EXPECT_EQ(Listed(),
            (std::map<NodeId, Urls>{{n1_, {}}, {n2_, {"http://n2:2380", "http://10.0.0.2:2380"}}}));
  // Its own URLs again, or new ones: fine.
  EXPECT_EQ(Update(n2_, {"http://10.0.0.2:2380"}), "OK");
  EXPECT_EQ(Listed().at(n2_), Urls{"http://10.0.0.2:2380"});
}

TEST_F(MemberPeerUrlsTest, RefusedAsEtcdRefusesIt) {
  EXPECT_EQ(Update(12345, {"http://x:2380"}), "ErrMemberNotFound: etcdserver: member not found");
  ASSERT_EQ(Update(n2_, {"http://n2:2380"}), "OK");
  EXPECT_EQ(Update(n1_, {"http://n1:2380", "http://n2:2380"}),
            "ErrPeerURLExist: etcdserver: Peer URLs already exists");
  EXPECT_EQ(Listed().at(n1_), Urls{}) << "a refusal changes nothing";
}

TEST_F(MemberPeerUrlsTest, ARestartKeepsThemAndTheirRefusals) {
  ASSERT_EQ(Update(n2_, {"http://a:2380"}), "OK");
  ASSERT_EQ(Update(n1_, {"http://a:2380"}),
            "ErrPeerURLExist: etcdserver: Peer URLs already exists");
  ASSERT_EQ(Update(n2_, {"http://b:2380"}), "OK");
  ASSERT_NO_FATAL_FAILURE(Restart());
  EXPECT_EQ(Listed(), (std::map<NodeId, Urls>{{n1_, {}}, {n2_, {"http://b:2380"}}}));
  EXPECT_EQ(Update(n1_, {"http://a:2380"}), "OK") << "free now";
  ASSERT_NO_FATAL_FAILURE(Restart());
  EXPECT_EQ(Listed(), (std::map<NodeId, Urls>{{n1_, {"http://a:2380"}}, {n2_, {"http://b:2380"}}}));
}

// etcd's MemberAdd records the peer URLs it is given (the same row).
TEST_F(MemberPeerUrlsTest, MemberAddRecordsItsPeerUrls) {
  const NodeId n3 = MemberIdOf("natcd-3");
  Result<Response> r = Ask(MemberAddRequest{"natcd-3", true, {"http://n3:2380", "http://h3:2380"}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const MemberAddResponse& added = std::get<MemberAddResponse>(r.value());
  EXPECT_EQ(added.member.id, n3);
  EXPECT_EQ(added.member.peer_urls, (Urls{"http://n3:2380", "http://h3:2380"}));
  EXPECT_EQ(Listed().at(n3), (Urls{"http://n3:2380", "http://h3:2380"}));
  EXPECT_EQ(Update(n2_, {"http://h3:2380"}),
            "ErrPeerURLExist: etcdserver: Peer URLs already exists");
  Result<Response> taken = Ask(MemberAddRequest{"natcd-4", true, {"http://h3:2380"}});
  ASSERT_FALSE(taken.ok());
  EXPECT_EQ(taken.status().ToString(),
            Status::InvalidArgument("ErrPeerURLExist", "etcdserver: Peer URLs already exists")
                .ToString());
  // A later MemberUpdate is what a restart lists (the addition is not
  // recorded again when the log is replayed).
  ASSERT_EQ(Update(n3, {"http://n3b:2380"}), "OK");
  ASSERT_NO_FATAL_FAILURE(Restart());
  EXPECT_EQ(Listed().at(n3), Urls{"http://n3b:2380"});
}

// A removed member's URLs go: free for others, not listed when it is added
// again without them, after a restart too.
TEST_F(MemberPeerUrlsTest, ARemovedMembersUrlsGo) {
  const NodeId n3 = MemberIdOf("natcd-3");
  ASSERT_TRUE(Ask(MemberAddRequest{"natcd-3", true, {"http://n3:2380"}}).ok());
  ASSERT_TRUE(Ask(MemberRemoveRequest{n3}).ok());
  ASSERT_TRUE(Ask(MemberAddRequest{"natcd-3", true, {}}).ok());
  EXPECT_EQ(Listed().at(n3), Urls{});
  EXPECT_EQ(Update(n2_, {"http://n3:2380"}), "OK");
  ASSERT_TRUE(Ask(MemberRemoveRequest{n2_}).ok());
  ASSERT_NO_FATAL_FAILURE(Restart());
  EXPECT_EQ(Listed(), (std::map<NodeId, Urls>{{n1_, {}}, {n3, {}}}));
  EXPECT_EQ(Update(n3, {"http://n3:2380"}), "OK") << "n2's URL went with it";
}

}  // namespace
}  // namespace natcd::server
