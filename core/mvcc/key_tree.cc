#include "mvcc/key_tree.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <vector>

namespace natcd {
namespace {

// Shifts items [pos, count) of an array one place right and puts item at pos.
template <typename T>
void InsertAt(T* items, uint32_t count, uint32_t pos, T item) {
  memmove(items + pos + 1, items + pos, (count - pos) * sizeof(T));
  items[pos] = item;
}

}  // namespace

KeyTree::~KeyTree() { Clear(); }

void KeyTree::Clear() {
  FreeInner(root_);  // before freeing leaves: it reads whether each child is one
  root_ = nullptr;
  for (Leaf* leaf = first_; leaf != nullptr;) {
    Leaf* next = leaf->next;
    delete leaf;
    leaf = next;
  }
  first_ = nullptr;
  size_ = 0;
}

void KeyTree::FreeInner(Node* node) {
  if (node == nullptr || node->leaf) return;
  auto* inner = static_cast<Inner*>(node);
  for (uint32_t i = 0; i < inner->count; ++i) FreeInner(inner->children[i]);
  delete inner;
}

uint32_t KeyTree::LeafLowerBound(const Leaf* leaf, std::string_view key) {
  uint32_t lo = 0, hi = leaf->count;
  while (lo < hi) {
    uint32_t mid = (lo + hi) / 2;
    if (leaf->entries[mid]->key() < key) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

uint32_t KeyTree::ChildIndex(const Inner* inner, std::string_view key) {
  // The number of separators <= key.
  uint32_t lo = 0, hi = inner->count - 1;
  while (lo < hi) {
    uint32_t mid = (lo + hi) / 2;
    if (key < inner->separators[mid]->key()) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return lo;
}

KeyTree::Iterator KeyTree::LowerBound(std::string_view key) const {
  if (root_ == nullptr) return end();
  const Node* node = root_;
  while (!node->leaf) {
    const auto* inner = static_cast<const Inner*>(node);
    node = inner->children[ChildIndex(inner, key)];
  }
  const auto* leaf = static_cast<const Leaf*>(node);
  uint32_t pos = LeafLowerBound(leaf, key);
  // Past this leaf's last key: the next leaf starts at a separator > key.
  if (pos == leaf->count) return Iterator(leaf->next, 0);
  return Iterator(leaf, pos);
}

void KeyTree::Insert(KeyEntry* entry) {
  const std::string_view key = entry->key();
  ++size_;
  if (root_ == nullptr) {
    auto* leaf = new Leaf;
    leaf->leaf = true;
    leaf->count = 1;
    leaf->next = nullptr;
    leaf->entries[0] = entry;
    root_ = first_ = leaf;
    return;
  }

  // The path down, to hand splits back up.
  Inner* path[kMaxDepth];
  uint32_t path_child[kMaxDepth];
  int depth = 0;
  Node* node = root_;
  while (!node->leaf) {
    auto* inner = static_cast<Inner*>(node);
    assert(depth < kMaxDepth);
    path[depth] = inner;
    path_child[depth] = ChildIndex(inner, key);
    node = inner->children[path_child[depth]];
    ++depth;
  }
  auto* leaf = static_cast<Leaf*>(node);
  const uint32_t pos = LeafLowerBound(leaf, key);
  assert(pos == leaf->count || leaf->entries[pos]->key() != key);
  if (leaf->count < kLeafMax) {
    InsertAt(leaf->entries, leaf->count++, pos, entry);
    return;
  }

  auto* right = new Leaf;
  right->leaf = true;
  if (leaf->next == nullptr && pos == kLeafMax) {
    // Appending past the largest key: keep this leaf full (see the top).
    right->count = 1;
    right->entries[0] = entry;
  } else {
    constexpr uint32_t kHalf = kLeafMax / 2;
    memcpy(right->entries, leaf->entries + kHalf, (kLeafMax - kHalf) * sizeof(KeyEntry*));
    right->count = kLeafMax - kHalf;
    leaf->count = kHalf;
    if (pos <= kHalf) {
      InsertAt(leaf->entries, leaf->count++, pos, entry);
    } else {
      InsertAt(right->entries, right->count++, pos - kHalf, entry);
    }
  }
  right->next = leaf->next;
  leaf->next = right;

  // Hand (separator, new right node) to the parent, splitting full parents.
  Node* child = right;
  KeyEntry* separator = right->entries[0];
  while (depth > 0) {
    --depth;
    Inner* parent = path[depth];
    const uint32_t at = path_child[depth] + 1;  // the new child's index
    if (parent->count < kInnerMax) {
      InsertAt(parent->separators, parent->count - 1, at - 1, separator);
      InsertAt(parent->children, parent->count, at, child);
      ++parent->count;
      return;
    }
    // kInnerMax + 1 children: the first half stays, the rest moves to a new
    // sibling, and the separator between the halves goes up.
    Node* children[kInnerMax + 1];
    KeyEntry* separators[kInnerMax];
    memcpy(children, parent->children, kInnerMax * sizeof(Node*));
    memcpy(separators, parent->separators, (kInnerMax - 1) * sizeof(KeyEntry*));
    InsertAt(separators, kInnerMax - 1, at - 1, separator);
    InsertAt(children, kInnerMax, at, child);
    constexpr uint32_t kLeft = (kInnerMax + 1) / 2;
    constexpr uint32_t kRight = kInnerMax + 1 - kLeft;
    auto* sibling = new Inner;
    sibling->leaf = false;
    sibling->count = kRight;
    memcpy(parent->children, children, kLeft * sizeof(Node*));
    memcpy(parent->separators, separators, (kLeft - 1) * sizeof(KeyEntry*));
    parent->count = kLeft;
    memcpy(sibling->children, children + kLeft, kRight * sizeof(Node*));
    memcpy(sibling->separators, separators + kLeft, (kRight - 1) * sizeof(KeyEntry*));
    child = sibling;
    separator = separators[kLeft - 1];
  }
  // The root split: a new root above it.
  auto* root = new Inner;
  root->leaf = false;
  root->count = 2;
  root->children[0] = root_;
  root->children[1] = child;
  root->separators[0] = separator;
  root_ = root;
}

void KeyTree::Build(std::span<KeyEntry* const> entries) {
  Clear();
  Leaf** link = &first_;
  for (size_t at = 0; at < entries.size(); at += kLeafMax) {
    auto* leaf = new Leaf;
    leaf->leaf = true;
    leaf->count = static_cast<uint32_t>(std::min<size_t>(kLeafMax, entries.size() - at));
    leaf->next = nullptr;
    memcpy(leaf->entries, entries.data() + at, leaf->count * sizeof(KeyEntry*));
    *link = leaf;
    link = &leaf->next;
  }
  size_ = entries.size();
  BuildInner();
}

void KeyTree::FinishErase(Leaf* last, uint32_t last_count) {
  FreeInner(root_);  // before freeing leaves: it reads whether each child is one
  root_ = nullptr;
  Leaf* rest = nullptr;
  if (last_count == 0) {
    rest = first_;
    first_ = nullptr;
  } else {
    last->count = last_count;
    rest = last->next;
    last->next = nullptr;
  }
  while (rest != nullptr) {
    Leaf* next = rest->next;
    delete rest;
    rest = next;
  }
  size_ = 0;
  for (const Leaf* leaf = first_; leaf != nullptr; leaf = leaf->next) size_ += leaf->count;
  BuildInner();
}

void KeyTree::BuildInner() {
  if (first_ == nullptr) return;
  // One level at a time: each node with the first key of its subtree.
  std::vector<Node*> level;
  std::vector<KeyEntry*> firsts;
  for (Leaf* leaf = first_; leaf != nullptr; leaf = leaf->next) {
    level.push_back(leaf);
    firsts.push_back(leaf->entries[0]);
  }
  while (level.size() > 1) {
    // As few nodes as fit, with the children spread evenly (no runt).
    const size_t n = level.size();
    const size_t nodes = (n + kInnerMax - 1) / kInnerMax;
    std::vector<Node*> up;
    std::vector<KeyEntry*> up_firsts;
    size_t at = 0;
    for (size_t i = 0; i < nodes; ++i) {
      const size_t left = nodes - i;
      const auto take = static_cast<uint32_t>((n - at + left - 1) / left);
      auto* inner = new Inner;
      inner->leaf = false;
      inner->count = take;
      for (uint32_t c = 0; c < take; ++c) {
        inner->children[c] = level[at + c];
        if (c > 0) inner->separators[c - 1] = firsts[at + c];
      }
      up.push_back(inner);
      up_firsts.push_back(firsts[at]);
      at += take;
    }
    level.swap(up);
    firsts.swap(up_firsts);
  }
  root_ = level[0];
}

size_t KeyTree::TEST_leaf_count() const {
  size_t n = 0;
  for (const Leaf* leaf = first_; leaf != nullptr; leaf = leaf->next) ++n;
  return n;
}

std::string KeyTree::TEST_CheckInvariants() const {
  if (root_ == nullptr) {
    if (first_ != nullptr || size_ != 0) return "empty root but leaves or size";
    return "";
  }
  int leaf_depth = 0;
  for (const Node* node = root_; !node->leaf; node = static_cast<const Inner*>(node)->children[0]) {
    ++leaf_depth;
  }
  if (leaf_depth >= kMaxDepth) return "too deep";
  const Leaf* expect_leaf = first_;
  size_t seen = 0;
  std::string error = CheckNode(root_, 0, leaf_depth, nullptr, nullptr, &expect_leaf, &seen);
  if (!error.empty()) return error;
  if (expect_leaf != nullptr) return "leaf chain longer than the tree";
  if (seen != size_) return "size " + std::to_string(size_) + " but " + std::to_string(seen);
  return "";
}

// Checks the subtree at node, whose keys must lie in [low, high) (nullptr:
// unbounded), and that its leaves are the next ones of the chain.
std::string KeyTree::CheckNode(const Node* node, int depth, int leaf_depth, const KeyEntry* low,
                               const KeyEntry* high, const Leaf** expect_leaf, size_t* seen) const {
  if (node->count == 0) return "empty node";
  if (node->leaf) {
    const auto* leaf = static_cast<const Leaf*>(node);
    if (depth != leaf_depth) return "leaves at different depths";
    if (leaf->count > kLeafMax) return "leaf over capacity";
    if (leaf != *expect_leaf) return "leaf chain out of order";
    *expect_leaf = leaf->next;
    if (low != nullptr && leaf->entries[0] != low) {
      return "separator is not the first key of its subtree";
    }
    for (uint32_t i = 0; i < leaf->count; ++i) {
      std::string_view key = leaf->entries[i]->key();
      if (i > 0 && !(leaf->entries[i - 1]->key() < key)) return "keys not ascending in a leaf";
      if (low != nullptr && key < low->key()) return "key below its subtree";
      if (high != nullptr && !(key < high->key())) return "key above its subtree";
    }
    *seen += leaf->count;
    return "";
  }
  const auto* inner = static_cast<const Inner*>(node);
  if (inner->count < 2 || inner->count > kInnerMax) return "inner node child count";
  for (uint32_t i = 0; i < inner->count; ++i) {
    const KeyEntry* child_low = i == 0 ? low : inner->separators[i - 1];
    const KeyEntry* child_high = i + 1 == inner->count ? high : inner->separators[i];
    std::string error = CheckNode(inner->children[i], depth + 1, leaf_depth, child_low, child_high,
                                  expect_leaf, seen);
    if (!error.empty()) return error;
  }
  return "";
}

}  // namespace natcd
