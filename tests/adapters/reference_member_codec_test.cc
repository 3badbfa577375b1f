// The cluster's own messages: Raft messages and logged writes survive the
// round trip exactly, and garbage is refused with an error.
#include "adapters/reference_member_codec.h"

#include <gtest/gtest.h>

#include "adapters/nats/natcd.pb-c.h"
#include "core/server/member.pb-c.h"

namespace natcd::nats {
namespace {

TEST(RaftCodec, MessageRoundTrip) {
  raft::Message m;
  m.type = raft::MessageType::kApp;
  m.to = 0xfeedfacecafebeefull;
  m.from = 2;
  m.term = 7;
  m.log_term = 6;
  m.index = 100;
  m.commit = 99;
  m.reject = true;
  m.reject_hint = 42;
  m.context = std::string("ctx\0x", 5);
  m.entries.push_back(raft::Entry{7, 101, raft::EntryType::kNormal, std::string("a\0b", 3)});
  m.entries.push_back(raft::Entry{7, 102, raft::EntryType::kConfChange, "cc"});
  raft::Message back;
  ASSERT_TRUE(DecodeRaftMessage(EncodeRaftMessage(m), &back).ok());
  EXPECT_EQ(back.type, m.type);
  EXPECT_EQ(back.to, m.to);
  EXPECT_EQ(back.from, m.from);
  EXPECT_EQ(back.term, m.term);
  EXPECT_EQ(back.log_term, m.log_term);
  EXPECT_EQ(back.index, m.index);
  EXPECT_EQ(back.commit, m.commit);
  EXPECT_EQ(back.reject, m.reject);
  EXPECT_EQ(back.reject_hint, m.reject_hint);
  EXPECT_EQ(back.context, m.context);
  EXPECT_EQ(back.entries, m.entries);
}

TEST(RaftCodec, SnapshotMetadataRoundTrip) {
  raft::Message m;
  m.type = raft::MessageType::kSnap;
  m.snapshot.meta = raft::SnapshotMeta{500, 9, raft::ConfState{{1, 2, 3}, {4}}};
  raft::Message back;
  ASSERT_TRUE(DecodeRaftMessage(EncodeRaftMessage(m), &back).ok());
  EXPECT_EQ(back.snapshot.meta, m.snapshot.meta);
}

TEST(RaftCodec, GarbageIsRefused) {
  raft::Message back;
  EXPECT_FALSE(DecodeRaftMessage("\xff\xff\xff", &back).ok());
  // A well-formed message of an unknown type.
  Natcd__V1__RaftMessage m;
  natcd__v1__raft_message__init(&m);
  m.type = 200;
  std::string bytes(protobuf_c_message_get_packed_size(&m.base), '\0');
  protobuf_c_message_pack(&m.base, reinterpret_cast<uint8_t*>(bytes.data()));
  EXPECT_TRUE(DecodeRaftMessage(bytes, &back).IsInvalidArgument());
  LogCommand command;
  EXPECT_FALSE(DecodeLogCommand("\x08\x63", &command).ok());  // kind 99
}

TEST(RaftCodec, ClientWriteTravelsAsItsProto) {
  Natcd__V1__PutRequest put;
  natcd__v1__put_request__init(&put);
  put.key = ProtobufCBinaryData{3, (uint8_t*)"key"};
  put.value = ProtobufCBinaryData{5, (uint8_t*)"value"};
  put.prev_kv = true;
  std::string proto(protobuf_c_message_get_packed_size(&put.base), '\0');
  protobuf_c_message_pack(&put.base, reinterpret_cast<uint8_t*>(proto.data()));

  LogCommand command;
  command.request = PutRequest{};
  command.origin_member = 3;
  command.origin_seq = 77;
  command.request_id = "req-1";
  command.request_expires_ms = 123456;
  auto bytes = EncodeLogCommand(command, &proto);
  ASSERT_TRUE(bytes.ok());
  LogCommand back;
  ASSERT_TRUE(DecodeLogCommand(bytes.value(), &back).ok());
  ASSERT_TRUE(std::holds_alternative<PutRequest>(back.request));
  EXPECT_EQ(std::get<PutRequest>(back.request).key, "key");
  EXPECT_EQ(std::get<PutRequest>(back.request).value, "value");
  EXPECT_TRUE(std::get<PutRequest>(back.request).prev_kv);
  EXPECT_EQ(back.origin_member, 3u);
  EXPECT_EQ(back.origin_seq, 77u);
  EXPECT_EQ(back.request_id, "req-1");
  EXPECT_EQ(back.request_expires_ms, 123456);

  command.request = PutRequest{};
  EXPECT_FALSE(EncodeLogCommand(command).ok()) << "a put needs its proto";
}

TEST(RaftCodec, EventsPublishedRoundTripsWithoutARequest) {
  for (int64_t revision : {int64_t{0}, int64_t{1}, int64_t{1} << 40}) {
    LogCommand command;
    command.events_published = revision;
    auto bytes = EncodeLogCommand(command);
    ASSERT_TRUE(bytes.ok());
    LogCommand back;
    back.events_published = 77;
    ASSERT_TRUE(DecodeLogCommand(bytes.value(), &back).ok());
    ASSERT_TRUE(back.events_published.has_value());
    EXPECT_EQ(*back.events_published, revision);
  }
  // Any other kind clears it.
  LogCommand expire;
  expire.request = LeaseExpireRequest{{5}};
  auto bytes = EncodeLogCommand(expire);
  ASSERT_TRUE(bytes.ok());
  LogCommand back;
  back.events_published = 3;
  ASSERT_TRUE(DecodeLogCommand(bytes.value(), &back).ok());
  EXPECT_FALSE(back.events_published.has_value());
}

TEST(RaftCodec, LeaderWritesRoundTrip) {
  auto round_trip = [](WriteRequest request) {
    LogCommand command;
    command.request = std::move(request);
    auto bytes = EncodeLogCommand(command);
    EXPECT_TRUE(bytes.ok()) << bytes.status().ToString();
    LogCommand back;
    EXPECT_TRUE(DecodeLogCommand(bytes.ok() ? bytes.value() : "", &back).ok());
    return back.request;
  };
  auto grant = std::get<LeaseGrantRequest>(round_trip(LeaseGrantRequest{30, 12345}));
  EXPECT_EQ(grant.ttl, 30);
  EXPECT_EQ(grant.id, 12345);
  EXPECT_EQ(std::get<LeaseRevokeRequest>(round_trip(LeaseRevokeRequest{9})).id, 9);
  auto compact = std::get<CompactionRequest>(round_trip(CompactionRequest{50, true}));
  EXPECT_EQ(compact.revision, 50);
  EXPECT_TRUE(compact.physical);
  auto expire = std::get<LeaseExpireRequest>(round_trip(LeaseExpireRequest{{1, 2, 3}}));
  EXPECT_EQ(expire.ids, (std::vector<int64_t>{1, 2, 3}));
  LeaseCheckpointRequest cp;
  cp.checkpoints.push_back({7, 1500});
  auto cp_back = std::get<LeaseCheckpointRequest>(round_trip(cp));
  ASSERT_EQ(cp_back.checkpoints.size(), 1u);
  EXPECT_EQ(cp_back.checkpoints[0].id, 7);
  EXPECT_EQ(cp_back.checkpoints[0].remaining_ms, 1500);
}

}  // namespace
}  // namespace natcd::nats
