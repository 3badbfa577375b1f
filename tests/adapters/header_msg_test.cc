// HeaderMsgBuilder (adapters/nats/codec/header_msg.h): messages built from encoded
// header bytes, and with nats.c's public header API, reach a subscriber on a
// real nats-server with the same headers and body.

#include "adapters/nats/codec/header_msg.h"

#include <gtest/gtest.h>
#include <nats/nats.h>

#include <map>
#include <string>

#include "support/nats_server.h"

namespace natcd::nats {
namespace {

struct Received {
  std::string subject;
  std::map<std::string, std::string> headers;
  std::string body;
};

// Every header of `msg`, by name (one value each).
std::map<std::string, std::string> Headers(natsMsg* msg) {
  std::map<std::string, std::string> out;
  const char** keys = nullptr;
  int count = 0;
  if (natsMsgHeader_Keys(msg, &keys, &count) != NATS_OK) return out;
  for (int i = 0; i < count; ++i) {
    const char* value = nullptr;
    if (natsMsgHeader_Get(msg, keys[i], &value) == NATS_OK) out[keys[i]] = value;
  }
  free(keys);
  return out;
}

class HeaderMsgTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.Start());
    ASSERT_EQ(natsConnection_ConnectTo(&nc_, server_.url().c_str()), NATS_OK);
    ASSERT_EQ(natsConnection_SubscribeSync(&sub_, nc_, "hdr.>"), NATS_OK);
    ASSERT_EQ(natsConnection_Flush(nc_), NATS_OK);
  }
  void TearDown() override {
    natsSubscription_Destroy(sub_);
    natsConnection_Destroy(nc_);
  }

  // Builds with `builder`, publishes, and returns what the subscriber got.
  Received RoundTrip(HeaderMsgBuilder& builder, const std::string& subject,
                     const std::string& body) {
    natsMsg* msg = nullptr;
    EXPECT_EQ(builder.Build(&msg, subject, body), NATS_OK);
    EXPECT_EQ(natsConnection_PublishMsg(nc_, msg), NATS_OK);
    natsMsg_Destroy(msg);
    natsMsg* got = nullptr;
    Received out;
    EXPECT_EQ(natsSubscription_NextMsg(&got, sub_, 5000), NATS_OK);
    if (got == nullptr) return out;
    out.subject = natsMsg_GetSubject(got);
    out.headers = Headers(got);
    out.body.assign(natsMsg_GetData(got), static_cast<size_t>(natsMsg_GetDataLength(got)));
    natsMsg_Destroy(got);
    return out;
  }

  testing::NatsServer server_;
  natsConnection* nc_ = nullptr;
  natsSubscription* sub_ = nullptr;
};

TEST_P(HeaderMsgTest, HeadersAndBodyArriveAsBuilt) {
  const bool force_public_api = GetParam();
  HeaderMsgBuilder builder(force_public_api);
  builder.Reset();
  builder.Add("Natcd-Op", "PUT");
  builder.Add("Natcd-Revision", "12345678901");
  builder.Add("Natcd-Key", "%2Fa%20b");
  const std::string body("value\r\n\0with NUL", 17);
  const Received got = RoundTrip(builder, "hdr.a.b", body);
  EXPECT_EQ(got.subject, "hdr.a.b");
  EXPECT_EQ(got.body, body);
  const std::map<std::string, std::string> want = {
      {"Natcd-Op", "PUT"}, {"Natcd-Revision", "12345678901"}, {"Natcd-Key", "%2Fa%20b"}};
  EXPECT_EQ(got.headers, want);
}

TEST_P(HeaderMsgTest, EachMessageHasOnlyItsOwnHeadersAndAnEmptyBodyStaysEmpty) {
  HeaderMsgBuilder builder(GetParam());
  builder.Reset();
  builder.Add("Natcd-Op", "PUT");
  builder.Add("Natcd-Lease", "00000000000000ff");
  const Received first = RoundTrip(builder, "hdr.one", "x");
  EXPECT_EQ(first.headers.size(), 2u);
  EXPECT_EQ(first.body, "x");
  // The same headers again, with another body: Build leaves them as they were.
  const Received again = RoundTrip(builder, "hdr.one", "yz");
  EXPECT_EQ(again.headers, first.headers);
  EXPECT_EQ(again.body, "yz");

  builder.Reset();
  builder.Add("Natcd-Op", "DEL");
  const Received second = RoundTrip(builder, "hdr.two", "");
  EXPECT_EQ(second.subject, "hdr.two");
  EXPECT_EQ(second.body, "");
  const std::map<std::string, std::string> want = {{"Natcd-Op", "DEL"}};
  EXPECT_EQ(second.headers, want);
}

INSTANTIATE_TEST_SUITE_P(Paths, HeaderMsgTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "PublicApi" : "EncodedBytes";
                         });

// natcd is built against one nats.c (Debian's libnats-dev); the fast path
// must be in use with it, or the live event stream silently costs a quarter
// more CPU. A nats.c whose constructor changed shows up here first.
TEST(HeaderMsgBuilderTest, TheEncodedPathIsInUseWithThisNatsC) {
  EXPECT_TRUE(HeaderMsgBuilder().encodes_headers()) << "nats.c " << nats_GetVersion();
  EXPECT_FALSE(HeaderMsgBuilder(/*force_public_api=*/true).encodes_headers());
}

}  // namespace
}  // namespace natcd::nats
