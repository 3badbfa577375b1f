// Every error code of the wire contract: an empty body, the
// Nats-Service-Error-Code and Nats-Service-Error headers, no change to the
// store, and the next request is served.
#include "natcd/natcd_fixture.h"
#include "natcd/natcd_helpers.h"

namespace natcd::testing {
namespace {

class ErrorsTest : public NatcdTest {
 protected:
  void SetUp() override {
    NatcdTest::SetUp();
    ASSERT_EQ(client_->Put("/e/a", "1"), 2);
    ASSERT_EQ(client_->Put("/e/b", "2"), 3);
  }

  // The reply is the error `code` with `name` in its text; afterwards the
  // store is at the same revision and a read is served.
  void ExpectRejected(const WireReply& reply, int code, const std::string& name,
                      const std::string& what) {
    SCOPED_TRACE(what);
    EXPECT_EQ(reply.code, code) << reply.error;
    EXPECT_NE(reply.error.find(name), std::string::npos)
        << "error text '" << reply.error << "' lacks " << name;
    EXPECT_TRUE(reply.body.empty()) << "an error reply has an empty body";
    auto range = client_->Range("/e/", "/e0");
    ASSERT_TRUE(range);
    EXPECT_EQ(range->header->revision, 3) << "a rejected request changed the store";
    EXPECT_EQ(range->n_kvs, 2u);
  }

  WireReply Proto(const std::string& suffix, const std::string& body) {
    return client_->Raw(client_->Subject(suffix), body);
  }
  WireReply Json(const std::string& suffix, const std::string& body) {
    return client_->Raw(client_->Subject(suffix), body, kJsonHeaders);
  }
};

std::string Packed(const ProtobufCMessage* m) {
  std::string out(protobuf_c_message_get_packed_size(m), '\0');
  protobuf_c_message_pack(m, reinterpret_cast<uint8_t*>(out.data()));
  return out;
}

TEST_F(ErrorsTest, GarbageAndTruncatedProtobuf) {
  for (const char* suffix : {"kv.put", "kv.range", "kv.delete", "kv.txn", "kv.compact",
                             "lease.grant", "lease.revoke", "lease.keepalive", "lease.timetolive",
                             "watch.create", "watch.cancel", "watch.progress", "maint.status"}) {
    ExpectRejected(Proto(suffix, std::string("\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 11)),
                   400, "ErrInvalidArgument", std::string("garbage to ") + suffix);
  }
  Natcd__V1__PutRequest put;
  natcd__v1__put_request__init(&put);
  put.key = Bytes("/e/a");
  put.value = Bytes("a value long enough to cut");
  std::string whole = Packed(&put.base);
  ExpectRejected(Proto("kv.put", whole.substr(0, whole.size() - 5)), 400, "ErrInvalidArgument",
                 "truncated put");
  // A nested txn far deeper than allowed: refused before unpacking.
  Natcd__V1__TxnRequest inner;
  natcd__v1__txn_request__init(&inner);
  std::string level = Packed(&inner.base);
  auto varint = [](size_t n) {
    std::string out;
    while (n >= 0x80) {
      out += static_cast<char>((n & 0x7f) | 0x80);
      n >>= 7;
    }
    out += static_cast<char>(n);
    return out;
  };
  for (int i = 0; i < 200; ++i) {
    std::string op = "\x22" + varint(level.size()) + level;  // RequestOp.request_txn = 4
    level = "\x12" + varint(op.size()) + op;                 // TxnRequest.success = 2
  }
  ExpectRejected(Proto("kv.txn", level), 400, "ErrInvalidArgument", "txn nested 200 deep");
  // The server is still serving.
  EXPECT_EQ(client_->Put("/e/c", "3"), 4);
}

TEST_F(ErrorsTest, MalformedJsonAndWrongTypes) {
  ExpectRejected(Json("kv.put", "{\"key\":"), 400, "ErrInvalidArgument", "malformed JSON");
  ExpectRejected(Json("kv.put", "not json at all"), 400, "ErrInvalidArgument", "not JSON");
  ExpectRejected(Json("kv.put", "{\"key\":5}"), 400, "ErrInvalidArgument", "number for bytes");
  ExpectRejected(Json("kv.put", "{\"key\":\"L2UvYQ==\",\"lease\":true}"), 400, "ErrInvalidArgument",
                 "bool for int64");
  ExpectRejected(Json("kv.range", "{\"key\":\"L2UvYQ==\",\"limit\":\"ten\"}"), 400,
                 "ErrInvalidArgument", "text for int64");
  ExpectRejected(Json("kv.range", "{\"key\":\"L2UvYQ==\",\"sortOrder\":\"SIDEWAYS\"}"), 400,
                 "ErrInvalidArgument", "unknown enum name");
  ExpectRejected(Json("kv.put", "{\"key\":\"not base64!!\"}"), 400, "ErrInvalidArgument",
                 "invalid base64");
  ExpectRejected(Json("kv.txn", "{\"success\":{}}"), 400, "ErrInvalidArgument",
                 "object for a repeated field");
  ExpectRejected(Json("lease.grant", "[1,2]"), 400, "ErrInvalidArgument", "array for a message");
  ExpectRejected(Json("kv.put", "{\"key\":\"L2UvYQ==\"} trailing"), 400, "ErrInvalidArgument",
                 "trailing garbage");
  // The JSON error is named in the text, and the next JSON request works.
  JsonReply ok = CallJson(client_.get(), "kv.range", "{\"key\":\"L2UvYQ==\"}");
  ASSERT_TRUE(ok.reply.ok());
  EXPECT_EQ(ok.json["count"].text, "1");
}

TEST_F(ErrorsTest, InvalidArguments) {
  // Empty key: put, range, delete.
  Natcd__V1__PutRequest put;
  natcd__v1__put_request__init(&put);
  put.value = Bytes("v");
  ExpectRejected(client_->Call("kv.put", &put.base), 400, "ErrEmptyKey", "put empty key");
  ExpectRejected(Json("kv.put", "{\"value\":\"dg==\"}"), 400, "ErrEmptyKey",
                 "put empty key (JSON)");
  Natcd__V1__RangeRequest range;
  natcd__v1__range_request__init(&range);
  ExpectRejected(client_->Call("kv.range", &range.base), 400, "ErrEmptyKey", "range empty key");
  Natcd__V1__DeleteRangeRequest del;
  natcd__v1__delete_range_request__init(&del);
  ExpectRejected(client_->Call("kv.delete", &del.base), 400, "ErrEmptyKey", "delete empty key");

  // Future revision.
  range.key = Bytes("/e/a");
  range.revision = 100;
  ExpectRejected(client_->Call("kv.range", &range.base), 400, "ErrFutureRev", "future revision");
  Natcd__V1__CompactionRequest compact;
  natcd__v1__compaction_request__init(&compact);
  compact.revision = 100;
  ExpectRejected(client_->Call("kv.compact", &compact.base), 400, "ErrFutureRev",
                 "compact future revision");

  // Bad enum value in protobuf.
  range.revision = 0;
  range.sort_order = static_cast<Natcd__V1__RangeRequest__SortOrder>(7);
  ExpectRejected(client_->Call("kv.range", &range.base), 400, "ErrInvalidSortOption",
                 "sort order 7");

  // Duplicate key in a txn.
  Natcd__V1__PutRequest p1, p2;
  natcd__v1__put_request__init(&p1);
  natcd__v1__put_request__init(&p2);
  p1.key = Bytes("/e/dup");
  p2.key = Bytes("/e/dup");
  Natcd__V1__RequestOp o1, o2;
  natcd__v1__request_op__init(&o1);
  natcd__v1__request_op__init(&o2);
  o1.request_case = o2.request_case = NATCD__V1__REQUEST_OP__REQUEST_REQUEST_PUT;
  o1.request_put = &p1;
  o2.request_put = &p2;
  Natcd__V1__RequestOp* dup_ops[] = {&o1, &o2};
  Natcd__V1__TxnRequest txn;
  natcd__v1__txn_request__init(&txn);
  txn.n_success = 2;
  txn.success = dup_ops;
  ExpectRejected(client_->Call("kv.txn", &txn.base), 400, "ErrDuplicateKey", "duplicate key");

  // Too many operations (--max-txn-ops is 128 by default).
  std::vector<std::string> keys(129);
  std::vector<Natcd__V1__PutRequest> puts(129);
  std::vector<Natcd__V1__RequestOp> ops(129);
  std::vector<Natcd__V1__RequestOp*> op_ptrs(129);
  for (size_t i = 0; i < 129; ++i) {
    keys[i] = "/e/many/" + std::to_string(i);
    natcd__v1__put_request__init(&puts[i]);
    puts[i].key = Bytes(keys[i]);
    natcd__v1__request_op__init(&ops[i]);
    ops[i].request_case = NATCD__V1__REQUEST_OP__REQUEST_REQUEST_PUT;
    ops[i].request_put = &puts[i];
    op_ptrs[i] = &ops[i];
  }
  txn.n_success = 129;
  txn.success = op_ptrs.data();
  ExpectRejected(client_->Call("kv.txn", &txn.base), 400, "ErrTooManyOps", "129 ops");
  txn.n_success = 128;
  EXPECT_TRUE(client_->Call("kv.txn", &txn.base).ok()) << "128 ops are allowed";
  EXPECT_EQ(Revision(client_.get()), 4);
  client_->Delete("/e/many/", "/e/many0");  // back to two keys under /e/
  auto now = client_->Range("/e/", "/e0");
  ASSERT_EQ(now->n_kvs, 2u);
}

TEST_F(ErrorsTest, WatchAndKeepAliveArguments) {
  Natcd__V1__WatchCreateRequest create;
  natcd__v1__watch_create_request__init(&create);
  create.key = Bytes("/e/a");
  ExpectRejected(client_->Call("watch.create", &create.base), 400, "ErrInvalidArgument",
                 "watch without deliver_subject");
  create.deliver_subject = const_cast<char*>("inbox.*");
  ExpectRejected(client_->Call("watch.create", &create.base), 400, "ErrInvalidArgument",
                 "wildcard deliver_subject");
  create.deliver_subject = const_cast<char*>("inbox..x");
  ExpectRejected(client_->Call("watch.create", &create.base), 400, "ErrInvalidArgument",
                 "empty token in deliver_subject");
  Natcd__V1__WatchCancelRequest cancel;
  natcd__v1__watch_cancel_request__init(&cancel);
  cancel.watch_id = 12345;
  ExpectRejected(client_->Call("watch.cancel", &cancel.base), 400, "ErrWatchNotFound",
                 "cancel unknown watch");
  ExpectRejected(client_->Raw(client_->Subject("lease.keepalive.nothex"), ""), 400,
                 "ErrInvalidArgument", "keepalive on a non-hex subject");
}

TEST_F(ErrorsTest, LeaseNotFoundAndExists) {
  ExpectRejected(PutReply(client_.get(), "/e/x", "v", 0x777), 404, "ErrLeaseNotFound",
                 "put with unknown lease");
  Natcd__V1__LeaseRevokeRequest revoke;
  natcd__v1__lease_revoke_request__init(&revoke);
  revoke.id = 0x777;
  ExpectRejected(client_->Call("lease.revoke", &revoke.base), 404, "ErrLeaseNotFound",
                 "revoke unknown lease");
  ExpectRejected(Json("lease.revoke", "{\"ID\":\"1911\"}"), 404, "ErrLeaseNotFound",
                 "revoke unknown lease (JSON)");

  Natcd__V1__LeaseGrantRequest grant;
  natcd__v1__lease_grant_request__init(&grant);
  grant.ttl = 30;
  grant.id = 0x888;
  ASSERT_TRUE(client_->Call("lease.grant", &grant.base).ok());
  ExpectRejected(client_->Call("lease.grant", &grant.base), 409, "ErrLeaseExist",
                 "grant an existing ID");
  grant.id = -5;
  ExpectRejected(client_->Call("lease.grant", &grant.base), 400, "ErrInvalidArgument",
                 "negative lease ID");
  grant.id = 0;
  grant.ttl = int64_t{1} << 40;
  ExpectRejected(client_->Call("lease.grant", &grant.base), 400, "ErrLeaseTTLTooLarge",
                 "TTL too large");
  // The lease that exists still works.
  EXPECT_GT(client_->Put("/e/y", "v", 0x888), 0);
}

TEST_F(ErrorsTest, CompactedRevision) {
  client_->Put("/e/a", "3");  // rev 4
  client_->Put("/e/a", "4");  // rev 5
  Natcd__V1__CompactionRequest compact;
  natcd__v1__compaction_request__init(&compact);
  compact.revision = 5;
  ASSERT_TRUE(client_->Call("kv.compact", &compact.base).ok());
  Natcd__V1__RangeRequest range;
  natcd__v1__range_request__init(&range);
  range.key = Bytes("/e/a");
  range.revision = 3;
  WireReply gone = client_->Call("kv.range", &range.base);
  EXPECT_EQ(gone.code, 410);
  EXPECT_NE(gone.error.find("ErrCompacted"), std::string::npos) << gone.error;
  EXPECT_NE(gone.error.find("compact revision is 5"), std::string::npos) << gone.error;
  EXPECT_EQ(gone.compact_revision, 5);  // machine-readable too
  EXPECT_TRUE(gone.body.empty());
  JsonReply gone_json =
      CallJson(client_.get(), "kv.range", "{\"key\":\"L2UvYQ==\",\"revision\":1}");
  EXPECT_EQ(gone_json.reply.code, 410);
  EXPECT_NE(gone_json.reply.error.find("ErrCompacted"), std::string::npos);
  // Nothing changed; the current state is served.
  auto now = client_->Range("/e/a");
  ASSERT_EQ(now->n_kvs, 1u);
  EXPECT_EQ(Str(now->kvs[0]->value), "4");
  EXPECT_EQ(now->header->revision, 5);
}

// A dedicated natcd with a small --max-request-bytes.
class TooLargeTest : public NatcdTest {
 protected:
  std::vector<std::string> ExtraArgs() override {
    return {"--lease-ttl-min", "1", "--log-level", "warn", "--max-request-bytes", "1024"};
  }
};

TEST_F(TooLargeTest, BodyOverLimitIs413) {
  ASSERT_EQ(client_->Put("/big", "small"), 2);
  std::string value(2000, 'v');
  WireReply big = PutReply(client_.get(), "/big", value);
  EXPECT_EQ(big.code, 413);
  EXPECT_NE(big.error.find("ErrRequestTooLarge"), std::string::npos) << big.error;
  EXPECT_TRUE(big.body.empty());
  WireReply big_json =
      client_->Raw(client_->Subject("kv.put"),
                   "{\"key\":\"L2JpZw==\",\"value\":\"" + B64(value) + "\"}", kJsonHeaders);
  EXPECT_EQ(big_json.code, 413);
  WireReply big_range = client_->Raw(client_->Subject("kv.range"), std::string(1500, 'x'));
  EXPECT_EQ(big_range.code, 413) << "the limit applies before decoding";
  // Nothing changed; a request under the limit is served.
  auto now = client_->Range("/big");
  ASSERT_EQ(now->n_kvs, 1u);
  EXPECT_EQ(Str(now->kvs[0]->value), "small");
  EXPECT_EQ(client_->Put("/big", std::string(900, 'w')), 3);
}

}  // namespace
}  // namespace natcd::testing
