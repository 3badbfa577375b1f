// etcd's MemberUpdate on a member (core/server/member_peer_urls.cc): peer
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

}  // namespace
}  // namespace natcd::server
