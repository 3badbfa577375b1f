// service_error.h and reply.h backwards: an error reply read back gives the
// Status the leader answered, code, name and message (and an ErrCompacted's
// compact revision), so a member that handed a request over answers it as
// the leader did.
#include "adapters/nats/codec/service_error.h"

#include <gtest/gtest.h>
#include <nats/nats.h>

#include <set>
#include <string>
#include <vector>

#include "adapters/nats/front_end/reply.h"

namespace natcd::nats {
namespace {

using Code = Status::Code;

// One Status of every code, with the names the tree gives it (several per
// code where ToServiceError puts codes together).
std::vector<Status> EveryError() {
  return {
      Status::InvalidArgument("ErrInvalidArgument", "malformed protobuf: not a natcd.v1.X"),
      Status::InvalidArgument("ErrEmptyKey", "etcdserver: key is not provided"),
      Status::InvalidArgument("ErrMemberExist", "membership: member ID already exist"),
      Status::NotFound("ErrKeyNotFound", "etcdserver: key not found"),
      Status::NotFound("ErrMemberNotFound", "membership: member not found"),
      Status::NotFound("ErrWatchNotFound", "no watch 7"),
      Status::Compacted(7, 12),
      Status::FutureRevision(30, 20),
      Status::LeaseNotFound(0x1234),
      Status::LeaseExists(99),
      Status::TooLarge("ErrRequestTooLarge", "etcdserver: request is too large"),
      Status(Code::kTooManyRequests, "ErrTooManyRequests", "etcdserver: too many requests"),
      Status::Unavailable("ErrStopped", "etcdserver: server stopped"),
      Status::Unavailable("ErrNoLeader", "etcdserver: no leader"),
      Status::Unavailable("ErrProposalDropped", "etcdserver: another membership change"),
      Status(Code::kNotLeader, "ErrNotLeader", "etcdserver: not leader"),
      Status::Busy("database is locked"),
      Status::IOError("disk I/O error"),
      Status::Corruption("bad page"),
      Status::Internal("should not happen"),
      Status(Code::kTimeout, "ErrTimeout", "etcdserver: request timed out"),
      Status(Code::kTimeout, "ErrTimeoutLeaderTransfer", "etcdserver: request timed out, leader"),
      Status(Code::kLeaseTTLTooLarge, "ErrLeaseTTLTooLarge", "etcdserver: too large lease TTL"),
  };
}

TEST(ServiceError, EveryErrorReadsBackAsItsStatus) {
  std::set<Code> codes;
  for (const Status& status : EveryError()) {
    SCOPED_TRACE(status.ToString());
    codes.insert(status.code());
    Status back = FromServiceError(ToServiceError(status));
    EXPECT_EQ(back.code(), status.code());
    EXPECT_EQ(back.name(), status.name());
    EXPECT_EQ(back.message(), status.message());
    EXPECT_EQ(back.compact_revision(), status.compact_revision());
  }
  // Every client-facing code (kOk and Raft's own kLogCompacted are none).
  EXPECT_EQ(codes.size(), static_cast<size_t>(Code::kLeaseTTLTooLarge) - 1);
}

// natsMsg needs the library opened (its garbage collector), as a
// connection would.
class ErrorReplyTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { ASSERT_EQ(nats_Open(-1), NATS_OK); }
};

TEST_F(ErrorReplyTest, ThroughTheReplyHeaders) {
  for (const Status& status : EveryError()) {
    SCOPED_TRACE(status.ToString());
    natsMsg* msg = nullptr;
    ASSERT_EQ(ErrorReplyMessage("_INBOX.x", ToServiceError(status), &msg), NATS_OK);
    ServiceError error;
    ASSERT_TRUE(ReadErrorReply(msg, &error));
    natsMsg_Destroy(msg);
    Status back = FromServiceError(error);
    EXPECT_EQ(back.code(), status.code());
    EXPECT_EQ(back.ToString(), status.ToString());
    EXPECT_EQ(back.compact_revision(), status.compact_revision());
  }
}

TEST_F(ErrorReplyTest, ASuccessReplyIsNoError) {
  natsMsg* msg = nullptr;
  ASSERT_EQ(natsMsg_Create(&msg, "_INBOX.x", nullptr, "body", 4), NATS_OK);
  ServiceError error;
  EXPECT_FALSE(ReadErrorReply(msg, &error));
  natsMsg_Destroy(msg);
}

TEST(ServiceError, TheCompactRevisionHeaderWinsAndOddTextsKeepTheirWords) {
  // The header's compact revision, when the message is the engine's.
  Status s = FromServiceError(ServiceError{410, Status::Compacted(7, 12).ToString(), 12});
  EXPECT_TRUE(s.IsCompacted());
  EXPECT_EQ(s.compact_revision(), 12);
  // Another message: still ErrCompacted, with the header's revision lost
  // (only Status::Compacted carries one) but every word kept.
  s = FromServiceError(ServiceError{410, "ErrCompacted: gone", 12});
  EXPECT_TRUE(s.IsCompacted());
  EXPECT_EQ(s.message(), "gone");
  // Text without a name; a code natcd does not send.
  s = FromServiceError(ServiceError{503, "no name here", 0});
  EXPECT_EQ(s.code(), Code::kUnavailable);
  EXPECT_EQ(s.name(), "");
  EXPECT_EQ(s.message(), "no name here");
  s = FromServiceError(ServiceError{418, "ErrTeapot: short and stout", 0});
  EXPECT_EQ(s.code(), Code::kInternal);
  EXPECT_EQ(s.ToString(), "ErrTeapot: short and stout");
}

}  // namespace
}  // namespace natcd::nats
