// The nats-server test helper (tests/support/nats_server.h) with nats.c:
// request-reply on a real server, and reconnection after a restart.

#include "support/nats_server.h"

#include "adapters/nats/codec/subject.h"

#include <gtest/gtest.h>
#include <nats/nats.h>

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <string>

namespace natcd::testing {
namespace {

// Releases nats.c's global state once all tests ran, so LeakSanitizer sees
// a clean exit.
class NatsLibraryEnvironment : public ::testing::Environment {
 public:
  void TearDown() override { nats_CloseAndWait(5000); }
};
[[maybe_unused]] ::testing::Environment* const kNatsLibraryEnvironment =
    ::testing::AddGlobalTestEnvironment(new NatsLibraryEnvironment);

// Counts reconnections reported by nats.c's callback thread.
struct ReconnectWatcher {
  std::mutex mu;
  std::condition_variable cv;
  int reconnects = 0;

  static void OnReconnected(natsConnection*, void* closure) {
    auto* self = static_cast<ReconnectWatcher*>(closure);
    std::lock_guard<std::mutex> lock(self->mu);
    ++self->reconnects;
    self->cv.notify_all();
  }

  bool WaitFor(int count, std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mu);
    return cv.wait_for(lock, timeout, [&] { return reconnects >= count; });
  }
};

// Replies "echo:" + the request body.
void Echo(natsConnection* nc, natsSubscription*, natsMsg* msg, void*) {
  const std::string reply = "echo:" + std::string(natsMsg_GetData(msg), natsMsg_GetDataLength(msg));
  if (natsMsg_GetReply(msg) != nullptr) {
    natsConnection_Publish(nc, natsMsg_GetReply(msg), reply.data(), static_cast<int>(reply.size()));
  }
  natsMsg_Destroy(msg);
}

// One request on `subject`; returns the reply body, or "error: ..." text.
std::string Request(natsConnection* nc, const char* subject, const std::string& body) {
  natsMsg* reply = nullptr;
  const natsStatus s =
      natsConnection_Request(&reply, nc, subject, body.data(), static_cast<int>(body.size()), 2000);
  if (s != NATS_OK) return std::string("error: ") + natsStatus_GetText(s);
  std::string out(natsMsg_GetData(reply), natsMsg_GetDataLength(reply));
  natsMsg_Destroy(reply);
  return out;
}

TEST(NatsServer, StartsOnLoopbackAndStops) {
  NatsServer server;
  EXPECT_FALSE(server.running());
  ASSERT_TRUE(server.Start());
  EXPECT_TRUE(server.running());
  EXPECT_GT(server.port(), 0);
  EXPECT_EQ(server.url(), "nats://127.0.0.1:" + std::to_string(server.port()));
  EXPECT_FALSE(server.Start());  // already running
  server.Stop();
  EXPECT_FALSE(server.running());
  server.Stop();  // idempotent
}

TEST(NatsServer, RequestReplyAndReconnectAfterRestart) {
  NatsServer server;
  ASSERT_TRUE(server.Start());

  ReconnectWatcher watcher;
  natsOptions* opts = nullptr;
  ASSERT_EQ(natsOptions_Create(&opts), NATS_OK);
  ASSERT_EQ(natsOptions_SetURL(opts, server.url().c_str()), NATS_OK);
  ASSERT_EQ(natsOptions_SetMaxReconnect(opts, -1), NATS_OK);  // forever
  ASSERT_EQ(natsOptions_SetReconnectWait(opts, 50), NATS_OK);
  ASSERT_EQ(natsOptions_SetReconnectedCB(opts, &ReconnectWatcher::OnReconnected, &watcher),
            NATS_OK);
  natsConnection* nc = nullptr;
  ASSERT_EQ(natsConnection_Connect(&nc, opts), NATS_OK);
  natsOptions_Destroy(opts);

  natsSubscription* sub = nullptr;
  ASSERT_EQ(natsConnection_Subscribe(&sub, nc, "natcd.test.echo", Echo, nullptr), NATS_OK);
  ASSERT_EQ(natsConnection_Flush(nc), NATS_OK);
  EXPECT_EQ(Request(nc, "natcd.test.echo", "hello"), "echo:hello");

  ASSERT_TRUE(server.Restart());
  ASSERT_TRUE(watcher.WaitFor(1, std::chrono::seconds(10))) << "no reconnect; log:\n"
                                                            << server.Log();
  // The subscription was re-established by the client on reconnect.
  ASSERT_EQ(natsConnection_Flush(nc), NATS_OK);
  EXPECT_EQ(Request(nc, "natcd.test.echo", "again"), "echo:again");

  natsSubscription_Destroy(sub);
  natsConnection_Destroy(nc);
}

TEST(NatsServer, PlainConnectTo) {
  NatsServer server;
  ASSERT_TRUE(server.Start());
  natsConnection* nc = nullptr;
  ASSERT_EQ(natsConnection_ConnectTo(&nc, server.url().c_str()), NATS_OK);
  natsSubscription* sub = nullptr;
  ASSERT_EQ(natsConnection_Subscribe(&sub, nc, "x.>", Echo, nullptr), NATS_OK);
  ASSERT_EQ(natsConnection_Flush(nc), NATS_OK);
  EXPECT_EQ(Request(nc, "x.y", ""), "echo:");
  natsSubscription_Destroy(sub);
  natsConnection_Destroy(nc);
}

// The live-event subject bound holds against a default nats-server: an
// HPUB with headers on a subject of kEventSubjectBytesMax bytes is delivered
// and the connection survives. (One byte over 4096 closes it for good.)
TEST(NatsServer, EventSubjectBoundFitsTheControlLine) {
  NatsServer server;
  ASSERT_TRUE(server.Start());
  natsConnection* nc = nullptr;
  ASSERT_EQ(natsConnection_ConnectTo(&nc, server.url().c_str()), NATS_OK);
  natsSubscription* sub = nullptr;
  ASSERT_EQ(natsConnection_SubscribeSync(&sub, nc, "natcd.ev.>"), NATS_OK);
  ASSERT_EQ(natsConnection_Flush(nc), NATS_OK);

  // A key whose escaped subject is exactly the bound: "natcd.ev." + tokens.
  const size_t prefix = std::strlen("natcd.ev.");
  std::string key = "/" + std::string((nats::kEventSubjectBytesMax - prefix) / 3, '.');
  while (nats::EventSubject("natcd", key).size() < nats::kEventSubjectBytesMax) key += "a";
  const std::string subject = nats::EventSubject("natcd", key);
  ASSERT_EQ(subject.size(), nats::kEventSubjectBytesMax);

  natsMsg* msg = nullptr;
  ASSERT_EQ(natsMsg_Create(&msg, subject.c_str(), nullptr, "v", 1), NATS_OK);
  ASSERT_EQ(natsMsgHeader_Set(msg, "Natcd-Op", "PUT"), NATS_OK);
  ASSERT_EQ(natsMsgHeader_Set(msg, "Natcd-Key", nats::KeyToHeaderValue(key).c_str()), NATS_OK);
  ASSERT_EQ(natsConnection_PublishMsg(nc, msg), NATS_OK);
  natsMsg_Destroy(msg);
  ASSERT_EQ(natsConnection_FlushTimeout(nc, 2000), NATS_OK);

  natsMsg* got = nullptr;
  ASSERT_EQ(natsSubscription_NextMsg(&got, sub, 2000), NATS_OK);
  EXPECT_EQ(std::string(natsMsg_GetSubject(got)), subject);
  const char* header = nullptr;
  ASSERT_EQ(natsMsgHeader_Get(got, "Natcd-Key", &header), NATS_OK);
  std::string back;
  ASSERT_TRUE(nats::HeaderValueToKey(header, &back));
  EXPECT_EQ(back, key);
  natsMsg_Destroy(got);
  EXPECT_FALSE(natsConnection_IsClosed(nc));

  natsSubscription_Destroy(sub);
  natsConnection_Destroy(nc);
}

TEST(NatsServer, JetStreamStoreDirectory) {
  std::string dir;
  {
    NatsServerOptions options;
    options.jetstream = true;
    NatsServer server(options);
    ASSERT_TRUE(server.Start());
    dir = server.store_dir();
    ASSERT_FALSE(dir.empty());
    EXPECT_NE(server.Log().find("JetStream"), std::string::npos) << server.Log();
    ASSERT_TRUE(server.Restart());
    EXPECT_EQ(server.store_dir(), dir);
  }
  // The destructor removed the temporary directory.
  EXPECT_FALSE(std::filesystem::exists(dir));
}

TEST(NatsServer, KillIsImmediate) {
  NatsServer server;
  ASSERT_TRUE(server.Start());
  const int port = server.port();
  server.Kill();
  EXPECT_FALSE(server.running());
  ASSERT_TRUE(server.Start());
  EXPECT_EQ(server.port(), port);
}

}  // namespace
}  // namespace natcd::testing
