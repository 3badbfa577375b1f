// The log command format, pinned: the bytes below were produced by the
// protobuf-c codec (adapters/nats/raft_codec.cc) that wrote every existing
// Raft log, for the values of codec_examples.h. If a test here fails, a
// data directory written before the change no longer reads the same.
#include "server/log_command.h"

#include <gtest/gtest.h>

#include <random>

#include "core/server/codec_examples.h"
#include "server/proto_wire.h"
#include "server/write_request_codec.h"

namespace natcd::server {
namespace {

using testing::DumpCommand;
using testing::Hex;
using testing::Unhex;

// DO NOT CHANGE: persisted. name -> bytes (hex) of ExampleLogCommands().
const std::pair<const char*, const char*> kGolden[] = {
    {"put_minimal", "080112030a016b"},
    {"put_every_field",
     "080112140a036b6579120576616c7565182a20012801300118ef9baf8589cf959a12204d"
     "2a057265712d3130fbd095ffbc31"},
    {"put_negative_lease", "080112110a016b12017618ffffffffffffffffff01"},
    {"delete_range", "080212080a01611201621801180320042a0364656c3005"},
    {"delete_all_from", "080212060a0100120100"},
    {"txn_compares_and_ops",
     "0803128d010a051a016b20000a09080110011a016b28050a09080210021a016b30060a0c"
     "080310031a016b3a0376616c0a0710041a016b40090a0c10031a016b3a008204026b7a12"
     "270a250a016112017a180a20072802300438014001480150015802600368fcffffffffff"
     "ffffff01120c120a0a017012017118012001120a1a080a016412016518011a020a001a02"
     "1200180120022a0574786e2d313003"},
    {"txn_nested",
     "0803122b122522230a09080110021a016b3001120f220d120b12090a0464656570120176"
     "1a051a030a01781a022200"},
    {"txn_empty", "0803"},
    {"compaction", "0804120408641001"},
    {"compaction_zero", "0804"},
    {"lease_grant", "0805120c083c10ffffffffffffffff7f180820092a0167300a"},
    {"lease_revoke", "0806120308b960"},
    {"lease_expire", "080712180a1601ac02feffffffffffffffff01ffffffffffffffff7f"},
    {"lease_expire_none", "0807"},
    {"lease_checkpoint", "0808120f0a05080110f4030a0208020a021001"},
    {"events_published", "0809180538c0c407"},
    {"events_published_zero", "0809"},
};

TEST(LogCommand, EncodesEveryKindToItsPinnedBytes) {
  const auto examples = testing::ExampleLogCommands();
  ASSERT_EQ(examples.size(), std::size(kGolden));
  for (size_t i = 0; i < examples.size(); i++) {
    ASSERT_EQ(examples[i].first, kGolden[i].first);
    EXPECT_EQ(Hex(EncodeLogCommand(examples[i].second)), kGolden[i].second) << kGolden[i].first;
  }
}

TEST(LogCommand, DecodesThePinnedBytesToTheirValues) {
  const auto examples = testing::ExampleLogCommands();
  for (size_t i = 0; i < examples.size(); i++) {
    LogCommand out;
    ASSERT_TRUE(DecodeLogCommand(Unhex(kGolden[i].second), &out).ok()) << kGolden[i].first;
    EXPECT_EQ(DumpCommand(out), DumpCommand(examples[i].second)) << kGolden[i].first;
  }
}

// DO NOT CHANGE: persisted. A MEMBER_ATTRIBUTES entry (kind 10), its
// request a MemberAttributesCommand (core/server/member.proto).
constexpr const char* kMemberAttributesGolden =
    "080a123208fbcfc6fe8de0fab60f1215687474703a2f2f3132372e302e302e313a32333739120f68747470733a"
    "2f2f6e313a3233373918fbcfc6fe8de0fab60f2007";

LogCommand ExampleMemberAttributes() {
  LogCommand command;
  command.member_attributes =
      MemberAttributes{0x0f6deb00dfd1a7fb, {"http://127.0.0.1:2379", "https://n1:2379"}, {}};
  command.origin_member = 0x0f6deb00dfd1a7fb;
  command.origin_seq = 7;
  return command;
}

TEST(LogCommand, MemberAttributesEncodeToTheirPinnedBytesAndBack) {
  const LogCommand command = ExampleMemberAttributes();
  EXPECT_EQ(Hex(EncodeLogCommand(command)), kMemberAttributesGolden);
  LogCommand out;
  ASSERT_TRUE(DecodeLogCommand(Unhex(kMemberAttributesGolden), &out).ok());
  ASSERT_TRUE(out.member_attributes.has_value());
  EXPECT_EQ(*out.member_attributes, *command.member_attributes);
  EXPECT_FALSE(out.events_published.has_value());
  EXPECT_EQ(out.origin_member, command.origin_member);
  EXPECT_EQ(out.origin_seq, 7u);
  // No URL at all (a member that stopped serving etcd's API) is a valid command.
  LogCommand none;
  none.member_attributes = MemberAttributes{5, {}, {}};
  ASSERT_TRUE(DecodeLogCommand(EncodeLogCommand(none), &out).ok());
  EXPECT_EQ(*out.member_attributes, *none.member_attributes);
  // A request that is not a MemberAttributesCommand is refused.
  EXPECT_FALSE(DecodeLogCommand(Unhex("080a1203ffffff"), &out).ok());
}

// DO NOT CHANGE: persisted. A MEMBER_ATTRIBUTES entry setting peer URLs
// (etcd's MemberUpdate): peer_urls is field 3, `sets` (PEER_URLS = 1) field
// 4. An entry without field 4 (every one before it) sets client URLs.
constexpr const char* kMemberPeerUrlsGolden =
    "080a123308f1c0fdf2d487cb8d0a1a0e687474703a2f2f6e323a323338301a1568747470733a2f2f31302e30"
    "2e302e323a32333830200118fbcfc6fe8de0fab60f2009";

TEST(LogCommand, PeerUrlsEncodeToTheirPinnedBytesAndBack) {
  LogCommand command;
  MemberAttributes a;
  a.member_id = 0x0a1b2c3d4e5f6071;
  a.peer_urls = {"http://n2:2380", "https://10.0.0.2:2380"};
  a.sets = MemberAttribute::kPeerUrls;
  command.member_attributes = a;
  command.origin_member = 0x0f6deb00dfd1a7fb;
  command.origin_seq = 9;
  EXPECT_EQ(Hex(EncodeLogCommand(command)), kMemberPeerUrlsGolden);
  LogCommand out;
  ASSERT_TRUE(DecodeLogCommand(Unhex(kMemberPeerUrlsGolden), &out).ok());
  ASSERT_TRUE(out.member_attributes.has_value());
  EXPECT_EQ(*out.member_attributes, a);
  EXPECT_EQ(out.origin_seq, 9u);
  // The client URL entries written before peer URLs still set client URLs.
  ASSERT_TRUE(DecodeLogCommand(Unhex(kMemberAttributesGolden), &out).ok());
  EXPECT_EQ(out.member_attributes->sets, MemberAttribute::kClientUrls);
  EXPECT_TRUE(out.member_attributes->peer_urls.empty());
  // An attribute natcd does not know is refused, not taken for another.
  EXPECT_EQ(DecodeLogCommand(Unhex("080a120408052002"), &out).message(),
            "unknown member attribute 2");
}

// DO NOT CHANGE: persisted. The auth revision a write was checked at
// (field 8), after the fields every command has; 0 is left out, so every
// command written before it reads as unchecked.
TEST(LogCommand, TheAuthRevisionEncodesToItsPinnedBytesAndBack) {
  LogCommand c = testing::Command(PutRequest{"k", "", 0, false, false, false});
  c.auth_revision = 300;
  EXPECT_EQ(Hex(EncodeLogCommand(c)), "080112030a016b40ac02");
  LogCommand out;
  ASSERT_TRUE(DecodeLogCommand(Unhex("080112030a016b40ac02"), &out).ok());
  EXPECT_EQ(out.auth_revision, 300u);
  ASSERT_TRUE(DecodeLogCommand(Unhex("080112030a016b"), &out).ok());
  EXPECT_EQ(out.auth_revision, 0u);
}

TEST(LogCommand, RequestIdStopsAtItsFirstNulAsProtobufCDid) {
  LogCommand c = testing::Command(LeaseRevokeRequest{1}, 0, 0, std::string("ab\0cd", 5));
  EXPECT_EQ(Hex(EncodeLogCommand(c)), "0806120208012a026162");
  LogCommand out;
  ASSERT_TRUE(DecodeLogCommand(Unhex("08062a056162006364"), &out).ok());
  EXPECT_EQ(out.request_id, "ab");
}

TEST(LogCommand, ReadsFieldsInAnyOrderUnknownOnesAndTheLastOfARepeatedScalar) {
  // request_id, an unknown varint (field 99), an unknown fixed64 (100), an
  // unknown fixed32 (101), unknown bytes (102), the request, then the kind
  // twice (the last wins), then the revoke's id twice inside.
  const std::string bytes = Unhex(
      "2a0178"
      "98060a"
      "a1060102030405060708"
      "ad0601020304"
      "b206026869"
      "1204080508070801"
      "0801"
      "0806");
  LogCommand out;
  ASSERT_TRUE(DecodeLogCommand(bytes, &out).ok());
  EXPECT_EQ(DumpCommand(out), "revoke{7} origin=0/0 id=\"x\" expires=0");
}

TEST(LogCommand, ReadsLeaseIdsPackedAndUnpacked) {
  // ids: 1 unpacked, then {2, 3} packed, then 4 unpacked.
  LogCommand out;
  ASSERT_TRUE(DecodeLogCommand(Unhex("0807120808010a0202030804"), &out).ok());
  EXPECT_EQ(DumpCommand(out), "expire{ 1 2 3 4} origin=0/0 id=\"\" expires=0");
}

std::string ErrorOf(const std::string& hex) {
  LogCommand out;
  Status s = DecodeLogCommand(Unhex(hex), &out);
  return s.ok() ? "OK" : s.ToString();
}

TEST(LogCommand, RefusesWhatTodaysDecoderRefusesWithItsText) {
  EXPECT_EQ(
      ErrorOf("08"),
      "ErrInvalidArgument: malformed or too deeply nested protobuf: not a natcd.v1.LogCommand");
  EXPECT_EQ(
      ErrorOf("0b"),  // a group
      "ErrInvalidArgument: malformed or too deeply nested protobuf: not a natcd.v1.LogCommand");
  EXPECT_EQ(ErrorOf("0d01000000"),  // the kind as a fixed32
            "ErrInvalidArgument: malformed protobuf: not a natcd.v1.LogCommand");
  EXPECT_EQ(ErrorOf("88808080800001"),  // a 6-byte tag: well-formed, but protobuf-c reads 5
            "ErrInvalidArgument: malformed protobuf: not a natcd.v1.LogCommand");
  EXPECT_EQ(ErrorOf("0863"), "ErrInvalidArgument: unknown log command kind 99");
  EXPECT_EQ(ErrorOf("08ffffffff0f"), "ErrInvalidArgument: unknown log command kind -1");
  EXPECT_EQ(ErrorOf("080312080a0608ffffffff0f"), "ErrInvalidArgument: invalid compare result -1");
  EXPECT_EQ(ErrorOf("0803120a"
                    "1208"
                    "0a0630ffffffff0f"),
            "ErrInvalidSortOption: etcdserver: invalid sort option");
  EXPECT_EQ(ErrorOf(""), "ErrInvalidArgument: unknown log command kind 0");
  EXPECT_EQ(ErrorOf("080938ffffffffffffffffff01"), "ErrInvalidArgument: negative events_published");
  EXPECT_EQ(
      ErrorOf("0801120218ff"),
      "ErrInvalidArgument: malformed or too deeply nested protobuf: not a natcd.v1.PutRequest");
  EXPECT_EQ(ErrorOf("080712040a0201ff"),
            "ErrInvalidArgument: malformed protobuf: not a natcd.v1.LeaseExpireCommand");
  EXPECT_EQ(ErrorOf("080312021200"), "ErrInvalidArgument: txn operation with no request set");
  EXPECT_EQ(ErrorOf("080312040a020805"), "ErrInvalidArgument: invalid compare result 5");
  EXPECT_EQ(ErrorOf("080312040a021005"), "ErrInvalidArgument: invalid compare target 5");
  EXPECT_EQ(ErrorOf("08031206"
                    "1204"
                    "0a022803"),
            "ErrInvalidSortOption: etcdserver: invalid sort option");
  // protobuf-c unpacked everything before FromProto checked anything: an
  // op that fails a check, then a malformed one (truncated; then a message
  // field given as a varint, which only protobuf-c refuses).
  EXPECT_EQ(
      ErrorOf("08031206"
              "1200"
              "12020a05"),
      "ErrInvalidArgument: malformed or too deeply nested protobuf: not a natcd.v1.TxnRequest");
  EXPECT_EQ(ErrorOf("08031206"
                    "1200"
                    "12020801"),
            "ErrInvalidArgument: malformed protobuf: not a natcd.v1.TxnRequest");
  // FromProto's order: compares before success ops, whatever the wire order.
  EXPECT_EQ(ErrorOf("08031206"
                    "1200"
                    "0a020807"),
            "ErrInvalidArgument: invalid compare result 7");
  EXPECT_EQ(ErrorOf("08031206"
                    "1200"
                    "1a021200"),
            "ErrInvalidArgument: txn operation with no request set");
}

TEST(LogCommand, RefusesTxnsNestedDeeperThan16) {
  auto nested = [](int depth) {
    TxnRequest t;
    for (int i = 0; i < depth; i++) {
      TxnRequest outer;
      outer.success.push_back(RequestOp{std::make_shared<TxnRequest>(std::move(t))});
      t = std::move(outer);
    }
    LogCommand out;
    Status s = DecodeLogCommand(EncodeLogCommand(testing::Command(t)), &out);
    return s.ok() ? "OK" : s.ToString();
  };
  EXPECT_EQ(nested(16), "OK");
  EXPECT_EQ(nested(17), "ErrInvalidArgument: txn nested deeper than 16");
  // 64 wire levels: the depth guard refuses it before anything is read.
  EXPECT_EQ(nested(31), "ErrInvalidArgument: txn nested deeper than 16");
  EXPECT_EQ(
      nested(32),
      "ErrInvalidArgument: malformed or too deeply nested protobuf: not a natcd.v1.TxnRequest");
  // Far deeper, as bytes (the check stops at level 65, no deep recursion).
  std::string txn;
  for (int i = 0; i < 5000; i++) {
    wire::Writer op;
    op.Bytes(4, txn);  // RequestOp.request_txn
    wire::Writer outer;
    outer.Bytes(2, op.out());  // TxnRequest.success
    txn = outer.Take();
  }
  wire::Writer command;
  command.Varint(1, 3);
  command.Bytes(2, txn);
  LogCommand out;
  EXPECT_EQ(
      DecodeLogCommand(command.out(), &out).ToString(),
      "ErrInvalidArgument: malformed or too deeply nested protobuf: not a natcd.v1.TxnRequest");
}

// Decoding never crashes or over-allocates (run under ASan too), and what
// it accepts encodes to bytes that are a fixed point of decode + encode.
// (Not the same value in every case: a Compare whose target_union member is
// not its target's loses that member, which the engine never reads.)
void ExpectStable(const std::string& bytes) {
  LogCommand out;
  if (!DecodeLogCommand(bytes, &out).ok()) return;
  const std::string once = EncodeLogCommand(out);
  LogCommand again;
  ASSERT_TRUE(DecodeLogCommand(once, &again).ok()) << Hex(bytes);
  ASSERT_EQ(Hex(EncodeLogCommand(again)), Hex(once)) << Hex(bytes);
}

TEST(LogCommand, ACompareKeepsTheValueOfItsTarget) {
  // target MOD (2) with the version member (4) set, as a client may send:
  // decoded as is, encoded with the member the engine reads (mod_revision).
  LogCommand out;
  ASSERT_TRUE(DecodeLogCommand(Unhex("0803"
                                     "1206"
                                     "0a04"
                                     "1002"
                                     "2007"),
                               &out)
                  .ok());
  const Compare& c = std::get<TxnRequest>(out.request).compare.at(0);
  EXPECT_EQ(c.version, 7);
  EXPECT_EQ(c.mod_revision, 0);
  EXPECT_EQ(Hex(EncodeLogCommand(out)), "080312060a0410023000");
}

TEST(LogCommand, EveryTruncationOfEveryExampleIsHandled) {
  int refused = 0, total = 0;
  for (const auto& [name, hex] : kGolden) {
    const std::string bytes = Unhex(hex);
    for (size_t n = 0; n < bytes.size(); n++) {
      LogCommand out;
      refused += !DecodeLogCommand(bytes.substr(0, n), &out).ok();
      total++;
      ExpectStable(bytes.substr(0, n));
    }
  }
  // Most cuts land inside a field; a cut between fields can be valid.
  EXPECT_GT(refused, total / 2);
}

TEST(LogCommand, RandomBytesAndMutationsAreHandled) {
  testing::RandomValues r(11);
  for (int i = 0; i < 20000; i++) {
    ExpectStable(r.S(64));
    std::string bytes = EncodeLogCommand(r.Log());
    bytes[r.U(bytes.size())] = static_cast<char>(r.U(256));
    ExpectStable(bytes);
  }
}

TEST(LogCommand, RandomValuesRoundTrip) {
  testing::RandomValues r(12);
  for (int i = 0; i < 5000; i++) {
    const LogCommand c = r.Log();
    LogCommand out;
    ASSERT_TRUE(DecodeLogCommand(EncodeLogCommand(c), &out).ok());
    ASSERT_EQ(DumpCommand(out), DumpCommand(c));
  }
}

}  // namespace
}  // namespace natcd::server
