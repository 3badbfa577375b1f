#include "core/model/model.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>
#include <set>
#include <utility>

namespace natcd::testing {
namespace {

std::string N(int64_t v) { return std::to_string(v); }

Status ModelError(Status::Code code, const char* name) { return Status(code, name, "(model)"); }
Status EmptyKey() { return ModelError(Status::Code::kInvalidArgument, "ErrEmptyKey"); }
Status DuplicateKey() { return ModelError(Status::Code::kInvalidArgument, "ErrDuplicateKey"); }

// ---- etcd semantics, restated ------------------------------------------------

const std::string kNul(1, '\0');

// [key, range_end): "" is the key alone, "\0" is every key >= key.
bool InRange(const std::string& k, const std::string& key, const std::string& range_end) {
  if (range_end.empty()) return k == key;
  return k >= key && (range_end == kNul || k < range_end);
}

int Sign(int64_t a, int64_t b) { return a < b ? -1 : (a > b ? 1 : 0); }

// etcd compareKV.
bool CompareKv(const Compare& c, const KeyValue& kv) {
  int r = 0;
  switch (c.target) {
    case Compare::Target::kVersion:
      r = Sign(kv.version, c.version);
      break;
    case Compare::Target::kCreate:
      r = Sign(kv.create_revision, c.create_revision);
      break;
    case Compare::Target::kMod:
      r = Sign(kv.mod_revision, c.mod_revision);
      break;
    case Compare::Target::kValue:
      r = kv.value < c.value ? -1 : (kv.value > c.value ? 1 : 0);
      break;
    case Compare::Target::kLease:
      r = Sign(kv.lease, c.lease);
      break;
  }
  switch (c.result) {
    case Compare::Result::kEqual:
      return r == 0;
    case Compare::Result::kNotEqual:
      return r != 0;
    case Compare::Result::kGreater:
      return r > 0;
    case Compare::Result::kLess:
      return r < 0;
  }
  return false;
}

// etcd checkRequestOp / checkTxnRequest (v3rpc/key.go): the static checks
// done before a request is proposed.
Status CheckShape(const TxnRequest& txn, int64_t max_ops) {
  int64_t opc = std::max<int64_t>(
      {int64_t(txn.compare.size()), int64_t(txn.success.size()), int64_t(txn.failure.size())});
  if (opc > max_ops) return ModelError(Status::Code::kInvalidArgument, "ErrTooManyOps");
  for (const Compare& c : txn.compare) {
    if (c.key.empty()) return EmptyKey();
  }
  for (const auto* branch : {&txn.success, &txn.failure}) {
    for (const RequestOp& op : *branch) {
      if (auto* r = std::get_if<RangeRequest>(&op.op)) {
        if (r->key.empty()) return EmptyKey();
      } else if (auto* p = std::get_if<PutRequest>(&op.op)) {
        if (p->key.empty()) return EmptyKey();
        if (p->ignore_value && !p->value.empty()) {
          return ModelError(Status::Code::kInvalidArgument, "ErrValueProvided");
        }
        if (p->ignore_lease && p->lease != 0) {
          return ModelError(Status::Code::kInvalidArgument, "ErrLeaseProvided");
        }
      } else if (auto* d = std::get_if<DeleteRangeRequest>(&op.op)) {
        if (d->key.empty()) return EmptyKey();
      } else if (auto* t = std::get_if<std::shared_ptr<TxnRequest>>(&op.op)) {
        NATCD_RETURN_IF_ERROR(CheckShape(**t, max_ops - opc));
      }
    }
  }
  return Status::OK();
}

// etcd checkIntervals: returns false on a duplicate; fills the branch's
// puts and delete ranges (nested ones included). Two deliberate details:
// a delete to "\0" covers every key from its start (etcd builds an empty
// interval there, etcd issue #22445; natcd is stricter), and, as in etcd, a
// nested txn's puts are checked only against the deletes seen before it
// (etcd issue #16380), so one revision may put and then delete a key.
struct Intervals {
  std::set<std::string> puts;
  std::vector<std::pair<std::string, std::string>> dels;
  bool Deleted(const std::string& k) const {
    for (const auto& [key, end] : dels) {
      if (InRange(k, key, end)) return true;
    }
    return false;
  }
};

bool CheckIntervals(const std::vector<RequestOp>& ops, Intervals* out) {
  Intervals level;
  for (const RequestOp& op : ops) {
    if (auto* d = std::get_if<DeleteRangeRequest>(&op.op))
      level.dels.push_back({d->key, d->range_end});
  }
  for (const RequestOp& op : ops) {
    auto* t = std::get_if<std::shared_ptr<TxnRequest>>(&op.op);
    if (t == nullptr) continue;
    Intervals then_branch, else_branch;
    if (!CheckIntervals((*t)->success, &then_branch)) return false;
    if (!CheckIntervals((*t)->failure, &else_branch)) return false;
    for (const std::string& k : then_branch.puts) {
      if (level.puts.count(k) || level.Deleted(k)) return false;
      level.puts.insert(k);
    }
    for (const std::string& k : else_branch.puts) {
      // then and else exclude each other: a key put by both is fine.
      if (level.puts.count(k) && !then_branch.puts.count(k)) return false;
      if (level.Deleted(k)) return false;
      level.puts.insert(k);
    }
    for (auto* branch : {&then_branch, &else_branch}) {
      level.dels.insert(level.dels.end(), branch->dels.begin(), branch->dels.end());
    }
  }
  for (const RequestOp& op : ops) {
    auto* p = std::get_if<PutRequest>(&op.op);
    if (p == nullptr) continue;
    if (level.puts.count(p->key) || level.Deleted(p->key)) return false;
    level.puts.insert(p->key);
  }
  *out = std::move(level);
  return true;
}

void SetHeaders(TxnResponse* r, int64_t revision) {
  r->header.revision = revision;
  for (ResponseOp& op : r->responses) {
    std::visit(
        [revision](auto& x) {
          if constexpr (std::is_same_v<std::decay_t<decltype(x)>, std::shared_ptr<TxnResponse>>) {
            SetHeaders(x.get(), revision);
          } else {
            x.header.revision = revision;
          }
        },
        op.response);
  }
}

}  // namespace

// ---- printing (public) --------------------------------------------------------

std::string Str(const ResponseOp& op) {
  return std::visit(
      [](const auto& r) -> std::string {
        using T = std::decay_t<decltype(r)>;
        if constexpr (std::is_same_v<T, std::shared_ptr<TxnResponse>>) {
          return r ? Str(*r) : "null-txn";
        } else {
          return Str(r);
        }
      },
      op.response);
}

std::string Str(const RequestOp& op) {
  return std::visit(
      [](const auto& r) -> std::string {
        using T = std::decay_t<decltype(r)>;
        if constexpr (std::is_same_v<T, std::shared_ptr<TxnRequest>>) {
          return r ? Str(*r) : "null-txn";
        } else {
          return Str(r);
        }
      },
      op.op);
}

template <typename T>
std::string List(const std::vector<T>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += ", ";
    out += Str(items[i]);
  }
  return out + "]";
}

std::string Bytes(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  return out + "\"";
}

std::string Str(const KeyValue& kv) {
  return "{" + Bytes(kv.key) + " c" + N(kv.create_revision) + " m" + N(kv.mod_revision) + " v" +
         N(kv.version) + " " + Bytes(kv.value) + " l" + N(kv.lease) + "}";
}

std::string Str(const Event& e) {
  std::string out = (e.type == Event::Type::kPut ? "PUT" : "DEL") + Str(e.kv);
  if (e.has_prev_kv) out += " prev" + Str(e.prev_kv);
  return out;
}

std::string Str(const std::vector<Event>& events) { return List(events); }

std::string Str(const RangeResponse& r) {
  return "range{h" + N(r.header.revision) + " count " + N(r.count) + (r.more ? " more " : " ") +
         List(r.kvs) + "}";
}

std::string Str(const PutResponse& r) {
  return "put{h" + N(r.header.revision) + (r.has_prev_kv ? " prev" + Str(r.prev_kv) : "") + "}";
}

std::string Str(const DeleteRangeResponse& r) {
  return "del{h" + N(r.header.revision) + " deleted " + N(r.deleted) + " " + List(r.prev_kvs) + "}";
}

std::string Str(const TxnResponse& r) {
  return "txn{h" + N(r.header.revision) + (r.succeeded ? " then " : " else ") + List(r.responses) +
         "}";
}

std::string Str(const WriteResponse& r) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, PutResponse> || std::is_same_v<T, DeleteRangeResponse> ||
                      std::is_same_v<T, TxnResponse>) {
          return Str(x);
        } else if constexpr (std::is_same_v<T, CompactionResponse>) {
          return "compact{h" + N(x.header.revision) + "}";
        } else if constexpr (std::is_same_v<T, LeaseGrantResponse>) {
          return "grant{h" + N(x.header.revision) + " id " + N(x.id) + " ttl " + N(x.ttl) + "}";
        } else if constexpr (std::is_same_v<T, LeaseRevokeResponse>) {
          return "revoke{h" + N(x.header.revision) + "}";
        } else if constexpr (std::is_same_v<T, LeaseExpireResponse>) {
          return "expire{h" + N(x.header.revision) + " revoked " + N(x.revoked) + "}";
        } else {
          static_assert(std::is_same_v<T, LeaseCheckpointResponse>);
          return "checkpoint{h" + N(x.header.revision) + "}";
        }
      },
      r);
}

std::string Str(const Status& s) {
  if (s.ok()) return "OK";
  return "error " + std::string(s.name()) + " (code " + N(static_cast<int>(s.code())) + ")";
}

std::string Str(const RangeRequest& r) {
  std::string out = "get(" + Bytes(r.key) + ", " + Bytes(r.range_end);
  if (r.revision) out += " rev=" + N(r.revision);
  if (r.limit) out += " limit=" + N(r.limit);
  if (r.sort_order != SortOrder::kNone || r.sort_target != SortTarget::kKey) {
    out += " sort=" + N(static_cast<int>(r.sort_order)) + "/" + N(static_cast<int>(r.sort_target));
  }
  if (r.keys_only) out += " keys_only";
  if (r.count_only) out += " count_only";
  if (r.min_mod_revision) out += " min_mod=" + N(r.min_mod_revision);
  if (r.max_mod_revision) out += " max_mod=" + N(r.max_mod_revision);
  if (r.min_create_revision) out += " min_create=" + N(r.min_create_revision);
  if (r.max_create_revision) out += " max_create=" + N(r.max_create_revision);
  return out + ")";
}

std::string Str(const PutRequest& r) {
  std::string out = "put(" + Bytes(r.key) + ", " + Bytes(r.value);
  if (r.lease) out += " lease=" + N(r.lease);
  if (r.prev_kv) out += " prev_kv";
  if (r.ignore_value) out += " ignore_value";
  if (r.ignore_lease) out += " ignore_lease";
  return out + ")";
}

std::string Str(const DeleteRangeRequest& r) {
  return "del(" + Bytes(r.key) + ", " + Bytes(r.range_end) + (r.prev_kv ? " prev_kv)" : ")");
}

std::string Str(const Compare& c) {
  static const char* kTargets[] = {"version", "create", "mod", "value", "lease"};
  static const char* kResults[] = {"==", ">", "<", "!="};
  std::string out = std::string(kTargets[static_cast<int>(c.target)]) + "(" + Bytes(c.key);
  if (!c.range_end.empty()) out += ", " + Bytes(c.range_end);
  out += ") " + std::string(kResults[static_cast<int>(c.result)]) + " ";
  switch (c.target) {
    case Compare::Target::kVersion:
      return out + N(c.version);
    case Compare::Target::kCreate:
      return out + N(c.create_revision);
    case Compare::Target::kMod:
      return out + N(c.mod_revision);
    case Compare::Target::kValue:
      return out + Bytes(c.value);
    case Compare::Target::kLease:
      return out + N(c.lease);
  }
  return out;
}

std::string Str(const TxnRequest& r) {
  return "txn(if " + List(r.compare) + " then " + List(r.success) + " else " + List(r.failure) +
         ")";
}

std::string Str(const WriteRequest& r) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, PutRequest> || std::is_same_v<T, DeleteRangeRequest> ||
                      std::is_same_v<T, TxnRequest>) {
          return Str(x);
        } else if constexpr (std::is_same_v<T, CompactionRequest>) {
          return "compact(" + N(x.revision) + (x.physical ? " physical)" : ")");
        } else if constexpr (std::is_same_v<T, LeaseGrantRequest>) {
          return "grant(ttl " + N(x.ttl) + " id " + N(x.id) + ")";
        } else if constexpr (std::is_same_v<T, LeaseRevokeRequest>) {
          return "revoke(" + N(x.id) + ")";
        } else if constexpr (std::is_same_v<T, LeaseExpireRequest>) {
          std::string out = "expire(";
          for (int64_t id : x.ids) out += N(id) + " ";
          return out + ")";
        } else {
          static_assert(std::is_same_v<T, LeaseCheckpointRequest>);
          std::string out = "checkpoint(";
          for (const auto& cp : x.checkpoints) out += N(cp.id) + "=" + N(cp.remaining_ms) + " ";
          return out + ")";
        }
      },
      r);
}

// ---- the model --------------------------------------------------------------

Model::Model(Clock* clock, ModelLimits limits) : clock_(clock), limits_(limits) {
  history_[kEmptyStoreRevision] = {};
}

bool Model::NoDuplicateKeys(const TxnRequest& txn) {
  Intervals ignored;
  return CheckIntervals(txn.success, &ignored) && CheckIntervals(txn.failure, &ignored);
}

Result<RangeResponse> Model::Range(const RangeRequest& request) const {
  return RangeIn(request, Head(), revision_);
}

Result<RangeResponse> Model::RangeIn(const RangeRequest& r, const KvMap& working,
                                     int64_t header_revision) const {
  if (r.key.empty()) return EmptyKey();
  if (r.revision > revision_) return Status::FutureRevision(r.revision, revision_);
  if (r.revision > 0 && r.revision < compact_) return Status::Compacted(r.revision, compact_);
  const KvMap& view = r.revision > 0 ? history_.at(r.revision) : working;

  RangeResponse out;
  out.header.revision = header_revision;
  std::vector<KeyValue> kvs;
  for (const auto& [k, kv] : view) {
    if (InRange(k, r.key, r.range_end)) kvs.push_back(kv);
  }
  out.count = static_cast<int64_t>(kvs.size());
  if (r.count_only) return out;
  std::erase_if(kvs, [&r](const KeyValue& kv) {
    return (r.min_mod_revision != 0 && kv.mod_revision < r.min_mod_revision) ||
           (r.max_mod_revision != 0 && kv.mod_revision > r.max_mod_revision) ||
           (r.min_create_revision != 0 && kv.create_revision < r.min_create_revision) ||
           (r.max_create_revision != 0 && kv.create_revision > r.max_create_revision);
  });
  SortOrder order = r.sort_order;
  if (order == SortOrder::kNone && r.sort_target != SortTarget::kKey) order = SortOrder::kAscend;
  if (order != SortOrder::kNone) {
    // kvs is in key order: a stable sort keeps ties in key order.
    std::function<bool(const KeyValue&, const KeyValue&)> less;
    switch (r.sort_target) {
      case SortTarget::kKey:
        less = [](const KeyValue& a, const KeyValue& b) { return a.key < b.key; };
        break;
      case SortTarget::kVersion:
        less = [](const KeyValue& a, const KeyValue& b) { return a.version < b.version; };
        break;
      case SortTarget::kCreate:
        less = [](const KeyValue& a, const KeyValue& b) {
          return a.create_revision < b.create_revision;
        };
        break;
      case SortTarget::kMod:
        less = [](const KeyValue& a, const KeyValue& b) { return a.mod_revision < b.mod_revision; };
        break;
      case SortTarget::kValue:
        less = [](const KeyValue& a, const KeyValue& b) { return a.value < b.value; };
        break;
    }
    if (order == SortOrder::kAscend) {
      std::stable_sort(kvs.begin(), kvs.end(), less);
    } else {
      std::stable_sort(kvs.begin(), kvs.end(),
                       [&less](const KeyValue& a, const KeyValue& b) { return less(b, a); });
    }
  }
  if (r.limit > 0 && static_cast<int64_t>(kvs.size()) > r.limit) {
    kvs.resize(r.limit);
    out.more = true;
  }
  if (r.keys_only) {
    for (KeyValue& kv : kvs) kv.value.clear();
  }
  out.kvs = std::move(kvs);
  return out;
}

Status Model::CheckPut(const PutRequest& r) const {
  if (r.ignore_value || r.ignore_lease) {
    if (!Head().count(r.key)) return ModelError(Status::Code::kNotFound, "ErrKeyNotFound");
  }
  if (r.lease != 0 && !leases_.count(r.lease)) return Status::LeaseNotFound(r.lease);
  return Status::OK();
}

void Model::PutKey(Pending* p, const PutRequest& r, PutResponse* response) const {
  const int64_t rev = revision_ + 1;
  auto it = p->state.find(r.key);
  const KeyValue* prev = it == p->state.end() ? nullptr : &it->second;
  Event e;
  e.type = Event::Type::kPut;
  if (prev != nullptr) {
    e.has_prev_kv = true;
    e.prev_kv = *prev;
  }
  KeyValue kv;
  kv.key = r.key;
  kv.create_revision = prev ? prev->create_revision : rev;
  kv.mod_revision = rev;
  kv.version = prev ? prev->version + 1 : 1;
  kv.value = r.ignore_value ? prev->value : r.value;
  kv.lease = r.ignore_lease ? prev->lease : r.lease;
  if (r.prev_kv && prev != nullptr) {
    response->has_prev_kv = true;
    response->prev_kv = *prev;
  }
  e.kv = kv;
  p->state[r.key] = kv;
  p->events.push_back(std::move(e));
}

void Model::DeleteKeys(Pending* p, const std::string& key, const std::string& range_end,
                       bool prev_kv, DeleteRangeResponse* response) const {
  const int64_t rev = revision_ + 1;
  for (auto it = p->state.begin(); it != p->state.end();) {
    if (!InRange(it->first, key, range_end)) {
      ++it;
      continue;
    }
    Event e;
    e.type = Event::Type::kDelete;
    e.kv.key = it->first;
    e.kv.mod_revision = rev;
    e.has_prev_kv = true;
    e.prev_kv = it->second;
    if (response != nullptr) {
      ++response->deleted;
      if (prev_kv) response->prev_kvs.push_back(it->second);
    }
    p->events.push_back(std::move(e));
    it = p->state.erase(it);
  }
}

void Model::Finish(Pending&& p) {
  if (p.events.empty()) return;
  ++revision_;
  history_[revision_] = std::move(p.state);
  events_[revision_] = std::move(p.events);
}

bool Model::CompareHolds(const Compare& c) const {
  bool any = false;
  for (const auto& [k, kv] : Head()) {
    if (!InRange(k, c.key, c.range_end)) continue;
    any = true;
    if (!CompareKv(c, kv)) return false;
  }
  if (any) return true;
  // etcd: a value compare on missing keys fails; other targets compare
  // against the zero KeyValue.
  return c.target != Compare::Target::kValue && CompareKv(c, KeyValue{});
}

Result<TxnResponse> Model::Txn(const TxnRequest& request) {
  NATCD_RETURN_IF_ERROR(CheckShape(request, limits_.max_txn_ops));
  if (!NoDuplicateKeys(request)) return DuplicateKey();

  // etcd compareToPath: every compare on the taken path sees the state
  // before the txn.
  std::map<const TxnRequest*, bool> taken;
  std::function<void(const TxnRequest&)> decide = [&](const TxnRequest& t) {
    bool ok = true;
    for (const Compare& c : t.compare) ok = ok && CompareHolds(c);
    taken[&t] = ok;
    for (const RequestOp& op : ok ? t.success : t.failure) {
      if (auto* n = std::get_if<std::shared_ptr<TxnRequest>>(&op.op)) decide(**n);
    }
  };
  decide(request);

  // etcd checkRequests: first every put on the path (checkPut), then every
  // range (checkRange), against the state before the txn.
  std::function<Status(const TxnRequest&, bool)> check = [&](const TxnRequest& t,
                                                             bool puts) -> Status {
    for (const RequestOp& op : taken[&t] ? t.success : t.failure) {
      if (auto* n = std::get_if<std::shared_ptr<TxnRequest>>(&op.op)) {
        NATCD_RETURN_IF_ERROR(check(**n, puts));
      } else if (auto* p = std::get_if<PutRequest>(&op.op); p && puts) {
        NATCD_RETURN_IF_ERROR(CheckPut(*p));
      } else if (auto* r = std::get_if<RangeRequest>(&op.op); r && !puts) {
        if (r->revision > revision_) return Status::FutureRevision(r->revision, revision_);
        if (r->revision > 0 && r->revision < compact_) {
          return Status::Compacted(r->revision, compact_);
        }
      }
    }
    return Status::OK();
  };
  NATCD_RETURN_IF_ERROR(check(request, true));
  NATCD_RETURN_IF_ERROR(check(request, false));

  Pending p{Head(), {}};
  std::function<TxnResponse(const TxnRequest&)> run = [&](const TxnRequest& t) {
    TxnResponse out;
    out.succeeded = taken[&t];
    for (const RequestOp& op : out.succeeded ? t.success : t.failure) {
      ResponseOp rop;
      if (auto* r = std::get_if<RangeRequest>(&op.op)) {
        // Reads inside a txn see its earlier writes.
        Result<RangeResponse> rr = RangeIn(*r, p.state, 0);
        rop.response = std::move(rr).value();
      } else if (auto* put = std::get_if<PutRequest>(&op.op)) {
        PutResponse pr;
        PutKey(&p, *put, &pr);
        rop.response = pr;
      } else if (auto* d = std::get_if<DeleteRangeRequest>(&op.op)) {
        DeleteRangeResponse dr;
        DeleteKeys(&p, d->key, d->range_end, d->prev_kv, &dr);
        rop.response = std::move(dr);
      } else {
        auto& n = std::get<std::shared_ptr<TxnRequest>>(op.op);
        rop.response = std::make_shared<TxnResponse>(run(*n));
      }
      out.responses.push_back(std::move(rop));
    }
    return out;
  };
  TxnResponse response = run(request);
  Finish(std::move(p));
  SetHeaders(&response, revision_);
  return response;
}

Status Model::RemoveLease(int64_t id) {
  Pending p{Head(), {}};
  std::vector<std::string> keys;
  for (const auto& [k, kv] : p.state) {
    if (kv.lease == id) keys.push_back(k);
  }
  for (const std::string& k : keys) DeleteKeys(&p, k, "", false, nullptr);
  Finish(std::move(p));
  leases_.erase(id);
  return Status::OK();
}

Result<WriteResponse> Model::Apply(const WriteRequest& request, uint64_t index) {
  if (index != 0) index_ = index;
  return std::visit(
      [&](const auto& r) -> Result<WriteResponse> {
        using T = std::decay_t<decltype(r)>;
        if constexpr (std::is_same_v<T, PutRequest>) {
          if (r.key.empty()) return EmptyKey();
          if (r.ignore_value && !r.value.empty()) {
            return ModelError(Status::Code::kInvalidArgument, "ErrValueProvided");
          }
          if (r.ignore_lease && r.lease != 0) {
            return ModelError(Status::Code::kInvalidArgument, "ErrLeaseProvided");
          }
          NATCD_RETURN_IF_ERROR(CheckPut(r));
          Pending p{Head(), {}};
          PutResponse out;
          PutKey(&p, r, &out);
          Finish(std::move(p));
          out.header.revision = revision_;
          return WriteResponse(out);
        } else if constexpr (std::is_same_v<T, DeleteRangeRequest>) {
          if (r.key.empty()) return EmptyKey();
          Pending p{Head(), {}};
          DeleteRangeResponse out;
          DeleteKeys(&p, r.key, r.range_end, r.prev_kv, &out);
          Finish(std::move(p));
          out.header.revision = revision_;
          return WriteResponse(out);
        } else if constexpr (std::is_same_v<T, TxnRequest>) {
          Result<TxnResponse> out = Txn(r);
          if (!out.ok()) return out.status();
          return WriteResponse(std::move(out).value());
        } else if constexpr (std::is_same_v<T, CompactionRequest>) {
          if (r.revision <= compact_) return Status::Compacted(r.revision, compact_);
          if (r.revision > revision_) return Status::FutureRevision(r.revision, revision_);
          compact_ = r.revision;
          CompactionResponse out;
          out.header.revision = revision_;
          return WriteResponse(out);
        } else if constexpr (std::is_same_v<T, LeaseGrantRequest>) {
          if (r.id <= 0) return ModelError(Status::Code::kInvalidArgument, "ErrLeaseID");
          if (r.ttl > limits_.lease_ttl_s_max) {
            return ModelError(Status::Code::kLeaseTTLTooLarge, "ErrLeaseTTLTooLarge");
          }
          if (leases_.count(r.id)) return Status::LeaseExists(r.id);
          ModelLease& lease = leases_[r.id];
          lease.ttl_s = std::max(r.ttl, limits_.lease_ttl_s_min);
          lease.deadline_ms = clock_->MonotonicMs() + lease.ttl_s * 1000;
          lease.replicated_deadline_ms = lease.deadline_ms;
          LeaseGrantResponse out;
          out.header.revision = revision_;
          out.id = r.id;
          out.ttl = lease.ttl_s;
          return WriteResponse(out);
        } else if constexpr (std::is_same_v<T, LeaseRevokeRequest>) {
          if (!leases_.count(r.id)) return Status::LeaseNotFound(r.id);
          NATCD_RETURN_IF_ERROR(RemoveLease(r.id));
          LeaseRevokeResponse out;
          out.header.revision = revision_;
          return WriteResponse(out);
        } else if constexpr (std::is_same_v<T, LeaseExpireRequest>) {
          LeaseExpireResponse out;
          for (int64_t id : r.ids) {
            if (!leases_.count(id)) continue;
            NATCD_RETURN_IF_ERROR(RemoveLease(id));
            ++out.revoked;
          }
          out.header.revision = revision_;
          return WriteResponse(out);
        } else {
          static_assert(std::is_same_v<T, LeaseCheckpointRequest>);
          // A request error changes nothing (engine.h): validate first.
          for (const auto& cp : r.checkpoints) {
            if (leases_.count(cp.id) && cp.remaining_ms < 0) {
              return ModelError(Status::Code::kInvalidArgument, "ErrLeaseCheckpoint");
            }
          }
          for (const auto& cp : r.checkpoints) {
            auto it = leases_.find(cp.id);
            if (it == leases_.end()) continue;
            ModelLease& lease = it->second;
            lease.remaining_ms = cp.remaining_ms;
            lease.checkpoint_due = false;
            if (lease.in_flight_ms != 0 && lease.in_flight_remaining_ms == cp.remaining_ms) {
              // The one offered: counted from its offer.
              lease.replicated_deadline_ms = lease.in_flight_ms;
              lease.in_flight_ms = 0;
              continue;
            }
            lease.replicated_deadline_ms =
                clock_->MonotonicMs() +
                (cp.remaining_ms > 0 ? cp.remaining_ms : lease.ttl_s * 1000);
          }
          LeaseCheckpointResponse out;
          out.header.revision = revision_;
          return WriteResponse(out);
        }
      },
      request);
}

void Model::Commit() {
  committed_.revision = revision_;
  committed_.compact = compact_;
  committed_.index = index_;
  committed_.leases = leases_;
}

void Model::Reopen() {
  history_.erase(history_.upper_bound(committed_.revision), history_.end());
  events_.erase(events_.upper_bound(committed_.revision), events_.end());
  revision_ = committed_.revision;
  compact_ = committed_.compact;
  index_ = committed_.index;
  leases_ = committed_.leases;
  const int64_t now = clock_->MonotonicMs();
  for (auto& [id, lease] : leases_) {
    lease.deadline_ms = now + (lease.remaining_ms > 0 ? lease.remaining_ms : lease.ttl_s * 1000);
    lease.replicated_deadline_ms = lease.deadline_ms;
    lease.renewed = false;
    lease.expiring = false;
    lease.checkpoint_due = true;
    lease.in_flight_ms = 0;
  }
}

Status Model::ReadEvents(const std::string& key, const std::string& range_end,
                         int64_t from_revision, int64_t to_revision, size_t max_events,
                         bool with_prev_kv, std::vector<Event>* out) const {
  if (from_revision < compact_) return Status::Compacted(from_revision, compact_);
  to_revision = std::min(to_revision, committed_.revision);
  size_t taken = 0;
  for (auto it = events_.lower_bound(from_revision);
       it != events_.end() && it->first <= to_revision; ++it) {
    // A revision is never split: stop only between revisions.
    if (taken >= max_events) break;
    for (const Event& e : it->second) {
      if (!InRange(e.kv.key, key, range_end)) continue;
      Event copy = e;
      if (!with_prev_kv) {
        copy.has_prev_kv = false;
        copy.prev_kv = KeyValue{};
      }
      out->push_back(std::move(copy));
      ++taken;
    }
  }
  return Status::OK();
}

std::vector<int64_t> Model::Expired() {
  const int64_t now = clock_->MonotonicMs();
  std::vector<std::pair<int64_t, int64_t>> due;  // (deadline, id)
  for (const auto& [id, lease] : leases_) {
    if (lease.deadline_ms <= now) due.push_back({lease.deadline_ms, id});
  }
  std::sort(due.begin(), due.end());
  std::vector<int64_t> ids;
  for (const auto& [deadline, id] : due) {
    ids.push_back(id);
    ModelLease& lease = leases_[id];
    lease.deadline_ms = now + limits_.lease_expire_retry_ms;
    lease.expiring = true;
  }
  return ids;
}

int64_t Model::KeepAlive(int64_t id) {
  auto it = leases_.find(id);
  const int64_t now = clock_->MonotonicMs();
  if (it == leases_.end() || it->second.expiring || it->second.deadline_ms <= now) return 0;
  it->second.deadline_ms = now + it->second.ttl_s * 1000;
  it->second.renewed = true;
  return it->second.ttl_s;
}

LeaseTimeToLiveResponse Model::TimeToLive(const LeaseTimeToLiveRequest& request) const {
  LeaseTimeToLiveResponse out;
  out.header.revision = revision_;
  out.id = request.id;
  auto it = leases_.find(request.id);
  if (it == leases_.end()) return out;
  out.ttl = std::max<int64_t>(0, it->second.deadline_ms - clock_->MonotonicMs()) / 1000;
  out.granted_ttl = it->second.ttl_s;
  if (request.keys) {
    for (const auto& [k, kv] : Head()) {
      if (kv.lease == request.id) out.keys.push_back(k);
    }
  }
  return out;
}

std::vector<int64_t> Model::LeaseIds() const {
  std::vector<int64_t> ids;
  for (const auto& [id, lease] : leases_) ids.push_back(id);
  return ids;
}

std::vector<LeaseCheckpointRequest::Checkpoint> Model::Checkpoints(bool scan_all) {
  std::vector<LeaseCheckpointRequest::Checkpoint> out;
  const int64_t now = clock_->MonotonicMs();
  for (auto& [id, lease] : leases_) {
    if (lease.expiring) {
      lease.renewed = false;
      continue;
    }
    // One checkpoint in flight per lease: a renewal meanwhile waits for it.
    if (lease.in_flight_ms != 0) continue;
    const bool renewed = std::exchange(lease.renewed, false);
    const int64_t ttl_ms = lease.ttl_s * 1000;
    const int64_t remaining = std::max<int64_t>(1, lease.deadline_ms - now);
    if (renewed &&
        (lease.checkpoint_due || lease.deadline_ms - lease.replicated_deadline_ms > ttl_ms / 2)) {
      out.push_back({id, remaining});
    } else if (scan_all && remaining < ttl_ms / 2) {
      const int64_t recorded = lease.remaining_ms > 0 ? lease.remaining_ms : ttl_ms;
      if (recorded - remaining >= std::max<int64_t>(1000, ttl_ms / 10)) {
        out.push_back({id, remaining});
      }
    }
  }
  for (const auto& cp : out) {
    leases_[cp.id].in_flight_ms = now + cp.remaining_ms;
    leases_[cp.id].in_flight_remaining_ms = cp.remaining_ms;
  }
  return out;
}

void Model::CheckpointsDropped(const LeaseCheckpointRequest& request) {
  for (const auto& cp : request.checkpoints) {
    auto it = leases_.find(cp.id);
    if (it == leases_.end() || it->second.in_flight_ms == 0) continue;
    it->second.in_flight_ms = 0;
    it->second.renewed = true;
  }
}

bool Model::RenewalRecorded(int64_t id, int64_t renewed_at_ms) const {
  auto it = leases_.find(id);
  if (it == leases_.end()) return true;
  const ModelLease& lease = it->second;
  const int64_t ttl_ms = lease.ttl_s * 1000;
  return !lease.checkpoint_due &&
         renewed_at_ms + ttl_ms - lease.replicated_deadline_ms <= ttl_ms / 2;
}

}  // namespace natcd::testing
