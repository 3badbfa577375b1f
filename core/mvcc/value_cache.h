// ValueCache: the current values of live keys kept in memory, within a byte
// budget. A read at the head, a txn comparing values and the prev_kv of a
// write take the value from here when it is cached, and from its SQLite row
// otherwise (KvStore). The index itself (every key and its revisions) stays
// whole in memory; only the values, which can be up to megabytes each and
// are most of the data, are bounded: without a budget, natcd's memory grew
// with everything ever stored, not with what is read.
//
// Each cached value is one malloc block hung off its KeyEntry (size and
// bookkeeping in front of the bytes), so a cached value costs what it did
// when every value was kept, and an uncached key costs nothing beyond the
// entry's pointer. Eviction is CLOCK (second chance): a ring of the cached
// entries, a bit set on each read, a hand that clears the bits it passes and
// evicts the first value whose bit is already clear. That approximates LRU
// at one bit a value and no list to relink on every read.
//
// Thread safety: none; owned by the KvStore, like the index.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "mvcc/key_entry.h"

namespace natcd {

class ValueCache {
 public:
  // budget_bytes: the most the cached values may take (see Charge); 0
  // caches nothing.
  explicit ValueCache(size_t budget_bytes) : budget_(budget_bytes) {}

  // What a value of value_size bytes counts against the budget: about what
  // it costs, its block (header and bytes) rounded up to the allocator's
  // 16-byte granularity, and its place in the ring.
  static size_t Charge(size_t value_size);
  ValueCache(const ValueCache&) = delete;
  ValueCache& operator=(const ValueCache&) = delete;

  // The value cached for entry, marked as used, or nullopt. The view is
  // valid until the next Put or Drop.
  std::optional<std::string_view> Find(KeyEntry* entry);
  // As Find, without marking it used: for a write that reads the value it
  // replaces (a prev_kv), which says nothing about whether it is read.
  std::optional<std::string_view> Peek(const KeyEntry* entry) const;
  // Caches value as entry's (replacing any it had), then evicts others down
  // to the budget. A value larger than the whole budget is not cached (and
  // any older one of entry's is dropped). Throws std::bad_alloc, with the
  // entry's older value dropped.
  void Put(KeyEntry* entry, std::string_view value);
  // Forgets entry's value, if cached. Must be called before the entry is
  // deleted, and whenever its value stops being the current one without a
  // Put (a tombstone).
  void Drop(KeyEntry* entry);

  size_t bytes() const { return bytes_; }
  size_t size() const { return ring_.size(); }
  size_t budget() const { return budget_; }

 private:
  // Evicts at the hand until within budget; keep is never evicted.
  void EvictFor(const KeyEntry* keep);
  // Removes ring_[slot]: frees its value and moves the last entry into the slot.
  void RemoveAt(size_t slot);

  size_t budget_;
  size_t bytes_ = 0;
  std::vector<KeyEntry*> ring_;  // the entries with a cached value
  size_t hand_ = 0;
};

}  // namespace natcd
