// Watches over NATS: the WatchResponse stream on deliver_subject (seq,
// acks, window), history replay racing live writes, prev_kv and filters,
// cancel, progress, compaction, slow consumers and vanished clients.
#include <atomic>
#include <chrono>
#include <set>
#include <thread>

#include "natcd/natcd_fixture.h"
#include "natcd/natcd_helpers.h"

namespace natcd::testing {
namespace {

using WatchTest = NatcdTest;

TEST_F(WatchTest, StreamSeqAndEventsInOrder) {
  WatchClient watch(client_.get(), On("/ws/", "/ws0"));
  ASSERT_TRUE(watch.ok()) << watch.create_reply.error;
  EXPECT_EQ(watch.created->header->revision, 1);
  for (int i = 1; i <= 5; ++i) client_->Put("/ws/" + std::to_string(i), "v" + std::to_string(i));
  client_->Put("/elsewhere", "x");  // not watched
  client_->Delete("/ws/1");
  auto events = watch.Events(6);
  ASSERT_EQ(events.size(), 6u);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(events[i].revision, i + 2);
    EXPECT_EQ(events[i].key, "/ws/" + std::to_string(i + 1));
    EXPECT_EQ(events[i].value, "v" + std::to_string(i + 1));
    EXPECT_TRUE(events[i].put);
  }
  EXPECT_EQ(events[5].revision, 8);
  EXPECT_FALSE(events[5].put);
  EXPECT_EQ(events[5].key, "/ws/1");
  EXPECT_GE(watch.last_seq, 1u);
  EXPECT_FALSE(watch.inbox().Next(200)) << "nothing else is delivered";
}

TEST_F(WatchTest, TxnRevisionComesInOneMessage) {
  WatchClient watch(client_.get(), On("/wt/", "/wt0"));
  ASSERT_TRUE(watch.ok());
  std::string body = "{\"success\":[";
  for (int i = 0; i < 5; ++i) {
    if (i) body += ",";
    body += "{\"requestPut\":{\"key\":\"" + B64("/wt/" + std::to_string(i)) + "\"}}";
  }
  body += "]}";
  ASSERT_TRUE(CallJson(client_.get(), "kv.txn", body).reply.ok());
  WatchMsg m = watch.Next();
  ASSERT_TRUE(m);
  ASSERT_EQ(m->n_events, 5u);
  for (size_t i = 0; i < 5; ++i) EXPECT_EQ(m->events[i]->kv->mod_revision, 2);
  EXPECT_FALSE(m->fragment);
}

TEST_F(WatchTest, HistoryReplayRacingLiveWritesIsExactlyOnceInOrder) {
  constexpr int kBefore = 1500;
  constexpr int kDuring = 1500;
  // History: written by 6 connections at once.
  {
    std::vector<std::thread> writers;
    for (int t = 0; t < 6; ++t) {
      writers.emplace_back([&, t] {
        WireClient c(server_.url());
        for (int i = t; i < kBefore; i += 6) c.Put("/wh/" + std::to_string(i % 97), "h");
      });
    }
    for (auto& w : writers) w.join();
  }
  ASSERT_EQ(Revision(client_.get()), kBefore + 1);
  std::atomic<bool> go{false};
  std::thread live([&] {
    WireClient c(server_.url());
    while (!go.load()) std::this_thread::yield();
    for (int i = 0; i < kDuring; ++i) c.Put("/wh/" + std::to_string(i % 89), "l");
  });
  go = true;
  WatchSpec spec = On("/wh/", "/wh0", 1);
  spec.prev_kv = true;
  WatchClient watch(client_.get(), spec);
  ASSERT_TRUE(watch.ok()) << watch.create_reply.error;
  auto events = watch.Events(kBefore + kDuring, 20000);
  live.join();
  ASSERT_EQ(events.size(), static_cast<size_t>(kBefore + kDuring));
  for (size_t i = 0; i < events.size(); ++i) {
    ASSERT_EQ(events[i].revision, static_cast<int64_t>(i + 2)) << "at event " << i;
  }
  EXPECT_FALSE(watch.inbox().Next(200)) << "an event was delivered twice";
}

TEST_F(WatchTest, PrevKvAndFilters) {
  WatchSpec with_prev = On("/wf");
  with_prev.prev_kv = true;
  WatchClient prev(client_.get(), with_prev);
  WatchSpec no_put = On("/wf");
  no_put.no_put = true;
  WatchClient deletes_only(client_.get(), no_put);
  WatchSpec no_delete = On("/wf");
  no_delete.no_delete = true;
  WatchClient puts_only(client_.get(), no_delete);
  WatchClient plain(client_.get(), On("/wf"));
  ASSERT_TRUE(prev.ok() && deletes_only.ok() && puts_only.ok() && plain.ok());

  client_->Put("/wf", "1");
  client_->Put("/wf", "2");
  client_->Delete("/wf");
  client_->Put("/wf", "3");

  auto p = prev.Events(4);
  ASSERT_EQ(p.size(), 4u);
  EXPECT_EQ(p[0].prev_mod_revision, 0);  // created: nothing before
  EXPECT_EQ(p[1].prev_value, "1");
  EXPECT_EQ(p[1].prev_mod_revision, 2);
  EXPECT_FALSE(p[2].put);
  EXPECT_EQ(p[2].prev_value, "2");
  EXPECT_EQ(p[3].prev_mod_revision, 0);  // re-created after the delete

  auto d = deletes_only.Events(1);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_FALSE(d[0].put);
  EXPECT_EQ(d[0].revision, 4);
  auto u = puts_only.Events(3);
  ASSERT_EQ(u.size(), 3u);
  EXPECT_EQ(u[0].revision, 2);
  EXPECT_EQ(u[1].revision, 3);
  EXPECT_EQ(u[2].revision, 5);
  auto all = plain.Events(4);
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all[1].prev_mod_revision, 0) << "prev_kv only when asked for";
  EXPECT_FALSE(deletes_only.inbox().Next(200));
  EXPECT_FALSE(puts_only.inbox().Next(10));
}

TEST_F(WatchTest, CancelStopsTheStream) {
  WatchClient watch(client_.get(), On("/wc"));
  ASSERT_TRUE(watch.ok());
  client_->Put("/wc", "1");
  ASSERT_EQ(watch.Events(1).size(), 1u);
  WireReply cancel = watch.Cancel();
  ASSERT_TRUE(cancel.ok()) << cancel.error;
  auto c =
      WireClient::Decode<Natcd__V1__WatchResponse>(&natcd__v1__watch_response__descriptor, cancel);
  ASSERT_TRUE(c);
  EXPECT_TRUE(c->canceled);
  for (int i = 0; i < 5; ++i) client_->Put("/wc", "more");
  EXPECT_FALSE(watch.inbox().Next(300)) << "messages after cancel";
}

TEST_F(WatchTest, ProgressRequestArrivesOnTheStreamAfterTheEvents) {
  WatchClient watch(client_.get(), On("/wp"));
  ASSERT_TRUE(watch.ok());
  client_->Put("/wp", "1");
  client_->Put("/other", "1");
  WireReply r = watch.Progress();
  ASSERT_TRUE(r.ok()) << r.error;
  // The event first, then the bookmark covering both revisions.
  WatchMsg first = watch.Next();
  ASSERT_TRUE(first);
  ASSERT_EQ(first->n_events, 1u);
  WatchMsg note = watch.Next();
  ASSERT_TRUE(note);
  EXPECT_EQ(note->n_events, 0u);
  EXPECT_FALSE(note->canceled);
  EXPECT_FALSE(note->created);
  EXPECT_EQ(note->header->revision, 3);
}

TEST_F(WatchTest, CreateBelowCompactRevisionIsCanceled) {
  for (int i = 0; i < 6; ++i) client_->Put("/wk", std::to_string(i));
  Natcd__V1__CompactionRequest compact;
  natcd__v1__compaction_request__init(&compact);
  compact.revision = 6;
  ASSERT_TRUE(client_->Call("kv.compact", &compact.base).ok());
  WatchClient old(client_.get(), On("/wk", "", 3));
  ASSERT_TRUE(old.create_reply.ok()) << old.create_reply.error;
  ASSERT_TRUE(old.created);
  EXPECT_FALSE(old.created->created);
  EXPECT_TRUE(old.created->canceled);
  EXPECT_EQ(old.created->compact_revision, 6);
  EXPECT_NE(std::string(old.created->cancel_reason).find("compacted"), std::string::npos);
  EXPECT_FALSE(old.inbox().Next(200)) << "a canceled create delivers nothing";
  // From the compact revision it works.
  WatchClient ok(client_.get(), On("/wk", "", 6));
  ASSERT_TRUE(ok.ok());
  auto events = ok.Events(2);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].revision, 6);
  EXPECT_EQ(events[1].revision, 7);
}

TEST_F(WatchTest, RevisionLargerThanMaxPayloadIsFragmented) {
  // 60 puts of 10 KB in one txn, watched with prev_kv: about 1.2 MB for one
  // revision, more than nats-server's 1 MB max payload.
  std::string big(10000, 'b');
  for (int i = 0; i < 60; ++i) client_->Put("/wg/" + std::to_string(100 + i), big);
  WatchSpec spec = On("/wg/", "/wg0");
  spec.prev_kv = true;
  WatchClient watch(client_.get(), spec);
  ASSERT_TRUE(watch.ok());
  std::string body = "{\"success\":[";
  std::string value = B64(std::string(10000, 'n'));
  for (int i = 0; i < 60; ++i) {
    if (i) body += ",";
    body += "{\"requestPut\":{\"key\":\"" + B64("/wg/" + std::to_string(100 + i)) +
            "\",\"value\":\"" + value + "\"}}";
  }
  body += "]}";
  JsonReply txn = CallJson(client_.get(), "kv.txn", body);
  ASSERT_TRUE(txn.reply.ok()) << txn.reply.error;
  std::vector<WatchClient::Ev> events;
  int fragments = 0;
  for (;;) {
    WatchMsg m = watch.Next();
    ASSERT_TRUE(m) << "stream ended after " << events.size() << " events";
    WatchClient::Append(*m, &events);
    if (!m->fragment) break;
    ++fragments;
  }
  EXPECT_GE(fragments, 1) << "a revision over the max payload must be split";
  ASSERT_EQ(events.size(), 60u);
  for (size_t i = 0; i < events.size(); ++i) {
    EXPECT_EQ(events[i].revision, 62);
    EXPECT_EQ(events[i].key, "/wg/" + std::to_string(100 + i));
    EXPECT_EQ(events[i].value.size(), 10000u);
    EXPECT_EQ(events[i].prev_value, big);
  }
}

TEST_F(WatchTest, JsonWatchOfALargeRevisionFitsTheMaxPayload) {
  // The same in JSON, where base64 makes every event a third larger than
  // in protobuf: each fragment must still fit.
  std::string big(10000, 'b');
  for (int i = 0; i < 60; ++i) client_->Put("/wj/" + std::to_string(100 + i), big);
  Sub inbox(client_->nc());
  JsonReply created =
      CallJson(client_.get(), "watch.create",
               "{\"key\":\"" + B64("/wj/") + "\",\"rangeEnd\":\"" + B64("/wj0") +
                   "\",\"prevKv\":true,\"deliverSubject\":\"" + inbox.subject() + "\"}");
  ASSERT_TRUE(created.reply.ok()) << created.reply.error;
  std::string id = created.json["watchId"].text;
  std::string body = "{\"success\":[";
  std::string value = B64(std::string(10000, 'n'));
  for (int i = 0; i < 60; ++i) {
    if (i) body += ",";
    body += "{\"requestPut\":{\"key\":\"" + B64("/wj/" + std::to_string(100 + i)) +
            "\",\"value\":\"" + value + "\"}}";
  }
  body += "]}";
  ASSERT_TRUE(CallJson(client_.get(), "kv.txn", body).reply.ok());
  size_t events = 0;
  int64_t seq = 0;
  for (;;) {
    auto m = inbox.Next();
    ASSERT_TRUE(m) << "stream ended after " << events << " events (a fragment was too large?)";
    auto json = Json::Parse(m->data);
    ASSERT_TRUE(json);
    EXPECT_EQ((*json)["seq"].text, std::to_string(++seq)) << "seq gap: a message was lost";
    events += (*json)["events"].size();
    std::string ack = "{\"watchId\":\"" + id + "\",\"seq\":\"" + std::to_string(seq) + "\"}";
    natsMsg* msg = nullptr;
    std::string subject = client_->Subject("watch.ack");
    natsMsg_Create(&msg, subject.c_str(), nullptr, ack.data(), static_cast<int>(ack.size()));
    natsMsgHeader_Set(msg, "Content-Type", "application/json");
    natsConnection_PublishMsg(client_->nc(), msg);
    natsMsg_Destroy(msg);
    if (!(*json)["fragment"].boolean) break;
  }
  EXPECT_EQ(events, 60u);
}

// A JSON client (what a nats.js one sends) through the watch group
// protocol of PROTOCOL.md: offer on its inbox, subscribe, ack saying so,
// the join, then the events on the group subject, numbered by groupSeq.
TEST_F(WatchTest, JsonClientJoinsAGroupAndGetsItsEventsThere) {
  client_->Put("/wg/a", "0");
  Sub inbox(client_->nc());
  JsonReply created =
      CallJson(client_.get(), "watch.create",
               "{\"key\":\"" + B64("/wg/") + "\",\"rangeEnd\":\"" + B64("/wg0") +
                   "\",\"startRevision\":\"1\",\"group\":true,\"deliverSubject\":\"" +
                   inbox.subject() + "\"}");
  ASSERT_TRUE(created.reply.ok()) << created.reply.error;
  const std::string id = created.json["watchId"].text;
  auto ack = [&](const std::string& body) {
    natsMsg* msg = nullptr;
    std::string subject = client_->Subject("watch.ack");
    natsMsg_Create(&msg, subject.c_str(), nullptr, body.data(), static_cast<int>(body.size()));
    natsMsgHeader_Set(msg, "Content-Type", "application/json");
    natsConnection_PublishMsg(client_->nc(), msg);
    natsMsg_Destroy(msg);
  };
  // The history on the inbox, then the offer.
  auto history = inbox.Next();
  ASSERT_TRUE(history);
  auto json = Json::Parse(history->data);
  ASSERT_TRUE(json);
  ASSERT_EQ((*json)["events"].size(), 1u);
  ack("{\"watchId\":\"" + id + "\",\"seq\":\"1\"}");
  auto offer = inbox.Next();
  ASSERT_TRUE(offer);
  json = Json::Parse(offer->data);
  ASSERT_TRUE(json);
  EXPECT_EQ((*json)["seq"].text, "2");
  const std::string group_subject = (*json)["groupSubject"].text;
  const std::string group_id = (*json)["groupId"].text;
  ASSERT_EQ(group_subject.rfind(client_->Subject("watch.group."), 0), 0u) << offer->data;
  ASSERT_FALSE(group_id.empty());
  Sub group(client_->nc(), group_subject);
  ack("{\"watchId\":\"" + id + "\",\"seq\":\"2\",\"groupSubscribed\":true,\"groupId\":\"" +
      group_id + "\"}");
  auto join = inbox.Next();
  ASSERT_TRUE(join) << "no join";
  json = Json::Parse(join->data);
  ASSERT_TRUE(json);
  EXPECT_EQ((*json)["seq"].text, "3");
  EXPECT_EQ((*json)["groupId"].text, group_id);
  EXPECT_EQ((*json)["header"]["revision"].text, "2");
  const uint64_t from = std::stoull((*json)["groupSeq"].text);
  client_->Put("/wg/b", "1");
  for (;;) {
    auto m = group.Next();
    ASSERT_TRUE(m) << "no group message with the event";
    json = Json::Parse(m->data);
    ASSERT_TRUE(json);
    const uint64_t group_seq = std::stoull((*json)["groupSeq"].text);
    if (group_seq < from) continue;  // before the join (a heartbeat)
    EXPECT_EQ((*json)["groupId"].text, group_id);
    if ((*json)["events"].size() == 0) continue;  // a heartbeat
    ASSERT_EQ((*json)["events"].size(), 1u);
    EXPECT_EQ((*json)["events"][0]["kv"]["modRevision"].text, "3");
    break;
  }
  EXPECT_FALSE(inbox.Next(300)) << "a member gets nothing more on its inbox";
  // A cancel by the member's watch ID still works.
  JsonReply canceled = CallJson(client_.get(), "watch.cancel", "{\"watchId\":\"" + id + "\"}");
  ASSERT_TRUE(canceled.reply.ok()) << canceled.reply.error;
  EXPECT_TRUE(canceled.json["canceled"].boolean);
}

// One event whose kv plus prev_kv is larger than the max payload goes
// without its prev_kv; one too large even alone ends the watch with a reason
// naming its revision and header.revision = the last revision delivered.
TEST_F(WatchTest, SingleEventOverMaxPayloadGoesWithoutPrevKv) {
  std::string v(600000, 'a');
  ASSERT_EQ(client_->Put("/huge", v), 2);
  ASSERT_EQ(client_->Put("/huge", v), 3);
  WatchSpec spec = On("/huge", "", 3);
  spec.prev_kv = true;
  WatchClient watch(client_.get(), spec);
  ASSERT_TRUE(watch.ok());
  WatchMsg m = watch.Next(2000);
  ASSERT_TRUE(m) << "the event at revision 3 was dropped";
  ASSERT_EQ(m->n_events, 1u);
  EXPECT_EQ(m->events[0]->kv->mod_revision, 3);
  EXPECT_EQ(m->events[0]->kv->value.len, v.size());
  EXPECT_EQ(m->events[0]->prev_kv, nullptr);
  EXPECT_FALSE(m->canceled);
}

TEST_F(WatchTest, EventTooLargeForAnyMessageEndsTheWatchWithItsRevision) {
  ASSERT_EQ(client_->Put("/big", "small"), 2);
  int64_t max_payload = natsConnection_GetMaxPayload(client_->nc());
  // Fits in a request, not in a watch message with its framing.
  std::string v(static_cast<size_t>(max_payload) - 200, 'b');
  ASSERT_EQ(client_->Put("/big", v), 3);
  WatchClient watch(client_.get(), On("/big", "", 2));
  ASSERT_TRUE(watch.ok());
  WatchMsg first = watch.Next(2000);
  ASSERT_TRUE(first);
  ASSERT_EQ(first->n_events, 1u);
  EXPECT_EQ(first->events[0]->kv->mod_revision, 2);
  WatchMsg end = first->canceled ? std::move(first) : watch.Next(2000);
  ASSERT_TRUE(end) << "the watch went silent instead of ending";
  EXPECT_TRUE(end->canceled);
  EXPECT_NE(std::string(end->cancel_reason).find("revision 3"), std::string::npos)
      << end->cancel_reason;
  EXPECT_EQ(end->header->revision, 2);
}

TEST_F(WatchTest, DuplicateWatchIdIsRefused) {
  WatchSpec spec = On("/wd");
  spec.watch_id = 9;
  WatchClient first(client_.get(), spec);
  ASSERT_TRUE(first.ok());
  WatchClient second(client_.get(), spec);
  EXPECT_EQ(second.create_reply.code, 400) << second.create_reply.error;
  client_->Put("/wd", "1");
  EXPECT_EQ(first.Events(1).size(), 1u);
  EXPECT_FALSE(second.inbox().Next(200));
}

// --- flow control ----------------------------------------------------------

class WatchWindowTest : public NatcdTest {
 protected:
  std::vector<std::string> ExtraArgs() override {
    return {"--lease-ttl-min",        "1",    "--log-level",          "warn",
            "--watch-window",         "2",    "--watch-queue-events", "10",
            "--watch-ack-timeout-ms", "1500", "--watch-heartbeat-ms", "60000"};
  }
};

TEST_F(WatchWindowTest, AtMostWindowUnacknowledgedMessages) {
  WatchClient watch(client_.get(), On("/ww"), /*auto_ack=*/false);
  ASSERT_TRUE(watch.ok());
  for (int i = 0; i < 5; ++i) client_->Put("/ww", std::to_string(i));
  // Each put was its own commit: two messages, then the window is full.
  WatchMsg m1 = watch.Next();
  WatchMsg m2 = watch.Next();
  ASSERT_TRUE(m1 && m2);
  EXPECT_FALSE(watch.Next(300)) << "more than --watch-window messages unacknowledged";
  watch.Ack(2);
  std::vector<WatchClient::Ev> rest;
  while (rest.size() < 3) {
    WatchMsg m = watch.Next();
    ASSERT_TRUE(m) << "nothing after the ack";
    WatchClient::Append(*m, &rest);
    watch.Ack(m->seq);
  }
  EXPECT_EQ(rest.front().revision, 4);
  EXPECT_EQ(rest.back().revision, 6);
}

// Coalescing (--watch-coalesce-*): with a message unacknowledged, the next
// events wait for its ack, or at most --watch-coalesce-ms, and come together.
class WatchCoalesceTest : public NatcdTest {
 protected:
  std::vector<std::string> ExtraArgs() override {
    return {"--log-level",         "warn", "--watch-coalesce-ready-min", "1",
            "--watch-coalesce-ms", "1000"};
  }
};

TEST_F(WatchCoalesceTest, EventsWaitForTheAckAndComeTogether) {
  WatchClient watch(client_.get(), On("/co"), /*auto_ack=*/false);
  ASSERT_TRUE(watch.ok());
  for (int i = 0; i < 5; ++i) client_->Put("/co", std::to_string(i));
  WatchMsg first = watch.Next();
  ASSERT_TRUE(first);
  EXPECT_FALSE(watch.Next(200)) << "events did not wait for the acknowledgement";
  watch.Ack(first->seq);
  std::vector<WatchClient::Ev> events;
  WatchClient::Append(*first, &events);
  WatchMsg rest = watch.Next();
  ASSERT_TRUE(rest) << "nothing after the ack";
  WatchClient::Append(*rest, &events);
  ASSERT_EQ(events.size(), 5u) << "the held events did not come in one message";
  for (int i = 0; i < 5; ++i) EXPECT_EQ(events[i].revision, i + 2);

  // Unacknowledged, they still go out once the bound has passed.
  client_->Put("/co", "5");
  client_->Put("/co", "6");
  auto start = std::chrono::steady_clock::now();
  WatchMsg late = watch.Next(5000);
  ASSERT_TRUE(late) << "held events never sent without an ack";
  const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::steady_clock::now() - start)
                          .count();
  EXPECT_GE(waited, 500) << "sent before the ack or the bound";
  std::vector<WatchClient::Ev> late_events;
  WatchClient::Append(*late, &late_events);
  ASSERT_EQ(late_events.size(), 2u);
  EXPECT_EQ(late_events.back().revision, 8);
}

TEST_F(WatchWindowTest, SlowConsumerIsCanceledAndResumesExactly) {
  WatchClient watch(client_.get(), On("/sc"), /*auto_ack=*/false);
  ASSERT_TRUE(watch.ok());
  constexpr int kWrites = 30;
  for (int i = 1; i <= kWrites; ++i) client_->Put("/sc", std::to_string(i));
  std::vector<WatchClient::Ev> seen;
  WatchMsg cancel;
  auto deadline = Clock::now() + milliseconds(6000);
  while (!cancel && Clock::now() < deadline) {
    WatchMsg m = watch.Next(500);
    if (!m) continue;
    WatchClient::Append(*m, &seen);
    if (m->canceled) cancel = std::move(m);
  }
  ASSERT_TRUE(cancel) << "no cancel message for a watch that never acknowledges";
  EXPECT_STREQ(cancel->cancel_reason, "slow consumer");
  int64_t resume = cancel->header->revision;
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(resume, seen.back().revision) << "the cancel names the last revision delivered";
  // Put i is revision i + 1 (the empty store is at revision 1).
  constexpr int64_t kLast = kWrites + 1;
  EXPECT_LT(resume, kLast);
  EXPECT_EQ(static_cast<int64_t>(seen.size()), resume - 1);

  WatchClient again(client_.get(), On("/sc", "", resume + 1));
  ASSERT_TRUE(again.ok());
  auto missing = again.Events(kLast - resume);
  ASSERT_EQ(missing.size(), static_cast<size_t>(kLast - resume));
  for (size_t i = 0; i < missing.size(); ++i) {
    EXPECT_EQ(missing[i].revision, resume + 1 + static_cast<int64_t>(i));
    EXPECT_EQ(missing[i].value, std::to_string(resume + i));
  }
  EXPECT_FALSE(again.inbox().Next(200));
}

TEST_F(WatchWindowTest, ReclaimedWatchNamesTheRevisionDelivered) {
  // A client that stalls (it does not ack) but is not a slow consumer yet:
  // reclaimed after the ack timeout; the cancel message says where to
  // resume, so a client that was only paused loses nothing.
  WatchClient watch(client_.get(), On("/rc"), /*auto_ack=*/false);
  ASSERT_TRUE(watch.ok());
  for (int i = 1; i <= 5; ++i) client_->Put("/rc", std::to_string(i));
  std::vector<WatchClient::Ev> seen;
  WatchMsg cancel;
  auto deadline = Clock::now() + milliseconds(5000);
  while (!cancel && Clock::now() < deadline) {
    WatchMsg m = watch.Next(500);
    if (!m) continue;
    WatchClient::Append(*m, &seen);
    if (m->canceled) cancel = std::move(m);
  }
  ASSERT_TRUE(cancel);
  EXPECT_NE(std::string(cancel->cancel_reason).find("reclaimed"), std::string::npos)
      << cancel->cancel_reason;
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(cancel->header->revision, 3) << "resuming from revision + 1 would skip events";
  EXPECT_EQ(watch.Cancel().code, 400) << "the watch is gone";
}

class WatchLivenessTest : public NatcdTest {
 protected:
  std::vector<std::string> ExtraArgs() override {
    return {"--lease-ttl-min",        "1",  "--log-level", "warn", "--watch-heartbeat-ms", "200",
            "--watch-ack-timeout-ms", "600"};
  }
};

TEST_F(WatchLivenessTest, AckingClientGetsHeartbeatsAndStays) {
  WatchClient watch(client_.get(), On("/hb"));
  ASSERT_TRUE(watch.ok());
  int progress = 0;
  auto end = Clock::now() + milliseconds(1500);
  while (Clock::now() < end) {
    WatchMsg m = watch.Next(300);
    if (!m) continue;
    EXPECT_FALSE(m->canceled) << m->cancel_reason;
    if (m->n_events == 0 && !m->canceled) ++progress;
  }
  EXPECT_GE(progress, 2) << "an idle watch gets a progress message every heartbeat";
  client_->Put("/hb", "still here");
  bool got = false;
  for (int i = 0; i < 5 && !got; ++i) {
    WatchMsg m = watch.Next(500);
    got = m && m->n_events == 1;
  }
  EXPECT_TRUE(got);
  EXPECT_TRUE(watch.Cancel().ok()) << "an acking watch is never reclaimed";
}

TEST_F(WatchLivenessTest, VanishedClientIsReclaimedWithinTheBound) {
  auto gone = std::make_unique<WatchClient>(client_.get(), On("/vc"));
  ASSERT_TRUE(gone->ok());
  int64_t id = gone->id;
  gone.reset();  // unsubscribes: nobody reads or acks
  // Asked about with watch.progress (a cancel would end it itself).
  Natcd__V1__WatchProgressRequest progress;
  natcd__v1__watch_progress_request__init(&progress);
  progress.watch_id = id;
  auto start = Clock::now();
  EXPECT_TRUE(client_->Call("watch.progress", &progress.base).ok()) << "reclaimed at once";
  // heartbeat (200) + ack timeout (600) + a tick: well under 3 s.
  bool reclaimed = WaitFor(
      [&] {
        WireReply r = client_->Call("watch.progress", &progress.base);
        return r.code == 400 && r.error.find("ErrWatchNotFound") != std::string::npos;
      },
      3000, 100);
  EXPECT_TRUE(reclaimed) << "the watch of a vanished client was not reclaimed";
  EXPECT_GE(Clock::now() - start, milliseconds(500)) << "reclaimed before the ack timeout";
}

}  // namespace
}  // namespace natcd::testing

namespace natcd::testing {
namespace {

// progress_notify: a watch asked for periodic progress notifications gets
// one every --watch-progress-interval-ms while nothing changes; one that
// did not ask gets none (heartbeats are set far away here).
class WatchProgressNotifyTest : public NatcdTest {
 protected:
  std::vector<std::string> ExtraArgs() override {
    return {"--log-level",          "warn", "--watch-progress-interval-ms", "300",
            "--watch-heartbeat-ms", "60000"};
  }
};

TEST_F(WatchProgressNotifyTest, PeriodicNotificationsCarryTheBookmark) {
  client_->Put("/pn", "1");
  WatchSpec spec = On("/pn");
  spec.progress_notify = true;
  WatchClient notified(client_.get(), spec);
  WatchClient quiet(client_.get(), On("/pn"));
  ASSERT_TRUE(notified.ok() && quiet.ok());
  client_->Put("/elsewhere", "2");
  auto created = WireClient::Decode<Natcd__V1__WatchResponse>(
      &natcd__v1__watch_response__descriptor, notified.create_reply);
  ASSERT_TRUE(created);
  EXPECT_EQ(created->heartbeat_ms, 60000) << "the create reply names the heartbeat interval";
  for (int i = 0; i < 2; ++i) {
    WatchMsg note = notified.Next(2000);
    ASSERT_TRUE(note) << "no periodic progress notification";
    EXPECT_EQ(note->n_events, 0u);
    EXPECT_FALSE(note->canceled);
    EXPECT_EQ(note->header->revision, 3);
  }
  EXPECT_FALSE(quiet.Next(500)) << "a watch without progress_notify was notified";
}

}  // namespace
}  // namespace natcd::testing
