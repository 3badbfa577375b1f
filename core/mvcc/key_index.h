// KeyIndex: the in-memory ordered index of every key's uncompacted writes,
// as etcd's treeIndex. It answers "which write of which key is visible at
// revision R" without touching SQLite, and caches each live key's current
// value so that reads at the head revision never touch SQLite either.
//
// Thread safety: none; owned by the KvStore.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mvcc/rev_list.h"

namespace natcd {

struct KeyEntry {
  // Every uncompacted write, ascending by (main, sub).
  // Invariant: never empty while the entry is in the index.
  RevList revs;
  // The state written by revs.back(), valid when !revs.back().tombstone.
  int64_t create_revision = 0;
  int64_t version = 0;
  int64_t lease = 0;
  std::string value;

  bool live() const { return !revs.back().tombstone; }
  // The latest write with main <= rev, or nullptr. A tombstone means the key
  // did not exist at rev.
  const RevRecord* VisibleAt(int64_t rev) const;
  // The latest write before (main, sub), or nullptr. A txn may write a key
  // twice in one revision (etcd allows a put in one nested txn and a delete
  // in a later one), so sub counts.
  const RevRecord* Before(int64_t main, int32_t sub) const;
};

class KeyIndex {
 public:
  using Map = std::map<std::string, KeyEntry, std::less<>>;

  KeyEntry* Find(std::string_view key);
  KeyEntry& FindOrAdd(std::string_view key);
  // Keys in [key, range_end); range_end as in RangeRequest ("" = the key
  // alone, "\0" = every key >= key).
  std::pair<Map::iterator, Map::iterator> Range(std::string_view key, std::string_view range_end);

  // Drops every write below rev except the latest one below rev when it is
  // live (the state visible at rev - 1, needed for reads at rev and for the
  // prev_kv of events at rev). Keys left with no write are removed. The
  // (main, sub) of each dropped write are appended to *dropped.
  void Compact(int64_t rev, std::vector<std::pair<int64_t, int32_t>>* dropped);

  size_t size() const { return map_.size(); }
  Map& map() { return map_; }

 private:
  Map map_;
};

}  // namespace natcd
