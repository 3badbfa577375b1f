// WatchStreams on a real nats-server, with a manual clock: coalescing of a
// busy watch's events (adapters/nats/front_end/watch_streams.h) and the rules it must
// keep (window, progress notifications, full messages).

#include "adapters/nats/front_end/watch_streams.h"

#include <gtest/gtest.h>
#include <nats/nats.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "adapters/nats/natcd.pb-c.h"
#include "core/watch/mem_event_source.h"
#include "support/nats_server.h"

namespace natcd::nats {
namespace {

constexpr const char* kInbox = "test.watch.inbox";

struct Message {
  uint64_t seq = 0;
  std::vector<int64_t> revisions;  // of its events
  bool canceled = false;
};

class WatchStreamsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.Start());
    ASSERT_EQ(natsConnection_ConnectTo(&nc_, server_.url().c_str()), NATS_OK);
    ASSERT_EQ(natsConnection_SubscribeSync(&sub_, nc_, kInbox), NATS_OK);
    ASSERT_EQ(natsConnection_Flush(nc_), NATS_OK);
    hub_ = std::make_unique<WatchHub>(&source_, WatchHubOptions{});
  }

  void TearDown() override {
    streams_.reset();
    hub_.reset();
    natsSubscription_Destroy(sub_);
    natsConnection_Destroy(nc_);
  }

  // A watch on [k, l) delivered by streams with these options (coalescing
  // from the first busy watch unless they say otherwise).
  WatchId Start(WatchStreamOptions options, size_t coalesce_ready_min = 1) {
    options.coalesce_ready_min = coalesce_ready_min;
    streams_ = std::make_unique<WatchStreams>(nc_, hub_.get(), &source_, &clock_, options,
                                              HeaderInfo{}, "t");
    WatchOptions o;
    o.key = "k";
    o.range_end = "l";
    Result<WatchId> id = hub_->Create(o);
    EXPECT_TRUE(id.ok());
    streams_->Add(id.value(), kInbox, /*json=*/false, source_.CurrentRevision());
    return id.value();
  }

  // One commit, handed to the hub, then one delivery round (an engine turn).
  void Put(const std::string& key) {
    auto events = std::make_shared<const std::vector<Event>>(source_.Put(key, "v"));
    hub_->Notify(events, source_.CurrentRevision());
    streams_->Deliver();
  }

  // The next message on the inbox, if one comes within timeout_ms.
  std::optional<Message> Next(int64_t timeout_ms = 2'000) {
    natsMsg* msg = nullptr;
    if (natsSubscription_NextMsg(&msg, sub_, timeout_ms) != NATS_OK) return std::nullopt;
    auto* r =
        natcd__v1__watch_response__unpack(nullptr, natsMsg_GetDataLength(msg),
                                          reinterpret_cast<const uint8_t*>(natsMsg_GetData(msg)));
    natsMsg_Destroy(msg);
    if (r == nullptr) return std::nullopt;
    Message m;
    m.seq = r->seq;
    m.canceled = r->canceled;
    for (size_t i = 0; i < r->n_events; ++i) m.revisions.push_back(r->events[i]->kv->mod_revision);
    natcd__v1__watch_response__free_unpacked(r, nullptr);
    return m;
  }

  // True when nothing arrives for a while (what was sent arrives well within it).
  bool Silent() { return !Next(200).has_value(); }

  testing::NatsServer server_;
  natsConnection* nc_ = nullptr;
  natsSubscription* sub_ = nullptr;
  watch_testing::MemEventSource source_;
  ManualClock clock_;
  std::unique_ptr<WatchHub> hub_;
  std::unique_ptr<WatchStreams> streams_;
};

TEST_F(WatchStreamsTest, BusyWatchGetsItsEventsTogetherAfterTheAck) {
  WatchId id = Start(WatchStreamOptions{});
  Put("k1");  // idle watch: at once
  std::optional<Message> m = Next();
  ASSERT_TRUE(m);
  EXPECT_EQ(m->seq, 1u);
  EXPECT_EQ(m->revisions, (std::vector<int64_t>{1}));
  // Message 1 unacknowledged: the next commits wait...
  Put("k2");
  Put("k3");
  Put("k4");
  EXPECT_TRUE(Silent());
  // ...for the ack, then go out as one message.
  streams_->Ack(id, 1);
  streams_->Deliver();
  m = Next();
  ASSERT_TRUE(m);
  EXPECT_EQ(m->seq, 2u);
  EXPECT_EQ(m->revisions, (std::vector<int64_t>{2, 3, 4}));
  EXPECT_TRUE(Silent());
}

TEST_F(WatchStreamsTest, EventsWaitAtMostCoalesceMs) {
  WatchStreamOptions options;
  options.coalesce_ms = 10;
  Start(options);
  Put("k1");
  ASSERT_TRUE(Next());
  clock_.AdvanceMs(9);
  Put("k2");
  EXPECT_TRUE(Silent());
  clock_.AdvanceMs(1);  // 10 ms after message 1, still unacknowledged
  streams_->Deliver();
  std::optional<Message> m = Next();
  ASSERT_TRUE(m);
  EXPECT_EQ(m->seq, 2u) << "no gap: a client whose message 1 was lost sees it now";
  EXPECT_EQ(m->revisions, (std::vector<int64_t>{2}));
}

TEST_F(WatchStreamsTest, FullMessageAndProgressDoNotWait) {
  WatchStreamOptions options;
  options.message_events_max = 2;
  WatchId id = Start(options);
  Put("k1");
  ASSERT_TRUE(Next());
  Put("k2");
  EXPECT_TRUE(Silent());
  Put("k3");  // two events waiting: a full message, nothing to gain by waiting
  std::optional<Message> m = Next();
  ASSERT_TRUE(m);
  EXPECT_EQ(m->revisions, (std::vector<int64_t>{2, 3}));
  // A progress notification (a heartbeat, or asked for) goes out while
  // messages are unacknowledged.
  ASSERT_TRUE(hub_->RequestProgress(id).ok());
  streams_->Deliver();
  m = Next();
  ASSERT_TRUE(m);
  EXPECT_EQ(m->seq, 3u);
  EXPECT_TRUE(m->revisions.empty());
}

TEST_F(WatchStreamsTest, WindowStillBoundsUnacknowledgedMessages) {
  WatchStreamOptions options;
  options.window_messages = 2;
  options.coalesce_ms = 10;
  WatchId id = Start(options);
  for (int i = 1; i <= 4; ++i) {
    Put("k" + std::to_string(i));
    clock_.AdvanceMs(10);
  }
  std::optional<Message> m1 = Next();
  std::optional<Message> m2 = Next();
  ASSERT_TRUE(m1 && m2);
  EXPECT_EQ(m1->revisions, (std::vector<int64_t>{1}));
  EXPECT_EQ(m2->revisions, (std::vector<int64_t>{2}));
  EXPECT_TRUE(Silent()) << "more than the window unacknowledged";
  streams_->Ack(id, 2);
  streams_->Deliver();
  std::optional<Message> m3 = Next();
  ASSERT_TRUE(m3);
  EXPECT_EQ(m3->revisions, (std::vector<int64_t>{3, 4}));
}

TEST_F(WatchStreamsTest, WithoutCoalescingEachTurnSends) {
  WatchStreamOptions off;
  off.coalesce_ms = 0;
  // Off, and on with fewer busy watches than coalesce_ready_min.
  for (int pass = 0; pass < 2; ++pass) {
    SCOPED_TRACE(pass);
    const WatchId id =
        pass == 0 ? Start(off) : Start(WatchStreamOptions{}, /*coalesce_ready_min=*/2);
    const int64_t first = source_.CurrentRevision() + 1;
    for (int i = 1; i <= 3; ++i) Put("k" + std::to_string(i));
    for (int64_t rev = first; rev < first + 3; ++rev) {
      std::optional<Message> m = Next();
      ASSERT_TRUE(m);
      EXPECT_EQ(m->revisions, (std::vector<int64_t>{rev}));
    }
    ASSERT_TRUE(hub_->Cancel(id).ok());
  }
}

}  // namespace
}  // namespace natcd::nats
