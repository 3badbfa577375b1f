// Every request-reply subject in JSON: a request with
// `Content-Type: application/json` gets a JSON reply with that header, in
// the proto3 JSON mapping (bytes as base64, 64-bit integers as strings,
// lowerCamelCase names), written here by hand as a JSON client would.
#include "natcd/natcd_fixture.h"
#include "natcd/natcd_helpers.h"

namespace natcd::testing {
namespace {

using WireJsonTest = NatcdTest;

// "key":"<base64>" for a JSON body.
std::string K(const std::string& name, const std::string& bytes) {
  return "\"" + name + "\":\"" + B64(bytes) + "\"";
}

JsonReply Ok(WireClient* client, const std::string& suffix, const std::string& body) {
  JsonReply r = CallJson(client, suffix, body);
  EXPECT_TRUE(r.reply.ok()) << suffix << " " << body << ": " << r.reply.code << " "
                            << r.reply.error;
  return r;
}

// The header every reply carries, with 64-bit numbers as strings.
void ExpectHeader(const Json& reply, int64_t revision) {
  const Json& h = reply["header"];
  ASSERT_TRUE(h.is_object()) << "no header";
  if (revision == 0) {
    EXPECT_FALSE(h.has("revision")) << "a default value is omitted";
  } else {
    ASSERT_TRUE(h["revision"].is_string()) << "revision must be a JSON string";
    EXPECT_EQ(h["revision"].text, std::to_string(revision));
  }
  EXPECT_TRUE(h["clusterId"].is_string());
  EXPECT_TRUE(h["memberId"].is_string());
  EXPECT_TRUE(h["raftTerm"].is_string());
}

TEST_F(WireJsonTest, KvCalls) {
  // put
  auto put = Ok(client_.get(), "kv.put", "{" + K("key", "/j/a") + "," + K("value", "v1") + "}");
  ExpectHeader(put.json, 2);
  Ok(client_.get(), "kv.put",
     "{" + K("key", "/j/b") + "," + K("value", std::string("\x01\xff\x00z", 4)) + "}");
  auto prev = Ok(client_.get(), "kv.put",
                 "{" + K("key", "/j/a") + "," + K("value", "v2") + ",\"prevKv\":true}");
  ExpectHeader(prev.json, 4);
  EXPECT_EQ(prev.json["prevKv"]["value"].text, B64("v1"));
  EXPECT_EQ(prev.json["prevKv"]["version"].text, "1");
  EXPECT_TRUE(prev.json["prevKv"]["createRevision"].is_string());
  // ignore_value
  Ok(client_.get(), "kv.put", "{" + K("key", "/j/a") + ",\"ignoreValue\":true}");

  // range: everything under /j/
  auto all =
      Ok(client_.get(), "kv.range", "{" + K("key", "/j/") + "," + K("rangeEnd", "/j0") + "}");
  ExpectHeader(all.json, 5);
  ASSERT_EQ(all.json["kvs"].size(), 2u);
  EXPECT_EQ(all.json["kvs"][0]["key"].text, B64("/j/a"));
  EXPECT_EQ(all.json["kvs"][0]["value"].text, B64("v2"));
  EXPECT_EQ(all.json["kvs"][0]["version"].text, "3");
  EXPECT_EQ(all.json["kvs"][1]["value"].text, B64(std::string("\x01\xff\x00z", 4)));
  EXPECT_EQ(all.json["count"].text, "2");
  EXPECT_TRUE(all.json["count"].is_string());

  // limit, sort (enum by name and by number), keys_only, count_only, revision
  auto limited = Ok(client_.get(), "kv.range",
                    "{" + K("key", "/j/") + "," + K("rangeEnd", "/j0") +
                        ",\"limit\":\"1\",\"sortOrder\":\"DESCEND\",\"sortTarget\":\"KEY\"}");
  ASSERT_EQ(limited.json["kvs"].size(), 1u);
  EXPECT_EQ(limited.json["kvs"][0]["key"].text, B64("/j/b"));
  EXPECT_TRUE(limited.json["more"].boolean);
  auto limited_num = Ok(client_.get(), "kv.range",
                        "{" + K("key", "/j/") + "," + K("rangeEnd", "/j0") +
                            ",\"limit\":1,\"sort_order\":2}");  // numbers, proto names
  EXPECT_EQ(limited_num.json["kvs"][0]["key"].text, B64("/j/b"));
  auto keys_only = Ok(client_.get(), "kv.range",
                      "{" + K("key", "/j/") + "," + K("rangeEnd", "/j0") + ",\"keysOnly\":true}");
  ASSERT_EQ(keys_only.json["kvs"].size(), 2u);
  EXPECT_FALSE(keys_only.json["kvs"][0].has("value"));
  auto count_only = Ok(client_.get(), "kv.range",
                       "{" + K("key", "/j/") + "," + K("rangeEnd", "/j0") + ",\"countOnly\":true}");
  EXPECT_FALSE(count_only.json.has("kvs"));
  EXPECT_EQ(count_only.json["count"].text, "2");
  auto old = Ok(client_.get(), "kv.range", "{" + K("key", "/j/a") + ",\"revision\":\"2\"}");
  ASSERT_EQ(old.json["kvs"].size(), 1u);
  EXPECT_EQ(old.json["kvs"][0]["value"].text, B64("v1"));

  // delete with prev_kv
  auto del = Ok(client_.get(), "kv.delete",
                "{" + K("key", "/j/") + "," + K("rangeEnd", "/j0") + ",\"prevKv\":true}");
  ExpectHeader(del.json, 6);
  EXPECT_EQ(del.json["deleted"].text, "2");
  ASSERT_EQ(del.json["prevKvs"].size(), 2u);
  EXPECT_EQ(del.json["prevKvs"][1]["key"].text, B64("/j/b"));
}

TEST_F(WireJsonTest, TxnNestedAndCompact) {
  client_->Put("/jt/c", "3");  // rev 2
  std::string nested = "{\"compare\":[{\"result\":\"EQUAL\",\"target\":\"VERSION\"," +
                       K("key", "/jt/c") + ",\"version\":\"1\"}],\"success\":[{\"requestPut\":{" +
                       K("key", "/jt/e") + "," + K("value", "E") + "}}]}";
  std::string txn = "{\"compare\":[{\"result\":\"EQUAL\",\"target\":\"VALUE\"," +
                    K("key", "/jt/c") + "," + K("value", "3") +
                    "}],\"success\":[{\"requestPut\":{" + K("key", "/jt/d") + "," +
                    K("value", "D") + ",\"prevKv\":true}},{\"requestRange\":{" + K("key", "/jt/c") +
                    "}},{\"requestTxn\":" + nested + "}],\"failure\":[{\"requestDeleteRange\":{" +
                    K("key", "/jt/c") + "}}]}";
  auto r = Ok(client_.get(), "kv.txn", txn);
  ExpectHeader(r.json, 3);
  EXPECT_TRUE(r.json["succeeded"].boolean);
  ASSERT_EQ(r.json["responses"].size(), 3u);
  EXPECT_TRUE(r.json["responses"][0].has("responsePut"));
  EXPECT_EQ(r.json["responses"][1]["responseRange"]["kvs"][0]["value"].text, B64("3"));
  EXPECT_TRUE(r.json["responses"][2]["responseTxn"]["succeeded"].boolean);
  EXPECT_EQ(client_->Range("/jt/e")->n_kvs, 1u);

  // Failure branch.
  std::string fails = "{\"compare\":[{\"result\":\"GREATER\",\"target\":\"MOD\"," +
                      K("key", "/jt/c") + ",\"modRevision\":\"100\"}],\"failure\":[" +
                      "{\"requestDeleteRange\":{" + K("key", "/jt/c") + ",\"prevKv\":true}}]}";
  auto f = Ok(client_.get(), "kv.txn", fails);
  ExpectHeader(f.json, 4);
  EXPECT_FALSE(f.json["succeeded"].boolean);
  EXPECT_EQ(f.json["responses"][0]["responseDeleteRange"]["deleted"].text, "1");

  auto compact = Ok(client_.get(), "kv.compact", "{\"revision\":\"4\",\"physical\":true}");
  ExpectHeader(compact.json, 4);
  JsonReply gone =
      CallJson(client_.get(), "kv.range", "{" + K("key", "/jt/c") + ",\"revision\":\"2\"}");
  EXPECT_EQ(gone.reply.code, 410);
  EXPECT_TRUE(gone.reply.body.empty());
}

TEST_F(WireJsonTest, LeaseCalls) {
  auto grant = Ok(client_.get(), "lease.grant", "{\"TTL\":\"30\",\"ID\":\"4660\"}");
  ExpectHeader(grant.json, 1);
  EXPECT_EQ(grant.json["ID"].text, "4660");
  EXPECT_EQ(grant.json["TTL"].text, "30");
  auto chosen = Ok(client_.get(), "lease.grant", "{\"TTL\":20}");
  ASSERT_TRUE(chosen.json["ID"].is_string());
  EXPECT_NE(chosen.json["ID"].text, "0");
  client_->Put("/jl/a", "1", 4660);

  auto keep = Ok(client_.get(), "lease.keepalive", "{\"ID\":\"4660\"}");
  EXPECT_EQ(keep.json["ID"].text, "4660");
  EXPECT_EQ(keep.json["TTL"].text, "30");
  auto ttl = Ok(client_.get(), "lease.timetolive", "{\"ID\":\"4660\",\"keys\":true}");
  EXPECT_EQ(ttl.json["grantedTTL"].text, "30");
  ASSERT_TRUE(ttl.json["TTL"].is_string());
  EXPECT_GE(std::stoll(ttl.json["TTL"].text), 28);
  ASSERT_EQ(ttl.json["keys"].size(), 1u);
  EXPECT_EQ(ttl.json["keys"][0].text, B64("/jl/a"));
  auto missing = Ok(client_.get(), "lease.timetolive", "{\"ID\":\"1\"}");
  EXPECT_EQ(missing.json["TTL"].text, "-1");
  auto leases = Ok(client_.get(), "lease.leases", "{}");
  ASSERT_EQ(leases.json["leases"].size(), 2u);
  bool found = false;
  for (const Json& l : leases.json["leases"].items) found |= l["ID"].text == "4660";
  EXPECT_TRUE(found);
  auto revoke = Ok(client_.get(), "lease.revoke", "{\"ID\":\"4660\"}");
  ExpectHeader(revoke.json, 3);
  EXPECT_EQ(client_->Range("/jl/a")->n_kvs, 0u);

  // The hex keepalive subject answers JSON when asked in JSON.
  std::string chosen_hex = LeaseHex(std::stoll(chosen.json["ID"].text));
  JsonReply hex = CallJson(client_.get(), "lease.keepalive." + chosen_hex, "anything at all");
  ASSERT_TRUE(hex.reply.ok()) << hex.reply.error;
  EXPECT_EQ(hex.json["TTL"].text, "20");
  EXPECT_EQ(hex.json["ID"].text, chosen.json["ID"].text);
}

TEST_F(WireJsonTest, WatchCalls) {
  client_->Put("/jw", "0");
  Sub inbox(client_->nc());
  auto created = Ok(
      client_.get(), "watch.create",
      "{" + K("key", "/jw") + ",\"prevKv\":true,\"deliverSubject\":\"" + inbox.subject() + "\"}");
  ExpectHeader(created.json, 2);
  EXPECT_TRUE(created.json["created"].boolean);
  ASSERT_TRUE(created.json["watchId"].is_string());
  std::string id = created.json["watchId"].text;

  client_->Put("/jw", "1");
  auto m = inbox.Next();
  ASSERT_TRUE(m);
  // A watch created in JSON is delivered in JSON.
  EXPECT_EQ(m->Header("Content-Type"), "application/json");
  auto msg = Json::Parse(m->data);
  ASSERT_TRUE(msg) << m->data;
  EXPECT_EQ((*msg)["watchId"].text, id);
  EXPECT_EQ((*msg)["seq"].text, "1");
  ASSERT_EQ((*msg)["events"].size(), 1u);
  const Json& ev = (*msg)["events"][0];
  EXPECT_FALSE(ev.has("type")) << "PUT is the default enum value and is omitted";
  EXPECT_EQ(ev["kv"]["value"].text, B64("1"));
  EXPECT_EQ(ev["kv"]["modRevision"].text, "3");
  EXPECT_EQ(ev["prevKv"]["value"].text, B64("0"));
  // Ack in JSON too.
  natsMsg* ack = nullptr;
  std::string ack_subject = client_->Subject("watch.ack");
  std::string ack_body = "{\"watchId\":\"" + id + "\",\"seq\":\"1\"}";
  natsMsg_Create(&ack, ack_subject.c_str(), nullptr, ack_body.data(),
                 static_cast<int>(ack_body.size()));
  natsMsgHeader_Set(ack, "Content-Type", "application/json");
  natsConnection_PublishMsg(client_->nc(), ack);
  natsMsg_Destroy(ack);

  client_->Delete("/jw");
  auto d = inbox.Next();
  ASSERT_TRUE(d);
  auto dmsg = Json::Parse(d->data);
  ASSERT_TRUE(dmsg);
  EXPECT_EQ((*dmsg)["seq"].text, "2");
  EXPECT_EQ((*dmsg)["events"][0]["type"].text, "DELETE");

  auto progress = Ok(client_.get(), "watch.progress", "{\"watchId\":\"" + id + "\"}");
  EXPECT_EQ(progress.json["watchId"].text, id);
  auto p = inbox.Next();
  ASSERT_TRUE(p);
  auto pmsg = Json::Parse(p->data);
  ASSERT_TRUE(pmsg);
  EXPECT_EQ((*pmsg)["seq"].text, "3");
  EXPECT_FALSE(pmsg->has("events"));
  EXPECT_EQ((*pmsg)["header"]["revision"].text, "4");

  auto cancel = Ok(client_.get(), "watch.cancel", "{\"watchId\":\"" + id + "\"}");
  EXPECT_TRUE(cancel.json["canceled"].boolean);
  EXPECT_EQ(cancel.json["watchId"].text, id);
  JsonReply again = CallJson(client_.get(), "watch.cancel", "{\"watchId\":\"" + id + "\"}");
  EXPECT_EQ(again.reply.code, 400);
  EXPECT_NE(again.reply.error.find("ErrWatchNotFound"), std::string::npos);
}

TEST_F(WireJsonTest, HashKVHashAndDefragment) {
  auto put = Ok(client_.get(), "kv.put", "{" + K("key", "/j/hk") + "," + K("value", "1") + "}");
  const std::string rev = put.json["header"]["revision"].text;
  auto hash = Ok(client_.get(), "maint.hashkv", "{\"revision\":\"" + rev + "\"}");
  ExpectHeader(hash.json, std::stoll(rev));
  EXPECT_TRUE(hash.json["hash"].is_number());
  EXPECT_EQ(hash.json["hashRevision"].text, rev);
  auto current = Ok(client_.get(), "maint.hashkv", "{}");
  EXPECT_EQ(current.json["hash"].text, hash.json["hash"].text);
  JsonReply future = CallJson(client_.get(), "maint.hashkv", "{\"revision\":\"100000\"}");
  EXPECT_EQ(future.reply.code, 400);
  EXPECT_NE(future.reply.error.find("ErrFutureRev"), std::string::npos) << future.reply.error;
  auto whole = Ok(client_.get(), "maint.hash", "{}");
  EXPECT_TRUE(whole.json["hash"].is_number());
  auto defrag = Ok(client_.get(), "maint.defrag", "{}");
  ExpectHeader(defrag.json, std::stoll(rev));
}

TEST_F(WireJsonTest, StatusAndMembers) {
  auto status = Ok(client_.get(), "maint.status", "{}");
  ExpectHeader(status.json, 1);
  EXPECT_TRUE(status.json["version"].is_string());
  EXPECT_TRUE(status.json["dbSize"].is_string());
  EXPECT_EQ(status.json["leader"].text, status.json["header"]["memberId"].text);
  auto empty_body = Ok(client_.get(), "maint.status", "");  // an empty body is {}
  EXPECT_TRUE(empty_body.json["version"].is_string());

  auto members = Ok(client_.get(), "cluster.member.list", "{}");
  ASSERT_EQ(members.json["members"].size(), 1u);
  EXPECT_EQ(members.json["members"][0]["name"].text, "natcd-1");
  EXPECT_EQ(members.json["members"][0]["ID"].text, status.json["header"]["memberId"].text);

  // Refused before anything is proposed: no name, no such member, not a
  // learner.
  EXPECT_EQ(CallJson(client_.get(), "cluster.member.add", "{}").reply.code, 400);
  EXPECT_EQ(CallJson(client_.get(), "cluster.member.remove", "{\"ID\": \"5\"}").reply.code, 400);
  JsonReply promote = CallJson(client_.get(), "cluster.member.promote",
                               "{\"ID\": \"" + status.json["header"]["memberId"].text + "\"}");
  EXPECT_EQ(promote.reply.code, 400);
  EXPECT_NE(promote.reply.error.find("ErrMemberNotLearner"), std::string::npos)
      << promote.reply.error;
}

}  // namespace
}  // namespace natcd::testing
