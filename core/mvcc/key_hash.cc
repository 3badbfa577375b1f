#include "mvcc/key_hash.h"

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstdlib>
#include <functional>
#include <new>

namespace natcd {

// The tag lives in the low bits malloc's alignment leaves zero.
static_assert(alignof(std::max_align_t) > 15, "KeyHash tags need 16-byte aligned entries");

KeyHash::~KeyHash() { free(slots_); }

size_t KeyHash::Hash(std::string_view key) { return std::hash<std::string_view>{}(key); }

KeyEntry* KeyHash::Find(std::string_view key) const {
  if (size_ == 0) return nullptr;
  const size_t h = Hash(key);
  const uintptr_t tag = h & kTagMask;
  for (size_t i = Home(h);; i = Next(i)) {
    const uintptr_t slot = slots_[i];
    if (slot == 0) return nullptr;
    if ((slot & kTagMask) == tag) {
      KeyEntry* entry = EntryOf(slot);
      if (entry->key() == key) return entry;
    }
  }
}

void KeyHash::Place(KeyEntry* entry, size_t h) {
  size_t i = Home(h);
  while (slots_[i] != 0) i = Next(i);
  slots_[i] = reinterpret_cast<uintptr_t>(entry) | (h & kTagMask);
}

void KeyHash::Insert(KeyEntry* entry) {
  assert((reinterpret_cast<uintptr_t>(entry) & kTagMask) == 0);
  // At most 4/5 full: linear probing's misses grow as 1/(1-load)^2.
  if ((size_ + 1) * 5 > capacity_ * 4) Resize(std::max(kMinCapacity, capacity_ + capacity_ / 2));
  Place(entry, Hash(entry->key()));
  ++size_;
}

void KeyHash::Erase(const KeyEntry* entry) {
  assert(size_ > 0);
  size_t i = Home(Hash(entry->key()));
  while (EntryOf(slots_[i]) != entry) {
    assert(slots_[i] != 0);
    i = Next(i);
  }
  // Backward shift: pull each following key of the run into the hole unless
  // its home lies cyclically in (hole, its slot], where the hole would put
  // it before its home and make it unreachable.
  for (size_t j = Next(i); slots_[j] != 0; j = Next(j)) {
    const size_t home = Home(Hash(EntryOf(slots_[j])->key()));
    const bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
    if (stays) continue;
    slots_[i] = slots_[j];
    i = j;
  }
  slots_[i] = 0;
  --size_;
}

void KeyHash::Reset(size_t n) {
  free(slots_);
  slots_ = nullptr;
  capacity_ = 0;
  size_ = 0;
  Resize(std::max(kMinCapacity, n + n / 2));
}

void KeyHash::Resize(size_t capacity) {
  auto* slots = static_cast<uintptr_t*>(calloc(capacity, sizeof(uintptr_t)));
  if (slots == nullptr) throw std::bad_alloc();
  uintptr_t* old = slots_;
  const size_t old_capacity = capacity_;
  slots_ = slots;
  capacity_ = capacity;
  for (size_t i = 0; i < old_capacity; ++i) {
    if (old[i] != 0) Place(EntryOf(old[i]), Hash(EntryOf(old[i])->key()));
  }
  free(old);
}

}  // namespace natcd
