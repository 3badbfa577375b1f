// KeyTree: the ordered side of the KeyIndex, a B+tree of KeyEntry pointers
// sorted by key (bytewise, as std::string compares), for range reads,
// deletes of ranges and compaction.
//
// Leaves hold up to kLeafMax entry pointers and are chained left to right,
// so a range read walks arrays instead of chasing a node per key: about 8.5
// bytes a key when leaves are full, 17 when half full, against a red-black
// node's 32 bytes of links plus malloc's header. Inner nodes hold child
// pointers and, as separators, pointers to entries that are in the tree
// (no copy of any key): keys in children[i] < separators[i] <= keys in
// children[i + 1].
//
// A full leaf splits in half, except the last leaf when the new key goes at
// its end: then the new key alone starts the next leaf, so keys created in
// ascending order leave full leaves behind (as SQLite's "quick balance").
// There is no single-key erase: the only removal, EraseIf, repacks every
// leaf full and rebuilds the inner levels, so a separator never outlives its
// entry and the tree never keeps near-empty leaves after mass deletes.
// Build fills a tree from entries already sorted, the same way: full
// leaves, inner levels built bottom up, no search per key.
//
// The tree does not own the entries. Iterators are invalidated by Insert and
// EraseIf. Allocation failure throws std::bad_alloc, which nothing in natcd
// catches (the process ends, as with the standard containers used here);
// the tree makes no promise about its state after one.
// Thread safety: none.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "mvcc/key_entry.h"

namespace natcd {

class KeyTree {
  struct Leaf;

 public:
  static constexpr uint32_t kLeafMax = 64;
  static constexpr uint32_t kInnerMax = 64;

  // Forward iterator over the entries in key order.
  class Iterator {
   public:
    Iterator() = default;
    KeyEntry* operator*() const { return leaf_->entries[pos_]; }
    Iterator& operator++() {
      if (++pos_ == leaf_->count) {
        leaf_ = leaf_->next;
        pos_ = 0;
      }
      return *this;
    }
    bool operator==(const Iterator&) const = default;

   private:
    friend class KeyTree;
    Iterator(const Leaf* leaf, uint32_t pos) : leaf_(leaf), pos_(pos) {}
    // Invariant: leaf_ == nullptr (the end) or pos_ < leaf_->count.
    const Leaf* leaf_ = nullptr;
    uint32_t pos_ = 0;
  };

  KeyTree() = default;
  ~KeyTree();
  KeyTree(const KeyTree&) = delete;
  KeyTree& operator=(const KeyTree&) = delete;

  Iterator begin() const { return Iterator(first_, 0); }
  Iterator end() const { return Iterator(); }
  // The first entry with key >= key.
  Iterator LowerBound(std::string_view key) const;
  // Adds entry, whose key must not be in the tree.
  void Insert(KeyEntry* entry);
  // Replaces the tree's contents with entries, which must be in strictly
  // ascending key order, packed into full leaves (the last one holds the
  // rest). The entries the tree held before are dropped, not deleted.
  void Build(std::span<KeyEntry* const> entries);
  // Removes every entry for which pred(entry) is true, calling pred once per
  // entry in key order (pred may change the entry but not its key), and
  // packs the rest into full leaves.
  template <typename Pred>
  void EraseIf(Pred pred);

  size_t size() const { return size_; }

  // Checks every structural invariant (order, counts, separators, leaf
  // chain, depth); returns what is wrong, or "" (tests).
  std::string TEST_CheckInvariants() const;
  size_t TEST_leaf_count() const;

 private:
  // Far above any real depth: a split leaves each inner node at least half
  // full, so 16 levels hold more than 2^64 keys.
  static constexpr int kMaxDepth = 16;

  struct Node {
    bool leaf;
    uint32_t count;  // entries of a leaf, children of an inner node; > 0
  };
  struct Leaf : Node {
    Leaf* next;  // the leaf to the right, or nullptr
    KeyEntry* entries[kLeafMax];
  };
  struct Inner : Node {
    Node* children[kInnerMax];
    KeyEntry* separators[kInnerMax - 1];
  };

  static uint32_t LeafLowerBound(const Leaf* leaf, std::string_view key);
  // The child of inner whose subtree would hold key.
  static uint32_t ChildIndex(const Inner* inner, std::string_view key);
  static void FreeInner(Node* node);
  // Frees every node, leaving the tree empty.
  void Clear();
  // Ends EraseIf: the survivors fill the leaves from first_ up to last,
  // which holds last_count of them (0: no survivor).
  void FinishErase(Leaf* last, uint32_t last_count);
  // Builds the inner levels over the leaf chain starting at first_.
  void BuildInner();
  std::string CheckNode(const Node* node, int depth, int leaf_depth, const KeyEntry* low,
                        const KeyEntry* high, const Leaf** expect_leaf, size_t* seen) const;

  Node* root_ = nullptr;
  Leaf* first_ = nullptr;
  size_t size_ = 0;
};

template <typename Pred>
void KeyTree::EraseIf(Pred pred) {
  // Survivors are copied leftwards through the same leaf chain: the write
  // position never passes the read position (leaves before it held at most
  // kLeafMax entries each), so nothing is overwritten before it is read.
  Leaf* write = first_;
  uint32_t write_pos = 0;
  for (Leaf* read = first_; read != nullptr; read = read->next) {
    const uint32_t n = read->count;
    for (uint32_t i = 0; i < n; ++i) {
      KeyEntry* entry = read->entries[i];
      if (pred(entry)) continue;
      if (write_pos == kLeafMax) {
        write->count = kLeafMax;  // read past it already
        write = write->next;
        write_pos = 0;
      }
      write->entries[write_pos++] = entry;
    }
  }
  FinishErase(write, write_pos);
}

}  // namespace natcd
