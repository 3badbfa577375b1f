// The proto3 JSON codec (adapters/nats/codec/json_codec.h) on natcd.proto.

#include "adapters/nats/codec/json_codec.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <string>

#include "adapters/nats/natcd.pb-c.h"
#include "proto_testutil.h"

namespace natcd::nats {
namespace {

using testutil::AllMessageDescriptors;
using testutil::Pack;
using testutil::RandomMessageGenerator;

// Parses `json` as `descriptor`, asserting success.
UniqueMessage MustParse(const ProtobufCMessageDescriptor* descriptor, const std::string& json) {
  std::string error;
  UniqueMessage m = JsonToMessage(descriptor, json, &error);
  EXPECT_NE(m, nullptr) << json << " -> " << error;
  return m;
}

// The error for `json` as `descriptor`, asserting failure.
std::string MustFail(const ProtobufCMessageDescriptor* descriptor, const std::string& json) {
  std::string error;
  UniqueMessage m = JsonToMessage(descriptor, json, &error);
  EXPECT_EQ(m, nullptr) << json << " unexpectedly parsed as " << MessageToJson(m.get());
  EXPECT_FALSE(error.empty());
  return error;
}

std::string Bytes(const ProtobufCBinaryData& bd) {
  return std::string(reinterpret_cast<const char*>(bd.data), bd.len);
}

ProtobufCBinaryData MallocBytes(std::string_view s) {
  ProtobufCBinaryData bd{0, nullptr};
  if (!s.empty()) {
    bd.data = static_cast<uint8_t*>(std::malloc(s.size()));
    std::memcpy(bd.data, s.data(), s.size());
    bd.len = s.size();
  }
  return bd;
}

TEST(JsonName, MatchesProtoc) {
  EXPECT_EQ(JsonName("create_revision"), "createRevision");
  EXPECT_EQ(JsonName("TTL"), "TTL");
  EXPECT_EQ(JsonName("grantedTTL"), "grantedTTL");
  EXPECT_EQ(JsonName("peerURLs"), "peerURLs");
  EXPECT_EQ(JsonName("request_delete_range"), "requestDeleteRange");
  EXPECT_EQ(JsonName("remaining_TTL"), "remainingTTL");
  EXPECT_EQ(JsonName("a__b_"), "aB");
}

TEST(JsonCodec, KeyValueExactOutput) {
  Natcd__V1__KeyValue kv;
  natcd__v1__key_value__init(&kv);
  kv.key = {3, (uint8_t*)"foo"};
  kv.create_revision = 1;
  kv.mod_revision = 150;
  kv.version = 2;
  kv.value = {3, (uint8_t*)"bar"};
  kv.lease = 0x694d7a1a2b3c4d5e;
  EXPECT_EQ(MessageToJson(&kv.base),
            R"({"key":"Zm9v","createRevision":"1","modRevision":"150","version":"2",)"
            R"("value":"YmFy","lease":"7587855200002264414"})");
}

TEST(JsonCodec, DefaultsAreOmitted) {
  Natcd__V1__PutRequest put;
  natcd__v1__put_request__init(&put);
  EXPECT_EQ(MessageToJson(&put.base), "{}");
  Natcd__V1__WatchResponse wr;
  natcd__v1__watch_response__init(&wr);
  EXPECT_EQ(MessageToJson(&wr.base), "{}");
  Natcd__V1__RangeRequest rr;
  natcd__v1__range_request__init(&rr);
  rr.sort_order = NATCD__V1__RANGE_REQUEST__SORT_ORDER__NONE;  // enum default 0
  EXPECT_EQ(MessageToJson(&rr.base), "{}");

  // Every default value spelled out parses to the default message, which
  // packs to nothing.
  UniqueMessage m = MustParse(&natcd__v1__range_request__descriptor,
                              R"({"key":"","rangeEnd":"","limit":"0","revision":0,)"
                              R"("sortOrder":"NONE","sortTarget":0,"serializable":false})");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(Pack(m.get()), "");
  EXPECT_EQ(MessageToJson(m.get()), "{}");
}

TEST(JsonCodec, PresentEmptySubMessageIsKept) {
  UniqueMessage m = MustParse(&natcd__v1__put_response__descriptor, R"({"header":{}})");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(MessageToJson(m.get()), R"({"header":{}})");
  EXPECT_EQ(Pack(m.get()), std::string("\x0a\x00", 2));
}

TEST(JsonCodec, AcceptsJsonAndOriginalFieldNames) {
  UniqueMessage a =
      MustParse(&natcd__v1__key_value__descriptor, R"({"createRevision":"5","mod_revision":6})");
  ASSERT_NE(a, nullptr);
  auto* kv = reinterpret_cast<Natcd__V1__KeyValue*>(a.get());
  EXPECT_EQ(kv->create_revision, 5);
  EXPECT_EQ(kv->mod_revision, 6);

  UniqueMessage b = MustParse(&natcd__v1__lease_time_to_live_response__descriptor,
                              R"({"ID":"7","TTL":"9","grantedTTL":"10"})");
  ASSERT_NE(b, nullptr);
  auto* ttl = reinterpret_cast<Natcd__V1__LeaseTimeToLiveResponse*>(b.get());
  EXPECT_EQ(ttl->id, 7);
  EXPECT_EQ(ttl->ttl, 9);
  EXPECT_EQ(ttl->grantedttl, 10);
  EXPECT_EQ(MessageToJson(b.get()), R"({"ID":"7","TTL":"9","grantedTTL":"10"})");

  // The same field under both names is a duplicate.
  EXPECT_NE(
      MustFail(&natcd__v1__key_value__descriptor, R"({"createRevision":"5","create_revision":"5"})")
          .find("more than once"),
      std::string::npos);
}

TEST(JsonCodec, NestedTxnRoundTrip) {
  const std::string json =
      R"({"compare":[{"result":"GREATER","target":"MOD","key":"L2E=","modRevision":"7"},)"
      R"({"target":"VALUE","key":"L2I=","value":"","rangeEnd":"AA=="}],)"
      R"("success":[{"requestPut":{"key":"L2E=","value":"eA==","lease":"-1","prevKv":true}},)"
      R"({"requestTxn":{"compare":[{"key":"L2M=","version":"0"}],)"
      R"("success":[{"requestRange":{"key":"L2M=","limit":"10","sortOrder":"DESCEND",)"
      R"("sortTarget":"CREATE"}}],"failure":[{"requestDeleteRange":{"key":"L2M=","prevKv":true}}]}}],)"
      R"("failure":[{"requestRange":{"key":"L2E=","countOnly":true}}]})";
  UniqueMessage m = MustParse(&natcd__v1__txn_request__descriptor, json);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(MessageToJson(m.get()), json);

  auto* txn = reinterpret_cast<Natcd__V1__TxnRequest*>(m.get());
  ASSERT_EQ(txn->n_compare, 2u);
  EXPECT_EQ(txn->compare[0]->result, NATCD__V1__COMPARE__COMPARE_RESULT__GREATER);
  EXPECT_EQ(txn->compare[0]->target_union_case, NATCD__V1__COMPARE__TARGET_UNION_MOD_REVISION);
  EXPECT_EQ(txn->compare[0]->mod_revision, 7);
  // A oneof member set to its default is still set.
  EXPECT_EQ(txn->compare[1]->target_union_case, NATCD__V1__COMPARE__TARGET_UNION_VALUE);
  EXPECT_EQ(txn->compare[1]->value.len, 0u);
  EXPECT_EQ(Bytes(txn->compare[1]->range_end), std::string("\0", 1));
  ASSERT_EQ(txn->n_success, 2u);
  ASSERT_EQ(txn->success[0]->request_case, NATCD__V1__REQUEST_OP__REQUEST_REQUEST_PUT);
  EXPECT_EQ(txn->success[0]->request_put->lease, -1);
  ASSERT_EQ(txn->success[1]->request_case, NATCD__V1__REQUEST_OP__REQUEST_REQUEST_TXN);
  Natcd__V1__TxnRequest* inner = txn->success[1]->request_txn;
  ASSERT_EQ(inner->n_compare, 1u);
  EXPECT_EQ(inner->compare[0]->target_union_case, NATCD__V1__COMPARE__TARGET_UNION_VERSION);
  EXPECT_EQ(inner->success[0]->request_range->sort_order,
            NATCD__V1__RANGE_REQUEST__SORT_ORDER__DESCEND);

  // Binary round trip keeps every byte.
  const std::string bytes = Pack(m.get());
  ProtobufCMessage* unpacked =
      protobuf_c_message_unpack(&natcd__v1__txn_request__descriptor, nullptr, bytes.size(),
                                reinterpret_cast<const uint8_t*>(bytes.data()));
  ASSERT_NE(unpacked, nullptr);
  EXPECT_EQ(MessageToJson(unpacked), json);
  protobuf_c_message_free_unpacked(unpacked, nullptr);
}

TEST(JsonCodec, TxnResponseRoundTrip) {
  const std::string json =
      R"({"header":{"clusterId":"18446744073709551615","memberId":"1","revision":"9",)"
      R"("raftTerm":"2"},"succeeded":true,"responses":[{"responsePut":{"header":{},)"
      R"("prevKv":{"key":"YQ==","modRevision":"3"}}},{"responseRange":{"kvs":[{"key":"Yg=="}],)"
      R"("more":true,"count":"12"}},{"responseTxn":{"responses":[{"responseDeleteRange":)"
      R"({"deleted":"1","prevKvs":[{"key":"Yw==","version":"4"}]}}]}}]})";
  UniqueMessage m = MustParse(&natcd__v1__txn_response__descriptor, json);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(MessageToJson(m.get()), json);
}

TEST(JsonCodec, AllByteValues) {
  std::string all;
  for (int i = 0; i < 256; ++i) all.push_back(static_cast<char>(i));
  Natcd__V1__PutRequest put;
  natcd__v1__put_request__init(&put);
  put.key = {all.size(), reinterpret_cast<uint8_t*>(all.data())};
  put.value = {1, reinterpret_cast<uint8_t*>(all.data() + 255)};
  const std::string json = MessageToJson(&put.base);
  EXPECT_EQ(
      json,
      R"({"key":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEyMzQ1Njc4)"
      R"(OTo7PD0+P0BBQkNERUZHSElKS0xNTk9QUVJTVFVWV1hZWltcXV5fYGFiY2RlZmdoaWprbG1ub3BxcnN0)"
      R"(dXZ3eHl6e3x9fn+AgYKDhIWGh4iJiouMjY6PkJGSk5SVlpeYmZqbnJ2en6ChoqOkpaanqKmqq6ytrq+w)"
      R"(sbKztLW2t7i5uru8vb6/wMHCw8TFxsfIycrLzM3Oz9DR0tPU1dbX2Nna29zd3t/g4eLj5OXm5+jp6uvs)"
      R"(7e7v8PHy8/T19vf4+fr7/P3+/w==","value":"/w=="})");
  UniqueMessage m = MustParse(&natcd__v1__put_request__descriptor, json);
  ASSERT_NE(m, nullptr);
  auto* back = reinterpret_cast<Natcd__V1__PutRequest*>(m.get());
  EXPECT_EQ(Bytes(back->key), all);
  EXPECT_EQ(Bytes(back->value), "\xff");

  // URL-safe alphabet and missing padding are accepted.
  std::string url = json;
  for (char& c : url) {
    if (c == '+') c = '-';
    if (c == '/') c = '_';
  }
  url.erase(std::remove(url.begin(), url.end(), '='), url.end());
  UniqueMessage m2 = MustParse(&natcd__v1__put_request__descriptor, url);
  ASSERT_NE(m2, nullptr);
  EXPECT_EQ(Pack(m2.get()), Pack(m.get()));

  // Every length 0..5 round-trips with and without padding.
  for (size_t n = 0; n <= 5; ++n) {
    Natcd__V1__PutRequest p;
    natcd__v1__put_request__init(&p);
    p.key = {n, reinterpret_cast<uint8_t*>(all.data() + 250)};
    const std::string j = MessageToJson(&p.base);
    UniqueMessage q = MustParse(&natcd__v1__put_request__descriptor, j);
    ASSERT_NE(q, nullptr);
    EXPECT_EQ(Pack(q.get()), Pack(&p.base)) << j;
  }
}

TEST(JsonCodec, BadBase64) {
  for (const char* bad : {"\"A\"", "\"AAAAA\"", "\"AA=A\"", "\"AAA==\"", "\"A===\"", "\"AA AA\"",
                          "\"AA\\nAA\"", "\"*AAA\"", "\"====\"", "1", "[]"}) {
    const std::string error =
        MustFail(&natcd__v1__put_request__descriptor, std::string(R"({"key":)") + bad + "}");
    EXPECT_EQ(error.rfind("key: ", 0), 0u) << error;
  }
}

TEST(JsonCodec, Int64Extremes) {
  Natcd__V1__KeyValue kv;
  natcd__v1__key_value__init(&kv);
  kv.create_revision = INT64_MIN;
  kv.mod_revision = INT64_MAX;
  kv.version = -1;
  const std::string json = MessageToJson(&kv.base);
  EXPECT_EQ(json, R"({"createRevision":"-9223372036854775808","modRevision":"9223372036854775807",)"
                  R"("version":"-1"})");
  UniqueMessage m = MustParse(&natcd__v1__key_value__descriptor, json);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(Pack(m.get()), Pack(&kv.base));

  // Numbers are accepted too, exactly (no detour through double).
  m = MustParse(&natcd__v1__key_value__descriptor,
                R"({"createRevision":-9223372036854775808,"modRevision":9223372036854775807})");
  ASSERT_NE(m, nullptr);
  auto* back = reinterpret_cast<Natcd__V1__KeyValue*>(m.get());
  EXPECT_EQ(back->create_revision, INT64_MIN);
  EXPECT_EQ(back->mod_revision, INT64_MAX);

  // uint64 extremes.
  m = MustParse(&natcd__v1__response_header__descriptor,
                R"({"clusterId":"18446744073709551615","memberId":18446744073709551615})");
  ASSERT_NE(m, nullptr);
  auto* h = reinterpret_cast<Natcd__V1__ResponseHeader*>(m.get());
  EXPECT_EQ(h->cluster_id, UINT64_MAX);
  EXPECT_EQ(h->member_id, UINT64_MAX);
  EXPECT_EQ(MessageToJson(m.get()),
            R"({"clusterId":"18446744073709551615","memberId":"18446744073709551615"})");

  // Integral values written with a fraction or exponent.
  m = MustParse(&natcd__v1__key_value__descriptor,
                R"({"version":"1e3","lease":5.0,"modRevision":-2E1})");
  ASSERT_NE(m, nullptr);
  back = reinterpret_cast<Natcd__V1__KeyValue*>(m.get());
  EXPECT_EQ(back->version, 1000);
  EXPECT_EQ(back->lease, 5);
  EXPECT_EQ(back->mod_revision, -20);
}

TEST(JsonCodec, IntegerErrors) {
  const auto* kv = &natcd__v1__key_value__descriptor;
  const auto* hdr = &natcd__v1__response_header__descriptor;
  EXPECT_NE(MustFail(kv, R"({"version":"9223372036854775808"})").find("out of range"),
            std::string::npos);
  EXPECT_NE(MustFail(kv, R"({"version":-9223372036854775809})").find("out of range"),
            std::string::npos);
  EXPECT_NE(MustFail(kv, R"({"version":1e19})").find("out of range"), std::string::npos);
  EXPECT_NE(MustFail(kv, R"({"version":1e999})").find("out of range"), std::string::npos);
  EXPECT_NE(MustFail(hdr, R"({"clusterId":"18446744073709551616"})").find("out of range"),
            std::string::npos);
  EXPECT_NE(MustFail(hdr, R"({"clusterId":"-1"})").find("negative"), std::string::npos);
  EXPECT_NE(MustFail(kv, R"({"version":1.5})").find("not an integer"), std::string::npos);
  EXPECT_NE(MustFail(kv, R"({"version":"1.5"})").find("not an integer"), std::string::npos);
  for (const char* bad :
       {R"({"version":"12a"})", R"({"version":" 1"})", R"({"version":"01"})", R"({"version":"+1"})",
        R"({"version":""})", R"({"version":true})", R"({"version":[1]})", R"({"version":{}})",
        R"({"version":"0x10"})", R"({"version":"NaN"})"}) {
    MustFail(kv, bad);
  }
  // 32-bit enum numbers are range-checked.
  MustFail(&natcd__v1__range_request__descriptor, R"({"sortOrder":2147483648})");
  // Float-ish values for bools and strings are wrong types.
  MustFail(&natcd__v1__range_request__descriptor, R"({"serializable":1})");
  MustFail(&natcd__v1__range_request__descriptor, R"({"serializable":"true"})");
  MustFail(&natcd__v1__watch_create_request__descriptor, R"({"deliverSubject":5})");
}

TEST(JsonCodec, Enums) {
  UniqueMessage by_name = MustParse(&natcd__v1__range_request__descriptor,
                                    R"({"sortOrder":"DESCEND","sortTarget":"VALUE"})");
  UniqueMessage by_number =
      MustParse(&natcd__v1__range_request__descriptor, R"({"sortOrder":2,"sortTarget":4})");
  ASSERT_NE(by_name, nullptr);
  ASSERT_NE(by_number, nullptr);
  EXPECT_EQ(Pack(by_name.get()), Pack(by_number.get()));
  EXPECT_EQ(MessageToJson(by_number.get()), R"({"sortOrder":"DESCEND","sortTarget":"VALUE"})");

  // Proto3 enums are open: an unnamed number is kept and written as a number.
  UniqueMessage open = MustParse(&natcd__v1__event__descriptor, R"({"type":7})");
  ASSERT_NE(open, nullptr);
  EXPECT_EQ(reinterpret_cast<Natcd__V1__Event*>(open.get())->type, 7);
  EXPECT_EQ(MessageToJson(open.get()), R"({"type":7})");

  // Repeated enums.
  UniqueMessage filters = MustParse(&natcd__v1__watch_create_request__descriptor,
                                    R"({"filters":["NODELETE",0,"NOPUT"]})");
  ASSERT_NE(filters, nullptr);
  auto* wc = reinterpret_cast<Natcd__V1__WatchCreateRequest*>(filters.get());
  ASSERT_EQ(wc->n_filters, 3u);
  EXPECT_EQ(wc->filters[0], NATCD__V1__WATCH_CREATE_REQUEST__FILTER_TYPE__NODELETE);
  EXPECT_EQ(wc->filters[1], NATCD__V1__WATCH_CREATE_REQUEST__FILTER_TYPE__NOPUT);
  EXPECT_EQ(MessageToJson(filters.get()), R"({"filters":["NODELETE","NOPUT","NOPUT"]})");

  const std::string error =
      MustFail(&natcd__v1__range_request__descriptor, R"({"sortOrder":"SIDEWAYS"})");
  EXPECT_NE(error.find("unknown value \"SIDEWAYS\""), std::string::npos) << error;
  EXPECT_EQ(error.rfind("sortOrder: ", 0), 0u) << error;
  MustFail(&natcd__v1__range_request__descriptor, R"({"sortOrder":"descend"})");
  MustFail(&natcd__v1__range_request__descriptor, R"({"sortOrder":"DESCEND\u0000"})");
  MustFail(&natcd__v1__range_request__descriptor, R"({"sortOrder":"2"})");
  MustFail(&natcd__v1__range_request__descriptor, R"({"sortOrder":true})");
  // A name of another enum of the same message is not a value of this one.
  MustFail(&natcd__v1__range_request__descriptor, R"({"sortOrder":"KEY"})");
}

TEST(JsonCodec, Oneof) {
  const auto* cmp = &natcd__v1__compare__descriptor;
  UniqueMessage m = MustParse(cmp, R"({"lease":"0"})");
  ASSERT_NE(m, nullptr);
  auto* c = reinterpret_cast<Natcd__V1__Compare*>(m.get());
  EXPECT_EQ(c->target_union_case, NATCD__V1__COMPARE__TARGET_UNION_LEASE);
  EXPECT_EQ(MessageToJson(m.get()), R"({"lease":"0"})");
  EXPECT_EQ(Pack(m.get()), std::string("\x40\x00", 2));  // field 8, varint 0

  // null leaves a member unset, so it does not conflict.
  m = MustParse(cmp, R"({"version":null,"createRevision":"3","value":null})");
  ASSERT_NE(m, nullptr);
  c = reinterpret_cast<Natcd__V1__Compare*>(m.get());
  EXPECT_EQ(c->target_union_case, NATCD__V1__COMPARE__TARGET_UNION_CREATE_REVISION);
  EXPECT_EQ(c->create_revision, 3);

  m = MustParse(cmp, R"({"value":null})");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(reinterpret_cast<Natcd__V1__Compare*>(m.get())->target_union_case,
            NATCD__V1__COMPARE__TARGET_UNION__NOT_SET);

  std::string error = MustFail(cmp, R"({"version":"1","value":"eA=="})");
  EXPECT_NE(error.find("oneof"), std::string::npos) << error;
  // Sub-message members (the second one allocated before the conflict is
  // found must not leak: ASan checks).
  error = MustFail(&natcd__v1__request_op__descriptor,
                   R"({"requestPut":{"key":"YQ=="},"requestRange":{"key":"YQ=="}})");
  EXPECT_NE(error.find("oneof"), std::string::npos) << error;
  // Two members of different oneofs in different messages are fine.
  m = MustParse(
      &natcd__v1__request_op__descriptor,
      R"({"requestTxn":{"success":[{"requestPut":{}}],"failure":[{"requestRange":{}}]}})");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(MessageToJson(m.get()),
            R"({"requestTxn":{"success":[{"requestPut":{}}],"failure":[{"requestRange":{}}]}})");
}

TEST(JsonCodec, NullMeansDefault) {
  UniqueMessage m = MustParse(&natcd__v1__range_response__descriptor,
                              R"({"header":null,"kvs":null,"more":null,"count":null})");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(MessageToJson(m.get()), "{}");
  // But not inside a list.
  const std::string error = MustFail(&natcd__v1__range_response__descriptor, R"({"kvs":[null]})");
  EXPECT_EQ(error.rfind("kvs[0]: ", 0), 0u) << error;
  // Nor for the message itself.
  MustFail(&natcd__v1__range_response__descriptor, "null");
}

TEST(JsonCodec, UnknownFieldsAreIgnored) {
  UniqueMessage m = MustParse(
      &natcd__v1__put_request__descriptor,
      R"({"future":{"a":[1,2,{"b":null}],"c":"\u00e9"},"key":"YQ==","Key":1,"KEY":"x","":0})");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(MessageToJson(m.get()), R"({"key":"YQ=="})");
  // Even unknown values must be valid JSON.
  MustFail(&natcd__v1__put_request__descriptor, R"({"future":[1,2,}})");
  MustFail(&natcd__v1__put_request__descriptor, R"({"future":"\x"})");
}

TEST(JsonCodec, Strings) {
  UniqueMessage m =
      MustParse(&natcd__v1__watch_create_request__descriptor,
                R"({"deliverSubject":"_INBOX.\u00e9\ud83d\ude00\"\\\/\b\f\n\r\t\u0001€"})");
  ASSERT_NE(m, nullptr);
  auto* wc = reinterpret_cast<Natcd__V1__WatchCreateRequest*>(m.get());
  EXPECT_STREQ(wc->deliver_subject,
               "_INBOX.\xc3\xa9\xf0\x9f\x98\x80\"\\/\b\f\n\r\t\x01\xe2\x82\xac");
  EXPECT_EQ(MessageToJson(m.get()),
            "{\"deliverSubject\":\"_INBOX.\xc3\xa9\xf0\x9f\x98\x80\\\"\\\\/\\b\\f\\n\\r\\t"
            "\\u0001\xe2\x82\xac\"}");

  // An empty string field keeps protobuf-c's shared default (not a fresh
  // allocation), and packs to nothing.
  m = MustParse(&natcd__v1__watch_create_request__descriptor, R"({"deliverSubject":""})");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(reinterpret_cast<Natcd__V1__WatchCreateRequest*>(m.get())->deliver_subject,
            protobuf_c_empty_string);
  EXPECT_EQ(Pack(m.get()), "");

  // Repeated strings, including "".
  m = MustParse(&natcd__v1__member_add_request__descriptor,
                R"({"peerURLs":["nats://a","",  "b"],"isLearner":true})");
  ASSERT_NE(m, nullptr);
  auto* add = reinterpret_cast<Natcd__V1__MemberAddRequest*>(m.get());
  ASSERT_EQ(add->n_peerurls, 3u);
  EXPECT_STREQ(add->peerurls[1], "");
  EXPECT_NE(add->peerurls[1], protobuf_c_empty_string);
  EXPECT_EQ(MessageToJson(m.get()), R"({"peerURLs":["nats://a","","b"],"isLearner":true})");

  const auto* wcd = &natcd__v1__watch_create_request__descriptor;
  EXPECT_NE(MustFail(wcd, R"({"deliverSubject":"a\u0000b"})").find("U+0000"), std::string::npos);
  MustFail(wcd, "{\"deliverSubject\":\"\xff\"}");              // invalid UTF-8
  MustFail(wcd, "{\"deliverSubject\":\"\xc0\xaf\"}");          // overlong
  MustFail(wcd, "{\"deliverSubject\":\"\xed\xa0\x80\"}");      // UTF-8 surrogate
  MustFail(wcd, "{\"deliverSubject\":\"\xf4\x90\x80\x80\"}");  // > U+10FFFF
  MustFail(wcd, "{\"deliverSubject\":\"\xe2\x82\"}");          // truncated
  MustFail(wcd, R"({"deliverSubject":"\ud83d"})");             // lone high surrogate
  MustFail(wcd, R"({"deliverSubject":"\ude00"})");             // lone low surrogate
  MustFail(wcd, R"({"deliverSubject":"\ud83d\u0041"})");       // bad pair
  MustFail(wcd, "{\"deliverSubject\":\"a\nb\"}");              // raw control character
  MustFail(wcd, R"({"deliverSubject":"\u12"})");
  MustFail(wcd, R"({"deliverSubject":"\uzzzz"})");
}

TEST(JsonCodec, InvalidUtf8InAStringIsReplacedOnOutput) {
  Natcd__V1__WatchResponse wr;
  natcd__v1__watch_response__init(&wr);
  char reason[] = "bad \xff\xfe end \xe2\x82";
  wr.cancel_reason = reason;
  const std::string json = MessageToJson(&wr.base);
  EXPECT_EQ(json,
            "{\"cancelReason\":\"bad \xef\xbf\xbd\xef\xbf\xbd end \xef\xbf\xbd\xef\xbf\xbd\"}");
  EXPECT_NE(MustParse(&natcd__v1__watch_response__descriptor, json), nullptr);
}

TEST(JsonCodec, MalformedJson) {
  const auto* d = &natcd__v1__put_request__descriptor;
  for (const char* bad : {"",
                          " ",
                          "{",
                          "}",
                          "{]",
                          "[]",
                          "\"x\"",
                          "1",
                          "true",
                          "{\"key\"}",
                          "{\"key\":}",
                          "{\"key\" \"YQ==\"}",
                          "{\"key\":\"YQ==\",}",
                          "{,}",
                          "{\"key\":\"YQ==\"}}",
                          "{\"key\":\"YQ==\"} x",
                          "{} {}",
                          "{\"a\":tru}",
                          "{\"a\":nul}",
                          "{\"a\":-}",
                          "{\"a\":01}",
                          "{\"a\":1.}",
                          "{\"a\":.5}",
                          "{\"a\":1e}",
                          "{\"a\":+1}",
                          "{\"a\":NaN}",
                          "{'a':1}",
                          "{\"a\":[1 2]}",
                          "{\"a\":\"unterminated}",
                          "\xef\xbb\xbf{}",
                          "{\"a\":\"\t\"}",
                          "{a:1}",
                          "{\"a\":Infinity}"}) {
    MustFail(d, bad);
  }
  // An embedded NUL after the value is trailing garbage.
  const std::string with_nul("{}\0", 3);
  EXPECT_NE(MustFail(d, with_nul).find("trailing"), std::string::npos);
  // Whitespace around the value is fine.
  EXPECT_NE(MustParse(d, " \t\r\n{ \"key\" : \"YQ==\" } \n"), nullptr);
}

TEST(JsonCodec, DepthLimit) {
  const auto* d = &natcd__v1__put_request__descriptor;
  // kJsonDepthMax levels including the top object: accepted.
  std::string ok =
      "{\"x\":" + std::string(kJsonDepthMax - 1, '[') + std::string(kJsonDepthMax - 1, ']') + "}";
  EXPECT_NE(MustParse(d, ok), nullptr);
  std::string too_deep =
      "{\"x\":" + std::string(kJsonDepthMax, '[') + std::string(kJsonDepthMax, ']') + "}";
  EXPECT_NE(MustFail(d, too_deep).find("nesting deeper"), std::string::npos);
  // Far deeper than any stack could take if unbounded.
  std::string huge = "{\"x\":" + std::string(1000000, '[');
  EXPECT_NE(MustFail(d, huge).find("nesting deeper"), std::string::npos);

  // Nested transactions: each level is object + array + object.
  std::string txn = "{}";
  for (int i = 0; i < 20; ++i) txn = R"({"success":[{"requestTxn":)" + txn + "}]}";
  EXPECT_NE(MustParse(&natcd__v1__txn_request__descriptor, txn), nullptr);
  for (int i = 0; i < 2; ++i) txn = R"({"success":[{"requestTxn":)" + txn + "}]}";
  MustFail(&natcd__v1__txn_request__descriptor, txn);
}

TEST(JsonCodec, ErrorPathNamesTheField) {
  const std::string error =
      MustFail(&natcd__v1__txn_request__descriptor,
               R"({"success":[{"requestPut":{"key":"YQ=="}},{"requestPut":{"lease":"x"}}]})");
  EXPECT_EQ(error.rfind("success[1].requestPut.lease: ", 0), 0u) << error;
  const std::string error2 =
      MustFail(&natcd__v1__txn_request__descriptor, R"({"compare":{"key":"YQ=="}})");
  EXPECT_EQ(error2.rfind("compare: expected an array", 0), 0u) << error2;
  const std::string error3 = MustFail(&natcd__v1__txn_request__descriptor, R"({"compare":[1]})");
  EXPECT_EQ(error3.rfind("compare[0]: expected an object", 0), 0u) << error3;
  const std::string error4 = MustFail(&natcd__v1__txn_request__descriptor, R"({"compare":[}])");
  EXPECT_EQ(error4.rfind("malformed JSON at offset 12", 0), 0u) << error4;
}

TEST(JsonCodec, WatchAdditions) {
  UniqueMessage m = MustParse(&natcd__v1__watch_response__descriptor,
                              R"({"watchId":"3","seq":"18446744073709551615","events":[)"
                              R"({"type":"DELETE","kv":{"key":"YQ==","modRevision":"9"}},)"
                              R"({"kv":{"key":"Yg=="},"prevKv":{"key":"Yg==","value":"eA=="}}]})");
  ASSERT_NE(m, nullptr);
  auto* wr = reinterpret_cast<Natcd__V1__WatchResponse*>(m.get());
  EXPECT_EQ(wr->seq, UINT64_MAX);
  ASSERT_EQ(wr->n_events, 2u);
  EXPECT_EQ(wr->events[0]->type, NATCD__V1__EVENT__EVENT_TYPE__DELETE);
  EXPECT_EQ(wr->events[1]->type, NATCD__V1__EVENT__EVENT_TYPE__PUT);
  EXPECT_EQ(MessageToJson(m.get()),
            R"({"watchId":"3","events":[{"type":"DELETE","kv":{"key":"YQ==","modRevision":"9"}},)"
            R"({"kv":{"key":"Yg=="},"prevKv":{"key":"Yg==","value":"eA=="}}],)"
            R"("seq":"18446744073709551615"})");

  m = MustParse(&natcd__v1__watch_ack_request__descriptor, R"({"watchId":3,"seq":42})");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(MessageToJson(m.get()), R"({"watchId":"3","seq":"42"})");
}

// Random messages of every type survive message -> JSON -> message with the
// same binary encoding, and JSON -> message -> JSON is stable.
TEST(JsonCodec, RandomRoundTripEveryMessageType) {
  RandomMessageGenerator gen(20240601);
  for (const ProtobufCMessageDescriptor* d : AllMessageDescriptors()) {
    for (int i = 0; i < 60; ++i) {
      UniqueMessage original(gen.New(d, 4));
      ASSERT_TRUE(protobuf_c_message_check(original.get())) << d->name;
      const std::string json = MessageToJson(original.get());
      std::string error;
      UniqueMessage decoded = JsonToMessage(d, json, &error);
      ASSERT_NE(decoded, nullptr) << d->name << ": " << json << " -> " << error;
      ASSERT_TRUE(protobuf_c_message_check(decoded.get()));
      EXPECT_EQ(Pack(decoded.get()), Pack(original.get())) << d->name << ": " << json;
      EXPECT_EQ(MessageToJson(decoded.get()), json);
    }
  }
}

// The JSON of binary-decoded random bytes: whatever protobuf-c accepts must
// produce JSON that parses back to the same bytes.
TEST(JsonCodec, MessagesFromBinaryRoundTrip) {
  RandomMessageGenerator gen(7);
  for (const ProtobufCMessageDescriptor* d : AllMessageDescriptors()) {
    UniqueMessage original(gen.New(d, 3));
    const std::string bytes = Pack(original.get());
    UniqueMessage unpacked(protobuf_c_message_unpack(
        d, nullptr, bytes.size(), reinterpret_cast<const uint8_t*>(bytes.data())));
    ASSERT_NE(unpacked, nullptr) << d->name;
    const std::string json = MessageToJson(unpacked.get());
    EXPECT_EQ(json, MessageToJson(original.get()));
    UniqueMessage decoded = MustParse(d, json);
    ASSERT_NE(decoded, nullptr);
    EXPECT_EQ(Pack(decoded.get()), bytes) << d->name;
  }
}

TEST(JsonCodec, RawPointerApi) {
  ProtobufCMessage* out = nullptr;
  std::string error;
  ASSERT_TRUE(
      JsonToMessage(&natcd__v1__lease_grant_request__descriptor, R"({"TTL":"10"})", &out, &error))
      << error;
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(reinterpret_cast<Natcd__V1__LeaseGrantRequest*>(out)->ttl, 10);
  protobuf_c_message_free_unpacked(out, nullptr);

  // On failure *out is untouched; error may be null.
  ProtobufCMessage* sentinel = reinterpret_cast<ProtobufCMessage*>(&error);
  out = sentinel;
  EXPECT_FALSE(JsonToMessage(&natcd__v1__lease_grant_request__descriptor, "{", &out, nullptr));
  EXPECT_EQ(out, sentinel);
}

TEST(JsonCodec, MallocHelperFreesCleanly) {
  // A message built by hand with the unpacker's layout, encoded and freed.
  auto* kv = static_cast<Natcd__V1__KeyValue*>(std::malloc(sizeof(Natcd__V1__KeyValue)));
  natcd__v1__key_value__init(kv);
  kv->key = MallocBytes("/k");
  EXPECT_EQ(MessageToJson(&kv->base), R"({"key":"L2s="})");
  protobuf_c_message_free_unpacked(&kv->base, nullptr);
}

}  // namespace
}  // namespace natcd::nats
