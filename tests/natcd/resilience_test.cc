// natcd under failure: the NATS server restarts under it, natcd is killed
// with SIGKILL in the middle of writes, and a clean SIGTERM shutdown.
#include <sys/wait.h>

#include <atomic>
#include <map>
#include <mutex>
#include <thread>

#include "natcd/natcd_fixture.h"
#include "natcd/natcd_helpers.h"

namespace natcd::testing {
namespace {

using ResilienceTest = NatcdTest;

// Retries a put until it is acknowledged (bounded); returns its revision.
int64_t PutEventually(WireClient* client, const std::string& key, const std::string& value,
                      int timeout_ms = 15000) {
  int64_t revision = 0;
  WaitFor(
      [&] {
        WireReply r = PutReply(client, key, value);
        if (!r.ok()) return false;
        auto resp =
            WireClient::Decode<Natcd__V1__PutResponse>(&natcd__v1__put_response__descriptor, r);
        revision = resp && resp->header ? resp->header->revision : 0;
        return true;
      },
      timeout_ms, 100);
  return revision;
}

TEST_F(ResilienceTest, NatsServerRestartUnderRunningNatcd) {
  int64_t lease = client_->Grant(30);
  ASSERT_EQ(client_->Put("/nr/a", "1", lease), 2);
  ASSERT_EQ(client_->Put("/nr/b", "2"), 3);

  ASSERT_TRUE(server_.Restart());
  // natcd and the client both reconnect; natcd re-subscribes.
  EXPECT_EQ(PutEventually(client_.get(), "/nr/c", "3"), 4) << "natcd did not serve again";
  auto all = client_->Range("/nr/", "/nr0");
  ASSERT_TRUE(all);
  ASSERT_EQ(all->n_kvs, 3u);
  EXPECT_EQ(Str(all->kvs[0]->value), "1");
  EXPECT_EQ(all->kvs[0]->lease, lease);
  EXPECT_EQ(Str(all->kvs[1]->value), "2");
  // The lease survived the outage with (nearly) its full TTL.
  auto ttl = TimeToLive(client_.get(), lease);
  EXPECT_GE(ttl->ttl, 25);

  // Watches and live events work on the new connection.
  Sub events(client_->nc(), "natcd.ev.nr.>");
  WatchClient watch(client_.get(), On("/nr/", "/nr0"));
  ASSERT_TRUE(watch.ok()) << watch.create_reply.error;
  EXPECT_EQ(client_->Put("/nr/d", "4"), 5);
  auto got = watch.Events(1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].revision, 5);
  // The stream is best-effort and published after the reply: the event of
  // revision 4 may still be on its way. Revision 5 comes, after any earlier.
  int64_t last = 0;
  while (last < 5) {
    auto ev = events.Next();
    ASSERT_TRUE(ev) << "no event for revision 5";
    int64_t revision = std::stoll(ev->Header("Natcd-Revision"));
    EXPECT_GT(revision, last);
    last = revision;
  }
  EXPECT_EQ(last, 5);
}

TEST_F(ResilienceTest, NoLeaseExpiresWhileNatcdIsCutOffFromNats) {
  // Its holder could not renew it either: an outage longer than the TTL
  // must not kill the lease (docs/PROTOCOL.md, "Connection loss").
  int64_t lease = client_->Grant(2);
  ASSERT_EQ(client_->Put("/cut/a", "1", lease), 2);
  server_.Stop();
  std::this_thread::sleep_for(milliseconds(3000));
  ASSERT_TRUE(server_.Start());
  ASSERT_GT(PutEventually(client_.get(), "/cut/probe", "x"), 0);
  EXPECT_EQ(client_->Range("/cut/a")->n_kvs, 1u) << "the lease expired during the outage";
  EXPECT_GE(TimeToLive(client_.get(), lease)->ttl, 0);
  // Afterwards it expires as usual when nobody renews it.
  EXPECT_TRUE(WaitFor([&] { return client_->Range("/cut/a")->n_kvs == 0; }, 5000, 100));
}

// Puts from 8 clients, natcd killed with SIGKILL halfway, restarted: every
// acknowledged put is there, each applied once.
void KillUnderWritesKeepsEveryAcknowledgedWrite(NatsServer& server_, NatcdProcess* natcd_,
                                                WireClient* client_) {
  constexpr int kThreads = 8;
  constexpr int kEach = 250;
  std::mutex mu;
  std::map<std::string, std::string> acked;  // guarded by mu
  std::atomic<int> acked_count{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> writers;
  for (int t = 0; t < kThreads; ++t) {
    writers.emplace_back([&, t] {
      WireClient c(server_.url());
      for (int i = 0; i < kEach && !stop.load(); ++i) {
        std::string key = "/k9/" + std::to_string(t) + "/" + std::to_string(i);
        std::string value = "v" + std::to_string(t) + "-" + std::to_string(i);
        Natcd__V1__PutRequest put;
        natcd__v1__put_request__init(&put);
        put.key = Bytes(key);
        put.value = Bytes(value);
        WireReply r = c.Call("kv.put", &put.base);
        if (!r.ok()) break;  // natcd is gone: this write may or may not be there
        std::lock_guard<std::mutex> lock(mu);
        acked[key] = value;
        ++acked_count;
      }
    });
  }
  // Kill natcd in the middle of the writes.
  ASSERT_TRUE(WaitFor([&] { return acked_count.load() >= kThreads * kEach / 2; }, 30000, 5));
  natcd_->Kill();
  stop = true;
  for (auto& w : writers) w.join();
  ASSERT_TRUE(natcd_->Start());

  auto all = client_->Range("/k9/", "/k90");
  ASSERT_TRUE(all);
  std::map<std::string, std::string> stored;
  for (size_t i = 0; i < all->n_kvs; ++i) stored[Str(all->kvs[i]->key)] = Str(all->kvs[i]->value);
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_GE(acked.size(), static_cast<size_t>(kThreads * kEach / 2));
  size_t lost = 0;
  for (const auto& [key, value] : acked) {
    auto it = stored.find(key);
    if (it == stored.end() || it->second != value) ++lost;
  }
  EXPECT_EQ(lost, 0u) << "acknowledged writes lost by kill -9 (of " << acked.size() << ")";
  // Whatever is stored beyond the acknowledged writes was in flight.
  EXPECT_LE(stored.size(), acked.size() + kThreads);
  // One revision per stored write, after the empty store's (1).
  EXPECT_EQ(all->header->revision, 1 + static_cast<int64_t>(stored.size()));
  // And it serves writes again.
  EXPECT_EQ(client_->Put("/k9/after", "x"), all->header->revision + 1);
}

TEST_F(ResilienceTest, Kill9KeepsEveryAcknowledgedWrite) {
  KillUnderWritesKeepsEveryAcknowledgedWrite(server_, natcd_.get(), client_.get());
}

// The SQLite batch never due: killed with every write applied and answered
// but none committed to the database, the restart applies them all again
// from the Raft log.
class KillMidBatchTest : public NatcdTest {
 protected:
  std::vector<std::string> ExtraArgs() override {
    std::vector<std::string> args = NatcdTest::ExtraArgs();
    for (const char* arg :
         {"--backend-batch-interval", "1h", "--backend-batch-limit", "100000000"}) {
      args.push_back(arg);
    }
    return args;
  }
};

TEST_F(KillMidBatchTest, Kill9WithTheWholeBatchUncommittedKeepsEveryAcknowledgedWrite) {
  KillUnderWritesKeepsEveryAcknowledgedWrite(server_, natcd_.get(), client_.get());
}

TEST_F(ResilienceTest, SigtermExitsZeroAndCancelsWatches) {
  client_->Put("/sd", "1");
  WatchClient watch(client_.get(), On("/sd"));
  ASSERT_TRUE(watch.ok());
  client_->Put("/sd", "2");
  ASSERT_EQ(watch.Events(1).size(), 1u);

  int status = natcd_->Stop();
  ASSERT_TRUE(WIFEXITED(status)) << "natcd did not exit normally: status " << status;
  EXPECT_EQ(WEXITSTATUS(status), 0);
  WatchMsg last = watch.Next(2000);
  ASSERT_TRUE(last) << "no cancel message at shutdown";
  EXPECT_TRUE(last->canceled);
  EXPECT_STREQ(last->cancel_reason, "server shutting down");
  EXPECT_EQ(last->header->revision, 3) << "the resume point";
  // Nobody serves now; after a start everything is there.
  EXPECT_FALSE(client_->Raw(client_->Subject("kv.range"), "", {}, 300).ok());
  ASSERT_TRUE(natcd_->Start());
  auto now = client_->Range("/sd");
  ASSERT_EQ(now->n_kvs, 1u);
  EXPECT_EQ(Str(now->kvs[0]->value), "2");
  // The client re-creates its watch from the resume point + 1 and sees
  // exactly what it missed.
  client_->Put("/sd", "3");
  client_->Put("/sd", "4");
  WatchClient resumed(client_.get(), On("/sd", "", last->header->revision + 1));
  ASSERT_TRUE(resumed.ok());
  auto missed = resumed.Events(2);
  ASSERT_EQ(missed.size(), 2u);
  EXPECT_EQ(missed[0].revision, 4);
  EXPECT_EQ(missed[1].value, "4");
  EXPECT_FALSE(resumed.inbox().Next(200));
}

class ShutdownFullWindowTest : public NatcdTest {
 protected:
  std::vector<std::string> ExtraArgs() override {
    return {"--lease-ttl-min", "1", "--log-level", "warn", "--watch-window", "1"};
  }
};

TEST_F(ShutdownFullWindowTest, StalledWatchStillGetsTheShutdownCancel) {
  WatchClient stalled(client_.get(), On("/fw"), /*auto_ack=*/false);
  ASSERT_TRUE(stalled.ok());
  client_->Put("/fw", "1");
  client_->Put("/fw", "2");
  WatchMsg first = stalled.Next();
  ASSERT_TRUE(first);
  ASSERT_EQ(first->n_events, 1u);
  EXPECT_FALSE(stalled.Next(200)) << "the window is full";
  int status = natcd_->Stop();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  WatchMsg last = stalled.Next(2000);
  ASSERT_TRUE(last) << "a watch with a full window got no shutdown cancel";
  EXPECT_TRUE(last->canceled);
  EXPECT_STREQ(last->cancel_reason, "server shutting down");
  EXPECT_EQ(last->header->revision, 2) << "revision 3 was never delivered";
}

}  // namespace
}  // namespace natcd::testing

namespace natcd::testing {
namespace {

using ShutdownWithoutNatsTest = NatcdTest;

// A natcd cut off from NATS still shuts down promptly on SIGTERM (nothing
// can drain; it must not wait on every subscription in turn).
TEST_F(ShutdownWithoutNatsTest, SigtermWhileDisconnectedExitsPromptly) {
  ASSERT_EQ(client_->Put("/sd", "1"), 2);
  server_.Stop();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  auto start = std::chrono::steady_clock::now();
  int status = natcd_->Stop();
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_LT(took, std::chrono::seconds(5));
}

}  // namespace
}  // namespace natcd::testing
