#include "mvcc/key_sort.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace natcd {
namespace {

// An entry with the 8 key bytes from some offset on. Items compare as their
// keys do, given keys equal before the offset:
//  - bytes holds the 8 key bytes big-endian, past the key's end zero, so a
//    smaller number means a smaller byte at the first difference, or a key
//    that ends there (a prefix of the other, hence smaller);
//  - with equal bytes, a key ending within the 8 bytes (left <= 8) is a
//    prefix of any longer one, and two such keys differ only in length;
//  - only items with equal bytes and left == 9 (both go on) need the next
//    8 bytes.
struct Item {
  uint64_t bytes;
  uint32_t left;  // key bytes from the offset on, capped at 9
  KeyEntry* entry;
};

constexpr uint32_t kChunk = 8;

void ReadChunk(Item* item, size_t offset) {
  const std::string_view key = item->entry->key();
  const size_t left = key.size() > offset ? key.size() - offset : 0;
  const size_t n = std::min<size_t>(left, kChunk);
  uint64_t bytes = 0;
  for (size_t i = 0; i < n; ++i) {
    bytes |= uint64_t{static_cast<unsigned char>(key[offset + i])} << (8 * (kChunk - 1 - i));
  }
  item->bytes = bytes;
  item->left = static_cast<uint32_t>(std::min<size_t>(left, kChunk + 1));
}

bool Tied(const Item& a, const Item& b) { return a.bytes == b.bytes && a.left == b.left; }

// The length of the prefix all keys share.
size_t CommonPrefix(std::span<KeyEntry* const> entries) {
  const std::string_view first = entries[0]->key();
  size_t common = first.size();
  for (const KeyEntry* entry : entries.subspan(1)) {
    const std::string_view key = entry->key().substr(0, common);
    common = static_cast<size_t>(std::mismatch(key.begin(), key.end(), first.begin()).first -
                                 key.begin());
    if (common == 0) break;
  }
  return common;
}

}  // namespace

void SortByKey(std::span<KeyEntry*> entries) {
  // Keys created in ascending order load in order: one pass over entries
  // in the order they were allocated is cheaper than sorting them again.
  if (std::is_sorted(entries.begin(), entries.end(),
                     [](const KeyEntry* a, const KeyEntry* b) { return a->key() < b->key(); })) {
    return;
  }
  std::vector<Item> items(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) items[i].entry = entries[i];

  // Runs of items still tied, each with the offset its keys agree up to.
  // A work list, not recursion: a long shared prefix means many levels.
  struct Run {
    size_t begin, end, offset;
  };
  std::vector<Run> todo{{0, items.size(), CommonPrefix(entries)}};
  while (!todo.empty()) {
    const Run run = todo.back();
    todo.pop_back();
    Item* begin = items.data() + run.begin;
    Item* end = items.data() + run.end;
    for (Item* item = begin; item != end; ++item) ReadChunk(item, run.offset);
    std::sort(begin, end, [](const Item& a, const Item& b) {
      return a.bytes != b.bytes ? a.bytes < b.bytes : a.left < b.left;
    });
    for (Item* tie = begin; tie != end;) {
      Item* tie_end = tie + 1;
      while (tie_end != end && Tied(*tie, *tie_end)) ++tie_end;
      if (tie_end - tie > 1 && tie->left > kChunk) {
        todo.push_back({static_cast<size_t>(tie - items.data()),
                        static_cast<size_t>(tie_end - items.data()), run.offset + kChunk});
      }
      tie = tie_end;
    }
  }
  for (size_t i = 0; i < entries.size(); ++i) entries[i] = items[i].entry;
}

}  // namespace natcd
