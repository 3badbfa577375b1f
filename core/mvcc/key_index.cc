#include "mvcc/key_index.h"

#include <algorithm>
#include <cassert>

#include "mvcc/key_sort.h"

namespace natcd {

KeyEntry* KeyIndex::Cursor::Next() {
  if (single_ != nullptr) return std::exchange(single_, nullptr);
  if (it_ == KeyTree::Iterator()) return nullptr;
  KeyEntry* entry = *it_;
  if (!range_end_.empty() && entry->key() >= range_end_) {
    it_ = KeyTree::Iterator();
    return nullptr;
  }
  ++it_;
  return entry;
}

KeyIndex::~KeyIndex() {
  for (KeyEntry* entry : tree_) KeyEntry::Delete(entry);
  for (KeyEntry* entry : unordered_) KeyEntry::Delete(entry);
}

KeyEntry* KeyIndex::Add(std::string_view key) {
  KeyEntry* entry = KeyEntry::New(key);
  hash_.Insert(entry);
  tree_.Insert(entry);
  return entry;
}

KeyEntry* KeyIndex::AddUnordered(std::string_view key) {
  KeyEntry* entry = KeyEntry::New(key);
  unordered_.push_back(entry);
  hash_.Insert(entry);
  return entry;
}

void KeyIndex::SortUnordered() {
  if (unordered_.empty()) return;
  SortByKey(unordered_);
  std::vector<KeyEntry*> all;
  if (tree_.size() == 0) {
    all.swap(unordered_);
  } else {
    all.reserve(tree_.size() + unordered_.size());
    for (KeyEntry* entry : tree_) all.push_back(entry);
    all.insert(all.end(), unordered_.begin(), unordered_.end());
    std::inplace_merge(all.begin(), all.begin() + static_cast<ptrdiff_t>(tree_.size()), all.end(),
                       [](const KeyEntry* a, const KeyEntry* b) { return a->key() < b->key(); });
  }
  tree_.Build(all);
  unordered_.clear();
  unordered_.shrink_to_fit();  // a load's worth of pointers, not needed again
}

KeyIndex::Cursor KeyIndex::Range(std::string_view key, std::string_view range_end) {
  assert(unordered_.empty());
  Cursor cursor;
  if (range_end.empty()) {
    cursor.single_ = Find(key);
  } else if (range_end == std::string_view("\0", 1)) {
    cursor.it_ = tree_.LowerBound(key);
  } else if (key < range_end) {
    cursor.it_ = tree_.LowerBound(key);
    cursor.range_end_ = range_end;
  }
  return cursor;
}

void KeyIndex::Compact(int64_t rev, std::vector<std::pair<int64_t, int32_t>>* dropped) {
  assert(unordered_.empty());
  std::vector<KeyEntry*> gone;
  tree_.EraseIf([&](KeyEntry* entry) {
    RevList& revs = entry->revs;
    assert(!revs.empty());
    // First write at or above rev.
    auto keep_from = std::lower_bound(revs.begin(), revs.end(), rev,
                                      [](const RevRecord& rec, int64_t r) { return rec.main < r; });
    if (keep_from != revs.begin() && !(keep_from - 1)->tombstone) --keep_from;
    if (keep_from == revs.begin()) return false;
    for (auto r = revs.begin(); r != keep_from; ++r) dropped->emplace_back(r->main, r->sub);
    revs.erase_front(keep_from);
    if (!revs.empty()) return false;
    gone.push_back(entry);
    return true;
  });
  // Erasing from the hash rehashes the keys behind each hole; past a few
  // percent of the keys, building it anew is cheaper and sizes it to fit.
  if (gone.size() > hash_.size() / 16) {
    hash_.Reset(tree_.size());
    for (KeyEntry* entry : tree_) hash_.Insert(entry);
  } else {
    for (const KeyEntry* entry : gone) hash_.Erase(entry);
  }
  for (KeyEntry* entry : gone) {
    assert(entry->cached_value() == nullptr);  // a tombstone's value is never cached
    KeyEntry::Delete(entry);
  }
}

}  // namespace natcd
