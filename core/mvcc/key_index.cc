#include "mvcc/key_index.h"

#include <algorithm>
#include <cassert>

namespace natcd {

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

KeyEntry* KeyIndex::Find(std::string_view key) {
  auto it = map_.find(key);
  return it == map_.end() ? nullptr : &it->second;
}

KeyEntry& KeyIndex::FindOrAdd(std::string_view key) {
  auto it = map_.lower_bound(key);
  if (it == map_.end() || it->first != key)
    it = map_.emplace_hint(it, std::string(key), KeyEntry{});
  return it->second;
}

std::pair<KeyIndex::Map::iterator, KeyIndex::Map::iterator> KeyIndex::Range(
    std::string_view key, std::string_view range_end) {
  auto begin = map_.lower_bound(key);
  if (range_end.empty()) {
    if (begin != map_.end() && begin->first == key) return {begin, std::next(begin)};
    return {begin, begin};
  }
  if (range_end == std::string_view("\0", 1)) return {begin, map_.end()};
  if (range_end <= key) return {begin, begin};
  return {begin, map_.lower_bound(range_end)};
}

void KeyIndex::Compact(int64_t rev, std::vector<std::pair<int64_t, int32_t>>* dropped) {
  for (auto it = map_.begin(); it != map_.end();) {
    RevList& revs = it->second.revs;
    assert(!revs.empty());
    // First write at or above rev.
    auto keep_from = std::lower_bound(revs.begin(), revs.end(), rev,
                                      [](const RevRecord& rec, int64_t r) { return rec.main < r; });
    if (keep_from != revs.begin() && !(keep_from - 1)->tombstone) --keep_from;
    if (keep_from == revs.begin()) {
      ++it;
      continue;
    }
    for (auto r = revs.begin(); r != keep_from; ++r) dropped->emplace_back(r->main, r->sub);
    revs.erase_front(keep_from);
    if (revs.empty()) {
      it = map_.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace natcd
