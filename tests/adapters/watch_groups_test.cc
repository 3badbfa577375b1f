// Watch groups (adapters/nats/front_end/watch_streams.h, PROTOCOL.md "Watch
// groups") on a real nats-server, with a manual clock: the offer, the
// hand-over without gap or duplicate, one publish for a thousand members,
// groups kept apart by shape, liveness, and the group's end.

#include <gtest/gtest.h>
#include <nats/nats.h>

#include <chrono>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "adapters/nats/front_end/watch_streams.h"
#include "adapters/nats/natcd.pb-c.h"
#include "core/watch/mem_event_source.h"
#include "support/nats_server.h"

namespace natcd::nats {
namespace {

struct Message {
  std::string subject;
  int64_t watch_id = 0;
  uint64_t seq = 0;
  std::vector<int64_t> revisions;  // of its events
  std::vector<bool> has_prev;      // of its events
  int64_t revision = 0;            // header.revision
  bool canceled = false;
  std::string cancel_reason;
  std::string group_subject;
  int64_t group_id = 0;
  uint64_t group_seq = 0;
  bool json = false;
};

class WatchGroupsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.Start());
    ASSERT_EQ(natsConnection_ConnectTo(&nc_, server_.url().c_str()), NATS_OK);
    // Every watch's own subject and every group subject.
    ASSERT_EQ(natsConnection_SubscribeSync(&own_, nc_, "test.w.>"), NATS_OK);
    ASSERT_EQ(natsConnection_SubscribeSync(&groups_, nc_, "t.watch.group.>"), NATS_OK);
    ASSERT_EQ(natsSubscription_SetPendingLimits(own_, -1, -1), NATS_OK);
    ASSERT_EQ(natsSubscription_SetPendingLimits(groups_, -1, -1), NATS_OK);
    ASSERT_EQ(natsConnection_Flush(nc_), NATS_OK);
    hub_ = std::make_unique<WatchHub>(&source_, WatchHubOptions{});
    WatchStreamOptions options;
    options.heartbeat_ms = 1'000;
    options.ack_timeout_ms = 3'000;
    streams_ = std::make_unique<WatchStreams>(nc_, hub_.get(), &source_, &clock_, options,
                                              HeaderInfo{}, "t");
  }

  void TearDown() override {
    streams_.reset();
    hub_.reset();
    natsSubscription_Destroy(own_);
    natsSubscription_Destroy(groups_);
    natsConnection_Destroy(nc_);
  }

  // A grouped watch of [k, l) from start_revision (0: now), on test.w.<n>.
  WatchId Watch(int n, int64_t start_revision = 0, bool prev_kv = false, bool no_put = false,
                bool json = false, bool group = true) {
    WatchOptions o;
    o.key = "k";
    o.range_end = "l";
    o.start_revision = start_revision;
    o.prev_kv = prev_kv;
    o.no_put = no_put;
    Result<WatchId> id = hub_->Create(o);
    EXPECT_TRUE(id.ok());
    streams_->Add(id.value(), "test.w." + std::to_string(n), json,
                  start_revision > 0 ? start_revision - 1 : source_.CurrentRevision(),
                  group ? &o : nullptr);
    return id.value();
  }

  // One engine turn: a commit (if a key is given), catch-up, delivery.
  void Turn(const std::string& key = "") {
    if (!key.empty()) {
      auto events = std::make_shared<const std::vector<Event>>(source_.Put(key, "v"));
      hub_->Notify(events, source_.CurrentRevision());
    }
    while (hub_->SyncUnsynced(1'000)) {
    }
    streams_->Deliver();
  }

  static std::optional<Message> Read(natsSubscription* sub, int64_t timeout_ms) {
    natsMsg* msg = nullptr;
    if (natsSubscription_NextMsg(&msg, sub, timeout_ms) != NATS_OK) return std::nullopt;
    Message m;
    m.subject = natsMsg_GetSubject(msg);
    const int length = natsMsg_GetDataLength(msg);
    m.json = length > 0 && natsMsg_GetData(msg)[0] == '{';
    if (m.json) {
      natsMsg_Destroy(msg);
      return m;
    }
    auto* r = natcd__v1__watch_response__unpack(
        nullptr, length, reinterpret_cast<const uint8_t*>(natsMsg_GetData(msg)));
    natsMsg_Destroy(msg);
    if (r == nullptr) return std::nullopt;
    m.watch_id = r->watch_id;
    m.seq = r->seq;
    m.revision = r->header != nullptr ? r->header->revision : 0;
    m.canceled = r->canceled;
    m.cancel_reason = r->cancel_reason != nullptr ? r->cancel_reason : "";
    m.group_subject = r->group_subject != nullptr ? r->group_subject : "";
    m.group_id = r->group_id;
    m.group_seq = r->group_seq;
    for (size_t i = 0; i < r->n_events; ++i) {
      m.revisions.push_back(r->events[i]->kv->mod_revision);
      m.has_prev.push_back(r->events[i]->prev_kv != nullptr);
    }
    natcd__v1__watch_response__free_unpacked(r, nullptr);
    return m;
  }
  std::optional<Message> Own(int64_t timeout_ms = 2'000) { return Read(own_, timeout_ms); }
  std::optional<Message> Group(int64_t timeout_ms = 2'000) { return Read(groups_, timeout_ms); }
  bool Silent(natsSubscription* sub) { return !Read(sub, 200).has_value(); }

  // Reads the watch's offer and acks it as a client that subscribed.
  Message AcceptOffer(WatchId id) {
    std::optional<Message> offer = Own();
    EXPECT_TRUE(offer);
    if (!offer) return {};
    EXPECT_EQ(offer->watch_id, id);
    EXPECT_FALSE(offer->group_subject.empty());
    EXPECT_NE(offer->group_id, 0);
    EXPECT_EQ(offer->group_seq, 0u);
    EXPECT_TRUE(offer->revisions.empty());
    streams_->Ack(id, offer->seq, /*group_subscribed=*/true, offer->group_id);
    return *offer;
  }

  testing::NatsServer server_;
  natsConnection* nc_ = nullptr;
  natsSubscription* own_ = nullptr;
  natsSubscription* groups_ = nullptr;
  watch_testing::MemEventSource source_;
  ManualClock clock_;
  std::unique_ptr<WatchHub> hub_;
  std::unique_ptr<WatchStreams> streams_;
};

TEST_F(WatchGroupsTest, HandOverHasNoGapAndNoDuplicate) {
  for (const char* key : {"k1", "k2", "k3"}) source_.Put(key, "v");
  hub_->Notify(std::make_shared<const std::vector<Event>>(), source_.CurrentRevision());
  const WatchId id = Watch(0, /*start_revision=*/1);
  Turn();  // the history, then (drained at 3) the offer
  std::optional<Message> history = Own();
  ASSERT_TRUE(history);
  EXPECT_EQ(history->revisions, (std::vector<int64_t>{1, 2, 3}));
  Message offer = AcceptOffer(id);
  EXPECT_EQ(offer.revision, 3) << "an offer is a truthful bookmark";
  EXPECT_EQ(
      offer.group_subject, "t.watch.group.0000000000000000." + [&] {
        char hex[17];
        snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(offer.group_id));
        return std::string(hex);
      }());
  // Revision 4 reaches both: the watch's own stream and the group's.
  Turn("k4");
  std::optional<Message> own4 = Own();
  ASSERT_TRUE(own4);
  EXPECT_EQ(own4->revisions, (std::vector<int64_t>{4}));
  std::optional<Message> join = Own();
  ASSERT_TRUE(join);
  EXPECT_EQ(join->group_id, offer.group_id);
  EXPECT_TRUE(join->group_subject.empty());
  EXPECT_EQ(join->revision, 4);
  std::optional<Message> group4 = Group();
  ASSERT_TRUE(group4);
  EXPECT_EQ(group4->group_seq, 1u);
  EXPECT_EQ(group4->watch_id, 0);
  EXPECT_EQ(group4->revisions, (std::vector<int64_t>{4}));
  // The join says: from group_seq 2 on, which holds revision 5 first.
  EXPECT_EQ(join->group_seq, 2u);
  Turn("k5");
  std::optional<Message> group5 = Group();
  ASSERT_TRUE(group5);
  EXPECT_EQ(group5->group_seq, 2u);
  EXPECT_EQ(group5->revisions, (std::vector<int64_t>{5}));
  EXPECT_TRUE(Silent(own_)) << "a member gets nothing more on its own subject";
  EXPECT_EQ(streams_->members(), 1u);
  EXPECT_EQ(streams_->groups(), 1u);
  EXPECT_EQ(hub_->size(), 1u) << "the member's own hub watcher is gone";
  // A client cancel: the group goes with its last member.
  EXPECT_TRUE(streams_->Has(id));
  streams_->Remove(id);
  EXPECT_FALSE(streams_->Has(id));
  EXPECT_EQ(streams_->groups(), 0u);
  EXPECT_EQ(hub_->size(), 0u);
}

TEST_F(WatchGroupsTest, AThousandMembersCostOnePublish) {
  constexpr int kWatches = 1'000;
  const auto started = std::chrono::steady_clock::now();
  std::vector<WatchId> ids;
  for (int i = 0; i < kWatches; ++i) ids.push_back(Watch(i));
  Turn();  // all drained: the offers
  for (int i = 0; i < kWatches; ++i) {
    std::optional<Message> offer = Own();
    ASSERT_TRUE(offer) << i;
    ASSERT_FALSE(offer->group_subject.empty());
    streams_->Ack(offer->watch_id, offer->seq, true, offer->group_id);
  }
  Turn();  // the joins
  std::set<int64_t> joined;
  for (int i = 0; i < kWatches; ++i) {
    std::optional<Message> join = Own();
    ASSERT_TRUE(join) << i;
    EXPECT_EQ(join->group_seq, 1u);
    joined.insert(join->watch_id);
  }
  EXPECT_EQ(joined.size(), static_cast<size_t>(kWatches));
  EXPECT_EQ(streams_->groups(), 1u);
  EXPECT_EQ(streams_->members(), static_cast<size_t>(kWatches));
  EXPECT_EQ(hub_->size(), 1u);
  for (int i = 0; i < 10; ++i) Turn("k" + std::to_string(i));
  for (uint64_t seq = 1; seq <= 10; ++seq) {
    std::optional<Message> m = Group();
    ASSERT_TRUE(m);
    EXPECT_EQ(m->group_seq, seq);
    EXPECT_EQ(m->revisions.size(), 1u);
  }
  EXPECT_TRUE(Silent(groups_)) << "one message per commit, for all members";
  EXPECT_TRUE(Silent(own_));
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10));
}

TEST_F(WatchGroupsTest, WatchesOfDifferentShapesNeverShareAGroup) {
  const WatchId plain = Watch(0);
  const WatchId prev = Watch(1, 0, /*prev_kv=*/true);
  const WatchId no_put = Watch(2, 0, false, /*no_put=*/true);
  Watch(3, 0, false, false, /*json=*/true);
  const WatchId plain2 = Watch(4);
  const WatchId opted_out = Watch(5, 0, false, false, false, /*group=*/false);
  Turn();
  std::set<int64_t> offered;
  std::set<int64_t> groups;
  size_t json_offers = 0;
  for (int i = 0; i < 5; ++i) {
    std::optional<Message> offer = Own();
    ASSERT_TRUE(offer);
    if (offer->json) {
      ++json_offers;  // a JSON watch gets JSON, and stays on its own stream
      continue;
    }
    offered.insert(offer->watch_id);
    groups.insert(offer->group_id);
    streams_->Ack(offer->watch_id, offer->seq, true, offer->group_id);
  }
  EXPECT_TRUE(Silent(own_)) << "no offer for a watch that did not ask";
  EXPECT_EQ(json_offers, 1u);
  EXPECT_EQ(offered, (std::set<int64_t>{plain, prev, no_put, plain2}));
  EXPECT_EQ(groups.size(), 3u) << "plain and plain2 share one; prev_kv and no_put have theirs";
  EXPECT_EQ(streams_->groups(), 4u) << "and the JSON watch has its own";
  // Revision 1 still comes on the own streams (but no_put's); then the four
  // join.
  Turn("k1");
  size_t joins = 0, own_events = 0;
  while (std::optional<Message> m = Own(500)) {
    if (m->group_id != 0) ++joins;
    if (m->json || !m->revisions.empty()) ++own_events;
  }
  EXPECT_EQ(own_events, 5u);
  EXPECT_EQ(joins, 4u);
  EXPECT_EQ(streams_->members(), 4u);
  while (Group(200)) {
  }
  // Revision 2 (a key with a previous value): once per group that wants
  // puts, with prev_kv in the prev_kv group only, JSON in the JSON group.
  Turn("k1");
  std::vector<Message> proto;
  size_t json_messages = 0;
  while (std::optional<Message> m = Group(300)) {
    if (m->json) {
      ++json_messages;
      continue;
    }
    proto.push_back(*m);
  }
  EXPECT_EQ(json_messages, 1u);
  ASSERT_EQ(proto.size(), 2u) << "the no_put group has nothing for a put";
  EXPECT_NE(proto[0].subject, proto[1].subject);
  ASSERT_EQ(proto[0].revisions, (std::vector<int64_t>{2}));
  ASSERT_EQ(proto[1].revisions, (std::vector<int64_t>{2}));
  EXPECT_NE(proto[0].has_prev[0], proto[1].has_prev[0]);
  // On own subjects: the JSON watch's and the opted-out watch's, no member's.
  std::optional<Message> a = Own();
  std::optional<Message> b = Own();
  ASSERT_TRUE(a && b);
  EXPECT_TRUE(Silent(own_));
  const Message& not_json = a->json ? *b : *a;
  EXPECT_NE(a->json, b->json);
  EXPECT_EQ(not_json.watch_id, opted_out);
  EXPECT_EQ(not_json.revisions, (std::vector<int64_t>{2}));
}

TEST_F(WatchGroupsTest, MembersLiveByAckingHeartbeatsAndOthersAreReclaimed) {
  const WatchId alive = Watch(0);
  const WatchId gone = Watch(1);
  Turn();
  for (int i = 0; i < 2; ++i) {
    std::optional<Message> offer = Own();
    ASSERT_TRUE(offer);
    streams_->Ack(offer->watch_id, offer->seq, true, offer->group_id);
  }
  Turn();
  std::optional<Message> join = Own();
  ASSERT_TRUE(join);
  const int64_t group_id = join->group_id;
  ASSERT_TRUE(Own());
  // Heartbeats come on the group subject every heartbeat_ms, busy or not;
  // only `alive` acks them.
  for (int t = 0; t < 5; ++t) {
    clock_.AdvanceMs(1'000);
    streams_->Tick();
    Turn("k" + std::to_string(t));
    std::optional<Message> first = Group();
    ASSERT_TRUE(first);
    std::optional<Message> second = Group();
    ASSERT_TRUE(second);
    // The commit's events and the heartbeat, in either order.
    const Message& heartbeat = first->revisions.empty() ? *first : *second;
    EXPECT_TRUE(heartbeat.revisions.empty());
    EXPECT_FALSE(heartbeat.canceled);
    streams_->Ack(alive, heartbeat.group_seq, false, group_id);
  }
  // After ack timeout + heartbeat (4 s) without an ack, `gone` is reclaimed
  // with a cancel on its own subject.
  std::optional<Message> bye = Own();
  ASSERT_TRUE(bye);
  EXPECT_EQ(bye->watch_id, gone);
  EXPECT_TRUE(bye->canceled);
  EXPECT_EQ(bye->seq, 3u) << "its own stream continues: offer 1, join 2";
  EXPECT_NE(bye->cancel_reason.find("reclaimed"), std::string::npos);
  EXPECT_FALSE(streams_->Has(gone));
  EXPECT_TRUE(streams_->Has(alive));
  EXPECT_EQ(streams_->groups(), 1u);
}

TEST_F(WatchGroupsTest, RequestProgressAndCancelReachEveryMember) {
  const WatchId id = Watch(0);
  Turn();
  AcceptOffer(id);
  Turn();
  ASSERT_TRUE(Own());  // the join
  ASSERT_TRUE(streams_->RequestProgress(id).ok());
  Turn();
  std::optional<Message> progress = Group();
  ASSERT_TRUE(progress);
  EXPECT_TRUE(progress->revisions.empty());
  EXPECT_FALSE(progress->canceled);
  EXPECT_EQ(progress->group_seq, 1u);
  Turn("k1");
  ASSERT_TRUE(Group());
  hub_->CancelAll("server shutting down");
  streams_->Deliver(/*ignore_window=*/true);
  std::optional<Message> end = Group();
  ASSERT_TRUE(end);
  EXPECT_TRUE(end->canceled);
  EXPECT_EQ(end->cancel_reason, "server shutting down");
  EXPECT_EQ(end->revision, 1) << "the resume point minus one";
  EXPECT_EQ(end->group_seq, 3u);
  EXPECT_EQ(streams_->members(), 0u);
  EXPECT_EQ(streams_->groups(), 0u);
}

}  // namespace
}  // namespace natcd::nats
