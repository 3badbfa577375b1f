// EventPublisher on a real nats-server: the messages built with their header
// block encoded at once are, on the wire, what nats.c's public header calls
// produce (docs/PROTOCOL.md "Live event subjects").

#include "adapters/nats/event_publisher.h"

#include <gtest/gtest.h>
#include <nats/nats.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "support/nats_server.h"

namespace natcd::nats {
namespace {

struct Received {
  std::string subject;
  std::string data;
  std::map<std::string, std::string> headers;
};

// Every message on natcd.ev.> until `count` arrived (or a 5 s timeout).
std::vector<Received> Receive(natsSubscription* sub, size_t count) {
  std::vector<Received> out;
  while (out.size() < count) {
    natsMsg* msg = nullptr;
    if (natsSubscription_NextMsg(&msg, sub, 5'000) != NATS_OK) break;
    Received r;
    r.subject = natsMsg_GetSubject(msg);
    r.data.assign(natsMsg_GetData(msg), natsMsg_GetDataLength(msg));
    const char** keys = nullptr;
    int n = 0;
    if (natsMsgHeader_Keys(msg, &keys, &n) == NATS_OK) {
      for (int i = 0; i < n; ++i) {
        const char* value = nullptr;
        if (natsMsgHeader_Get(msg, keys[i], &value) == NATS_OK) r.headers[keys[i]] = value;
      }
      free(keys);
    }
    natsMsg_Destroy(msg);
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<Event> SampleEvents() {
  std::vector<Event> events;
  auto put = [&](std::string key, std::string value, int64_t rev, int64_t create, int64_t version,
                 int64_t lease) {
    Event e;
    e.kv = {std::move(key), create, rev, version, std::move(value), lease};
    events.push_back(std::move(e));
  };
  put("/svc/10.0.0.1:80", "v1", 7, 7, 1, 0x1234abcd);
  put("/svc/10.0.0.1:80", "", 8, 7, 2, 0);  // an empty value
  put(std::string("bin\0ary/\xff key", 13), std::string("\0\r\n", 3), 9, 9, 1, -1);
  put("/registry/pods/default/web-1", std::string(5'000, 'x'), 10, 10, 1, 0);
  Event del;
  del.type = Event::Type::kDelete;
  del.kv.key = "/svc/10.0.0.1:80";
  del.kv.mod_revision = 11;
  events.push_back(std::move(del));
  return events;
}

TEST(EventPublisher, EncodedHeadersMatchThePublicHeaderCalls) {
  testing::NatsServer server;
  ASSERT_TRUE(server.Start());
  natsConnection* nc = nullptr;
  ASSERT_EQ(natsConnection_ConnectTo(&nc, server.url().c_str()), NATS_OK);
  natsSubscription* sub = nullptr;
  ASSERT_EQ(natsConnection_SubscribeSync(&sub, nc, "natcd.ev.>"), NATS_OK);
  ASSERT_EQ(natsConnection_Flush(nc), NATS_OK);

  auto events = std::make_shared<const std::vector<Event>>(SampleEvents());
  std::vector<Received> got[2];
  for (int pass = 0; pass < 2; ++pass) {
    EventPublisher publisher(nc, "natcd");
    if (pass == 0) {
      // The libnats this is built against has the fast path: it must be on.
      ASSERT_TRUE(publisher.encodes_headers());
    } else {
      publisher.TEST_UsePublicHeaderCalls();
      ASSERT_FALSE(publisher.encodes_headers());
    }
    publisher.Enqueue(events);
    publisher.Flush();
    EXPECT_EQ(publisher.published(), events->size());
    EXPECT_EQ(publisher.dropped(), 0u);
    got[pass] = Receive(sub, events->size());
    ASSERT_EQ(got[pass].size(), events->size()) << "pass " << pass;
  }
  for (size_t i = 0; i < events->size(); ++i) {
    SCOPED_TRACE("event " + std::to_string(i));
    EXPECT_EQ(got[0][i].subject, got[1][i].subject);
    EXPECT_EQ(got[0][i].data, got[1][i].data);
    EXPECT_EQ(got[0][i].headers, got[1][i].headers);
  }
  // Spot checks against the contract itself.
  EXPECT_EQ(got[0][0].subject, "natcd.ev.svc.10%2E0%2E0%2E1:80");
  EXPECT_EQ(got[0][0].data, "v1");
  EXPECT_EQ(got[0][0].headers, (std::map<std::string, std::string>{
                                   {"Natcd-Op", "PUT"},
                                   {"Natcd-Revision", "7"},
                                   {"Natcd-Create-Revision", "7"},
                                   {"Natcd-Version", "1"},
                                   {"Natcd-Lease", "000000001234abcd"},
                                   {"Natcd-Key", "/svc/10.0.0.1:80"},
                               }));
  EXPECT_EQ(got[0][1].headers.count("Natcd-Lease"), 0u);
  EXPECT_EQ(got[0][2].data, std::string("\0\r\n", 3));
  EXPECT_EQ(got[0][2].headers["Natcd-Key"], "bin%00ary/%FF%20key");
  EXPECT_EQ(got[0][3].data.size(), 5'000u);
  EXPECT_EQ(got[0][4].headers["Natcd-Op"], "DEL");
  EXPECT_EQ(got[0][4].headers["Natcd-Revision"], "11");
  EXPECT_EQ(got[0][4].headers["Natcd-Version"], "0");
  EXPECT_EQ(got[0][4].data, "");

  natsSubscription_Destroy(sub);
  natsConnection_Destroy(nc);
}

}  // namespace
}  // namespace natcd::nats
