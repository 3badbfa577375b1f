// KeyEntry: everything the index holds for one key, in one heap block with
// the key bytes right behind it. A million keys means a million entries, so
// the layout is about bytes: 64 bytes of fields, the key inline (no
// std::string: its 32-byte header and second heap block would cost more
// than the key itself), and the cached value in its own exact-size block
// (a pointer and a 32-bit length instead of a 32-byte std::string).
//
// An entry never moves: the hash and the tree both point at it, and a
// KeyEntry* stays valid until compaction drops the key.
#pragma once

#include <cstdint>
#include <string_view>

#include "mvcc/rev_list.h"

namespace natcd {

class KeyEntry {
 public:
  // A new entry for key with no writes (the caller adds the first at once:
  // see revs). Throws std::bad_alloc, as the standard containers do.
  static KeyEntry* New(std::string_view key);
  static void Delete(KeyEntry* entry);

  KeyEntry(const KeyEntry&) = delete;
  KeyEntry& operator=(const KeyEntry&) = delete;

  std::string_view key() const { return {reinterpret_cast<const char*>(this + 1), key_size_}; }

  // The cached value of the latest write (empty when it is a tombstone).
  std::string_view value() const { return {value_, value_size_}; }
  void set_value(std::string_view value);
  void clear_value();

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
  explicit KeyEntry(uint32_t key_size) : key_size_(key_size) {}
  ~KeyEntry();

  char* value_ = nullptr;  // value_size_ bytes of malloc, nullptr when empty
  uint32_t value_size_ = 0;
  uint32_t key_size_;
  // The key bytes follow.
};

}  // namespace natcd
