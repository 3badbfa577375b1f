// NATS micro-services discovery: $SRV.PING, $SRV.INFO, $SRV.STATS, alone,
// with the service name and with the instance id.
#include <set>

#include "natcd/natcd_fixture.h"
#include "natcd/natcd_helpers.h"

namespace natcd::testing {
namespace {

using DiscoveryTest = NatcdTest;

Json Ask(WireClient* client, const std::string& subject) {
  WireReply reply = client->Raw(subject, "");
  EXPECT_TRUE(reply.ok()) << subject << ": " << reply.code << " " << reply.error;
  auto json = Json::Parse(reply.body);
  EXPECT_TRUE(json) << subject << " answered invalid JSON: " << reply.body;
  return json ? *json : Json();
}

const Json* Endpoint(const Json& reply, const std::string& name) {
  for (const Json& e : reply["endpoints"].items) {
    if (e["name"].text == name) return &e;
  }
  return nullptr;
}

TEST_F(DiscoveryTest, PingInfoStatsInEveryForm) {
  Json ping = Ask(client_.get(), "$SRV.PING");
  EXPECT_EQ(ping["type"].text, "io.nats.micro.v1.ping_response");
  EXPECT_EQ(ping["name"].text, "natcd");
  std::string id = ping["id"].text;
  ASSERT_FALSE(id.empty());
  EXPECT_FALSE(ping["version"].text.empty());
  EXPECT_EQ(ping["metadata"]["member"].text, "natcd-1");
  EXPECT_EQ(ping["metadata"]["prefix"].text, "natcd");

  for (std::string verb : {"PING", "INFO", "STATS"}) {
    std::string type = "io.nats.micro.v1." +
                       std::string(verb == "PING"   ? "ping"
                                   : verb == "INFO" ? "info"
                                                    : "stats") +
                       "_response";
    for (const std::string& subject :
         {"$SRV." + verb, "$SRV." + verb + ".natcd", "$SRV." + verb + ".natcd." + id}) {
      Json r = Ask(client_.get(), subject);
      EXPECT_EQ(r["type"].text, type) << subject;
      EXPECT_EQ(r["id"].text, id) << subject;
      EXPECT_EQ(r["name"].text, "natcd") << subject;
    }
  }
  // Another service or instance: nobody answers.
  EXPECT_FALSE(client_->Raw("$SRV.PING.natcd.not-this-one", "", {}, 500).ok());
  EXPECT_FALSE(client_->Raw("$SRV.PING.other", "", {}, 500).ok());

  Json info = Ask(client_.get(), "$SRV.INFO.natcd");
  EXPECT_TRUE(info["description"].is_string());
  ASSERT_TRUE(info["endpoints"].is_array());
  EXPECT_GE(info["endpoints"].size(), 20u);
  const Json* put = Endpoint(info, "kv_put");
  ASSERT_NE(put, nullptr);
  EXPECT_EQ((*put)["subject"].text, "natcd.kv.put");
  EXPECT_EQ((*put)["queue_group"].text, "q");
  const Json* hex = Endpoint(info, "lease_keepalive_id");
  ASSERT_NE(hex, nullptr);
  EXPECT_EQ((*hex)["subject"].text, "natcd.lease.keepalive.*");
  std::set<std::string> subjects;
  for (const Json& e : info["endpoints"].items) subjects.insert(e["subject"].text);
  for (const char* s :
       {"natcd.kv.range", "natcd.kv.put", "natcd.kv.delete", "natcd.kv.txn", "natcd.kv.compact",
        "natcd.lease.grant", "natcd.lease.revoke", "natcd.lease.keepalive",
        "natcd.lease.timetolive", "natcd.lease.leases", "natcd.watch.create", "natcd.watch.cancel",
        "natcd.watch.progress", "natcd.maint.status", "natcd.maint.hashkv", "natcd.maint.hash",
        "natcd.maint.defrag", "natcd.cluster.member.list"}) {
    EXPECT_EQ(subjects.count(s), 1u) << s << " missing from INFO";
  }
}

TEST_F(DiscoveryTest, StatsCountRequestsAndErrors) {
  for (int i = 0; i < 3; ++i) client_->Put("/disc", std::to_string(i));
  EXPECT_EQ(client_->Raw(client_->Subject("kv.put"), "\xff\xff").code, 400);
  EXPECT_EQ(PutReply(client_.get(), "/disc", "x", 0x1).code, 404);
  client_->Range("/disc");

  Json stats = Ask(client_.get(), "$SRV.STATS");
  EXPECT_FALSE(stats["started"].text.empty());
  const Json* put = Endpoint(stats, "kv_put");
  ASSERT_NE(put, nullptr);
  EXPECT_EQ((*put)["num_requests"].text, "5");
  EXPECT_EQ((*put)["num_errors"].text, "2");
  EXPECT_NE((*put)["last_error"].text.find("ErrLeaseNotFound"), std::string::npos)
      << (*put)["last_error"].text;
  EXPECT_TRUE((*put)["processing_time"].is_number());
  EXPECT_TRUE((*put)["average_processing_time"].is_number());
  EXPECT_GT(std::stoll((*put)["processing_time"].text), 0);
  const Json* range = Endpoint(stats, "kv_range");
  ASSERT_NE(range, nullptr);
  EXPECT_EQ((*range)["num_requests"].text, "1");
  EXPECT_EQ((*range)["num_errors"].text, "0");
  EXPECT_EQ((*range)["last_error"].text, "");
}

}  // namespace
}  // namespace natcd::testing
