// What counts as a failed request: a service error, and the NATS server's
// "no responders" status (nothing serves the subject).
#include "plugin/natcd-bench/nats_requests.h"

#include <gtest/gtest.h>
#include <nats/nats.h>

#include <cstring>

namespace natcd::bench {
namespace {

class NoServiceErrorTest : public ::testing::Test {
 protected:
  // Messages are nats.c objects: the library must be open.
  static void SetUpTestSuite() { ASSERT_EQ(nats_Open(-1), NATS_OK); }
};

natsMsg* Reply(const char* header, const char* value, const char* body) {
  natsMsg* msg = nullptr;
  EXPECT_EQ(natsMsg_Create(&msg, "_INBOX.x", nullptr, body, static_cast<int>(strlen(body))),
            NATS_OK);
  if (header != nullptr) {
    EXPECT_EQ(natsMsgHeader_Set(msg, header, value), NATS_OK);
  }
  return msg;
}

TEST_F(NoServiceErrorTest, AnAnswerIsASuccess) {
  natsMsg* msg = Reply(nullptr, nullptr, "\x0a\x00");
  EXPECT_TRUE(NoServiceError(msg));
  natsMsg_Destroy(msg);
}

TEST_F(NoServiceErrorTest, AServiceErrorIsAFailure) {
  natsMsg* msg = Reply("Nats-Service-Error-Code", "404", "");
  EXPECT_FALSE(NoServiceError(msg));
  natsMsg_Destroy(msg);
}

TEST_F(NoServiceErrorTest, NoRespondersIsAFailure) {
  natsMsg* msg = Reply("Status", "503", "");
  EXPECT_FALSE(NoServiceError(msg));
  natsMsg_Destroy(msg);
}

}  // namespace
}  // namespace natcd::bench
