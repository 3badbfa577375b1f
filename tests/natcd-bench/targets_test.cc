// Every target against its real server, through the same workload code the
// comparison runs: requests succeed (and a read of a missing key does not),
// the compare-and-swap counter loses no update, every watcher sees every
// event, leases expire and take their keys. etcd only where it is
// installed and natcd-bench was built with grpc++.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <memory>

#include "adapters/nats/natcd.pb-c.h"
#include "natcd-bench/bench_test_support.h"
#include "plugin/natcd-bench/deployment.h"
#include "plugin/natcd-bench/jetstream_target.h"
#include "plugin/natcd-bench/load.h"
#include "plugin/natcd-bench/natcd_target.h"
#include "plugin/natcd-bench/nats_requests.h"
#include "plugin/natcd-bench/process.h"
#include "plugin/natcd-bench/runner.h"
#include "plugin/natcd-bench/workload.h"
#ifdef NATCD_BENCH_ETCD
#include "plugin/natcd-bench/etcd_target.h"
#endif

namespace natcd::bench {
namespace {

class TargetTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    root_ = MakeTempDir("natcd-bench-test", "");
    ASSERT_FALSE(root_.empty());
    deployment_ = std::make_unique<Deployment>(root_, Env("NATCD_BIN", "build/bin/natcd"), "");
    const std::string system = GetParam();
    if (system == "etcd") {
#ifdef NATCD_BENCH_ETCD
      if (Deployment::EtcdBinary().empty()) GTEST_SKIP() << "etcd is not installed";
      const std::string endpoint = deployment_->StartEtcd(server_, "etcd");
      ASSERT_FALSE(endpoint.empty());
      auto etcd = std::make_unique<EtcdTarget>(endpoint);
      ASSERT_TRUE(etcd->WaitReady(30'000));
      target_ = std::move(etcd);
      return;
#else
      GTEST_SKIP() << "natcd-bench built without grpc++";
#endif
    }
    const std::string url = deployment_->StartNats(nats_, "nats", false);
    ASSERT_FALSE(url.empty());
    if (system == "natcd") {
      ASSERT_TRUE(deployment_->StartNatcd(server_, url, "natcd"));
      nc_ = ConnectNats(url);
      ASSERT_NE(nc_, nullptr);
      target_ = std::make_unique<NatcdTarget>(nc_, "natcd");
    } else {
      auto js = std::make_unique<JetStreamTarget>("JetStream KV", url);
      ASSERT_TRUE(js->Open());
      target_ = std::move(js);
    }
  }

  void TearDown() override {
    target_.reset();
    natsConnection_Destroy(nc_);
    server_.Stop();
    nats_.Stop();
    if (!root_.empty()) RemoveTree(root_);
  }

  std::string root_;
  std::unique_ptr<Deployment> deployment_;
  Process nats_, server_;
  natsConnection* nc_ = nullptr;
  std::unique_ptr<Target> target_;
};

TEST_P(TargetTest, PutsThenGetsSucceedAndAMissingKeyIsAnError) {
  const LoadResult puts = RunLoad(
      *target_, {.op = Op::kPut, .inflight = 64, .first = 0, .total = 500, .max_ms = 20'000});
  EXPECT_EQ(puts.completed, 500u);
  EXPECT_EQ(puts.errors, 0u);
  EXPECT_EQ(puts.latency.count(), 500u);
  const LoadResult gets = RunLoad(
      *target_, {.op = Op::kGet, .inflight = 16, .first = 0, .total = 500, .max_ms = 20'000});
  EXPECT_EQ(gets.completed, 500u);
  // etcd and natcd answer a missing key with an empty range, a success; a
  // JetStream direct get answers 404. Keys 500.. were never written.
  if (GetParam() == "JetStream KV") {
    const LoadResult missing = RunLoad(
        *target_, {.op = Op::kGet, .inflight = 4, .first = 600, .total = 10, .max_ms = 20'000});
    EXPECT_EQ(missing.errors, 10u);
    EXPECT_EQ(gets.errors, 0u);
  } else {
    EXPECT_EQ(gets.errors, 0u);
  }
}

TEST_P(TargetTest, RangesWhereSupported) {
  if (!target_->Supports(Op::kRange100)) GTEST_SKIP() << GetParam() << " has no range read";
  const LoadResult r = RunLoad(
      *target_, {.op = Op::kRange100, .inflight = 8, .first = 0, .total = 100, .max_ms = 20'000});
  EXPECT_EQ(r.completed, 100u);
  EXPECT_EQ(r.errors, 0u);
}

TEST_P(TargetTest, CompareAndSwapLosesNoUpdate) {
  const CasResult r = RunCas(*target_, 4, 500);
  EXPECT_GT(r.increments, 0u);
  EXPECT_EQ(r.errors, 0u);
  EXPECT_EQ(r.final_value, static_cast<int64_t>(r.increments));
}

TEST_P(TargetTest, EveryWatcherSeesEveryEvent) {
  const FanoutResult r = RunFanout(*target_, 3, 8, 300, /*paced=*/true);
  EXPECT_GT(r.writes, 0u);
  EXPECT_EQ(r.expected, r.writes * 3);
  EXPECT_EQ(r.delivered, r.expected);
  EXPECT_GT(r.lag.count(), 0u);
  EXPECT_EQ(r.gaps.gaps, 0u);
}

// A watcher that sees its group's group_seq jump counts the gap: here a
// message of the group's subject from elsewhere, numbered three past the
// last real one, as if NATS had dropped two.
TEST_P(TargetTest, AGapInAGroupsSequenceIsCounted) {
  if (GetParam() != "natcd") GTEST_SKIP() << "watch groups are natcd's";
  natsSubscription* groups = nullptr;
  ASSERT_EQ(natsConnection_SubscribeSync(&groups, nc_, "natcd.watch.group.>"), NATS_OK);
  struct Count final : EventSink {
    void OnEvent(const void*, size_t) override { ++events; }
    std::atomic<int> events{0};
  } sink;
  ASSERT_TRUE(target_->OpenWatchers(2, &sink));
  Natcd__V1__PutRequest put = NATCD__V1__PUT_REQUEST__INIT;
  const std::string key = SlashKey("w/gap");  // under the watchers' prefix
  put.key = {key.size(), reinterpret_cast<uint8_t*>(const_cast<char*>(key.data()))};
  std::string body(protobuf_c_message_get_packed_size(&put.base), '\0');
  protobuf_c_message_pack(&put.base, reinterpret_cast<uint8_t*>(body.data()));
  natsMsg* reply = nullptr;
  ASSERT_EQ(natsConnection_Request(&reply, nc_, "natcd.kv.put", body.data(),
                                   static_cast<int>(body.size()), 10'000),
            NATS_OK);
  natsMsg_Destroy(reply);
  // The group's message of the put (heartbeats carry no events).
  Natcd__V1__WatchResponse* last = nullptr;
  std::string subject;
  for (int messages = 0; last == nullptr; ++messages) {
    ASSERT_LT(messages, 10) << "no group message with the put's event";
    natsMsg* m = nullptr;
    ASSERT_EQ(natsSubscription_NextMsg(&m, groups, 10'000), NATS_OK);
    auto* r = natcd__v1__watch_response__unpack(
        nullptr, natsMsg_GetDataLength(m), reinterpret_cast<const uint8_t*>(natsMsg_GetData(m)));
    subject = natsMsg_GetSubject(m);
    natsMsg_Destroy(m);
    ASSERT_NE(r, nullptr);
    if (r->n_events > 0) {
      last = r;
    } else {
      natcd__v1__watch_response__free_unpacked(r, nullptr);
    }
  }
  for (int waited_ms = 0; sink.events.load() < 2 && waited_ms < 10'000; waited_ms += 10) {
    nats_Sleep(10);
  }
  ASSERT_EQ(sink.events.load(), 2);
  EXPECT_EQ(target_->WatchGapsSeen().gaps, 0u);
  Natcd__V1__WatchResponse jump = NATCD__V1__WATCH_RESPONSE__INIT;
  jump.group_id = last->group_id;
  jump.group_seq = last->group_seq + 3;
  natcd__v1__watch_response__free_unpacked(last, nullptr);
  std::string bytes(protobuf_c_message_get_packed_size(&jump.base), '\0');
  protobuf_c_message_pack(&jump.base, reinterpret_cast<uint8_t*>(bytes.data()));
  ASSERT_EQ(
      natsConnection_Publish(nc_, subject.c_str(), bytes.data(), static_cast<int>(bytes.size())),
      NATS_OK);
  for (int waited_ms = 0; target_->WatchGapsSeen().gaps < 2 && waited_ms < 10'000;
       waited_ms += 10) {
    nats_Sleep(10);
  }
  // Both watchers saw it, two messages missed each.
  EXPECT_EQ(target_->WatchGapsSeen().gaps, 2u);
  EXPECT_EQ(target_->WatchGapsSeen().messages_missed, 4u);
  target_->CloseWatchers();
  natsSubscription_Destroy(groups);
}

TEST_P(TargetTest, KeepAlivesWhereSupported) {
  if (!target_->Supports(Op::kKeepAlive)) GTEST_SKIP() << GetParam() << " has no leases";
  ASSERT_TRUE(target_->PrepareKeepAlive());
  const LoadResult r = RunLoad(
      *target_, {.op = Op::kKeepAlive, .inflight = 8, .first = 0, .total = 200, .max_ms = 20'000});
  EXPECT_EQ(r.completed, 200u);
  EXPECT_EQ(r.errors, 0u);
}

TEST_P(TargetTest, ExpiringLeasesTakeTheirKeys) {
  if (!target_->Supports(Op::kLeaseGrant)) GTEST_SKIP() << GetParam() << " has no leases";
  const ExpiryResult r = RunExpiry(*target_, 50, 2, 20);
  EXPECT_EQ(r.granted, 50u);
  EXPECT_EQ(r.attached, 50u);
  EXPECT_GE(r.seconds_to_gone, 0);
  EXPECT_EQ(r.keys_left, 0);
  EXPECT_EQ(target_->CountKeys("l"), 0);
}

INSTANTIATE_TEST_SUITE_P(Systems, TargetTest, ::testing::Values("natcd", "JetStream KV", "etcd"),
                         [](const auto& info) {
                           std::string name = info.param;
                           std::erase(name, ' ');
                           return name;
                         });

TEST(JetStreamTargetTest, PipelinedPutsAreWhatKvStoreGetReads) {
  const std::string root = MakeTempDir("natcd-bench-test", "");
  Deployment deployment(root, "", "");
  Process nats;
  const std::string url = deployment.StartNats(nats, "nats", false);
  ASSERT_FALSE(url.empty());
  {
    JetStreamTarget js("JetStream KV", url);
    ASSERT_TRUE(js.Open());
    const LoadResult puts =
        RunLoad(js, {.op = Op::kPut, .inflight = 32, .first = 0, .total = 100, .max_ms = 20'000});
    ASSERT_EQ(puts.errors, 0u);
    for (uint64_t i : {0, 42, 99}) {
      kvEntry* e = nullptr;
      ASSERT_EQ(kvStore_Get(&e, js.kv(), DotKey(KeyOf(Op::kPut, i)).c_str()), NATS_OK) << i;
      EXPECT_EQ(std::string(static_cast<const char*>(kvEntry_Value(e)), kvEntry_ValueLen(e)),
                ValueOf(i));
      kvEntry_Destroy(e);
    }
  }
  nats.Stop();
  RemoveTree(root);
}

}  // namespace
}  // namespace natcd::bench
