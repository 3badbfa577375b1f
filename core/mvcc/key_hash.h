// KeyHash: the point-lookup side of the KeyIndex, key -> KeyEntry*. A read
// of one key at the head is the most common request; walking an ordered
// tree for it costs a cache miss per level, this costs about two (the slot,
// then the entry).
//
// Open addressing with linear probing, one 8-byte word per slot: the entry
// pointer with a 4-bit tag from the key's hash in its low bits (entries are
// malloc'd, so 16-byte aligned), so that probing past other keys rarely
// touches their entries. At most 4/5 full and grown by half, the table costs
// 10 to 15 bytes a key. Deletion shifts the following slots back instead of
// leaving tombstones, so lookups never slow down with churn.
//
// The table does not own the entries. Thread safety: none.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "mvcc/key_entry.h"

namespace natcd {

class KeyHash {
 public:
  KeyHash() = default;
  ~KeyHash();
  KeyHash(const KeyHash&) = delete;
  KeyHash& operator=(const KeyHash&) = delete;

  // The entry of key, or nullptr.
  KeyEntry* Find(std::string_view key) const;
  // Adds entry, whose key must not be in the table. Throws std::bad_alloc.
  void Insert(KeyEntry* entry);
  // Removes entry, which must be in the table.
  void Erase(const KeyEntry* entry);
  // Empties the table and sizes it for n keys (for a rebuild).
  void Reset(size_t n);

  size_t size() const { return size_; }
  size_t capacity() const { return capacity_; }

 private:
  static constexpr uintptr_t kTagMask = 15;
  static constexpr size_t kMinCapacity = 16;

  static size_t Hash(std::string_view key);
  // The slot where a key with hash h starts probing: h scaled to
  // [0, capacity_) by a multiply (any capacity works, not only powers of 2).
  size_t Home(size_t h) const {
    return static_cast<size_t>((static_cast<unsigned __int128>(h) * capacity_) >> 64);
  }
  size_t Next(size_t i) const { return i + 1 == capacity_ ? 0 : i + 1; }
  static KeyEntry* EntryOf(uintptr_t slot) { return reinterpret_cast<KeyEntry*>(slot & ~kTagMask); }
  // Places entry in the first free slot of its probe sequence.
  void Place(KeyEntry* entry, size_t h);
  void Resize(size_t capacity);

  uintptr_t* slots_ = nullptr;  // 0 = free
  size_t capacity_ = 0;
  size_t size_ = 0;
};

}  // namespace natcd
