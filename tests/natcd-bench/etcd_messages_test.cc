// The requests the natcd and etcd targets send: decoded back with the
// protobuf-c code, they say what the workload means.
#include "plugin/natcd-bench/etcd_messages.h"

#include <gtest/gtest.h>

#include "adapters/nats/natcd.pb-c.h"

namespace natcd::bench {
namespace {

std::string Text(const ProtobufCBinaryData& b) {
  return std::string(reinterpret_cast<const char*>(b.data), b.len);
}

const uint8_t* U(const std::string& s) { return reinterpret_cast<const uint8_t*>(s.data()); }

TEST(EtcdMessagesTest, PutCarriesKeyValueAndLease) {
  const EtcdRequest r = BuildRequest(Op::kPutLeased, 7, 0x1234, 60);
  EXPECT_EQ(r.call, Call::kPut);
  auto* put = natcd__v1__put_request__unpack(nullptr, r.body.size(), U(r.body));
  ASSERT_NE(put, nullptr);
  EXPECT_EQ(Text(put->key), "/bench/l/000007");
  EXPECT_EQ(Text(put->value), ValueOf(7));
  EXPECT_EQ(put->lease, 0x1234);
  natcd__v1__put_request__free_unpacked(put, nullptr);
}

TEST(EtcdMessagesTest, GetsAndRanges) {
  const EtcdRequest get = BuildRequest(Op::kGetSerializable, 10'042, 0, 0);
  EXPECT_EQ(get.call, Call::kRange);
  auto* range = natcd__v1__range_request__unpack(nullptr, get.body.size(), U(get.body));
  ASSERT_NE(range, nullptr);
  EXPECT_EQ(Text(range->key), "/bench/k/000042");
  EXPECT_EQ(range->range_end.len, 0u);
  EXPECT_TRUE(range->serializable);
  natcd__v1__range_request__free_unpacked(range, nullptr);

  const EtcdRequest hundred = BuildRequest(Op::kRange100, 3, 0, 0);
  range = natcd__v1__range_request__unpack(nullptr, hundred.body.size(), U(hundred.body));
  ASSERT_NE(range, nullptr);
  EXPECT_EQ(Text(range->key), RangeOf(3).key);
  EXPECT_EQ(Text(range->range_end), RangeOf(3).range_end);
  EXPECT_FALSE(range->serializable);
  natcd__v1__range_request__free_unpacked(range, nullptr);
}

TEST(EtcdMessagesTest, WatchPutCarriesItsSendTime) {
  const EtcdRequest r = BuildRequest(Op::kWatchPut, 5, 0, 0);
  auto* put = natcd__v1__put_request__unpack(nullptr, r.body.size(), U(r.body));
  ASSERT_NE(put, nullptr);
  EXPECT_EQ(Text(put->key), "/bench/w/000005");
  EXPECT_TRUE(TimestampOf(put->value.data, put->value.len).has_value());
  natcd__v1__put_request__free_unpacked(put, nullptr);
}

TEST(EtcdMessagesTest, SwapComparesTheModRevisionAndReadsOnFailure) {
  const std::string body = SwapCounterBody(Counter{.revision = 17, .value = 4});
  auto* txn = natcd__v1__txn_request__unpack(nullptr, body.size(), U(body));
  ASSERT_NE(txn, nullptr);
  ASSERT_EQ(txn->n_compare, 1u);
  EXPECT_EQ(txn->compare[0]->target, NATCD__V1__COMPARE__COMPARE_TARGET__MOD);
  EXPECT_EQ(txn->compare[0]->result, NATCD__V1__COMPARE__COMPARE_RESULT__EQUAL);
  EXPECT_EQ(txn->compare[0]->mod_revision, 17);
  ASSERT_EQ(txn->n_success, 1u);
  EXPECT_EQ(Text(txn->success[0]->request_put->value), "5");
  ASSERT_EQ(txn->n_failure, 1u);
  EXPECT_EQ(txn->failure[0]->request_case, NATCD__V1__REQUEST_OP__REQUEST_REQUEST_RANGE);
  natcd__v1__txn_request__free_unpacked(txn, nullptr);
}

TEST(EtcdMessagesTest, ParseSwapReadsBothOutcomes) {
  // Success: the new revision from the header.
  Natcd__V1__ResponseHeader header = NATCD__V1__RESPONSE_HEADER__INIT;
  header.revision = 30;
  Natcd__V1__TxnResponse ok = NATCD__V1__TXN_RESPONSE__INIT;
  ok.header = &header;
  ok.succeeded = true;
  std::string bytes(natcd__v1__txn_response__get_packed_size(&ok), '\0');
  natcd__v1__txn_response__pack(&ok, reinterpret_cast<uint8_t*>(bytes.data()));
  bool swapped = false;
  Counter now;
  ASSERT_TRUE(ParseSwap(bytes.data(), bytes.size(), Counter{29, 8}, &swapped, &now));
  EXPECT_TRUE(swapped);
  EXPECT_EQ(now.revision, 30);
  EXPECT_EQ(now.value, 9);

  // Failure: the counter as the failure branch read it.
  std::string value = "12";
  Natcd__V1__KeyValue kv = NATCD__V1__KEY_VALUE__INIT;
  kv.mod_revision = 41;
  kv.value = {value.size(), reinterpret_cast<uint8_t*>(value.data())};
  Natcd__V1__KeyValue* kvs[] = {&kv};
  Natcd__V1__RangeResponse range = NATCD__V1__RANGE_RESPONSE__INIT;
  range.n_kvs = 1;
  range.kvs = kvs;
  Natcd__V1__ResponseOp op = NATCD__V1__RESPONSE_OP__INIT;
  op.response_case = NATCD__V1__RESPONSE_OP__RESPONSE_RESPONSE_RANGE;
  op.response_range = &range;
  Natcd__V1__ResponseOp* ops[] = {&op};
  Natcd__V1__TxnResponse lost = NATCD__V1__TXN_RESPONSE__INIT;
  lost.header = &header;
  lost.n_responses = 1;
  lost.responses = ops;
  bytes.assign(natcd__v1__txn_response__get_packed_size(&lost), '\0');
  natcd__v1__txn_response__pack(&lost, reinterpret_cast<uint8_t*>(bytes.data()));
  ASSERT_TRUE(ParseSwap(bytes.data(), bytes.size(), Counter{29, 8}, &swapped, &now));
  EXPECT_FALSE(swapped);
  EXPECT_EQ(now.revision, 41);
  EXPECT_EQ(now.value, 12);
}

TEST(EtcdMessagesTest, CountIsACountOnlyPrefixRange) {
  const std::string body = CountBody("l");
  auto* range = natcd__v1__range_request__unpack(nullptr, body.size(), U(body));
  ASSERT_NE(range, nullptr);
  EXPECT_EQ(Text(range->key), "/bench/l/");
  EXPECT_EQ(Text(range->range_end), "/bench/l0");
  EXPECT_TRUE(range->count_only);
  natcd__v1__range_request__free_unpacked(range, nullptr);
}

}  // namespace
}  // namespace natcd::bench
