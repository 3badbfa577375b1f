#include "mvcc/value_cache.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <stdexcept>

namespace natcd {

size_t ValueCache::Charge(size_t value_size) {
  return ((sizeof(CachedValue) + value_size + 15) & ~size_t{15}) + sizeof(KeyEntry*);
}

std::optional<std::string_view> ValueCache::Find(KeyEntry* entry) {
  CachedValue* cached = entry->cached_value_;
  if (cached == nullptr) return std::nullopt;
  cached->referenced = true;
  return cached->bytes();
}

std::optional<std::string_view> ValueCache::Peek(const KeyEntry* entry) const {
  const CachedValue* cached = entry->cached_value_;
  if (cached == nullptr) return std::nullopt;
  return cached->bytes();
}

void ValueCache::Put(KeyEntry* entry, std::string_view value) {
  if (Charge(value.size()) > budget_) {
    Drop(entry);
    return;
  }
  // Requests are bounded far below 4 GiB; refuse rather than wrap.
  if (value.size() > std::numeric_limits<uint32_t>::max()) {
    throw std::length_error("ValueCache: value over 4 GiB");
  }
  CachedValue* old = entry->cached_value_;
  if (old != nullptr && old->size == value.size()) {
    // memmove: value may be a view of this very block.
    memmove(old + 1, value.data(), value.size());
    return;
  }
  CachedValue* block = nullptr;
  try {
    // The ring's room first (growing it as push_back would): once the
    // block exists nothing may throw.
    if (old == nullptr && ring_.size() == ring_.capacity()) {
      ring_.reserve(std::max<size_t>(64, ring_.capacity() * 2));
    }
    block = static_cast<CachedValue*>(malloc(sizeof(CachedValue) + value.size()));
    if (block == nullptr) throw std::bad_alloc();
  } catch (...) {
    Drop(entry);  // never leave a value the entry no longer has
    throw;
  }
  block->size = static_cast<uint32_t>(value.size());
  // Only reads mark a value used: a value written and never read is the
  // first to go.
  block->referenced = old != nullptr && old->referenced;
  memcpy(block + 1, value.data(), value.size());  // before the free: value may point into old
  if (old != nullptr) {
    block->slot = old->slot;
    bytes_ -= Charge(old->size);
    free(old);
  } else {
    ring_.push_back(entry);
    block->slot = static_cast<uint32_t>(ring_.size() - 1);
  }
  entry->cached_value_ = block;
  bytes_ += Charge(block->size);
  EvictFor(entry);
}

void ValueCache::Drop(KeyEntry* entry) {
  if (entry->cached_value_ != nullptr) RemoveAt(entry->cached_value_->slot);
}

void ValueCache::EvictFor(const KeyEntry* keep) {
  // Terminates: each pass clears the bits it meets, and keep alone fits.
  while (bytes_ > budget_) {
    if (hand_ >= ring_.size()) hand_ = 0;
    KeyEntry* entry = ring_[hand_];
    CachedValue* cached = entry->cached_value_;
    if (entry != keep) {
      if (!cached->referenced) {
        RemoveAt(hand_);  // the last entry moves to the hand, which stays
        continue;
      }
      cached->referenced = false;  // a second chance
    }
    ++hand_;
  }
}

void ValueCache::RemoveAt(size_t slot) {
  KeyEntry* entry = ring_[slot];
  bytes_ -= Charge(entry->cached_value_->size);
  free(entry->cached_value_);
  entry->cached_value_ = nullptr;
  KeyEntry* last = ring_.back();
  ring_.pop_back();
  if (last != entry) {
    ring_[slot] = last;
    last->cached_value_->slot = static_cast<uint32_t>(slot);
  }
}

}  // namespace natcd
