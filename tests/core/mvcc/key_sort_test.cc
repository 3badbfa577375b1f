// SortByKey against std::sort of the same keys as std::strings: keys that
// share long prefixes (several 8-byte rounds), that are prefixes of each
// other, that end at and around 8-byte boundaries, that hold bytes 0x00 and
// 0xff, and the empty key.
#include "mvcc/key_sort.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "core/mvcc/key_index_test_util.h"
#include "testutil.h"

namespace natcd::testing {
namespace {

// Sorts keys with SortByKey, starting from their given order, and expects
// what std::sort gives.
void ExpectSorted(const std::vector<std::string>& keys) {
  EntryPool pool;
  std::vector<KeyEntry*> entries;
  for (const std::string& key : keys) entries.push_back(pool.Make(key));
  SortByKey(entries);
  std::vector<std::string> got;
  for (const KeyEntry* entry : entries) got.emplace_back(entry->key());
  std::vector<std::string> want = keys;
  std::sort(want.begin(), want.end());
  ASSERT_EQ(got, want);
}

TEST(KeySortTest, SmallCases) {
  ExpectSorted({});
  ExpectSorted({"a"});
  ExpectSorted({"b", "a"});
  ExpectSorted({"", std::string(1, '\0'), std::string(2, '\0')});
  ExpectSorted({std::string(2, '\0'), std::string(1, '\0'), ""});
  // A key ending inside the 8 bytes against one going on with 0x00 bytes:
  // both read as the same number there.
  ExpectSorted({std::string("abc\0\0\0\0\0\0", 9), std::string("abc\0", 4), "abc",
                std::string("abc\0\0\0\0\0", 8), std::string("abc\0\0\0\0\0\0\0x", 11)});
  // Equal in the first 8 bytes, apart in the next ones; 0xff above 0x7f
  // (bytes compare unsigned).
  ExpectSorted({"01234567\xff", "01234567\x7f", "01234567", "0123456789abcdef1",
                "0123456789abcdef0", "0123456789abcdef"});
  // Equal keys: both stay, in either order.
  ExpectSorted({"same", "other", "same"});
}

// Input in order is left as it is; input in order but for its last pair
// still gets sorted.
TEST(KeySortTest, NearlySorted) {
  std::vector<std::string> keys;
  for (int i = 0; i < 1000; ++i) keys.push_back("/k/" + std::to_string(100000 + i));
  ExpectSorted(keys);
  std::swap(keys[998], keys[999]);
  ExpectSorted(keys);
  std::swap(keys[0], keys[1]);
  ExpectSorted(keys);
}

TEST(KeySortTest, RandomAgainstStdSort) {
  const uint32_t seed = RandomSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (int run = 0; run < 200; ++run) {
    SCOPED_TRACE("run " + std::to_string(run));
    // Every key starts with one of a few stems of up to 40 bytes, some
    // stems prefixes of others (several rounds of 8 tied bytes), then a
    // random tail from the small alphabet (ties, prefixes, 0x00, 0xff).
    std::vector<std::string> stems;
    const std::string base = RandomKey(rng, 24);
    for (uint64_t i = 0, n = 1 + rng() % 4; i < n; ++i) {
      stems.push_back(base.substr(0, rng() % (base.size() + 1)) + RandomKey(rng, 16));
    }
    const size_t n = run < 150 ? rng() % 50 : rng() % 5000;
    const size_t max_tail = 1 + rng() % 20;
    std::vector<std::string> keys;
    for (size_t i = 0; i < n; ++i) {
      keys.push_back(stems[rng() % stems.size()] + RandomKey(rng, max_tail));
    }
    ExpectSorted(keys);
  }
}

TEST(KeySortTest, NumberedKeysInRandomOrder) {
  // The benchmark's shape: a shared prefix, then 8 digits.
  std::vector<std::string> keys;
  for (int i = 0; i < 20'000; ++i) {
    char buf[32];
    snprintf(buf, sizeof(buf), "/bench/key/%08d", i);
    keys.push_back(buf);
  }
  const uint32_t seed = RandomSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::shuffle(keys.begin(), keys.end(), rng);
  ExpectSorted(keys);
}

}  // namespace
}  // namespace natcd::testing
