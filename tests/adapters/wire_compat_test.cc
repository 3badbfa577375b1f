// natcd.proto is wire-compatible with etcd v3: the same values encode to the
// same bytes under etcd's field numbers.
//
// The expected bytes are written out by hand from the protobuf encoding
// rules (tag = field_number << 3 | wire_type; varints little-endian base
// 128; int64 negatives as 10-byte varints). They were cross-checked once
// against `protoc --encode` with etcd 3.4's own rpc.proto / kv.proto.

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "adapters/nats/natcd.pb-c.h"
#include "proto_testutil.h"

namespace natcd::nats {
namespace {

using testutil::Pack;

std::string B(std::initializer_list<int> bytes) {
  std::string s;
  for (int b : bytes) s.push_back(static_cast<char>(b));
  return s;
}

ProtobufCBinaryData Data(const char* s, size_t n) {
  return ProtobufCBinaryData{n, reinterpret_cast<uint8_t*>(const_cast<char*>(s))};
}

TEST(WireCompat, RangeRequest) {
  Natcd__V1__RangeRequest r;
  natcd__v1__range_request__init(&r);
  r.key = Data("foo", 3);
  r.range_end = Data("fop", 3);
  r.limit = 10;
  r.revision = 5;
  r.sort_order = NATCD__V1__RANGE_REQUEST__SORT_ORDER__DESCEND;
  r.sort_target = NATCD__V1__RANGE_REQUEST__SORT_TARGET__MOD;
  r.serializable = 1;
  r.count_only = 1;
  r.min_mod_revision = 1;
  r.max_create_revision = 300;
  const std::string expected = B({
      0x0a, 0x03, 'f',  'o', 'o',  // 1 key: bytes
      0x12, 0x03, 'f',  'o', 'p',  // 2 range_end
      0x18, 0x0a,                  // 3 limit = 10
      0x20, 0x05,                  // 4 revision = 5
      0x28, 0x02,                  // 5 sort_order = DESCEND
      0x30, 0x03,                  // 6 sort_target = MOD
      0x38, 0x01,                  // 7 serializable
      0x48, 0x01,                  // 9 count_only (8 keys_only is false: omitted)
      0x50, 0x01,                  // 10 min_mod_revision = 1
      0x68, 0xac, 0x02,            // 13 max_create_revision = 300
  });
  EXPECT_EQ(Pack(&r), expected);

  Natcd__V1__RangeRequest* back = natcd__v1__range_request__unpack(
      nullptr, expected.size(), reinterpret_cast<const uint8_t*>(expected.data()));
  ASSERT_NE(back, nullptr);
  EXPECT_EQ(back->limit, 10);
  EXPECT_EQ(back->max_create_revision, 300);
  EXPECT_EQ(back->sort_target, NATCD__V1__RANGE_REQUEST__SORT_TARGET__MOD);
  natcd__v1__range_request__free_unpacked(back, nullptr);
}

TEST(WireCompat, PutRequest) {
  Natcd__V1__PutRequest p;
  natcd__v1__put_request__init(&p);
  p.key = Data("k", 1);
  p.value = Data("\x00\xff", 2);
  p.lease = -1;
  p.prev_kv = 1;
  p.ignore_lease = 1;
  const std::string expected = B({
      0x0a, 0x01, 'k',                                                   // 1 key
      0x12, 0x02, 0x00, 0xff,                                            // 2 value
      0x18, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,  // 3 lease = -1
      0x20, 0x01,                                                        // 4 prev_kv
      0x30, 0x01,                                                        // 6 ignore_lease
  });
  EXPECT_EQ(Pack(&p), expected);
}

TEST(WireCompat, KeyValue) {
  Natcd__V1__KeyValue kv;
  natcd__v1__key_value__init(&kv);
  kv.key = Data("/a", 2);
  kv.create_revision = 1;
  kv.mod_revision = 150;
  kv.version = 2;
  kv.value = Data("v", 1);
  kv.lease = 0x694d7a1a2b3c4d5e;
  const std::string expected = B({
      0x0a, 0x02, '/',  'a',                                       // 1 key
      0x10, 0x01,                                                  // 2 create_revision
      0x18, 0x96, 0x01,                                            // 3 mod_revision = 150
      0x20, 0x02,                                                  // 4 version
      0x2a, 0x01, 'v',                                             // 5 value
      0x30, 0xde, 0x9a, 0xf1, 0xd9, 0xa2, 0xc3, 0xde, 0xa6, 0x69,  // 6 lease
  });
  EXPECT_EQ(Pack(&kv), expected);
}

TEST(WireCompat, CompareOneofAndRangeEnd64) {
  Natcd__V1__Compare c;
  natcd__v1__compare__init(&c);
  c.result = NATCD__V1__COMPARE__COMPARE_RESULT__NOT_EQUAL;
  c.target = NATCD__V1__COMPARE__COMPARE_TARGET__MOD;
  c.key = Data("/a", 2);
  c.target_union_case = NATCD__V1__COMPARE__TARGET_UNION_MOD_REVISION;
  c.mod_revision = 0;  // a set oneof member is encoded even when zero
  c.range_end = Data("/b", 2);
  EXPECT_EQ(Pack(&c), B({
                          0x08, 0x03,                  // 1 result = NOT_EQUAL
                          0x10, 0x02,                  // 2 target = MOD
                          0x1a, 0x02, '/', 'a',        // 3 key
                          0x30, 0x00,                  // 6 mod_revision = 0
                          0x82, 0x04, 0x02, '/', 'b',  // 64 range_end
                      }));
}

TEST(WireCompat, TxnRequest) {
  Natcd__V1__Compare cmp;
  natcd__v1__compare__init(&cmp);
  cmp.target = NATCD__V1__COMPARE__COMPARE_TARGET__VALUE;
  cmp.key = Data("k", 1);
  cmp.target_union_case = NATCD__V1__COMPARE__TARGET_UNION_VALUE;
  cmp.value = Data("v", 1);
  Natcd__V1__PutRequest put;
  natcd__v1__put_request__init(&put);
  put.key = Data("k", 1);
  put.value = Data("w", 1);
  Natcd__V1__RequestOp put_op;
  natcd__v1__request_op__init(&put_op);
  put_op.request_case = NATCD__V1__REQUEST_OP__REQUEST_REQUEST_PUT;
  put_op.request_put = &put;
  Natcd__V1__RangeRequest range;
  natcd__v1__range_request__init(&range);
  range.key = Data("k", 1);
  Natcd__V1__RequestOp range_op;
  natcd__v1__request_op__init(&range_op);
  range_op.request_case = NATCD__V1__REQUEST_OP__REQUEST_REQUEST_RANGE;
  range_op.request_range = &range;
  Natcd__V1__Compare* compares[] = {&cmp};
  Natcd__V1__RequestOp* success[] = {&put_op};
  Natcd__V1__RequestOp* failure[] = {&range_op};
  Natcd__V1__TxnRequest txn;
  natcd__v1__txn_request__init(&txn);
  txn.n_compare = 1;
  txn.compare = compares;
  txn.n_success = 1;
  txn.success = success;
  txn.n_failure = 1;
  txn.failure = failure;
  EXPECT_EQ(Pack(&txn),
            B({
                0x0a, 0x08, 0x10, 0x03, 0x1a, 0x01, 'k', 0x3a, 0x01, 'v',  // 1 compare
                0x12, 0x08, 0x12, 0x06, 0x0a, 0x01, 'k', 0x12, 0x01, 'w',  // 2 success.request_put
                0x1a, 0x05, 0x0a, 0x03, 0x0a, 0x01, 'k',  // 3 failure.request_range
            }));
}

TEST(WireCompat, WatchResponseAndNatcdAdditions) {
  Natcd__V1__ResponseHeader header;
  natcd__v1__response_header__init(&header);
  header.cluster_id = UINT64_MAX;
  header.revision = 7;
  Natcd__V1__KeyValue kv;
  natcd__v1__key_value__init(&kv);
  kv.key = Data("k", 1);
  kv.mod_revision = 7;
  Natcd__V1__Event ev;
  natcd__v1__event__init(&ev);
  ev.type = NATCD__V1__EVENT__EVENT_TYPE__DELETE;
  ev.kv = &kv;
  Natcd__V1__Event* events[] = {&ev};
  Natcd__V1__WatchResponse wr;
  natcd__v1__watch_response__init(&wr);
  wr.header = &header;
  wr.watch_id = 3;
  wr.n_events = 1;
  wr.events = events;
  const std::string etcd_part = B({
      0x0a, 0x0d, 0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
      0xff, 0x01, 0x18, 0x07, 0x10, 0x03,                                // 2 watch_id
      0x5a, 0x09, 0x08, 0x01, 0x12, 0x05, 0x0a, 0x01, 'k',  0x18, 0x07,  // 11 events
  });
  // Without natcd's additions, byte for byte what etcd sends.
  EXPECT_EQ(Pack(&wr), etcd_part);
  // seq is field 100: tag (100 << 3 | 0) = 800 = varint a0 06. etcd's
  // decoders skip it as an unknown field.
  wr.seq = 5;
  EXPECT_EQ(Pack(&wr), etcd_part + B({0xa0, 0x06, 0x05}));

  Natcd__V1__WatchCreateRequest wc;
  natcd__v1__watch_create_request__init(&wc);
  wc.key = Data("k", 1);
  char inbox[] = "_INBOX.x";
  wc.deliver_subject = inbox;
  // deliver_subject is field 100, length-delimited: tag 802 = a2 06.
  EXPECT_EQ(Pack(&wc),
            B({0x0a, 0x01, 'k', 0xa2, 0x06, 0x08, '_', 'I', 'N', 'B', 'O', 'X', '.', 'x'}));
}

// Watch groups (natcd fields >= 101, clear of etcd's): the bytes clients of
// any language must produce and expect.
TEST(WireCompat, WatchGroupFields) {
  Natcd__V1__WatchCreateRequest wc;
  natcd__v1__watch_create_request__init(&wc);
  wc.group = true;
  // group is field 101, varint: tag 808 = a8 06.
  EXPECT_EQ(Pack(&wc), B({0xa8, 0x06, 0x01}));

  Natcd__V1__WatchResponse wr;
  natcd__v1__watch_response__init(&wr);
  char subject[] = "g.s";
  wr.group_subject = subject;  // 102, length-delimited: tag 818 = b2 06
  wr.group_id = 9;             // 103, varint: tag 824 = b8 06
  wr.group_seq = 300;          // 104, varint: tag 832 = c0 06; 300 = ac 02
  EXPECT_EQ(Pack(&wr),
            B({0xb2, 0x06, 0x03, 'g', '.', 's', 0xb8, 0x06, 0x09, 0xc0, 0x06, 0xac, 0x02}));

  Natcd__V1__WatchAckRequest ack;
  natcd__v1__watch_ack_request__init(&ack);
  ack.watch_id = 3;
  ack.seq = 4;
  ack.group_subscribed = true;  // 101: a8 06
  ack.group_id = 9;             // 103: b8 06
  EXPECT_EQ(Pack(&ack), B({0x08, 0x03, 0x10, 0x04, 0xa8, 0x06, 0x01, 0xb8, 0x06, 0x09}));
}

TEST(WireCompat, DefaultsEncodeToNothing) {
  for (const ProtobufCMessageDescriptor* d : testutil::AllMessageDescriptors()) {
    std::string storage(d->sizeof_message, '\0');
    auto* m = reinterpret_cast<ProtobufCMessage*>(storage.data());
    protobuf_c_message_init(d, m);
    EXPECT_EQ(protobuf_c_message_get_packed_size(m), 0u) << d->name;
  }
}

TEST(WireCompat, LeaseMessagesUseEtcdNumbers) {
  Natcd__V1__LeaseTimeToLiveResponse r;
  natcd__v1__lease_time_to_live_response__init(&r);
  r.id = 1;
  r.ttl = 2;
  r.grantedttl = 3;
  ProtobufCBinaryData keys[] = {Data("a", 1)};
  r.n_keys = 1;
  r.keys = keys;
  EXPECT_EQ(Pack(&r), B({0x10, 0x01, 0x18, 0x02, 0x20, 0x03, 0x2a, 0x01, 'a'}));

  Natcd__V1__Member m;
  natcd__v1__member__init(&m);
  m.id = 9;
  char name[] = "n1";
  m.name = name;
  char url[] = "u";
  char* urls[] = {url};
  m.n_clienturls = 1;
  m.clienturls = urls;
  m.islearner = 1;
  EXPECT_EQ(Pack(&m), B({0x08, 0x09, 0x12, 0x02, 'n', '1', 0x22, 0x01, 'u', 0x28, 0x01}));
}

}  // namespace
}  // namespace natcd::nats
