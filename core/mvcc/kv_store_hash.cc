// KvStore: the hashes etcd's Maintenance service answers (HashKV, Hash),
// over the canonical encoding of core/mvcc/revision_hash.h.
#include "mvcc/kv_store.h"
#include "mvcc/revision_hash.h"

namespace natcd {

bool KvStore::Kept(const RevisionRow& row) {
  const KeyEntry* entry = index_.Find(row.kv.key);
  if (entry == nullptr) return false;
  for (const RevRecord& record : entry->revs) {
    if (record.main > row.rev) break;
    if (record.main == row.rev && record.sub == row.sub) return true;
  }
  return false;
}

Result<HashKVResponse> KvStore::HashKV(int64_t revision) {
  // etcd: ErrCompacted below the compact revision, ErrFutureRev past the
  // current one (the compact revision itself can be hashed).
  if (revision > 0 && revision < compact_revision_) {
    return Status::Compacted(revision, compact_revision_);
  }
  if (revision > revision_) return Status::FutureRevision(revision, revision_);
  const int64_t upto = revision > 0 ? revision : revision_;
  uint32_t crc = 0;
  // Rows at or below the compact revision are few per key once compacted
  // (the latest live one), but those compaction dropped may still be on
  // disk (removed a bounded number per Commit): the index says which count.
  NATCD_RETURN_IF_ERROR(backend_->ScanRows(0, [&](RevisionRow&& row) {
    if (row.rev > upto) return false;
    if (row.rev <= compact_revision_ && !Kept(row)) return true;
    crc = HashRevisionRow(crc, row);
    return true;
  }));
  HashKVResponse response;
  response.header.revision = revision_;
  response.hash = crc;
  response.compact_revision = compact_revision_;
  response.hash_revision = upto;
  return response;
}

Result<HashResponse> KvStore::Hash() {
  uint32_t crc = 0;
  NATCD_RETURN_IF_ERROR(backend_->ScanRows(0, [&](RevisionRow&& row) {
    crc = HashRevisionRow(crc, row);
    return true;
  }));
  NATCD_RETURN_IF_ERROR(
      backend_->ScanLeases([&](const LeaseRow& lease) { crc = HashLeaseRow(crc, lease); }));
  HashResponse response;
  response.header.revision = revision_;
  response.hash = crc;
  return response;
}

}  // namespace natcd
