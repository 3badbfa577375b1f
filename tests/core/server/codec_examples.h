// Values for the tests of the member's persisted formats: named
// representative ones (their bytes are pinned in tests/core/server) and
// random ones (tests/adapters/server_codec_compat_test.cc checks them
// against protobuf-c), and a Dump of each value as text to compare them.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "natcd/engine.h"
#include "raft/types.h"
#include "server/log_command.h"

namespace natcd::server::testing {

// ---- Dump: every field, in a fixed order ----

inline std::string Q(const std::string& s) {
  static const char* hex = "0123456789abcdef";
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out + "\"";
}

inline std::string N(int64_t v) { return std::to_string(v); }

inline std::string Dump(const RangeRequest& r) {
  return "range{" + Q(r.key) + " " + Q(r.range_end) + " limit=" + N(r.limit) +
         " rev=" + N(r.revision) + " order=" + N(static_cast<int>(r.sort_order)) +
         " target=" + N(static_cast<int>(r.sort_target)) + " ser=" + N(r.serializable) +
         " keys=" + N(r.keys_only) + " count=" + N(r.count_only) + " mod=" + N(r.min_mod_revision) +
         ".." + N(r.max_mod_revision) + " create=" + N(r.min_create_revision) + ".." +
         N(r.max_create_revision) + "}";
}

inline std::string Dump(const PutRequest& r) {
  return "put{" + Q(r.key) + " " + Q(r.value) + " lease=" + N(r.lease) + " prev=" + N(r.prev_kv) +
         " iv=" + N(r.ignore_value) + " il=" + N(r.ignore_lease) + "}";
}

inline std::string Dump(const DeleteRangeRequest& r) {
  return "delete{" + Q(r.key) + " " + Q(r.range_end) + " prev=" + N(r.prev_kv) + "}";
}

inline std::string Dump(const Compare& c) {
  return "cmp{" + N(static_cast<int>(c.result)) + " " + N(static_cast<int>(c.target)) + " " +
         Q(c.key) + " " + Q(c.range_end) + " v=" + N(c.version) + " c=" + N(c.create_revision) +
         " m=" + N(c.mod_revision) + " val=" + Q(c.value) + " l=" + N(c.lease) + "}";
}

inline std::string Dump(const TxnRequest& r);

inline std::string Dump(const RequestOp& op) {
  switch (op.op.index()) {
    case 0:
      return Dump(std::get<0>(op.op));
    case 1:
      return Dump(std::get<1>(op.op));
    case 2:
      return Dump(std::get<2>(op.op));
    default:
      return std::get<3>(op.op) ? Dump(*std::get<3>(op.op)) : "txn(null)";
  }
}

inline std::string Dump(const TxnRequest& r) {
  std::string out = "txn{compare:";
  for (const Compare& c : r.compare) out += " " + Dump(c);
  out += " success:";
  for (const RequestOp& op : r.success) out += " " + Dump(op);
  out += " failure:";
  for (const RequestOp& op : r.failure) out += " " + Dump(op);
  return out + "}";
}

inline std::string Dump(const WriteRequest& request) {
  switch (request.index()) {
    case 0:
      return Dump(std::get<0>(request));
    case 1:
      return Dump(std::get<1>(request));
    case 2:
      return Dump(std::get<2>(request));
    case 3: {
      const auto& r = std::get<3>(request);
      return "compact{" + N(r.revision) + " " + N(r.physical) + "}";
    }
    case 4: {
      const auto& r = std::get<4>(request);
      return "grant{" + N(r.ttl) + " " + N(r.id) + "}";
    }
    case 5:
      return "revoke{" + N(std::get<5>(request).id) + "}";
    case 6: {
      std::string out = "expire{";
      for (int64_t id : std::get<6>(request).ids) out += " " + N(id);
      return out + "}";
    }
    default: {
      std::string out = "checkpoint{";
      for (const auto& c : std::get<7>(request).checkpoints) {
        out += " " + N(c.id) + ":" + N(c.remaining_ms);
      }
      return out + "}";
    }
  }
}

template <typename Command>  // server::LogCommand or nats::LogCommand
std::string DumpCommand(const Command& c) {
  std::string out =
      c.events_published ? "events_published=" + N(*c.events_published) : Dump(c.request);
  return out + " origin=" + std::to_string(c.origin_member) + "/" + std::to_string(c.origin_seq) +
         " id=" + Q(c.request_id) + " expires=" + N(c.request_expires_ms);
}

inline std::string Dump(const raft::Message& m) {
  std::string out = "msg{type=" + N(static_cast<int>(m.type)) + " to=" + std::to_string(m.to) +
                    " from=" + std::to_string(m.from) + " term=" + std::to_string(m.term) +
                    " log_term=" + std::to_string(m.log_term) +
                    " index=" + std::to_string(m.index) + " commit=" + std::to_string(m.commit) +
                    " reject=" + N(m.reject) + " hint=" + std::to_string(m.reject_hint) +
                    " ctx=" + Q(m.context) + " entries:";
  for (const raft::Entry& e : m.entries) {
    out += " {" + std::to_string(e.term) + "," + std::to_string(e.index) + "," +
           N(static_cast<int>(e.type)) + "," + Q(e.data) + "}";
  }
  out += " snap{" + std::to_string(m.snapshot.meta.index) + "," +
         std::to_string(m.snapshot.meta.term) + " voters:";
  for (uint64_t v : m.snapshot.meta.conf_state.voters) out += " " + std::to_string(v);
  out += " learners:";
  for (uint64_t v : m.snapshot.meta.conf_state.learners) out += " " + std::to_string(v);
  return out + " data=" + Q(m.snapshot.data) + "}}";
}

inline std::string Dump(const KeyValue& kv) {
  return "kv{" + Q(kv.key) + " " + N(kv.create_revision) + " " + N(kv.mod_revision) + " " +
         N(kv.version) + " " + Q(kv.value) + " " + N(kv.lease) + "}";
}

inline std::string Dump(const TxnResponse& r);

inline std::string Dump(const RangeResponse& r) {
  std::string out = "range_resp{rev=" + N(r.header.revision);
  for (const KeyValue& kv : r.kvs) out += " " + Dump(kv);
  return out + " more=" + N(r.more) + " count=" + N(r.count) + "}";
}
inline std::string Dump(const PutResponse& r) {
  return "put_resp{rev=" + N(r.header.revision) +
         (r.has_prev_kv ? " prev=" + Dump(r.prev_kv) : std::string()) + "}";
}
inline std::string Dump(const DeleteRangeResponse& r) {
  std::string out = "delete_resp{rev=" + N(r.header.revision) + " deleted=" + N(r.deleted);
  for (const KeyValue& kv : r.prev_kvs) out += " " + Dump(kv);
  return out + "}";
}
inline std::string Dump(const TxnResponse& r) {
  std::string out = "txn_resp{rev=" + N(r.header.revision) + " ok=" + N(r.succeeded);
  for (const ResponseOp& op : r.responses) {
    switch (op.response.index()) {
      case 0:
        out += " " + Dump(std::get<0>(op.response));
        break;
      case 1:
        out += " " + Dump(std::get<1>(op.response));
        break;
      case 2:
        out += " " + Dump(std::get<2>(op.response));
        break;
      default:
        out += " " + (std::get<3>(op.response) ? Dump(*std::get<3>(op.response)) : "null");
    }
  }
  return out + "}";
}

inline std::string Dump(const WriteResponse& r) {
  switch (r.index()) {
    case 0:
      return Dump(std::get<0>(r));
    case 1:
      return Dump(std::get<1>(r));
    case 2:
      return Dump(std::get<2>(r));
    case 3:
      return "compact_resp{rev=" + N(std::get<3>(r).header.revision) + "}";
    case 4:
      return "grant_resp{rev=" + N(std::get<4>(r).header.revision) + " id=" + N(std::get<4>(r).id) +
             " ttl=" + N(std::get<4>(r).ttl) + "}";
    case 5:
      return "revoke_resp{rev=" + N(std::get<5>(r).header.revision) + "}";
    case 6:
      return "expire_resp{rev=" + N(std::get<6>(r).header.revision) +
             " revoked=" + N(std::get<6>(r).revoked) + "}";
    default:
      return "checkpoint_resp{rev=" + N(std::get<7>(r).header.revision) + "}";
  }
}

inline std::string Dump(const Status& s) {
  return "status{" + N(static_cast<int>(s.code())) + " " + std::string(s.name()) + " " +
         Q(std::string(s.message())) + " compact=" + N(s.compact_revision()) + "}";
}

// ---- representative values ----

inline RangeRequest FullRange() {
  RangeRequest r;
  r.key = "a";
  r.range_end = "z";
  r.limit = 10;
  r.revision = 7;
  r.sort_order = SortOrder::kDescend;
  r.sort_target = SortTarget::kValue;
  r.serializable = true;
  r.keys_only = true;
  r.count_only = true;
  r.min_mod_revision = 1;
  r.max_mod_revision = 2;
  r.min_create_revision = 3;
  r.max_create_revision = -4;
  return r;
}

inline Compare MakeCompare(Compare::Result result, Compare::Target target, int64_t number,
                           std::string value) {
  Compare c;
  c.result = result;
  c.target = target;
  c.key = "k";
  switch (target) {
    case Compare::Target::kVersion:
      c.version = number;
      break;
    case Compare::Target::kCreate:
      c.create_revision = number;
      break;
    case Compare::Target::kMod:
      c.mod_revision = number;
      break;
    case Compare::Target::kValue:
      c.value = std::move(value);
      break;
    case Compare::Target::kLease:
      c.lease = number;
      break;
  }
  return c;
}

inline LogCommand Command(WriteRequest request, uint64_t origin = 0, uint64_t seq = 0,
                          std::string id = "", int64_t expires = 0) {
  LogCommand c;
  c.request = std::move(request);
  c.origin_member = origin;
  c.origin_seq = seq;
  c.request_id = std::move(id);
  c.request_expires_ms = expires;
  return c;
}

// Every kind of log command, every field set somewhere.
inline std::vector<std::pair<std::string, LogCommand>> ExampleLogCommands() {
  std::vector<std::pair<std::string, LogCommand>> out;
  out.emplace_back("put_minimal", Command(PutRequest{"k", "", 0, false, false, false}));
  out.emplace_back("put_every_field", Command(PutRequest{"key", "value", 42, true, true, true},
                                              0x1234567890abcdefULL, 77, "req-1", 1700000000123));
  out.emplace_back("put_negative_lease", Command(PutRequest{"k", "v", -1, false, false, false}));
  out.emplace_back("delete_range", Command(DeleteRangeRequest{"a", "b", true}, 3, 4, "del", 5));
  out.emplace_back("delete_all_from",
                   Command(DeleteRangeRequest{std::string("\0", 1), std::string("\0", 1), false}));
  {
    TxnRequest t;
    using R = Compare::Result;
    using T = Compare::Target;
    t.compare.push_back(MakeCompare(R::kEqual, T::kVersion, 0, ""));
    t.compare.push_back(MakeCompare(R::kGreater, T::kCreate, 5, ""));
    t.compare.push_back(MakeCompare(R::kLess, T::kMod, 6, ""));
    t.compare.push_back(MakeCompare(R::kNotEqual, T::kValue, 0, "val"));
    t.compare.push_back(MakeCompare(R::kEqual, T::kLease, 9, ""));
    t.compare.push_back(MakeCompare(R::kEqual, T::kValue, 0, ""));  // empty value, still written
    t.compare.back().range_end = "kz";
    t.success.push_back(RequestOp{FullRange()});
    t.success.push_back(RequestOp{PutRequest{"p", "q", 1, true, false, false}});
    t.success.push_back(RequestOp{DeleteRangeRequest{"d", "e", true}});
    t.failure.push_back(RequestOp{RangeRequest{}});
    t.failure.push_back(RequestOp{PutRequest{}});
    out.emplace_back("txn_compares_and_ops", Command(t, 1, 2, "txn-1", 3));
  }
  {
    auto inner2 = std::make_shared<TxnRequest>();
    inner2->success.push_back(RequestOp{PutRequest{"deep", "v", 0, false, false, false}});
    auto inner = std::make_shared<TxnRequest>();
    inner->compare.push_back(MakeCompare(Compare::Result::kGreater, Compare::Target::kMod, 1, ""));
    inner->success.push_back(RequestOp{inner2});
    inner->failure.push_back(RequestOp{DeleteRangeRequest{"x", "", false}});
    TxnRequest t;
    t.success.push_back(RequestOp{inner});
    t.failure.push_back(RequestOp{std::make_shared<TxnRequest>()});
    out.emplace_back("txn_nested", Command(t));
  }
  out.emplace_back("txn_empty", Command(TxnRequest{}));
  out.emplace_back("compaction", Command(CompactionRequest{100, true}, 0, 0, "", 0));
  out.emplace_back("compaction_zero", Command(CompactionRequest{}));
  out.emplace_back("lease_grant",
                   Command(LeaseGrantRequest{60, 0x7fffffffffffffffLL}, 8, 9, "g", 10));
  out.emplace_back("lease_revoke", Command(LeaseRevokeRequest{12345}));
  out.emplace_back("lease_expire", Command(LeaseExpireRequest{{1, 300, -2, 0x7fffffffffffffffLL}}));
  out.emplace_back("lease_expire_none", Command(LeaseExpireRequest{}));
  out.emplace_back("lease_checkpoint", Command(LeaseCheckpointRequest{{{1, 500}, {2, 0}, {0, 1}}}));
  {
    LogCommand c;
    c.events_published = 123456;
    c.origin_member = 5;
    out.emplace_back("events_published", c);
  }
  {
    LogCommand c;
    c.events_published = 0;
    out.emplace_back("events_published_zero", c);
  }
  return out;
}

inline raft::Entry MakeEntry(uint64_t term, uint64_t index, raft::EntryType type,
                             std::string data) {
  return raft::Entry{term, index, type, std::move(data)};
}

inline std::vector<std::pair<std::string, raft::Message>> ExampleRaftMessages() {
  using raft::MessageType;
  std::vector<std::pair<std::string, raft::Message>> out;
  auto msg = [](MessageType t, uint64_t to, uint64_t from, uint64_t term) {
    raft::Message m;
    m.type = t;
    m.to = to;
    m.from = from;
    m.term = term;
    return m;
  };
  {
    raft::Message m = msg(MessageType::kApp, 2, 1, 5);
    m.log_term = 4;
    m.index = 10;
    m.commit = 9;
    m.entries.push_back(MakeEntry(5, 11, raft::EntryType::kNormal, "cmd"));
    m.entries.push_back(MakeEntry(5, 12, raft::EntryType::kConfChange, "cc"));
    m.entries.push_back(MakeEntry(5, 13, raft::EntryType::kNormal, ""));  // a leader's no-op
    out.emplace_back("app_with_entries", m);
  }
  {
    raft::Message m = msg(MessageType::kAppResp, 1, 2, 5);
    m.index = 10;
    m.reject = true;
    m.reject_hint = 7;
    out.emplace_back("app_resp_reject", m);
  }
  {
    raft::Message m = msg(MessageType::kVote, 3, 1, 6);
    m.log_term = 5;
    m.index = 13;
    out.emplace_back("vote", m);
  }
  out.emplace_back("vote_resp", msg(MessageType::kVoteResp, 1, 3, 6));
  out.emplace_back("pre_vote", msg(MessageType::kPreVote, 2, 1, 7));
  {
    raft::Message m = msg(MessageType::kPreVoteResp, 1, 2, 7);
    m.reject = true;
    out.emplace_back("pre_vote_resp", m);
  }
  {
    raft::Message m = msg(MessageType::kHeartbeat, 2, 1, 5);
    m.commit = 9;
    m.context = "read-7";
    out.emplace_back("heartbeat", m);
  }
  out.emplace_back("heartbeat_resp", msg(MessageType::kHeartbeatResp, 1, 2, 5));
  {
    raft::Message m = msg(MessageType::kSnap, 2, 1, 5);
    m.snapshot.meta.index = 1000;
    m.snapshot.meta.term = 4;
    m.snapshot.meta.conf_state.voters = {1, 2, 0xfedcba9876543210ULL};
    m.snapshot.meta.conf_state.learners = {4};
    out.emplace_back("snap", m);
  }
  out.emplace_back("snap_empty", msg(MessageType::kSnap, 2, 1, 5));
  {
    raft::Message m = msg(MessageType::kProp, 1, 2, 0);
    m.entries.push_back(MakeEntry(0, 0, raft::EntryType::kNormal, "forwarded"));
    out.emplace_back("prop", m);
  }
  out.emplace_back("transfer_leader", msg(MessageType::kTransferLeader, 1, 3, 5));
  out.emplace_back("timeout_now", msg(MessageType::kTimeoutNow, 3, 1, 5));
  {
    raft::Message m = msg(MessageType::kReadIndex, 1, 2, 5);
    m.entries.push_back(MakeEntry(0, 0, raft::EntryType::kNormal, "ctx"));
    out.emplace_back("read_index", m);
  }
  {
    raft::Message m = msg(MessageType::kReadIndexResp, 2, 1, 5);
    m.index = 42;
    m.entries.push_back(MakeEntry(0, 0, raft::EntryType::kNormal, "ctx"));
    out.emplace_back("read_index_resp", m);
  }
  out.emplace_back("all_zero", raft::Message{});
  return out;
}

// One response of every kind, nested txn responses included.
inline std::vector<std::pair<std::string, WriteResponse>> ExampleResponses() {
  std::vector<std::pair<std::string, WriteResponse>> out;
  const KeyValue kv{"key", 2, 5, 3, "value", 7};
  out.emplace_back("put", PutResponse{ResponseHeader{5}, false, {}});
  out.emplace_back("put_prev_kv", PutResponse{ResponseHeader{6}, true, kv});
  out.emplace_back("delete",
                   DeleteRangeResponse{ResponseHeader{7}, 2, {kv, KeyValue{"k2", 1, 1, 1, "", 0}}});
  {
    auto inner = std::make_shared<TxnResponse>();
    inner->header.revision = 9;
    inner->succeeded = true;
    inner->responses.push_back(ResponseOp{PutResponse{ResponseHeader{9}, false, {}}});
    TxnResponse t;
    t.header.revision = 9;
    t.succeeded = true;
    t.responses.push_back(ResponseOp{RangeResponse{ResponseHeader{9}, {kv}, true, 3}});
    t.responses.push_back(ResponseOp{PutResponse{ResponseHeader{9}, true, kv}});
    t.responses.push_back(ResponseOp{DeleteRangeResponse{ResponseHeader{9}, 1, {}}});
    t.responses.push_back(ResponseOp{inner});
    out.emplace_back("txn_nested", t);
  }
  out.emplace_back("txn_failed", TxnResponse{ResponseHeader{10}, false, {}});
  out.emplace_back("compaction", CompactionResponse{ResponseHeader{11}});
  out.emplace_back("lease_grant", LeaseGrantResponse{ResponseHeader{12}, 0x1234, 60});
  out.emplace_back("lease_revoke", LeaseRevokeResponse{ResponseHeader{13}});
  return out;
}

// The errors a write can be answered with.
inline std::vector<std::pair<std::string, Status>> ExampleErrors() {
  return {
      {"compacted", Status::Compacted(5, 9)},
      {"future_revision", Status::FutureRevision(10, 4)},
      {"lease_not_found", Status::LeaseNotFound(77)},
      {"lease_exists", Status::LeaseExists(78)},
      {"key_not_found", Status::NotFound("ErrKeyNotFound", "etcdserver: key not found")},
      {"ttl_too_large", Status::TooLarge("ErrLeaseTTLTooLarge", "etcdserver: too large lease TTL")},
      {"invalid", Status::InvalidArgument("ErrEmptyKey", "etcdserver: key is not provided")},
      {"internal", Status::Internal("a bug")},
  };
}

// ---- random values ----

class RandomValues {
 public:
  explicit RandomValues(uint64_t seed) : rng_(seed) {}

  uint64_t U(uint64_t n) { return n == 0 ? 0 : rng_() % n; }
  bool B() { return U(2) == 1; }
  // Small, zero, negative and huge numbers: every varint length.
  int64_t I() {
    switch (U(6)) {
      case 0:
        return 0;
      case 1:
        return static_cast<int64_t>(U(200));
      case 2:
        return -static_cast<int64_t>(U(1000)) - 1;
      case 3:
        return static_cast<int64_t>(rng_());
      case 4:
        return static_cast<int64_t>(U(1ULL << 35));
      default:
        return INT64_MIN + static_cast<int64_t>(U(3));
    }
  }
  uint64_t UI() { return static_cast<uint64_t>(I()); }
  std::string S(size_t max = 20) {
    std::string s(U(max + 1), '\0');
    for (char& c : s) c = static_cast<char>(B() ? 'a' + U(26) : U(256));
    return s;
  }

  RangeRequest Range() {
    RangeRequest r;
    r.key = S();
    r.range_end = S();
    r.limit = I();
    r.revision = I();
    r.sort_order = static_cast<SortOrder>(U(3));
    r.sort_target = static_cast<SortTarget>(U(5));
    r.serializable = B();
    r.keys_only = B();
    r.count_only = B();
    r.min_mod_revision = I();
    r.max_mod_revision = I();
    r.min_create_revision = I();
    r.max_create_revision = I();
    return r;
  }
  PutRequest Put() { return PutRequest{S(), S(200), I(), B(), B(), B()}; }
  DeleteRangeRequest Delete() { return DeleteRangeRequest{S(), S(), B()}; }
  Compare Cmp() {
    Compare c = MakeCompare(static_cast<Compare::Result>(U(4)), static_cast<Compare::Target>(U(5)),
                            I(), S());
    c.key = S();
    c.range_end = S();
    return c;
  }
  TxnRequest Txn(int depth) {
    TxnRequest t;
    for (uint64_t i = U(4); i > 0; i--) t.compare.push_back(Cmp());
    for (auto* ops : {&t.success, &t.failure}) {
      for (uint64_t i = U(4); i > 0; i--) ops->push_back(Op(depth));
    }
    return t;
  }
  RequestOp Op(int depth) {
    switch (U(depth < 3 ? 4 : 3)) {
      case 0:
        return RequestOp{Range()};
      case 1:
        return RequestOp{Put()};
      case 2:
        return RequestOp{Delete()};
      default:
        return RequestOp{std::make_shared<TxnRequest>(Txn(depth + 1))};
    }
  }
  WriteRequest Request() {
    switch (U(8)) {
      case 0:
        return Put();
      case 1:
        return Delete();
      case 2:
        return Txn(0);
      case 3:
        return CompactionRequest{I(), B()};
      case 4:
        return LeaseGrantRequest{I(), I()};
      case 5:
        return LeaseRevokeRequest{I()};
      case 6: {
        LeaseExpireRequest r;
        for (uint64_t i = U(5); i > 0; i--) r.ids.push_back(I());
        return r;
      }
      default: {
        LeaseCheckpointRequest r;
        for (uint64_t i = U(5); i > 0; i--) r.checkpoints.push_back({I(), I()});
        return r;
      }
    }
  }
  LogCommand Log() {
    LogCommand c;
    if (U(10) == 0) {
      c.events_published = static_cast<int64_t>(U(1ULL << 40));
    } else {
      c.request = Request();
    }
    c.origin_member = B() ? UI() : 0;
    c.origin_seq = B() ? UI() : 0;
    // No NUL: protobuf-c's C strings would cut it (pinned separately).
    if (B()) {
      c.request_id = S();
      c.request_id.erase(std::remove(c.request_id.begin(), c.request_id.end(), '\0'),
                         c.request_id.end());
    }
    c.request_expires_ms = B() ? I() : 0;
    return c;
  }

  raft::Message Raft() {
    raft::Message m;
    m.type = static_cast<raft::MessageType>(U(19));
    m.to = B() ? UI() : 0;
    m.from = UI();
    m.term = UI();
    m.log_term = B() ? UI() : 0;
    m.index = UI();
    m.commit = B() ? UI() : 0;
    for (uint64_t i = U(4); i > 0; i--) {
      m.entries.push_back(raft::Entry{UI(), UI(), static_cast<raft::EntryType>(U(2)), S(50)});
    }
    if (m.type == raft::MessageType::kSnap) {
      m.snapshot.meta.index = UI();
      m.snapshot.meta.term = UI();
      for (uint64_t i = U(4); i > 0; i--) m.snapshot.meta.conf_state.voters.push_back(UI());
      for (uint64_t i = U(3); i > 0; i--) m.snapshot.meta.conf_state.learners.push_back(UI());
    }
    m.reject = B();
    m.reject_hint = B() ? UI() : 0;
    m.context = B() ? S() : "";
    return m;
  }

  KeyValue Kv() { return KeyValue{S(), I(), I(), I(), S(), I()}; }
  ResponseHeader Header() { return ResponseHeader{I()}; }
  RangeResponse RangeResp() {
    RangeResponse r;
    r.header = Header();
    for (uint64_t i = U(3); i > 0; i--) r.kvs.push_back(Kv());
    r.more = B();
    r.count = I();
    return r;
  }
  PutResponse PutResp() {
    PutResponse r;
    r.header = Header();
    r.has_prev_kv = B();
    if (r.has_prev_kv) r.prev_kv = Kv();
    return r;
  }
  DeleteRangeResponse DeleteResp() {
    DeleteRangeResponse r;
    r.header = Header();
    r.deleted = I();
    for (uint64_t i = U(3); i > 0; i--) r.prev_kvs.push_back(Kv());
    return r;
  }
  TxnResponse TxnResp(int depth) {
    TxnResponse r;
    r.header = Header();
    r.succeeded = B();
    for (uint64_t i = U(4); i > 0; i--) {
      switch (U(depth < 3 ? 4 : 3)) {
        case 0:
          r.responses.push_back(ResponseOp{RangeResp()});
          break;
        case 1:
          r.responses.push_back(ResponseOp{PutResp()});
          break;
        case 2:
          r.responses.push_back(ResponseOp{DeleteResp()});
          break;
        default:
          r.responses.push_back(ResponseOp{std::make_shared<TxnResponse>(TxnResp(depth + 1))});
      }
    }
    return r;
  }
  // The six kinds a client writes (the ones natcd.v1 has a message for).
  WriteResponse ClientResponse() {
    switch (U(6)) {
      case 0:
        return PutResp();
      case 1:
        return DeleteResp();
      case 2:
        return TxnResp(0);
      case 3:
        return CompactionResponse{Header()};
      case 4:
        return LeaseGrantResponse{Header(), I(), I()};
      default:
        return LeaseRevokeResponse{Header()};
    }
  }

  std::mt19937_64& rng() { return rng_; }

 private:
  std::mt19937_64 rng_;
};

// Hex of bytes, lower case, no separators (how golden bytes are written).
inline std::string Hex(std::string_view bytes) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out += hex[c >> 4];
    out += hex[c & 15];
  }
  return out;
}

inline std::string Unhex(std::string_view hex) {
  auto nibble = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out += static_cast<char>(nibble(hex[i]) << 4 | nibble(hex[i + 1]));
  }
  return out;
}

}  // namespace natcd::server::testing
