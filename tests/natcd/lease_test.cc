// Lease keepalives: P.lease.keepalive (LeaseKeepAliveRequest) and
// P.lease.keepalive.<lowercase hex id> with any body, as a request or as a
// plain publish (no reply subject), which renews too.
#include <thread>

#include "natcd/natcd_fixture.h"
#include "natcd/natcd_helpers.h"

namespace natcd::testing {
namespace {

using LeaseTest = NatcdTest;

Unpacked<Natcd__V1__LeaseKeepAliveResponse> KeepAliveReply(const WireReply& reply) {
  EXPECT_TRUE(reply.ok()) << reply.code << " " << reply.error;
  return WireClient::Decode<Natcd__V1__LeaseKeepAliveResponse>(
      &natcd__v1__lease_keep_alive_response__descriptor, reply);
}

std::string KeepAliveBody(int64_t id) {
  Natcd__V1__LeaseKeepAliveRequest req;
  natcd__v1__lease_keep_alive_request__init(&req);
  req.id = id;
  std::string out(protobuf_c_message_get_packed_size(&req.base), '\0');
  protobuf_c_message_pack(&req.base, reinterpret_cast<uint8_t*>(out.data()));
  return out;
}

void Publish(WireClient* client, const std::string& subject, const std::string& body) {
  ASSERT_EQ(natsConnection_Publish(client->nc(), subject.c_str(), body.data(),
                                   static_cast<int>(body.size())),
            NATS_OK);
  ASSERT_EQ(natsConnection_FlushTimeout(client->nc(), 2000), NATS_OK);
}

TEST_F(LeaseTest, KeepAliveRequests) {
  int64_t id = client_->Grant(10);
  ASSERT_GT(id, 0);
  auto plain = KeepAliveReply(client_->Raw(client_->Subject("lease.keepalive"), KeepAliveBody(id)));
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->id, id);
  EXPECT_EQ(plain->ttl, 10);
  // The hex subject ignores the body, whatever it is.
  for (const std::string& body : {std::string(), std::string("ping"),
                                  std::string("\xff\x00garbage", 9), KeepAliveBody(12345)}) {
    auto hex =
        KeepAliveReply(client_->Raw(client_->Subject("lease.keepalive." + LeaseHex(id)), body));
    ASSERT_TRUE(hex);
    EXPECT_EQ(hex->id, id);
    EXPECT_EQ(hex->ttl, 10);
  }
  // Without leading zeros it is the same lease.
  char short_hex[32];
  snprintf(short_hex, sizeof short_hex, "%llx", static_cast<unsigned long long>(id));
  auto trimmed = KeepAliveReply(
      client_->Raw(client_->Subject(std::string("lease.keepalive.") + short_hex), ""));
  ASSERT_TRUE(trimmed);
  EXPECT_EQ(trimmed->ttl, 10);
}

TEST_F(LeaseTest, UnknownLeaseKeepAliveIsTtlZero) {
  auto plain =
      KeepAliveReply(client_->Raw(client_->Subject("lease.keepalive"), KeepAliveBody(0x4242)));
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->ttl, 0);
  auto hex =
      KeepAliveReply(client_->Raw(client_->Subject("lease.keepalive." + LeaseHex(0x4242)), "x"));
  ASSERT_TRUE(hex);
  EXPECT_EQ(hex->ttl, 0);
  EXPECT_EQ(hex->id, 0x4242);
  // A revoked lease is unknown too.
  int64_t id = client_->Grant(10);
  Natcd__V1__LeaseRevokeRequest revoke;
  natcd__v1__lease_revoke_request__init(&revoke);
  revoke.id = id;
  ASSERT_TRUE(client_->Call("lease.revoke", &revoke.base).ok());
  auto gone = KeepAliveReply(client_->Raw(client_->Subject("lease.keepalive." + LeaseHex(id)), ""));
  ASSERT_TRUE(gone);
  EXPECT_EQ(gone->ttl, 0);
}

TEST_F(LeaseTest, PlainPublishRenews) {
  int64_t hex_lease = client_->Grant(3);
  int64_t req_lease = client_->Grant(3);
  int64_t idle_lease = client_->Grant(3);
  ASSERT_TRUE(hex_lease && req_lease && idle_lease);
  std::this_thread::sleep_for(milliseconds(1200));
  // 1.8 s left of 3: TimeToLive rounds down to 1.
  EXPECT_EQ(TimeToLive(client_.get(), hex_lease)->ttl, 1);
  // No reply subject: nothing answers, but the lease is renewed.
  Publish(client_.get(), client_->Subject("lease.keepalive." + LeaseHex(hex_lease)), "beat");
  Publish(client_.get(), client_->Subject("lease.keepalive"), KeepAliveBody(req_lease));
  EXPECT_TRUE(WaitFor([&] { return TimeToLive(client_.get(), hex_lease)->ttl == 2; }, 1000))
      << "a publish on lease.keepalive.<hex> did not renew";
  EXPECT_TRUE(WaitFor([&] { return TimeToLive(client_.get(), req_lease)->ttl == 2; }, 1000))
      << "a publish on lease.keepalive did not renew";
  EXPECT_LE(TimeToLive(client_.get(), idle_lease)->ttl, 1);
}

TEST_F(LeaseTest, RenewedLeaseOutlivesItsTtlAndIdleOneExpires) {
  int64_t kept = client_->Grant(1);
  int64_t idle = client_->Grant(1);
  client_->Put("/lk/kept", "k", kept);
  client_->Put("/lk/idle", "i", idle);
  auto end = Clock::now() + milliseconds(2500);
  while (Clock::now() < end) {
    Publish(client_.get(), client_->Subject("lease.keepalive." + LeaseHex(kept)), "");
    std::this_thread::sleep_for(milliseconds(250));
  }
  EXPECT_GE(TimeToLive(client_.get(), kept)->ttl, 0);
  EXPECT_EQ(client_->Range("/lk/kept")->n_kvs, 1u);
  EXPECT_EQ(TimeToLive(client_.get(), idle)->ttl, -1);
  EXPECT_EQ(client_->Range("/lk/idle")->n_kvs, 0u);
}

}  // namespace
}  // namespace natcd::testing
