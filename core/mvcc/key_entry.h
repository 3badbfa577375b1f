// KeyEntry: everything the index holds for one key, in one heap block with
// the key bytes right behind it. A million keys means a million entries, so
// the layout is about bytes: 64 bytes of fields, the key inline (no
// std::string: its 32-byte header and second heap block would cost more
// than the key itself), and the value, when the ValueCache holds it, in its
// own exact-size block (one pointer instead of a 32-byte std::string).
//
// An entry never moves: the hash and the tree both point at it, and a
// KeyEntry* stays valid until compaction drops the key.
#pragma once

#include <cstdint>
#include <string_view>

#include "mvcc/rev_list.h"

namespace natcd {

// A value held by the ValueCache: its size and bookkeeping, then the bytes.
struct CachedValue {
  uint32_t size;
  uint32_t slot;    // the entry's place in the cache's ring
  bool referenced;  // read since the cache's clock hand last passed it
  std::string_view bytes() const { return {reinterpret_cast<const char*>(this + 1), size}; }
};

class KeyEntry {
 public:
  // A new entry for key with no writes (the caller adds the first at once:
  // see revs). Throws std::bad_alloc, as the standard containers do.
  static KeyEntry* New(std::string_view key);
  static void Delete(KeyEntry* entry);

  KeyEntry(const KeyEntry&) = delete;
  KeyEntry& operator=(const KeyEntry&) = delete;

  std::string_view key() const { return {reinterpret_cast<const char*>(this + 1), key_size_}; }

  // The value of the latest write while the ValueCache holds it, else
  // nullptr (always nullptr for a tombstone).
  const CachedValue* cached_value() const { return cached_value_; }

  bool live() const { return !revs.back().tombstone; }
  // The latest write with main <= rev, or nullptr. A tombstone means the key
  // did not exist at rev.
  const RevRecord* VisibleAt(int64_t rev) const;
  // The latest write before (main, sub), or nullptr. A txn may write a key
  // twice in one revision (etcd allows a put in one nested txn and a delete
  // in a later one), so sub counts.
  const RevRecord* Before(int64_t main, int32_t sub) const;

  // Every uncompacted write, ascending by (main, sub).
  // Invariant: never empty while the entry is in the index.
  RevList revs;
  // The state written by revs.back(), valid when live().
  int64_t create_revision = 0;
  int64_t version = 0;
  int64_t lease = 0;

 private:
  friend class ValueCache;  // alone sets cached_value_

  explicit KeyEntry(uint32_t key_size) : key_size_(key_size) {}
  ~KeyEntry();

  CachedValue* cached_value_ = nullptr;  // malloc'd; freed with the entry
  uint32_t key_size_;
  // The key bytes follow.
};

}  // namespace natcd
