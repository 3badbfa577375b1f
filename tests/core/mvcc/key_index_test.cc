// KeyEntry's key and lookups by revision; KeyIndex's ranges against a
// std::map filtered with KeyInRange, and Compact against the rule stated
// per write: a write survives compaction at R iff main >= R, or it is the
// key's latest write below R and not a tombstone.
#include "mvcc/key_index.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/mvcc/key_index_test_util.h"
#include "natcd/key_range.h"
#include "testutil.h"

namespace natcd::testing {
namespace {

using Rows = std::vector<std::pair<int64_t, int32_t>>;

TEST(KeyEntryTest, Key) {
  EntryPool pool;
  KeyEntry* entry = pool.Make(std::string("k\0y", 3));
  EXPECT_EQ(entry->key(), std::string("k\0y", 3));
  EXPECT_EQ(entry->cached_value(), nullptr);
  EXPECT_EQ(pool.Make("")->key(), "");
}

TEST(KeyEntryTest, VisibleAtAndBefore) {
  EntryPool pool;
  KeyEntry* entry = pool.Make("k");
  entry->revs.push_back({2, 0, false});
  entry->revs.push_back({5, 1, false});
  entry->revs.push_back({5, 3, true});
  entry->revs.push_back({9, 0, false});
  EXPECT_EQ(entry->VisibleAt(1), nullptr);
  EXPECT_EQ(entry->VisibleAt(2)->main, 2);
  EXPECT_EQ(entry->VisibleAt(4)->main, 2);
  EXPECT_TRUE(entry->VisibleAt(5)->tombstone);  // the last write of revision 5
  EXPECT_EQ(entry->VisibleAt(8)->sub, 3);
  EXPECT_EQ(entry->VisibleAt(100)->main, 9);
  EXPECT_TRUE(entry->live());
  EXPECT_EQ(entry->Before(2, 0), nullptr);
  EXPECT_EQ(entry->Before(5, 3)->sub, 1);
  EXPECT_EQ(entry->Before(5, 1)->main, 2);
  EXPECT_EQ(entry->Before(9, 0)->sub, 3);
}

// Adds key with one write at revision rev.
KeyEntry* AddWritten(KeyIndex* index, const std::string& key, int64_t rev) {
  KeyEntry* entry = index->Add(key);
  entry->revs.push_back({rev, 0, false});
  return entry;
}

std::vector<std::string> RangeKeys(KeyIndex& index, std::string_view key,
                                   std::string_view range_end) {
  std::vector<std::string> keys;
  KeyIndex::Cursor cursor = index.Range(key, range_end);
  while (KeyEntry* entry = cursor.Next()) keys.emplace_back(entry->key());
  return keys;
}

TEST(KeyIndexTest, RangeAgainstStdMap) {
  const uint32_t seed = RandomSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const std::string kAll("\0", 1);
  for (int run = 0; run < 20; ++run) {
    KeyIndex index;
    std::map<std::string, KeyEntry*> reference;
    const size_t n = run < 10 ? rng() % 100 : rng() % 10'000;
    for (size_t i = 0; i < n; ++i) {
      std::string key = RandomKey(rng, 6);
      if (index.Find(key) != nullptr) continue;
      reference[key] = AddWritten(&index, key, static_cast<int64_t>(i + 1));
    }
    ASSERT_EQ(index.size(), reference.size());
    for (int probe = 0; probe < 300; ++probe) {
      std::string key = RandomKey(rng, 6);
      std::string range_end;
      switch (rng() % 4) {
        case 0:
          break;  // the key alone
        case 1:
          range_end = kAll;
          break;
        case 2:
          range_end = PrefixRangeEnd(key);
          break;
        default:
          range_end = RandomKey(rng, 6);  // often <= key: nothing
          if (range_end.empty()) range_end = "a";
      }
      std::vector<std::string> want;
      for (const auto& [k, entry] : reference) {
        if (KeyInRange(k, key, range_end)) want.push_back(k);
      }
      ASSERT_EQ(RangeKeys(index, key, range_end), want)
          << ::testing::PrintToString(key) << " " << ::testing::PrintToString(range_end);
    }
    for (const auto& [key, entry] : reference) ASSERT_EQ(index.Find(key), entry);
  }
}

// Keys added out of order with AddUnordered, as a load adds them, some
// after keys added with Add: Find sees them at once, and after
// SortUnordered ranges, Find, later Adds and Compact behave as if every key
// had been added with Add.
TEST(KeyIndexTest, UnorderedAddsAgainstStdMap) {
  const uint32_t seed = RandomSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const std::string kAll("\0", 1);
  for (int run = 0; run < 30; ++run) {
    SCOPED_TRACE("run " + std::to_string(run));
    KeyIndex index;
    std::map<std::string, KeyEntry*> reference;
    int64_t rev = 0;
    // Around the tree's leaf boundaries, and larger.
    const uint32_t leaf = KeyTree::kLeafMax;
    const size_t n = run < 10   ? run * leaf / 4
                     : run < 20 ? (run - 9) * leaf + rng() % 3 - 1
                                : rng() % 20'000;
    // The share of keys added with Add, in quarters (4: all of them).
    const uint64_t add_share = run % 3 == 0 ? 0 : rng() % 5;
    while (reference.size() < n) {
      std::string key = RandomKey(rng, 8);
      if (index.Find(key) != nullptr) continue;
      KeyEntry* entry = rng() % 4 < add_share ? index.Add(key) : index.AddUnordered(key);
      entry->revs.push_back({++rev, 0, false});
      reference[key] = entry;
      ASSERT_EQ(index.Find(key), entry);
    }
    ASSERT_EQ(index.size(), n);
    index.SortUnordered();
    index.SortUnordered();  // nothing left to sort: changes nothing
    ASSERT_EQ(index.size(), n);
    for (const auto& [key, entry] : reference) ASSERT_EQ(index.Find(key), entry);
    std::vector<std::string> all;
    for (const auto& [key, entry] : reference) all.push_back(key);
    ASSERT_EQ(RangeKeys(index, "", kAll), all);
    for (int probe = 0; probe < 100; ++probe) {
      std::string key = RandomKey(rng, 8);
      std::string range_end = rng() % 2 == 0 ? PrefixRangeEnd(key) : RandomKey(rng, 8);
      if (range_end.empty()) range_end = kAll;
      std::vector<std::string> want;
      for (const auto& [k, entry] : reference) {
        if (KeyInRange(k, key, range_end)) want.push_back(k);
      }
      ASSERT_EQ(RangeKeys(index, key, range_end), want);
    }
    // The built tree takes new keys, and compaction drops the old ones.
    for (int i = 0; i < 100; ++i) {
      std::string key = "new/" + std::to_string(rng() % 1000);
      if (index.Find(key) != nullptr) continue;
      reference[key] = AddWritten(&index, key, ++rev);
    }
    // Every key written before at is deleted just before it: compaction
    // at at removes exactly those.
    const int64_t at = rev / 2;
    std::vector<std::string> kept;
    for (auto& [key, entry] : reference) {
      if (entry->revs.back().main < at) {
        entry->revs.push_back({at - 1, 1, true});
      } else {
        kept.push_back(key);
      }
    }
    Rows dropped;
    index.Compact(at, &dropped);
    ASSERT_EQ(RangeKeys(index, "", kAll), kept);
    ASSERT_EQ(index.size(), kept.size());
  }
}

// An index destroyed before SortUnordered frees the keys still waiting
// (the ASan build's leak checker fails this test otherwise).
TEST(KeyIndexTest, DestroyedWithUnorderedKeys) {
  KeyIndex index;
  AddWritten(&index, "ordered", 1);
  for (int i = 0; i < 100; ++i) {
    index.AddUnordered("k" + std::to_string(i))->revs.push_back({2, i, false});
  }
  EXPECT_EQ(index.size(), 101u);
}

// Writing to the entries a cursor yields, as a range delete does, leaves
// the cursor valid.
TEST(KeyIndexTest, CursorSurvivesWritesToEntries) {
  KeyIndex index;
  for (int i = 0; i < 1000; ++i) AddWritten(&index, "k" + std::to_string(1000 + i), 1);
  KeyIndex::Cursor cursor = index.Range("k", "l");
  int n = 0;
  while (KeyEntry* entry = cursor.Next()) {
    entry->revs.push_back({2, n, true});
    ++n;
  }
  EXPECT_EQ(n, 1000);
  EXPECT_FALSE(index.Find("k1500")->live());
}

struct Write {
  int64_t main;
  int32_t sub;
  bool tombstone;
};

TEST(KeyIndexTest, CompactAgainstPerWriteRule) {
  const uint32_t seed = RandomSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (int run = 0; run < 40; ++run) {
    SCOPED_TRACE("run " + std::to_string(run));
    KeyIndex index;
    std::map<std::string, std::vector<Write>> history;
    // Revisions with one to three writes each, to keys of a keyspace whose
    // size decides how much history each key has.
    const size_t keyspace = 1 + rng() % (run < 30 ? 50 : 5000);
    const int64_t revisions = 1 + static_cast<int64_t>(rng() % (3 * keyspace));
    for (int64_t rev = 1; rev <= revisions; ++rev) {
      const int32_t writes = 1 + static_cast<int32_t>(rng() % 3);
      for (int32_t sub = 0; sub < writes; ++sub) {
        std::string key = "k" + std::to_string(rng() % keyspace);
        const bool tombstone = rng() % 3 == 0;
        history[key].push_back({rev, sub, tombstone});
        index.FindOrAdd(key)->revs.push_back({rev, sub, tombstone});
      }
    }
    int64_t compacted = 0;
    for (int step = 0; step < 3; ++step) {
      const int64_t at = compacted + static_cast<int64_t>(rng() % (revisions - compacted + 1));
      Rows want_dropped;
      std::map<std::string, std::vector<Write>> kept;
      for (const auto& [key, writes] : history) {
        for (size_t i = 0; i < writes.size(); ++i) {
          const Write& w = writes[i];
          const bool latest_below =
              w.main < at && (i + 1 == writes.size() || writes[i + 1].main >= at);
          if (w.main >= at || (latest_below && !w.tombstone)) {
            kept[key].push_back(w);
          } else {
            want_dropped.emplace_back(w.main, w.sub);
          }
        }
      }
      Rows dropped;
      index.Compact(at, &dropped);
      compacted = at;
      ASSERT_EQ(dropped, want_dropped) << "compact at " << at;
      ASSERT_EQ(index.size(), kept.size());
      for (const auto& [key, writes] : history) {
        KeyEntry* entry = index.Find(key);
        if (kept.count(key) == 0) {
          ASSERT_EQ(entry, nullptr) << key;
          continue;
        }
        ASSERT_NE(entry, nullptr) << key;
        std::vector<std::tuple<int64_t, int32_t, bool>> got, want;
        for (const RevRecord& r : entry->revs) got.emplace_back(r.main, r.sub, r.tombstone);
        for (const Write& w : kept[key]) want.emplace_back(w.main, w.sub, w.tombstone);
        ASSERT_EQ(got, want) << key;
      }
      std::vector<std::string> want_keys;
      for (const auto& [key, writes] : kept) want_keys.push_back(key);
      ASSERT_EQ(RangeKeys(index, "", std::string("\0", 1)), want_keys);
      history = std::move(kept);
      // New keys after a compaction land in the rebuilt structures.
      for (int i = 0; i < 10; ++i) {
        std::string key = "n" + std::to_string(step) + "/" + std::to_string(i);
        history[key].push_back({compacted + 1, i, false});
        index.Add(key)->revs.push_back({compacted + 1, i, false});
      }
    }
  }
}

}  // namespace
}  // namespace natcd::testing
