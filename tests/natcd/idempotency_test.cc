// Natcd-Request-Id: a write sent twice with the same id is applied once and
// both attempts get the same response (or the same error), also after a
// natcd restart. The response header is the answering member's: after a
// restart its raft_term is the term now.
#include "natcd/natcd_fixture.h"
#include "natcd/natcd_helpers.h"

namespace natcd::testing {
namespace {

using IdempotencyTest = NatcdTest;

// A response's bytes with its header's raft_term cleared.
template <typename T>
std::string WithoutTerm(const ProtobufCMessageDescriptor* descriptor, const std::string& body) {
  auto* m = reinterpret_cast<T*>(protobuf_c_message_unpack(
      descriptor, nullptr, body.size(), reinterpret_cast<const uint8_t*>(body.data())));
  if (m == nullptr) return "does not decode";
  if (m->header != nullptr) m->header->raft_term = 0;
  std::string out(protobuf_c_message_get_packed_size(&m->base), '\0');
  protobuf_c_message_pack(&m->base, reinterpret_cast<uint8_t*>(out.data()));
  protobuf_c_message_free_unpacked(&m->base, nullptr);
  return out;
}

WireReply Send(WireClient* client, const std::string& suffix, const ProtobufCMessage* m,
               const std::string& id) {
  return client->Call(suffix, m, id);
}

TEST_F(IdempotencyTest, PutTxnGrantAppliedOnce) {
  Natcd__V1__PutRequest put;
  natcd__v1__put_request__init(&put);
  put.key = Bytes("/idem/a");
  put.value = Bytes("1");
  put.prev_kv = true;
  WireReply first = Send(client_.get(), "kv.put", &put.base, "put-1");
  ASSERT_TRUE(first.ok()) << first.error;
  WireReply second = Send(client_.get(), "kv.put", &put.base, "put-1");
  ASSERT_TRUE(second.ok()) << second.error;
  EXPECT_EQ(first.body, second.body) << "a retry must get the original response bytes";
  EXPECT_EQ(Revision(client_.get()), 2) << "the retry was applied again";
  // A different id is a different write.
  ASSERT_TRUE(Send(client_.get(), "kv.put", &put.base, "put-2").ok());
  EXPECT_EQ(Revision(client_.get()), 3);
  // The retry in JSON gets the same response as JSON.
  JsonReply as_json = CallJson(
      client_.get(), "kv.put",
      "{\"key\":\"" + B64("/idem/a") + "\",\"value\":\"" + B64("1") + "\",\"prevKv\":true}",
      {{"Natcd-Request-Id", "put-1"}});
  ASSERT_TRUE(as_json.reply.ok());
  EXPECT_EQ(as_json.json["header"]["revision"].text, "2");
  EXPECT_FALSE(as_json.json.has("prevKv")) << "the first put had no previous value";
  EXPECT_EQ(Revision(client_.get()), 3);

  // A txn.
  Natcd__V1__PutRequest txn_put;
  natcd__v1__put_request__init(&txn_put);
  txn_put.key = Bytes("/idem/counter");
  txn_put.value = Bytes("x");
  Natcd__V1__RequestOp op;
  natcd__v1__request_op__init(&op);
  op.request_case = NATCD__V1__REQUEST_OP__REQUEST_REQUEST_PUT;
  op.request_put = &txn_put;
  Natcd__V1__RequestOp* ops[] = {&op};
  Natcd__V1__TxnRequest txn;
  natcd__v1__txn_request__init(&txn);
  txn.n_success = 1;
  txn.success = ops;
  WireReply t1 = Send(client_.get(), "kv.txn", &txn.base, "txn-1");
  WireReply t2 = Send(client_.get(), "kv.txn", &txn.base, "txn-1");
  ASSERT_TRUE(t1.ok() && t2.ok());
  EXPECT_EQ(t1.body, t2.body);
  auto counter = client_->Range("/idem/counter");
  ASSERT_EQ(counter->n_kvs, 1u);
  EXPECT_EQ(counter->kvs[0]->version, 1) << "the txn was applied twice";
  EXPECT_EQ(Revision(client_.get()), 4);

  // A lease grant with a server-chosen ID: one lease, the same ID twice.
  Natcd__V1__LeaseGrantRequest grant;
  natcd__v1__lease_grant_request__init(&grant);
  grant.ttl = 30;
  WireReply g1 = Send(client_.get(), "lease.grant", &grant.base, "grant-1");
  WireReply g2 = Send(client_.get(), "lease.grant", &grant.base, "grant-1");
  ASSERT_TRUE(g1.ok() && g2.ok());
  EXPECT_EQ(g1.body, g2.body);
  Natcd__V1__LeaseLeasesRequest list;
  natcd__v1__lease_leases_request__init(&list);
  auto leases = CallOk<Natcd__V1__LeaseLeasesResponse>(
      client_.get(), "lease.leases", &list.base, &natcd__v1__lease_leases_response__descriptor);
  ASSERT_TRUE(leases);
  EXPECT_EQ(leases->n_leases, 1u) << "the retried grant made a second lease";
}

TEST_F(IdempotencyTest, FailedRequestRepeatsItsError) {
  WireReply first = PutReply(client_.get(), "/idem/l", "v", 0x51, false, false, "fail-1");
  EXPECT_EQ(first.code, 404) << first.error;
  // The lease exists now, but the retry is the same request: same outcome.
  Natcd__V1__LeaseGrantRequest grant;
  natcd__v1__lease_grant_request__init(&grant);
  grant.ttl = 30;
  grant.id = 0x51;
  ASSERT_TRUE(client_->Call("lease.grant", &grant.base).ok());
  WireReply second = PutReply(client_.get(), "/idem/l", "v", 0x51, false, false, "fail-1");
  EXPECT_EQ(second.code, first.code);
  EXPECT_EQ(second.error, first.error);
  EXPECT_TRUE(second.body.empty());
  EXPECT_EQ(Revision(client_.get()), 1);
  // A fresh id applies.
  EXPECT_TRUE(PutReply(client_.get(), "/idem/l", "v", 0x51, false, false, "fail-2").ok());
  EXPECT_EQ(Revision(client_.get()), 2);

  // A request refused before it reached the engine (it does not decode) is
  // not remembered: a corrected retry with the same id is applied.
  WireReply bad =
      client_->Raw(client_->Subject("kv.put"), "\xff\xff\xff", {{"Natcd-Request-Id", "fail-3"}});
  EXPECT_EQ(bad.code, 400);
  EXPECT_TRUE(PutReply(client_.get(), "/idem/m", "v", 0, false, false, "fail-3").ok());
  EXPECT_EQ(Revision(client_.get()), 3);
}

TEST_F(IdempotencyTest, RetryAfterRestartGetsTheOriginalResponse) {
  WireReply put = PutReply(client_.get(), "/idem/r", "before", 0, false, false, "restart-put");
  ASSERT_TRUE(put.ok());
  Natcd__V1__LeaseGrantRequest grant;
  natcd__v1__lease_grant_request__init(&grant);
  grant.ttl = 60;
  WireReply g = client_->Call("lease.grant", &grant.base, "restart-grant");
  ASSERT_TRUE(g.ok());
  WireReply fail = PutReply(client_.get(), "/idem/r", "x", 0x99, false, false, "restart-fail");
  ASSERT_EQ(fail.code, 404);

  ASSERT_EQ(natcd_->Stop(), 0);
  ASSERT_TRUE(natcd_->Start());

  WireReply put_again =
      PutReply(client_.get(), "/idem/r", "before", 0, false, false, "restart-put");
  ASSERT_TRUE(put_again.ok()) << put_again.error;
  EXPECT_EQ(
      WithoutTerm<Natcd__V1__PutResponse>(&natcd__v1__put_response__descriptor, put_again.body),
      WithoutTerm<Natcd__V1__PutResponse>(&natcd__v1__put_response__descriptor, put.body));
  WireReply g_again = client_->Call("lease.grant", &grant.base, "restart-grant");
  ASSERT_TRUE(g_again.ok());
  EXPECT_EQ(WithoutTerm<Natcd__V1__LeaseGrantResponse>(&natcd__v1__lease_grant_response__descriptor,
                                                       g_again.body),
            WithoutTerm<Natcd__V1__LeaseGrantResponse>(&natcd__v1__lease_grant_response__descriptor,
                                                       g.body));
  WireReply fail_again =
      PutReply(client_.get(), "/idem/r", "x", 0x99, false, false, "restart-fail");
  EXPECT_EQ(fail_again.code, 404);
  EXPECT_EQ(fail_again.error, fail.error);
  EXPECT_EQ(Revision(client_.get()), 2);
  Natcd__V1__LeaseLeasesRequest list;
  natcd__v1__lease_leases_request__init(&list);
  auto leases = CallOk<Natcd__V1__LeaseLeasesResponse>(
      client_.get(), "lease.leases", &list.base, &natcd__v1__lease_leases_response__descriptor);
  ASSERT_TRUE(leases);
  EXPECT_EQ(leases->n_leases, 1u);
}

}  // namespace
}  // namespace natcd::testing
