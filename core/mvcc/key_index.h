// KeyIndex: the in-memory index of every key's uncompacted writes, as
// etcd's treeIndex. It answers "which write of which key is visible at
// revision R" without touching SQLite; with each key's current state
// (create revision, version, lease) and, when the ValueCache holds it, its
// value, a read at the head revision need not touch SQLite either.
//
// Each key is one KeyEntry (fields and key bytes, see key_entry.h),
// reached two ways: a hash for point lookups (KeyHash) and a B+tree for
// ordered ranges (KeyTree). With 19-byte keys that is about 100 bytes a key
// beyond the key bytes, where a std::map<std::string, ...> took 173.
//
// Entries never move: a KeyEntry* stays valid until Compact drops its key.
// A Cursor is invalidated by Add, SortUnordered and Compact; writing to the
// entries it yields (a tombstone, a new value) is fine.
//
// Loading many keys (KvStore::Load) goes through AddUnordered, which puts a
// key in the hash only, then SortUnordered, which sorts those keys and
// builds the tree once. Inserting each key into the tree instead costs a
// search and a shift at a random position per key when keys come out of
// key order: 1,000,000 keys created in random order took 3 s to reopen
// against 1 s in ascending order.
//
// Thread safety: none; owned by the KvStore.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "mvcc/key_entry.h"
#include "mvcc/key_hash.h"
#include "mvcc/key_tree.h"

namespace natcd {

class KeyIndex {
 public:
  // The entries of a range, in key order.
  class Cursor {
   public:
    // The next entry, or nullptr at the end.
    KeyEntry* Next();

   private:
    friend class KeyIndex;
    Cursor() = default;
    KeyEntry* single_ = nullptr;  // a one-key range: its entry, until taken
    KeyTree::Iterator it_;        // the end when done
    std::string_view range_end_;  // stop at keys >= it; empty: no bound
  };

  KeyIndex() = default;
  ~KeyIndex();
  KeyIndex(const KeyIndex&) = delete;
  KeyIndex& operator=(const KeyIndex&) = delete;

  KeyEntry* Find(std::string_view key) { return hash_.Find(key); }
  // Adds key, which must not be in the index, with no writes yet: the
  // caller pushes the first write before anything else reads the index
  // (see KeyEntry::revs).
  KeyEntry* Add(std::string_view key);
  KeyEntry* FindOrAdd(std::string_view key) {
    KeyEntry* entry = Find(key);
    return entry != nullptr ? entry : Add(key);
  }
  // As Add, but the key is left out of the ordered side until
  // SortUnordered: Find sees it at once, Range does not. Range and Compact
  // must not be called while such keys wait.
  KeyEntry* AddUnordered(std::string_view key);
  // Puts every key added by AddUnordered since the last call in order,
  // with the keys the tree already holds: one sort, then a bulk build of
  // the tree with full leaves.
  void SortUnordered();
  // Keys in [key, range_end); range_end as in RangeRequest ("" = the key
  // alone, "\0" = every key >= key). range_end must outlive the cursor.
  Cursor Range(std::string_view key, std::string_view range_end);

  // Drops every write below rev except the latest one below rev when it is
  // live (the state visible at rev - 1, needed for reads at rev and for the
  // prev_kv of events at rev). Keys left with no write are removed. The
  // (main, sub) of each dropped write are appended to *dropped.
  void Compact(int64_t rev, std::vector<std::pair<int64_t, int32_t>>* dropped);

  size_t size() const { return hash_.size(); }

 private:
  KeyHash hash_;
  KeyTree tree_;
  std::vector<KeyEntry*> unordered_;  // in the hash, not yet in the tree
};

}  // namespace natcd
