// Remembered outcomes, pinned: the old forms as the deployed version
// wrote them (produced by node.cc's OutcomeOfResponse / OutcomeOfError over
// the protobuf-c codec, with header identity cluster 0x1111, member
// 0x2222, term 3), and the new form.
#include "server/request_outcome.h"

#include <gtest/gtest.h>

#include "alarm/alarm_errors.h"

#include "core/server/codec_examples.h"
#include "server/write_response_codec.h"

namespace natcd::server {
namespace {

using testing::Dump;
using testing::Hex;
using testing::Unhex;

// DO NOT CHANGE: persisted. 'R' + natcd.v1 response, of ExampleResponses().
const std::pair<const char*, const char*> kOldResponses[] = {
    {"put", "520a0a08912210a24418052003"},
    {"put_prev_kv", "520a0a08912210a2441806200312140a036b65791002180520032a0576616c75653007"},
    {"delete",
     "520a0a08912210a2441807200310021a140a036b65791002180520032a0576616c756530"
     "071a0a0a026b32100118012001"},
    {"txn_nested",
     "520a0a08912210a2441809200310011a280a260a0a08912210a2441809200312140a036b"
     "65791002180520032a0576616c75653007180120031a2412220a0a08912210a244180920"
     "0312140a036b65791002180520032a0576616c756530071a101a0e0a0a08912210a24418"
     "09200310011a20221e0a0a08912210a2441809200310011a0e120c0a0a08912210a24418"
     "092003"},
    {"txn_failed", "520a0a08912210a244180a2003"},
    {"compaction", "520a0a08912210a244180b2003"},
    {"lease_grant", "520a0a08912210a244180c200310b424183c"},
    {"lease_revoke", "520a0a08912210a244180d2003"},
};

// DO NOT CHANGE: persisted. 'E' + code + text, of ExampleErrors().
const std::pair<const char*, const char*> kOldErrors[] = {
    {"compacted",
     "E410ErrCompacted: etcdserver: mvcc: required revision 5 has been compacted; compact revision "
     "is 9"},
    {"future_revision",
     "E400ErrFutureRev: etcdserver: mvcc: required revision 10 is a future revision; current "
     "revision is 4"},
    {"lease_not_found", "E404ErrLeaseNotFound: etcdserver: requested lease not found (lease 77)"},
    {"lease_exists", "E409ErrLeaseExist: etcdserver: lease already exists (lease 78)"},
    {"key_not_found", "E400ErrKeyNotFound: etcdserver: key not found"},
    {"ttl_too_large", "E400ErrLeaseTTLTooLarge: etcdserver: too large lease TTL"},
    {"invalid", "E400ErrEmptyKey: etcdserver: key is not provided"},
    {"internal", "E500ErrInternal: a bug"},
};

// DO NOT CHANGE: persisted. The new form ('O'), of ExampleResponses().
const std::pair<const char*, const char*> kNewResponses[] = {
    {"put", "4f080112040a021805"},
    {"put_prev_kv", "4f0801121a0a02180612140a036b65791002180520032a0576616c75653007"},
    {"delete",
     "4f080212280a02180710021a140a036b65791002180520032a0576616c756530071a0a0a"
     "026b32100118012001"},
    {"txn_nested",
     "4f080312620a02180910011a200a1e0a02180912140a036b65791002180520032a057661"
     "6c75653007180120031a1c121a0a02180912140a036b65791002180520032a0576616c75"
     "6530071a081a060a02180910011a10220e0a02180910011a0612040a021809"},
    {"txn_failed", "4f080312040a02180a"},
    {"compaction", "4f080412040a02180b"},
    {"lease_grant", "4f080512090a02180c10b424183c"},
    {"lease_revoke", "4f080612040a02180d"},
};

// DO NOT CHANGE: persisted. The new form ('O'), of ExampleErrors().
const std::pair<const char*, const char*> kNewErrors[] = {
    {"compacted",
     "4f1803220c457272436f6d7061637465642a4f657463647365727665723a206d7663633a"
     "207265717569726564207265766973696f6e203520686173206265656e20636f6d706163"
     "7465643b20636f6d70616374207265766973696f6e20697320393009"},
    {"future_revision",
     "4f1804220c4572724675747572655265762a52657463647365727665723a206d7663633a"
     "207265717569726564207265766973696f6e203130206973206120667574757265207265"
     "766973696f6e3b2063757272656e74207265766973696f6e2069732034"},
    {"lease_not_found",
     "4f180522104572724c656173654e6f74466f756e642a30657463647365727665723a2072"
     "6571756573746564206c65617365206e6f7420666f756e6420286c6561736520373729"},
    {"lease_exists",
     "4f1806220d4572724c6561736545786973742a2b657463647365727665723a206c656173"
     "6520616c72656164792065786973747320286c6561736520373829"},
    {"key_not_found",
     "4f1802220e4572724b65794e6f74466f756e642a19657463647365727665723a206b6579"
     "206e6f7420666f756e64"},
    {"ttl_too_large",
     "4f181122134572724c6561736554544c546f6f4c617267652a1f65746364736572766572"
     "3a20746f6f206c61726765206c656173652054544c"},
    {"invalid",
     "4f1801220b457272456d7074794b65792a1f657463647365727665723a206b6579206973"
     "206e6f742070726f7669646564"},
    {"internal", "4f180e220b457272496e7465726e616c2a056120627567"},
};

TEST(RequestOutcome, ReadsOldResponsesDroppingTheAnsweringMembersIdentity) {
  const auto examples = testing::ExampleResponses();
  ASSERT_EQ(examples.size(), std::size(kOldResponses));
  for (size_t i = 0; i < examples.size(); i++) {
    ASSERT_EQ(examples[i].first, kOldResponses[i].first);
    Result<WriteResponse> r =
        DecodeOutcome(Unhex(kOldResponses[i].second), KindOf(examples[i].second));
    ASSERT_TRUE(r.ok()) << kOldResponses[i].first << ": " << r.status().ToString();
    EXPECT_EQ(Dump(r.value()), Dump(examples[i].second)) << kOldResponses[i].first;
  }
}

TEST(RequestOutcome, ReadsOldErrorsAsTheEngineStatus) {
  const auto examples = testing::ExampleErrors();
  ASSERT_EQ(examples.size(), std::size(kOldErrors));
  for (size_t i = 0; i < examples.size(); i++) {
    ASSERT_EQ(examples[i].first, kOldErrors[i].first);
    Result<WriteResponse> r = DecodeOutcome(kOldErrors[i].second, WriteKind::kPut);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(Dump(r.status()), Dump(examples[i].second)) << kOldErrors[i].first;
  }
  // The compact revision comes back out of the text.
  EXPECT_EQ(DecodeOutcome(kOldErrors[0].second, WriteKind::kCompaction).status().compact_revision(),
            9);
}

TEST(RequestOutcome, OldErrorCodesMapBackToStatusCodes) {
  using Code = Status::Code;
  auto code_of = [](const std::string& outcome) {
    Result<WriteResponse> r = DecodeOutcome(outcome, WriteKind::kPut);
    return r.ok() ? Code::kOk : r.status().code();
  };
  EXPECT_EQ(code_of("E400ErrFutureRev: x"), Code::kFutureRevision);
  EXPECT_EQ(code_of("E400ErrLeaseTTLTooLarge: x"), Code::kLeaseTTLTooLarge);
  EXPECT_EQ(code_of("E400ErrKeyNotFound: x"), Code::kNotFound);
  EXPECT_EQ(code_of("E400ErrDuplicateKey: x"), Code::kInvalidArgument);
  EXPECT_EQ(code_of("E404ErrLeaseNotFound: x"), Code::kLeaseNotFound);
  EXPECT_EQ(code_of("E408ErrTimeout: x"), Code::kTimeout);
  EXPECT_EQ(code_of("E409ErrLeaseExist: x"), Code::kLeaseExists);
  EXPECT_EQ(code_of("E410ErrCompacted: x"), Code::kCompacted);
  EXPECT_EQ(code_of("E413ErrRequestTooLarge: x"), Code::kTooLarge);
  EXPECT_EQ(code_of("E429ErrTooManyRequests: x"), Code::kTooManyRequests);
  EXPECT_EQ(code_of("E503ErrNotLeader: x"), Code::kNotLeader);
  EXPECT_EQ(code_of("E503ErrBusy: x"), Code::kBusy);
  EXPECT_EQ(code_of("E503ErrNoLeader: x"), Code::kUnavailable);
  EXPECT_EQ(code_of("E500ErrIO: x"), Code::kIOError);
  EXPECT_EQ(code_of("E500ErrCorrupt: x"), Code::kCorruption);
  EXPECT_EQ(code_of("E500ErrInternal: x"), Code::kInternal);
  EXPECT_EQ(code_of("E418ErrTeapot: x"), Code::kInternal);
  // An ErrCompacted whose text is not the engine's keeps its text, without
  // a compact revision (there is none to trust).
  Result<WriteResponse> odd = DecodeOutcome("E410ErrCompacted: compacted at 9", WriteKind::kPut);
  EXPECT_EQ(Dump(odd.status()),
            Dump(Status(Status::Code::kCompacted, "ErrCompacted", "compacted at 9")));
}

TEST(RequestOutcome, WritesTheNewFormToItsPinnedBytes) {
  const auto responses = testing::ExampleResponses();
  ASSERT_EQ(responses.size(), std::size(kNewResponses));
  for (size_t i = 0; i < responses.size(); i++) {
    EXPECT_EQ(Hex(EncodeOutcome(responses[i].second)), kNewResponses[i].second)
        << kNewResponses[i].first;
    Result<WriteResponse> r =
        DecodeOutcome(Unhex(kNewResponses[i].second), KindOf(responses[i].second));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(Dump(r.value()), Dump(responses[i].second));
  }
  const auto errors = testing::ExampleErrors();
  ASSERT_EQ(errors.size(), std::size(kNewErrors));
  for (size_t i = 0; i < errors.size(); i++) {
    EXPECT_EQ(Hex(EncodeOutcome(errors[i].second)), kNewErrors[i].second) << kNewErrors[i].first;
    Result<WriteResponse> r = DecodeOutcome(Unhex(kNewErrors[i].second), WriteKind::kTxn);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(Dump(r.status()), Dump(errors[i].second));
  }
}

// DO NOT CHANGE: persisted. A write refused by a raised alarm at apply is
// remembered like any outcome: its retry gets the same refusal.
TEST(RequestOutcome, AlarmRefusalsHaveTheirPinnedBytes) {
  const std::pair<Status, const char*> refusals[] = {
      {alarm::ErrNoSpace(),
       "4f1812220a4572724e6f53706163652a29657463647365727665723a206d7663633a2064617461626173652073"
       "70616365206578636565646564"},
      {alarm::ErrCorrupt(),
       "4f180d220a457272436f72727570742a1b657463647365727665723a20636f727275707420636c7573746572"},
  };
  for (const auto& [status, hex] : refusals) {
    EXPECT_EQ(Hex(EncodeOutcome(status)), hex);
    Result<WriteResponse> r = DecodeOutcome(Unhex(hex), WriteKind::kPut);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(Dump(r.status()), Dump(status));
  }
}

TEST(RequestOutcome, NewFormKeepsTheCompactRevision) {
  Result<WriteResponse> r = DecodeOutcome(EncodeOutcome(Status::Compacted(3, 41)), WriteKind::kTxn);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsCompacted());
  EXPECT_EQ(r.status().compact_revision(), 41);
}

TEST(RequestOutcome, NewFormSaysWhenARequestIdIsReusedForAnotherWrite) {
  Result<WriteResponse> r =
      DecodeOutcome(EncodeOutcome(WriteResponse{PutResponse{}}), WriteKind::kTxn);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().ToString(),
            "ErrInvalidArgument: request id already used by a put, not a txn");
}

TEST(RequestOutcome, NewFormReadsAFutureCodeAndFieldsItDoesNotKnow) {
  // code 99 (a later version's), name "ErrX", message "m", an unknown field 20.
  Result<WriteResponse> r = DecodeOutcome(Unhex("4f1863220445727258"
                                                "2a016d"
                                                "a00101"),
                                          WriteKind::kPut);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(Dump(r.status()), Dump(Status(Status::Code::kInternal, "ErrX", "m")));
}

TEST(RequestOutcome, GarbageIsAnInternalErrorNeverACrash) {
  for (const char* bad : {"", "X", "E", "E41", "E4x0ErrCompacted: x", "O\x08", "O\x08\x01",
                          "O\x12\x00", "O\x08\x09\x12\x00"}) {
    Result<WriteResponse> r = DecodeOutcome(bad, WriteKind::kPut);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), Status::Code::kInternal) << bad;
  }
  testing::RandomValues rv(31);
  for (int i = 0; i < 20000; i++) {
    std::string bytes = EncodeOutcome(rv.ClientResponse());
    bytes.resize(rv.U(bytes.size() + 1));
    if (rv.B() && !bytes.empty()) bytes[rv.U(bytes.size())] = static_cast<char>(rv.U(256));
    for (uint8_t k = 1; k <= 8; k++) (void)DecodeOutcome(bytes, static_cast<WriteKind>(k));
    (void)DecodeOutcome("R" + rv.S(64), static_cast<WriteKind>(1 + rv.U(8)));
  }
}

TEST(RequestOutcome, RandomResponsesRoundTrip) {
  testing::RandomValues rv(32);
  for (int i = 0; i < 5000; i++) {
    const WriteResponse resp = rv.ClientResponse();
    Result<WriteResponse> r = DecodeOutcome(EncodeOutcome(resp), KindOf(resp));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_EQ(Dump(r.value()), Dump(resp));
  }
  // The internal writes too (no client waits on them, but the format has them).
  for (const WriteResponse& resp : {WriteResponse{LeaseExpireResponse{ResponseHeader{4}, 2}},
                                    WriteResponse{LeaseCheckpointResponse{ResponseHeader{5}}}}) {
    Result<WriteResponse> r = DecodeOutcome(EncodeOutcome(resp), KindOf(resp));
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(Dump(r.value()), Dump(resp));
  }
}

}  // namespace
}  // namespace natcd::server
