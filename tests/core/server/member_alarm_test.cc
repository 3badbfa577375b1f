// A member's alarms and backend quota (core/server/member_alarms.cc): a
// small quota filled until NOSPACE is raised through the log, what stays
// served, the recovery etcd documents (compact, defragment, disarm), the
// CORRUPT refusals, bad Alarm requests refused without a change, and
// alarms that survive a restart. One member of its own, driven turn by turn
// on a manual clock.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "core/server/one_member_test.h"

namespace natcd::server {
namespace {

constexpr int64_t kQuota = 1 << 20;  // 1 MiB

class MemberAlarmTest : public OneMemberTest {
 protected:
  MemberOptions Options() override {
    MemberOptions o = OneMemberTest::Options();
    o.quota_backend_bytes = quota_;
    // The Raft log shares the database: compacted often, so that what
    // compaction and defragmentation give back is the keys' history.
    o.snapshot_entries = 50;
    o.snapshot_catchup_entries = 10;
    return o;
  }

  Result<Response> Call(RequestPayload payload, std::string request_id = "") {
    auto request = std::make_unique<Request>();
    request->payload = std::move(payload);
    request->request_id = std::move(request_id);
    std::shared_ptr<Answer> answer = Submit(std::move(request));
    if (TurnsUntilAnswered(*answer) == 0) return Status::Internal("no answer in 10 turns");
    return std::move(*answer->result);
  }
  std::string Error(const Result<Response>& r) { return r.ok() ? "OK" : r.status().ToString(); }

  std::vector<AlarmMember> Alarms() {
    Result<Response> r = Call(AlarmRequest{});
    EXPECT_TRUE(r.ok()) << Error(r);
    return r.ok() ? std::get<AlarmResponse>(r.value()).alarms : std::vector<AlarmMember>{};
  }
  StatusResponse Status_() {
    Result<Response> r = Call(StatusRequest{});
    EXPECT_TRUE(r.ok()) << Error(r);
    return r.ok() ? std::get<StatusResponse>(r.value()) : StatusResponse{};
  }

  // Overwrites 8 keys with 4 KiB values until a put is refused; the number
  // of puts that succeeded.
  int FillUntilRefused() {
    const std::string value(4096, 'v');
    for (int i = 0; i < 2'000; i++) {
      Result<Response> r = Call(PutRequest{"k" + std::to_string(i % 8), value});
      if (!r.ok()) {
        EXPECT_EQ(Error(r), "ErrNoSpace: etcdserver: mvcc: database space exceeded");
        return i;
      }
    }
    ADD_FAILURE() << "the quota was never reached";
    return -1;
  }

  NodeId self() const { return member_->id(); }

  int64_t quota_ = kQuota;
};

TEST_F(MemberAlarmTest, PastTheQuotaNoSpaceIsRaisedAndOnlyGrowingRequestsAreRefused) {
  EXPECT_TRUE(Alarms().empty());
  const int puts = FillUntilRefused();
  ASSERT_GT(puts, 50);
  const AlarmMember nospace{self(), AlarmType::kNoSpace};
  EXPECT_EQ(Alarms(), std::vector<AlarmMember>{nospace});
  EXPECT_EQ(Status_().errors, std::vector<std::string>{AlarmText(nospace)});

  // Refused: what would grow the store.
  EXPECT_EQ(Error(Call(PutRequest{"small", "x"})),
            "ErrNoSpace: etcdserver: mvcc: database space exceeded");
  EXPECT_EQ(Error(Call(LeaseGrantRequest{60, 0})),
            "ErrNoSpace: etcdserver: mvcc: database space exceeded");
  TxnRequest txn_put;
  txn_put.success.push_back(RequestOp{PutRequest{"t", "1"}});
  EXPECT_EQ(Error(Call(txn_put)), "ErrNoSpace: etcdserver: mvcc: database space exceeded");
  // Served: reads, a txn of reads, deletes, compaction, alarms, status.
  RangeRequest get;
  get.key = "k1";
  Result<Response> read = Call(get);
  ASSERT_TRUE(read.ok()) << Error(read);
  EXPECT_EQ(std::get<RangeResponse>(read.value()).kvs.size(), 1u);
  TxnRequest txn_read;
  txn_read.success.push_back(RequestOp{get});
  EXPECT_EQ(Error(Call(txn_read)), "OK");
  DeleteRangeRequest del;
  del.key = "k7";
  EXPECT_EQ(Error(Call(del)), "OK");
}

// etcd's documented recovery: compact the history, defragment, disarm.
TEST_F(MemberAlarmTest, CompactDefragmentAndDisarmRecover) {
  ASSERT_GT(FillUntilRefused(), 50);
  const int64_t full = Status_().db_size;
  EXPECT_GE(full + 256 + 2 + 4096, kQuota);
  const int64_t revision = Status_().header.revision;
  ASSERT_EQ(Error(Call(CompactionRequest{revision, false})), "OK");
  ASSERT_EQ(Error(Call(DefragmentRequest{})), "OK");
  const int64_t defragmented = Status_().db_size;
  EXPECT_LT(defragmented, kQuota / 2) << "from " << full;
  // Still refused: the alarm is raised until disarmed (etcd's capped
  // applier), however much room there is now.
  EXPECT_EQ(Error(Call(PutRequest{"k1", "after"})),
            "ErrNoSpace: etcdserver: mvcc: database space exceeded");
  Result<Response> disarmed =
      Call(AlarmRequest{AlarmAction::kDeactivate, self(), AlarmType::kNoSpace});
  ASSERT_TRUE(disarmed.ok()) << Error(disarmed);
  EXPECT_EQ(std::get<AlarmResponse>(disarmed.value()).alarms,
            (std::vector<AlarmMember>{{self(), AlarmType::kNoSpace}}));
  EXPECT_TRUE(Alarms().empty());
  EXPECT_TRUE(Status_().errors.empty());
  EXPECT_EQ(Error(Call(PutRequest{"k1", "after"})), "OK");
  // Disarming again: nothing was raised, nothing is answered, as etcd.
  Result<Response> again =
      Call(AlarmRequest{AlarmAction::kDeactivate, self(), AlarmType::kNoSpace});
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(std::get<AlarmResponse>(again.value()).alarms.empty());
}

// A disarm while the database is still full: the next write past the quota
// raises NOSPACE again at once (as etcd's quota check raises it on every
// refusal), not only once the last raise's election timeout has passed.
TEST_F(MemberAlarmTest, NoSpaceIsRaisedAgainAtOnceAfterADisarm) {
  ASSERT_GT(FillUntilRefused(), 50);
  const std::vector<AlarmMember> nospace = {{self(), AlarmType::kNoSpace}};
  ASSERT_EQ(Alarms(), nospace);
  ASSERT_TRUE(Call(AlarmRequest{AlarmAction::kDeactivate, self(), AlarmType::kNoSpace}).ok());
  ASSERT_TRUE(Alarms().empty());
  EXPECT_EQ(Error(Call(PutRequest{"k1", std::string(4096, 'w')})),
            "ErrNoSpace: etcdserver: mvcc: database space exceeded");
  EXPECT_EQ(Alarms(), nospace);
}

TEST_F(MemberAlarmTest, ARetryOfAWriteAppliedBeforeTheAlarmGetsItsOutcome) {
  Result<Response> first = Call(PutRequest{"once", "v"}, "req-1");
  ASSERT_TRUE(first.ok()) << Error(first);
  ASSERT_TRUE(Call(AlarmRequest{AlarmAction::kActivate, self(), AlarmType::kNoSpace}).ok());
  Result<Response> retry = Call(PutRequest{"once", "v"}, "req-1");
  ASSERT_TRUE(retry.ok()) << Error(retry);
  EXPECT_EQ(std::get<PutResponse>(retry.value()).header.revision,
            std::get<PutResponse>(first.value()).header.revision);
}

TEST_F(MemberAlarmTest, CorruptRefusesKvAndLeaseRequestsButNotMaintenance) {
  ASSERT_EQ(Error(Call(PutRequest{"k", "v"})), "OK");
  Result<Response> raised = Call(AlarmRequest{AlarmAction::kActivate, self(), AlarmType::kCorrupt});
  ASSERT_TRUE(raised.ok()) << Error(raised);
  EXPECT_EQ(std::get<AlarmResponse>(raised.value()).alarms,
            (std::vector<AlarmMember>{{self(), AlarmType::kCorrupt}}));
  const std::string corrupt = "ErrCorrupt: etcdserver: corrupt cluster";
  RangeRequest get;
  get.key = "k";
  EXPECT_EQ(Error(Call(get)), corrupt);
  EXPECT_EQ(Error(Call(PutRequest{"k", "w"})), corrupt);
  DeleteRangeRequest del;
  del.key = "k";
  EXPECT_EQ(Error(Call(del)), corrupt);
  EXPECT_EQ(Error(Call(LeaseGrantRequest{60, 0})), corrupt);
  EXPECT_EQ(Error(Call(CompactionRequest{1, false})), corrupt);
  EXPECT_EQ(Error(Call(StatusRequest{})), "OK");
  EXPECT_EQ(Error(Call(HashKVRequest{0})), "OK");
  EXPECT_EQ(Error(Call(MemberListRequest{})), "OK");
  ASSERT_TRUE(Call(AlarmRequest{AlarmAction::kDeactivate, self(), AlarmType::kCorrupt}).ok());
  Result<Response> read = Call(get);
  ASSERT_TRUE(read.ok()) << Error(read);
  EXPECT_EQ(std::get<RangeResponse>(read.value()).kvs.at(0).value, "v");
}

TEST_F(MemberAlarmTest, BadAlarmRequestsAreRefusedAndChangeNothing) {
  ASSERT_TRUE(Call(AlarmRequest{AlarmAction::kActivate, self(), AlarmType::kNoSpace}).ok());
  EXPECT_EQ(Error(Call(AlarmRequest{static_cast<AlarmAction>(5), self(), AlarmType::kNoSpace})),
            "ErrInvalidArgument: etcdserver: unknown alarm action 5");
  EXPECT_EQ(Error(Call(AlarmRequest{AlarmAction::kActivate, self(), AlarmType::kNone})),
            "ErrInvalidArgument: etcdserver: unknown alarm type 0 (NOSPACE or CORRUPT)");
  EXPECT_EQ(Error(Call(AlarmRequest{AlarmAction::kDeactivate, self(), static_cast<AlarmType>(9)})),
            "ErrInvalidArgument: etcdserver: unknown alarm type 9 (NOSPACE or CORRUPT)");
  EXPECT_EQ(Error(Call(AlarmRequest{AlarmAction::kActivate, 12345, AlarmType::kCorrupt})),
            "ErrMemberNotFound: etcdserver: member not found");
  EXPECT_EQ(Error(Call(AlarmRequest{AlarmAction::kDeactivate, 12345, AlarmType::kNoSpace})),
            "ErrMemberNotFound: etcdserver: member not found");
  EXPECT_EQ(Alarms(), (std::vector<AlarmMember>{{self(), AlarmType::kNoSpace}}));
}

TEST_F(MemberAlarmTest, AlarmsSurviveARestart) {
  ASSERT_TRUE(Call(AlarmRequest{AlarmAction::kActivate, self(), AlarmType::kNoSpace}).ok());
  member_.reset();
  Open();
  EXPECT_EQ(Alarms(), (std::vector<AlarmMember>{{self(), AlarmType::kNoSpace}}));
  EXPECT_EQ(Error(Call(PutRequest{"k", "v"})),
            "ErrNoSpace: etcdserver: mvcc: database space exceeded");
}

TEST_F(MemberAlarmTest, NoQuotaNeverRaises) {
  member_.reset();
  quota_ = 0;
  Open();
  const std::string value(4096, 'v');
  for (int i = 0; i < 400; i++)
    ASSERT_EQ(Error(Call(PutRequest{"k" + std::to_string(i), value})), "OK");
  EXPECT_GT(Status_().db_size, kQuota);
  EXPECT_TRUE(Alarms().empty());
}

}  // namespace
}  // namespace natcd::server
