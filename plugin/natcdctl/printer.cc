#include "plugin/natcdctl/printer.h"

#include <cinttypes>
#include <cstdio>

#include "plugin/natcdctl/format.h"

namespace natcdctl {
namespace {

std::string Bytes(const char* p, size_t n) { return p ? std::string(p, n) : std::string(); }
std::string Key(const natcdKeyValue& kv) { return Bytes(kv.key, kv.key_len); }
std::string Value(const natcdKeyValue& kv) { return Bytes(kv.value, kv.value_len); }

std::string Hex16(int64_t id) {
  char buf[32];
  snprintf(buf, sizeof buf, "%016" PRIx64, static_cast<uint64_t>(id));
  return buf;
}

// Go's encoding/json of a field with omitempty: nothing when zero.
void JsonField(std::string* out, const char* name, int64_t v) {
  if (v == 0) return;
  if (out->back() != '{') *out += ",";
  *out += "\"" + std::string(name) + "\":" + std::to_string(v);
}
void JsonFieldU(std::string* out, const char* name, uint64_t v) {
  if (v == 0) return;
  if (out->back() != '{') *out += ",";
  *out += "\"" + std::string(name) + "\":" + std::to_string(v);
}
void JsonRaw(std::string* out, const char* name, const std::string& raw) {
  if (out->back() != '{') *out += ",";
  *out += "\"" + std::string(name) + "\":" + raw;
}

std::string KvJson(const natcdKeyValue& kv) {
  std::string out = "{";
  if (kv.key_len > 0) JsonRaw(&out, "key", "\"" + Base64(Key(kv)) + "\"");
  JsonField(&out, "create_revision", kv.create_revision);
  JsonField(&out, "mod_revision", kv.mod_revision);
  JsonField(&out, "version", kv.version);
  if (kv.value_len > 0) JsonRaw(&out, "value", "\"" + Base64(Value(kv)) + "\"");
  JsonField(&out, "lease", kv.lease);
  return out + "}";
}

std::string KvFields(const std::string& pfx, const natcdKeyValue& kv) {
  std::string out;
  out += "\"" + pfx + "Key\" : " + GoQuote(Key(kv)) + "\n";
  out += "\"" + pfx + "CreateRevision\" : " + std::to_string(kv.create_revision) + "\n";
  out += "\"" + pfx + "ModRevision\" : " + std::to_string(kv.mod_revision) + "\n";
  out += "\"" + pfx + "Version\" : " + std::to_string(kv.version) + "\n";
  out += "\"" + pfx + "Value\" : " + GoQuote(Value(kv)) + "\n";
  out += "\"" + pfx + "Lease\" : " + std::to_string(kv.lease) + "\n";
  return out;
}

// The header's fields flattened into a message (Go's embedded struct).
std::string FlatHeader(const natcdHeader& h) {
  std::string inner = HeaderJson(h);
  inner.pop_back();  // without its "}"
  return inner.size() > 1 ? inner + "," : inner;
}

std::string PutJson(const natcdPutResponse& r) {
  std::string out = "{";
  JsonRaw(&out, "header", HeaderJson(r.header));
  if (r.prev_kv) JsonRaw(&out, "prev_kv", KvJson(*r.prev_kv));
  return out + "}";
}

std::string GetJson(const natcdRangeResponse& r) {
  std::string out = "{";
  JsonRaw(&out, "header", HeaderJson(r.header));
  if (r.n_kvs > 0) {
    std::string kvs = "[";
    for (size_t i = 0; i < r.n_kvs; ++i) kvs += (i ? "," : "") + KvJson(r.kvs[i]);
    JsonRaw(&out, "kvs", kvs + "]");
  }
  if (r.more) JsonRaw(&out, "more", "true");
  JsonField(&out, "count", r.count);
  return out + "}";
}

std::string DelJson(const natcdDeleteResponse& r) {
  std::string out = "{";
  JsonRaw(&out, "header", HeaderJson(r.header));
  JsonField(&out, "deleted", r.deleted);
  if (r.n_prev_kvs > 0) {
    std::string kvs = "[";
    for (size_t i = 0; i < r.n_prev_kvs; ++i) kvs += (i ? "," : "") + KvJson(r.prev_kvs[i]);
    JsonRaw(&out, "prev_kvs", kvs + "]");
  }
  return out + "}";
}

std::string TxnJson(const natcdTxnResponse& r) {
  std::string out = "{";
  JsonRaw(&out, "header", HeaderJson(r.header));
  if (r.succeeded) JsonRaw(&out, "succeeded", "true");
  if (r.n_responses > 0) {
    std::string list = "[";
    for (size_t i = 0; i < r.n_responses; ++i) {
      const natcdOpResponse& op = r.responses[i];
      std::string one;
      if (op.type == natcdOp_Range && op.range) {
        one = "{\"response_range\":" + GetJson(*op.range) + "}";
      } else if (op.type == natcdOp_Put && op.put) {
        one = "{\"response_put\":" + PutJson(*op.put) + "}";
      } else if (op.type == natcdOp_Delete && op.del) {
        one = "{\"response_delete_range\":" + DelJson(*op.del) + "}";
      } else if (op.type == natcdOp_Txn && op.txn) {
        one = "{\"response_txn\":" + TxnJson(*op.txn) + "}";
      } else {
        one = "{}";
      }
      list += (i ? "," : "") + std::string("{\"Response\":") + one + "}";
    }
    JsonRaw(&out, "responses", list + "]");
  }
  return out + "}";
}

}  // namespace

std::string HeaderJson(const natcdHeader& h) {
  std::string out = "{";
  JsonFieldU(&out, "cluster_id", h.cluster_id);
  JsonFieldU(&out, "member_id", h.member_id);
  JsonField(&out, "revision", h.revision);
  JsonFieldU(&out, "raft_term", h.raft_term);
  return out + "}";
}

std::string HeaderFields(const natcdHeader& h) {
  return "\"ClusterID\" : " + std::to_string(h.cluster_id) +
         "\n\"MemberID\" : " + std::to_string(h.member_id) +
         "\n\"Revision\" : " + std::to_string(h.revision) +
         "\n\"RaftTerm\" : " + std::to_string(h.raft_term) + "\n";
}

namespace {
std::string HexEscaped(const std::string& s) {
  std::string out;
  char buf[8];
  for (unsigned char c : s) {
    snprintf(buf, sizeof buf, "\\x%02x", c);
    out += buf;
  }
  return out;
}
}  // namespace

std::string Printer::KvSimple(const natcdKeyValue& kv, bool value_only) const {
  std::string key = hex ? HexEscaped(Key(kv)) : Key(kv);
  std::string value = hex ? HexEscaped(Value(kv)) : Value(kv);
  std::string out;
  if (!value_only) out += key + "\n";
  return out + value + "\n";
}

std::string Printer::Put(const natcdPutResponse& r) const {
  switch (format) {
    case Format::kJson:
      return PutJson(r) + "\n";
    case Format::kFields: {
      std::string out = HeaderFields(r.header);
      if (r.prev_kv) out += KvFields("Prev", *r.prev_kv);
      return out;
    }
    default: {
      std::string out = "OK\n";
      if (r.prev_kv) out += KvSimple(*r.prev_kv, false);
      return out;
    }
  }
}

std::string Printer::Get(const natcdRangeResponse& r, const GetFlags& flags) const {
  switch (format) {
    case Format::kJson:
      return GetJson(r) + "\n";
    case Format::kFields: {
      std::string out = HeaderFields(r.header);
      for (size_t i = 0; i < r.n_kvs; ++i) out += KvFields("", r.kvs[i]);
      out += std::string("\"More\" : ") + (r.more ? "true" : "false") + "\n";
      return out + "\"Count\" : " + std::to_string(r.count) + "\n";
    }
    case Format::kTable: {
      if (flags.count_only) return Table({"count"}, {{std::to_string(r.count)}});
      std::vector<std::vector<std::string>> rows;
      for (size_t i = 0; i < r.n_kvs; ++i) {
        const natcdKeyValue& kv = r.kvs[i];
        rows.push_back({Key(kv), Value(kv), std::to_string(kv.create_revision),
                        std::to_string(kv.mod_revision), std::to_string(kv.version),
                        kv.lease ? Hex16(kv.lease) : ""});
      }
      return Table({"key", "value", "create revision", "mod revision", "version", "lease"}, rows);
    }
    default: {
      if (flags.count_only) return std::to_string(r.count) + "\n";
      std::string out;
      for (size_t i = 0; i < r.n_kvs; ++i) out += KvSimple(r.kvs[i], flags.value_only);
      return out;
    }
  }
}

std::string Printer::Del(const natcdDeleteResponse& r) const {
  switch (format) {
    case Format::kJson:
      return DelJson(r) + "\n";
    case Format::kFields: {
      std::string out =
          HeaderFields(r.header) + "\"Deleted\" : " + std::to_string(r.deleted) + "\n";
      for (size_t i = 0; i < r.n_prev_kvs; ++i) out += KvFields("Prev", r.prev_kvs[i]);
      return out;
    }
    default: {
      std::string out = std::to_string(r.deleted) + "\n";
      for (size_t i = 0; i < r.n_prev_kvs; ++i) out += KvSimple(r.prev_kvs[i], false);
      return out;
    }
  }
}

std::string Printer::Txn(const natcdTxnResponse& r) const {
  if (format == Format::kJson) return TxnJson(r) + "\n";
  std::string out;
  if (format == Format::kFields) {
    out = HeaderFields(r.header) + "\"Succeeded\" : " + (r.succeeded ? "true" : "false") + "\n";
  } else {
    out = r.succeeded ? "SUCCESS\n" : "FAILURE\n";
  }
  for (size_t i = 0; i < r.n_responses; ++i) {
    const natcdOpResponse& op = r.responses[i];
    if (format != Format::kFields) out += "\n";
    if (op.type == natcdOp_Range && op.range) out += Get(*op.range, {});
    if (op.type == natcdOp_Put && op.put) out += Put(*op.put);
    if (op.type == natcdOp_Delete && op.del) out += Del(*op.del);
    if (op.type == natcdOp_Txn && op.txn) out += Txn(*op.txn);
  }
  return out;
}

std::string Printer::Grant(const natcdHeader& h, int64_t id, int64_t ttl) const {
  switch (format) {
    case Format::kJson:
      return FlatHeader(h) + "\"ID\":" + std::to_string(id) + ",\"TTL\":" + std::to_string(ttl) +
             "}\n";
    case Format::kFields:
      return HeaderFields(h) + "\"ID\" : " + std::to_string(id) +
             "\n\"TTL\" : " + std::to_string(ttl) + "\n";
    default:
      return "lease " + Hex16(id) + " granted with TTL(" + std::to_string(ttl) + "s)\n";
  }
}

std::string Printer::Revoke(int64_t id) const {
  switch (format) {
    case Format::kJson:
      return "{}\n";
    case Format::kFields:
      return "";
    default:
      return "lease " + Hex16(id) + " revoked\n";
  }
}

std::string Printer::KeepAlive(int64_t id, int64_t ttl) const {
  switch (format) {
    case Format::kJson:
      return "{\"ID\":" + std::to_string(id) + ",\"TTL\":" + std::to_string(ttl) + "}\n";
    case Format::kFields:
      return "\"ID\" : " + std::to_string(id) + "\n\"TTL\" : " + std::to_string(ttl) + "\n";
    default:
      return "lease " + Hex16(id) + " keepalived with TTL(" + std::to_string(ttl) + ")\n";
  }
}

std::string Printer::TimeToLive(const natcdLeaseTimeToLive& r, bool keys) const {
  switch (format) {
    case Format::kJson: {
      std::string out = FlatHeader(r.header) + "\"ID\":" + std::to_string(r.id) +
                        ",\"TTL\":" + std::to_string(r.ttl_seconds) +
                        ",\"GrantedTTL\":" + std::to_string(r.granted_ttl_seconds);
      if (r.n_keys > 0) {
        out += ",\"Keys\":[";
        for (size_t i = 0; i < r.n_keys; ++i) {
          out += (i ? ",\"" : "\"") + Base64(std::string(r.keys[i], r.key_lens[i])) + "\"";
        }
        out += "]";
      }
      return out + "}\n";
    }
    case Format::kFields: {
      std::string out = HeaderFields(r.header) + "\"ID\" : " + std::to_string(r.id) +
                        "\n\"TTL\" : " + std::to_string(r.ttl_seconds) +
                        "\n\"GrantedTTL\" : " + std::to_string(r.granted_ttl_seconds) + "\n";
      for (size_t i = 0; i < r.n_keys; ++i) {
        out += "\"Key\" : " + GoQuote(std::string(r.keys[i], r.key_lens[i])) + "\n";
      }
      return out;
    }
    default: {
      if (r.granted_ttl_seconds == 0 && r.ttl_seconds == -1) {
        return "lease " + Hex16(r.id) + " already expired\n";
      }
      std::string out = "lease " + Hex16(r.id) + " granted with TTL(" +
                        std::to_string(r.granted_ttl_seconds) + "s), remaining(" +
                        std::to_string(r.ttl_seconds) + "s)";
      if (keys) {
        out += ", attached keys([";
        for (size_t i = 0; i < r.n_keys; ++i) {
          out += (i ? " " : "") + std::string(r.keys[i], r.key_lens[i]);
        }
        out += "])";
      }
      return out + "\n";
    }
  }
}

std::string Printer::Leases(const std::vector<int64_t>& ids) const {
  switch (format) {
    case Format::kJson: {
      std::string out = "{\"leases\":[";
      for (size_t i = 0; i < ids.size(); ++i) {
        out += (i ? "," : "") + std::string("{\"ID\":") + std::to_string(ids[i]) + "}";
      }
      return out + "]}\n";
    }
    case Format::kFields: {
      std::string out;
      for (int64_t id : ids) out += "\"ID\" : " + std::to_string(id) + "\n";
      return out;
    }
    default: {
      std::string out = "found " + std::to_string(ids.size()) + " leases\n";
      for (int64_t id : ids) out += Hex16(id) + "\n";
      return out;
    }
  }
}

std::string Printer::Compaction(const natcdHeader& h, int64_t rev) const {
  switch (format) {
    case Format::kJson:
      return "{\"header\":" + HeaderJson(h) + "}\n";
    case Format::kFields:
      return HeaderFields(h);
    default:
      return "compacted revision " + std::to_string(rev) + "\n";
  }
}

std::string Printer::WatchEvent(const natcdWatchNotice& n, bool value_only) const {
  const char* type = n.type == natcdEventType_Delete ? "DELETE" : "PUT";
  natcdHeader h{};
  h.revision = n.revision;
  switch (format) {
    case Format::kJson: {
      std::string ev = "{";
      if (n.type == natcdEventType_Delete) JsonRaw(&ev, "type", "1");
      if (n.kv) JsonRaw(&ev, "kv", KvJson(*n.kv));
      if (n.prev_kv) JsonRaw(&ev, "prev_kv", KvJson(*n.prev_kv));
      ev += "}";
      return "{\"Header\":" + HeaderJson(h) + ",\"Events\":[" + ev +
             "],\"CompactRevision\":0,\"Canceled\":false,\"Created\":false}\n";
    }
    case Format::kFields: {
      std::string out = HeaderFields(h) + "\"Type\" : " + type + "\n";
      if (n.prev_kv) out += KvFields("Prev", *n.prev_kv);
      if (n.kv) out += KvFields("", *n.kv);
      return out;
    }
    default: {
      std::string out = std::string(type) + "\n";
      if (n.prev_kv) out += KvSimple(*n.prev_kv, value_only);
      if (n.kv) out += KvSimple(*n.kv, value_only);
      return out;
    }
  }
}

}  // namespace natcdctl
