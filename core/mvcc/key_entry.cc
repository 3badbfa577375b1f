#include "mvcc/key_entry.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <stdexcept>
#include <utility>

namespace natcd {
namespace {

// Keys and values come from requests bounded far below 4 GiB (etcd's
// --max-request-bytes, NATS's max_payload); past that the 32-bit sizes
// would wrap, so refuse as a std::string refuses past its max_size().
uint32_t CheckedSize(size_t size) {
  if (size > std::numeric_limits<uint32_t>::max()) throw std::length_error("KeyEntry: over 4 GiB");
  return static_cast<uint32_t>(size);
}

}  // namespace

// The per-key budget (key_index.h) counts on this size.
static_assert(sizeof(KeyEntry) == 64);

KeyEntry* KeyEntry::New(std::string_view key) {
  const uint32_t key_size = CheckedSize(key.size());
  void* block = malloc(sizeof(KeyEntry) + key_size);
  if (block == nullptr) throw std::bad_alloc();
  auto* entry = new (block) KeyEntry(key_size);
  if (key_size > 0) memcpy(reinterpret_cast<char*>(entry + 1), key.data(), key_size);
  return entry;
}

void KeyEntry::Delete(KeyEntry* entry) {
  entry->~KeyEntry();
  free(entry);
}

// The ValueCache's ring may still name the entry (the index is torn down
// with the store); it never reads it again.
KeyEntry::~KeyEntry() { free(cached_value_); }

const RevRecord* KeyEntry::VisibleAt(int64_t rev) const {
  // Most reads are at the head: check the last write first.
  if (revs.back().main <= rev) return &revs.back();
  auto it = std::upper_bound(revs.begin(), revs.end(), rev,
                             [](int64_t r, const RevRecord& rec) { return r < rec.main; });
  return it == revs.begin() ? nullptr : &*(it - 1);
}

const RevRecord* KeyEntry::Before(int64_t main, int32_t sub) const {
  auto it = std::lower_bound(revs.begin(), revs.end(), std::pair(main, sub),
                             [](const RevRecord& rec, const std::pair<int64_t, int32_t>& at) {
                               return std::pair(rec.main, rec.sub) < at;
                             });
  return it == revs.begin() ? nullptr : &*(it - 1);
}

}  // namespace natcd
