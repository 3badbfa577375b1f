// KvStore: the multi-version key-value store (etcd's mvcc) over the
// KeyIndex and the SqliteBackend.
//
// Every write request gets the next revision (current + 1) for all its
// writes, with sub-revisions 0, 1, 2... in order; a request that writes
// nothing (a delete matching no key, a txn of reads) leaves the revision
// alone; a store never written is at kEmptyStoreRevision (1). Each write is inserted into the
// backend's open batch at once and recorded in the index; the events it produces accumulate until
// the Engine commits the batch and takes them (TakeEvents).
//
// Writes must only be given requests that passed validation for their
// branch: Put/DeleteRange/Txn validate first and change nothing on error,
// so a failed request leaves the store exactly as it was.
//
// Thread safety: none; owned by the Engine.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "lease/lease_manager.h"
#include "mvcc/key_index.h"
#include "mvcc/value_cache.h"
#include "natcd/status.h"
#include "natcd/types.h"
#include "storage/sqlite_backend.h"

namespace natcd {

struct KvLimits {
  int64_t max_txn_ops = 128;
  // The most the current values kept in memory may take (ValueCache);
  // 0: none, every value is read from its row.
  size_t value_cache_bytes = 0;
};

class KvStore {
 public:
  KvStore(SqliteBackend* backend, LeaseManager* leases, KvLimits limits)
      : backend_(backend), leases_(leases), limits_(limits), cache_(limits.value_cache_bytes) {}

  // Rebuilds the index from the backend (and re-attaches keys to leases,
  // which must be loaded first). Replays the persisted compaction.
  Status Load();

  Result<RangeResponse> Range(const RangeRequest& request);
  Result<PutResponse> Put(const PutRequest& request);
  Result<DeleteRangeResponse> DeleteRange(const DeleteRangeRequest& request);
  Result<TxnResponse> Txn(const TxnRequest& request);
  // Compacts the index at once; physical removal of the dropped rows is
  // queued (see DeletePendingRows) unless request.physical.
  Status Compact(const CompactionRequest& request);
  // Deletes every live key attached to the lease at one revision (no
  // revision when it has none) and detaches them.
  Status DeleteLeaseKeys(int64_t lease_id);

  // etcd's HashKV over the logical MVCC state (core/mvcc/kv_store_hash.cc):
  // every write with revision in (compact revision, revision] plus the
  // writes at or below the compact revision that compaction keeps; rows it
  // dropped but not yet removed from SQLite are left out, so members agree
  // whatever their removal progress. revision 0: the current one.
  Result<HashKVResponse> HashKV(int64_t revision);
  // etcd's Hash (testing only): every stored row of the kv and lease tables,
  // as they are on disk (dropped rows not yet removed included).
  Result<HashResponse> Hash();

  // Removes up to max_rows of the rows dropped by compaction, in the open
  // batch. Returns how many remain.
  Result<size_t> DeletePendingRows(size_t max_rows);
  size_t pending_rows() const { return pending_rows_.size(); }

  // Events produced since the last call, in (revision, sub) order, each
  // with prev_kv when the key was live before.
  std::vector<Event> TakeEvents() {
    std::vector<Event> out;
    out.reserve(events_.capacity());  // the next batch is likely as large
    out.swap(events_);
    return out;
  }
  // Forgets uncommitted events (the batch was rolled back).
  void DropEvents() { events_.clear(); }

  // Catch-up reads for watchers (see EventSource::ReadEvents).
  Status ReadEvents(const std::string& key, const std::string& range_end, int64_t from_revision,
                    int64_t to_revision, size_t max_events, bool with_prev_kv,
                    std::vector<Event>* out);

  int64_t revision() const { return revision_; }
  int64_t compact_revision() const { return compact_revision_; }
  size_t key_count() const { return index_.size(); }
  const ValueCache& value_cache() const { return cache_; }

 private:
  // Why a value is wanted: a read (marks it used, caches it when it was
  // not), or the prev_kv of a write about to replace it (neither: the
  // write says nothing of whether the value is read, and caching the old
  // value would evict others only to drop it at once).
  enum class ValueUse { kRead, kReplace };
  // The value of entry's latest write, which must be live: from the cache,
  // else from its row.
  Status HeadValue(KeyEntry& entry, ValueUse use, std::string* value);
  // State of the key visible at record (reads the row when it is not the
  // head, value included); the head's value only when with_value.
  Status LoadVisible(KeyEntry& entry, const RevRecord& record, bool with_value, KeyValue* kv);
  Status CheckReadRevision(int64_t revision) const;
  // Whether compaction keeps the write at row (its key's index entry has it).
  bool Kept(const RevisionRow& row);
  Status ValidatePut(const PutRequest& request);
  Status ValidateRange(const RangeRequest& request) const;
  // Static txn checks (etcd checkTxnRequest; Txn runs checkIntervals after).
  Status CheckTxnShape(const TxnRequest& request, int64_t max_ops) const;
  Result<bool> EvaluateCompares(const std::vector<Compare>& compares);
  // Chooses every branch (etcd compareToPath: all compares, nested ones
  // too, see the state before the txn).
  Status PlanTxn(const TxnRequest& request, std::vector<bool>* path);
  // Validates the puts (puts) or else the ranges on the chosen path (etcd
  // checkRequests with checkPut, then with checkRange).
  Status CheckPath(const TxnRequest& request, const std::vector<bool>& path, size_t* path_pos,
                   bool puts);
  TxnResponse ExecuteTxn(const TxnRequest& request, const std::vector<bool>& path, size_t* path_pos,
                         Status* io);

  // Write primitives: the revision in progress is revision_ + 1.
  Status WritePut(const PutRequest& request, PutResponse* response);
  Status WriteDelete(const DeleteRangeRequest& request, DeleteRangeResponse* response);
  Status WriteTombstone(KeyEntry& entry, bool want_prev, std::vector<KeyValue>* prev_kvs);
  // Ends a write request: bumps the revision if it wrote anything.
  Status FinishWrite();
  int64_t NextSub() { return next_sub_++; }

  SqliteBackend* backend_;
  LeaseManager* leases_;
  KvLimits limits_;
  KeyIndex index_;
  ValueCache cache_;
  int64_t revision_ = kEmptyStoreRevision;
  int64_t compact_revision_ = 0;
  // Sub-revision of the next write of the request in progress.
  int64_t next_sub_ = 0;
  std::vector<Event> events_;
  std::vector<std::pair<int64_t, int32_t>> pending_rows_;
};

}  // namespace natcd
