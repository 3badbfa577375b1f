#include "mvcc/kv_store.h"

#include <algorithm>
#include <cassert>
#include <string_view>

#include "natcd/key_range.h"

namespace natcd {
namespace {

Status EmptyKey() {
  return Status::InvalidArgument("ErrEmptyKey", "etcdserver: key is not provided");
}

Status DuplicateKey() {
  return Status::InvalidArgument("ErrDuplicateKey",
                                 "etcdserver: duplicate key given in txn request");
}

template <typename T>
int CompareValues(const T& a, const T& b) {
  return a < b ? -1 : (b < a ? 1 : 0);
}

bool CompareMatches(const Compare& c, const KeyValue& kv) {
  int r = 0;
  switch (c.target) {
    case Compare::Target::kVersion:
      r = CompareValues(kv.version, c.version);
      break;
    case Compare::Target::kCreate:
      r = CompareValues(kv.create_revision, c.create_revision);
      break;
    case Compare::Target::kMod:
      r = CompareValues(kv.mod_revision, c.mod_revision);
      break;
    case Compare::Target::kValue:
      r = kv.value.compare(c.value);
      r = r < 0 ? -1 : (r > 0 ? 1 : 0);
      break;
    case Compare::Target::kLease:
      r = CompareValues(kv.lease, c.lease);
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

// The puts and deletes of one txn branch, for etcd's duplicate-key rule: a
// key may be put once, and not inside a range deleted by the same branch
// (nested branches included). Deletes may overlap each other.
struct WriteSet {
  std::vector<std::string> puts;
  std::vector<std::pair<std::string, std::string>> dels;

  bool HasPut(const std::string& key) const {
    return std::find(puts.begin(), puts.end(), key) != puts.end();
  }
  bool Deletes(const std::string& key) const {
    for (const auto& [start, end] : dels) {
      if (KeyInRange(key, start, end)) return true;
    }
    return false;
  }
};

// etcd's checkIntervals.
Status CheckIntervals(const std::vector<RequestOp>& ops, WriteSet* out) {
  WriteSet set;
  for (const RequestOp& op : ops) {
    if (auto* del = std::get_if<DeleteRangeRequest>(&op.op)) {
      set.dels.emplace_back(del->key, del->range_end);
    }
  }
  for (const RequestOp& op : ops) {
    auto* nested = std::get_if<std::shared_ptr<TxnRequest>>(&op.op);
    if (nested == nullptr) continue;
    WriteSet then_set, else_set;
    NATCD_RETURN_IF_ERROR(CheckIntervals((*nested)->success, &then_set));
    NATCD_RETURN_IF_ERROR(CheckIntervals((*nested)->failure, &else_set));
    std::vector<std::string> added;
    for (const std::string& key : then_set.puts) {
      if (set.HasPut(key) || set.Deletes(key)) return DuplicateKey();
      added.push_back(key);
    }
    for (const std::string& key : else_set.puts) {
      // then and else exclude each other, so a key in both is fine.
      bool in_then =
          std::find(then_set.puts.begin(), then_set.puts.end(), key) != then_set.puts.end();
      if ((set.HasPut(key) && !in_then) || set.Deletes(key)) return DuplicateKey();
      if (!in_then) added.push_back(key);
    }
    set.puts.insert(set.puts.end(), added.begin(), added.end());
    set.dels.insert(set.dels.end(), then_set.dels.begin(), then_set.dels.end());
    set.dels.insert(set.dels.end(), else_set.dels.begin(), else_set.dels.end());
  }
  for (const RequestOp& op : ops) {
    auto* put = std::get_if<PutRequest>(&op.op);
    if (put == nullptr) continue;
    if (set.HasPut(put->key) || set.Deletes(put->key)) return DuplicateKey();
    set.puts.push_back(put->key);
  }
  *out = std::move(set);
  return Status::OK();
}

void SortKvs(std::vector<KeyValue>* kvs, SortOrder order, SortTarget target) {
  auto less = [target](const KeyValue& a, const KeyValue& b) {
    switch (target) {
      case SortTarget::kKey:
        return a.key < b.key;
      case SortTarget::kVersion:
        return a.version < b.version;
      case SortTarget::kCreate:
        return a.create_revision < b.create_revision;
      case SortTarget::kMod:
        return a.mod_revision < b.mod_revision;
      case SortTarget::kValue:
        return a.value < b.value;
    }
    return false;
  };
  if (order == SortOrder::kDescend) {
    std::stable_sort(kvs->begin(), kvs->end(),
                     [&less](const KeyValue& a, const KeyValue& b) { return less(b, a); });
  } else {
    std::stable_sort(kvs->begin(), kvs->end(), less);
  }
}

}  // namespace

Status KvStore::Load() {
  Result<int64_t> compact = backend_->GetMeta(SqliteBackend::kMetaCompactRevision, 0);
  if (!compact.ok()) return compact.status();
  compact_revision_ = *compact;

  int64_t max_seen = 0;
  Status scan = backend_->ScanRows(
      0,
      [&](RevisionRow&& row) {
        max_seen = row.rev;
        KeyEntry* found = index_.Find(row.kv.key);
        KeyEntry& entry = found != nullptr ? *found : *index_.AddUnordered(row.kv.key);
        entry.revs.push_back(RevRecord{row.rev, static_cast<int32_t>(row.sub), row.tombstone});
        if (row.tombstone) {
          entry.create_revision = entry.version = entry.lease = 0;
        } else {
          entry.create_revision = row.kv.create_revision;
          entry.version = row.kv.version;
          entry.lease = row.kv.lease;
        }
        return true;
      },
      // Values are cached as they are read or written, not here: the cache
      // would only churn through every value to keep the last budget's worth.
      /*with_values=*/false);
  // Rows come in revision order, so keys in no order: ordering them once
  // at the end is far cheaper than a tree insert at a random place per key
  // (see KeyIndex). Done after a failed scan too, leaving the index whole.
  index_.SortUnordered();
  NATCD_RETURN_IF_ERROR(scan);
  // Every revision writes at least one row and compaction keeps every row
  // at or above the compact revision, so the newest row is the revision.
  // Deriving it saves writing a counter (a second WAL page) per commit.
  // A store written before revisions started at kEmptyStoreRevision may hold a
  // write at revision 1; it keeps its revisions.
  revision_ = std::max({max_seen, compact_revision_, kEmptyStoreRevision});
  KeyIndex::Cursor all = index_.Range(std::string_view(), std::string_view("\0", 1));
  while (const KeyEntry* entry = all.Next()) {
    if (!entry->live() || entry->lease == 0) continue;
    if (!leases_->Exists(entry->lease)) {
      return Status::Corruption("key attached to missing lease " + std::to_string(entry->lease));
    }
    leases_->Attach(entry->lease, std::string(entry->key()));
  }
  // A compaction whose physical removal had not finished: drop the rows again.
  index_.Compact(compact_revision_, &pending_rows_);
  return Status::OK();
}

Status KvStore::CheckReadRevision(int64_t revision) const {
  if (revision > 0 && revision < compact_revision_) {
    return Status::Compacted(revision, compact_revision_);
  }
  if (revision > revision_) return Status::FutureRevision(revision, revision_);
  return Status::OK();
}

Status KvStore::ValidateRange(const RangeRequest& request) const {
  if (request.key.empty()) return EmptyKey();
  return CheckReadRevision(request.revision);
}

Status KvStore::HeadValue(KeyEntry& entry, ValueUse use, std::string* value) {
  assert(entry.live());
  std::optional<std::string_view> cached =
      use == ValueUse::kRead ? cache_.Find(&entry) : cache_.Peek(&entry);
  if (cached) {
    value->assign(*cached);
    return Status::OK();
  }
  const RevRecord& head = entry.revs.back();
  Result<RevisionRow> row = backend_->GetRow(head.main, head.sub);
  if (!row.ok()) {
    return Status::Corruption("index names revision " + std::to_string(head.main) +
                              " of a key but the row is missing: " + row.status().ToString());
  }
  *value = std::move(row->kv.value);
  if (use == ValueUse::kRead) cache_.Put(&entry, *value);
  return Status::OK();
}

Status KvStore::LoadVisible(KeyEntry& entry, const RevRecord& record, bool with_value,
                            KeyValue* kv) {
  if (&record == &entry.revs.back()) {
    kv->key = entry.key();
    kv->create_revision = entry.create_revision;
    kv->mod_revision = record.main;
    kv->version = entry.version;
    kv->lease = entry.lease;
    return with_value ? HeadValue(entry, ValueUse::kRead, &kv->value) : Status::OK();
  }
  Result<RevisionRow> row = backend_->GetRow(record.main, record.sub);
  if (!row.ok()) {
    return Status::Corruption("index names revision " + std::to_string(record.main) +
                              " of a key but the row is missing: " + row.status().ToString());
  }
  *kv = std::move(row->kv);
  return Status::OK();
}

Result<RangeResponse> KvStore::Range(const RangeRequest& request) {
  NATCD_RETURN_IF_ERROR(ValidateRange(request));
  // Inside a txn that already wrote, reads see its writes (as etcd's txn).
  int64_t head = revision_ + (next_sub_ > 0 ? 1 : 0);
  int64_t rev = request.revision > 0 ? request.revision : head;

  SortOrder order = request.sort_order;
  if (order == SortOrder::kNone && request.sort_target != SortTarget::kKey) {
    order = SortOrder::kAscend;  // etcd: only KEY order comes for free
  }
  bool filtered = request.min_mod_revision || request.max_mod_revision ||
                  request.min_create_revision || request.max_create_revision;
  bool sorted = order == SortOrder::kDescend ||
                (order == SortOrder::kAscend && request.sort_target != SortTarget::kKey);
  bool by_value = sorted && request.sort_target == SortTarget::kValue;
  // Without sorting or filtering, the first limit + 1 keys answer kvs and more.
  size_t fetch_max = (sorted || filtered || request.limit <= 0)
                         ? SIZE_MAX
                         : static_cast<size_t>(request.limit) + 1;

  RangeResponse response;
  response.header.revision = head;
  KeyIndex::Cursor cursor = index_.Range(request.key, request.range_end);
  while (KeyEntry* entry = cursor.Next()) {
    const RevRecord* record = entry->VisibleAt(rev);
    if (record == nullptr || record->tombstone) continue;
    ++response.count;
    if (request.count_only || response.kvs.size() >= fetch_max) continue;
    KeyValue kv;
    // The head's value only once the filters passed: a filtered range need
    // not read (nor cache) the values of the keys it leaves out.
    const bool head = record == &entry->revs.back();
    const bool with_value = !request.keys_only || by_value;
    NATCD_RETURN_IF_ERROR(LoadVisible(*entry, *record, with_value && !head, &kv));
    if ((request.min_mod_revision && kv.mod_revision < request.min_mod_revision) ||
        (request.max_mod_revision && kv.mod_revision > request.max_mod_revision) ||
        (request.min_create_revision && kv.create_revision < request.min_create_revision) ||
        (request.max_create_revision && kv.create_revision > request.max_create_revision)) {
      continue;
    }
    if (with_value && head) NATCD_RETURN_IF_ERROR(HeadValue(*entry, ValueUse::kRead, &kv.value));
    // etcd drops the values only after sorting: a keys_only read sorted by
    // value is still in value order.
    if (request.keys_only && !by_value) std::string().swap(kv.value);
    response.kvs.push_back(std::move(kv));
  }
  if (sorted) SortKvs(&response.kvs, order, request.sort_target);
  if (request.limit > 0 && response.kvs.size() > static_cast<size_t>(request.limit)) {
    response.kvs.resize(request.limit);
    response.more = true;
  }
  if (request.keys_only && by_value) {
    for (KeyValue& kv : response.kvs) std::string().swap(kv.value);
  }
  return response;
}

Status KvStore::ValidatePut(const PutRequest& request) {
  if (request.key.empty()) return EmptyKey();
  if (request.ignore_value && !request.value.empty()) {
    return Status::InvalidArgument("ErrValueProvided", "etcdserver: value is provided");
  }
  if (request.ignore_lease && request.lease != 0) {
    return Status::InvalidArgument("ErrLeaseProvided", "etcdserver: lease is provided");
  }
  if (request.ignore_value || request.ignore_lease) {
    KeyEntry* entry = index_.Find(request.key);
    if (entry == nullptr || !entry->live()) {
      return Status::NotFound("ErrKeyNotFound", "etcdserver: key not found");
    }
  }
  if (request.lease != 0 && !leases_->Exists(request.lease)) {
    return Status::LeaseNotFound(request.lease);
  }
  return Status::OK();
}

Status KvStore::WritePut(const PutRequest& request, PutResponse* response) {
  const int64_t main = revision_ + 1;
  const int64_t sub = NextSub();
  // A new key enters the index only once its row is in: a failed insert
  // leaves the index as it was.
  KeyEntry* entry = index_.Find(request.key);
  const bool was_live = entry != nullptr && entry->live();

  Event event;
  event.type = Event::Type::kPut;
  if (was_live) {
    event.has_prev_kv = true;
    event.prev_kv = KeyValue{request.key,    entry->create_revision, entry->revs.back().main,
                             entry->version, std::string(),          entry->lease};
    NATCD_RETURN_IF_ERROR(HeadValue(*entry, ValueUse::kReplace, &event.prev_kv.value));
  }
  KeyValue& kv = event.kv;
  kv.key = request.key;
  kv.create_revision = was_live ? entry->create_revision : main;
  kv.mod_revision = main;
  kv.version = was_live ? entry->version + 1 : 1;
  kv.value = request.ignore_value ? event.prev_kv.value : request.value;
  kv.lease = request.ignore_lease ? event.prev_kv.lease : request.lease;

  NATCD_RETURN_IF_ERROR(backend_->InsertRow(main, sub, /*tombstone=*/false, kv));

  const int64_t old_lease = was_live ? entry->lease : 0;
  if (old_lease != kv.lease) {
    if (old_lease != 0) leases_->Detach(old_lease, request.key);
    if (kv.lease != 0) leases_->Attach(kv.lease, request.key);
  }
  if (entry == nullptr) entry = index_.Add(request.key);
  entry->revs.push_back(RevRecord{main, static_cast<int32_t>(sub), false});
  entry->create_revision = kv.create_revision;
  entry->version = kv.version;
  entry->lease = kv.lease;
  cache_.Put(entry, kv.value);

  if (request.prev_kv && was_live) {
    response->has_prev_kv = true;
    response->prev_kv = event.prev_kv;
  }
  events_.push_back(std::move(event));
  return Status::OK();
}

Status KvStore::WriteTombstone(KeyEntry& entry, bool want_prev, std::vector<KeyValue>* prev_kvs) {
  assert(entry.live());
  const int64_t main = revision_ + 1;
  const int64_t sub = NextSub();
  Event event;
  event.type = Event::Type::kDelete;
  event.kv.key = entry.key();
  event.kv.mod_revision = main;
  event.has_prev_kv = true;
  event.prev_kv = KeyValue{event.kv.key,  entry.create_revision, entry.revs.back().main,
                           entry.version, std::string(),         entry.lease};
  NATCD_RETURN_IF_ERROR(HeadValue(entry, ValueUse::kReplace, &event.prev_kv.value));
  NATCD_RETURN_IF_ERROR(backend_->InsertRow(main, sub, /*tombstone=*/true, event.kv));
  if (want_prev) prev_kvs->push_back(event.prev_kv);
  if (entry.lease != 0) leases_->Detach(entry.lease, event.kv.key);
  entry.revs.push_back(RevRecord{main, static_cast<int32_t>(sub), true});
  entry.create_revision = entry.version = entry.lease = 0;
  cache_.Drop(&entry);
  events_.push_back(std::move(event));
  return Status::OK();
}

Status KvStore::WriteDelete(const DeleteRangeRequest& request, DeleteRangeResponse* response) {
  // The cursor survives: a tombstone changes the entry, not the index.
  KeyIndex::Cursor cursor = index_.Range(request.key, request.range_end);
  while (KeyEntry* entry = cursor.Next()) {
    if (!entry->live()) continue;
    NATCD_RETURN_IF_ERROR(WriteTombstone(*entry, request.prev_kv, &response->prev_kvs));
    ++response->deleted;
  }
  return Status::OK();
}

Status KvStore::FinishWrite() {
  if (next_sub_ > 0) ++revision_;
  next_sub_ = 0;
  return Status::OK();
}

Result<PutResponse> KvStore::Put(const PutRequest& request) {
  NATCD_RETURN_IF_ERROR(ValidatePut(request));
  PutResponse response;
  Status s = WritePut(request, &response);
  NATCD_RETURN_IF_ERROR(FinishWrite());
  if (!s.ok()) return s;
  response.header.revision = revision_;
  return response;
}

Result<DeleteRangeResponse> KvStore::DeleteRange(const DeleteRangeRequest& request) {
  if (request.key.empty()) return EmptyKey();
  DeleteRangeResponse response;
  Status s = WriteDelete(request, &response);
  NATCD_RETURN_IF_ERROR(FinishWrite());
  if (!s.ok()) return s;
  response.header.revision = revision_;
  return response;
}

Status KvStore::CheckTxnShape(const TxnRequest& request, int64_t max_ops) const {
  int64_t opc = std::max({request.compare.size(), request.success.size(), request.failure.size()});
  if (opc > max_ops) {
    return Status::InvalidArgument("ErrTooManyOps",
                                   "etcdserver: too many operations in txn request");
  }
  for (const Compare& c : request.compare) {
    if (c.key.empty()) return EmptyKey();
  }
  for (const auto* branch : {&request.success, &request.failure}) {
    for (const RequestOp& op : *branch) {
      if (auto* nested = std::get_if<std::shared_ptr<TxnRequest>>(&op.op)) {
        if (*nested == nullptr) return Status::InvalidArgument("ErrInvalidTxn", "empty nested txn");
        NATCD_RETURN_IF_ERROR(CheckTxnShape(**nested, max_ops - opc));
      } else if (auto* range = std::get_if<RangeRequest>(&op.op)) {
        if (range->key.empty()) return EmptyKey();
      } else if (auto* put = std::get_if<PutRequest>(&op.op)) {
        if (put->key.empty()) return EmptyKey();
        if (put->ignore_value && !put->value.empty()) {
          return Status::InvalidArgument("ErrValueProvided", "etcdserver: value is provided");
        }
        if (put->ignore_lease && put->lease != 0) {
          return Status::InvalidArgument("ErrLeaseProvided", "etcdserver: lease is provided");
        }
      } else if (auto* del = std::get_if<DeleteRangeRequest>(&op.op)) {
        if (del->key.empty()) return EmptyKey();
      }
    }
  }
  return Status::OK();
}

Result<bool> KvStore::EvaluateCompares(const std::vector<Compare>& compares) {
  for (const Compare& c : compares) {
    bool matched_any = false;
    KeyIndex::Cursor cursor = index_.Range(c.key, c.range_end);
    while (KeyEntry* entry = cursor.Next()) {
      if (!entry->live()) continue;
      matched_any = true;
      KeyValue kv{std::string(entry->key()),
                  entry->create_revision,
                  entry->revs.back().main,
                  entry->version,
                  std::string(),
                  entry->lease};
      if (c.target == Compare::Target::kValue) {
        NATCD_RETURN_IF_ERROR(HeadValue(*entry, ValueUse::kRead, &kv.value));
      }
      if (!CompareMatches(c, kv)) return false;
    }
    if (!matched_any) {
      // etcd: a value compare on missing keys always fails; every other
      // target compares against the zero KeyValue.
      if (c.target == Compare::Target::kValue) return false;
      if (!CompareMatches(c, KeyValue{})) return false;
    }
  }
  return true;
}

Status KvStore::PlanTxn(const TxnRequest& request, std::vector<bool>* path) {
  Result<bool> succeeded = EvaluateCompares(request.compare);
  if (!succeeded.ok()) return succeeded.status();
  path->push_back(*succeeded);
  for (const RequestOp& op : *succeeded ? request.success : request.failure) {
    if (auto* nested = std::get_if<std::shared_ptr<TxnRequest>>(&op.op)) {
      NATCD_RETURN_IF_ERROR(PlanTxn(**nested, path));
    }
  }
  return Status::OK();
}

Status KvStore::CheckPath(const TxnRequest& request, const std::vector<bool>& path,
                          size_t* path_pos, bool puts) {
  for (const RequestOp& op : path[(*path_pos)++] ? request.success : request.failure) {
    if (auto* nested = std::get_if<std::shared_ptr<TxnRequest>>(&op.op)) {
      NATCD_RETURN_IF_ERROR(CheckPath(**nested, path, path_pos, puts));
    } else if (auto* range = std::get_if<RangeRequest>(&op.op); range && !puts) {
      NATCD_RETURN_IF_ERROR(ValidateRange(*range));
    } else if (auto* put = std::get_if<PutRequest>(&op.op); put && puts) {
      NATCD_RETURN_IF_ERROR(ValidatePut(*put));
    }
  }
  return Status::OK();
}

TxnResponse KvStore::ExecuteTxn(const TxnRequest& request, const std::vector<bool>& path,
                                size_t* path_pos, Status* io) {
  TxnResponse response;
  response.succeeded = path[(*path_pos)++];
  for (const RequestOp& op : response.succeeded ? request.success : request.failure) {
    if (!io->ok()) break;
    ResponseOp out;
    if (auto* range = std::get_if<RangeRequest>(&op.op)) {
      Result<RangeResponse> r = Range(*range);
      if (!r.ok()) {
        *io = r.status();
        break;
      }
      out.response = std::move(r).value();
    } else if (auto* put = std::get_if<PutRequest>(&op.op)) {
      PutResponse r;
      *io = WritePut(*put, &r);
      out.response = std::move(r);
    } else if (auto* del = std::get_if<DeleteRangeRequest>(&op.op)) {
      DeleteRangeResponse r;
      *io = WriteDelete(*del, &r);
      out.response = std::move(r);
    } else if (auto* nested = std::get_if<std::shared_ptr<TxnRequest>>(&op.op)) {
      out.response = std::make_shared<TxnResponse>(ExecuteTxn(**nested, path, path_pos, io));
    }
    response.responses.push_back(std::move(out));
  }
  return response;
}

namespace {
void SetHeaders(TxnResponse* response, int64_t revision) {
  response->header.revision = revision;
  for (ResponseOp& op : response->responses) {
    std::visit(
        [revision](auto& r) {
          if constexpr (std::is_same_v<std::decay_t<decltype(r)>, std::shared_ptr<TxnResponse>>) {
            SetHeaders(r.get(), revision);
          } else {
            r.header.revision = revision;
          }
        },
        op.response);
  }
}
}  // namespace

Result<TxnResponse> KvStore::Txn(const TxnRequest& request) {
  NATCD_RETURN_IF_ERROR(CheckTxnShape(request, limits_.max_txn_ops));
  // etcd v3rpc Txn: the duplicate-key check runs once, at the top, after
  // the whole request passed the static checks (it covers nested txns).
  WriteSet ignored;
  NATCD_RETURN_IF_ERROR(CheckIntervals(request.success, &ignored));
  NATCD_RETURN_IF_ERROR(CheckIntervals(request.failure, &ignored));
  std::vector<bool> path;
  NATCD_RETURN_IF_ERROR(PlanTxn(request, &path));
  // etcd checkRequests: every put on the path first, then every range, so a
  // txn with both kinds of error fails with the put's error, as in etcd.
  for (bool puts : {true, false}) {
    size_t pos = 0;
    NATCD_RETURN_IF_ERROR(CheckPath(request, path, &pos, puts));
  }
  size_t pos = 0;
  Status io;
  TxnResponse response = ExecuteTxn(request, path, &pos, &io);
  NATCD_RETURN_IF_ERROR(FinishWrite());
  if (!io.ok()) return io;
  SetHeaders(&response, revision_);
  return response;
}

Status KvStore::Compact(const CompactionRequest& request) {
  if (request.revision <= compact_revision_) {
    return Status::Compacted(request.revision, compact_revision_);
  }
  if (request.revision > revision_) {
    return Status::FutureRevision(request.revision, revision_);
  }
  NATCD_RETURN_IF_ERROR(backend_->SetMeta(SqliteBackend::kMetaCompactRevision, request.revision));
  compact_revision_ = request.revision;
  index_.Compact(request.revision, &pending_rows_);
  if (request.physical) {
    Result<size_t> left = DeletePendingRows(SIZE_MAX);
    if (!left.ok()) return left.status();
  }
  return Status::OK();
}

Result<size_t> KvStore::DeletePendingRows(size_t max_rows) {
  size_t n = std::min(max_rows, pending_rows_.size());
  for (size_t i = 0; i < n; ++i) {
    NATCD_RETURN_IF_ERROR(backend_->DeleteRow(pending_rows_[i].first, pending_rows_[i].second));
  }
  pending_rows_.erase(pending_rows_.begin(), pending_rows_.begin() + n);
  return pending_rows_.size();
}

Status KvStore::DeleteLeaseKeys(int64_t lease_id) {
  Lease* lease = leases_->Find(lease_id);
  if (lease == nullptr) return Status::OK();
  // WriteTombstone detaches each key from the lease: iterate over a copy.
  std::vector<std::string> keys(lease->keys.begin(), lease->keys.end());
  Status s;
  for (const std::string& key : keys) {
    KeyEntry* entry = index_.Find(key);
    if (entry == nullptr || !entry->live()) continue;
    s = WriteTombstone(*entry, false, nullptr);
    if (!s.ok()) break;
  }
  NATCD_RETURN_IF_ERROR(FinishWrite());
  return s;
}

Status KvStore::ReadEvents(const std::string& key, const std::string& range_end,
                           int64_t from_revision, int64_t to_revision, size_t max_events,
                           bool with_prev_kv, std::vector<Event>* out) {
  if (from_revision < compact_revision_) return Status::Compacted(from_revision, compact_revision_);
  if (from_revision > to_revision) return Status::OK();
  size_t taken = 0;
  int64_t last_rev = 0;
  Status inner;
  Status s = backend_->ScanRows(from_revision, [&](RevisionRow&& row) {
    if (row.rev > to_revision) return false;
    if (taken >= max_events && row.rev != last_rev) return false;
    last_rev = row.rev;
    if (!KeyInRange(row.kv.key, key, range_end)) return true;
    Event event;
    event.type = row.tombstone ? Event::Type::kDelete : Event::Type::kPut;
    if (with_prev_kv) {
      const KeyEntry* entry = index_.Find(row.kv.key);
      const RevRecord* prev =
          entry ? entry->Before(row.rev, static_cast<int32_t>(row.sub)) : nullptr;
      if (prev != nullptr && !prev->tombstone) {
        Result<RevisionRow> prev_row = backend_->GetRow(prev->main, prev->sub);
        if (!prev_row.ok()) {
          inner = prev_row.status();
          return false;
        }
        event.has_prev_kv = true;
        event.prev_kv = std::move(prev_row->kv);
      }
    }
    if (row.tombstone) {
      event.kv.key = std::move(row.kv.key);
      event.kv.mod_revision = row.rev;
    } else {
      event.kv = std::move(row.kv);
    }
    out->push_back(std::move(event));
    ++taken;
    return true;
  });
  NATCD_RETURN_IF_ERROR(inner);
  return s;
}

}  // namespace natcd
