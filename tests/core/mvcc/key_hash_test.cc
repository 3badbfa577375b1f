// KeyHash against std::unordered_map as the reference: random inserts,
// lookups of present and absent keys, erases (whose backward shift must
// keep every other key reachable, also across the table's wrap-around) and
// rebuilds.
#include "mvcc/key_hash.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/mvcc/key_index_test_util.h"
#include "testutil.h"

namespace natcd::testing {
namespace {

void ExpectSame(const KeyHash& hash, const std::unordered_map<std::string, KeyEntry*>& reference,
                const std::vector<std::string>& absent) {
  ASSERT_EQ(hash.size(), reference.size());
  ASSERT_LE(hash.size() * 5, hash.capacity() * 4) << "over 4/5 full";
  for (const auto& [key, entry] : reference) {
    ASSERT_EQ(hash.Find(key), entry) << ::testing::PrintToString(key);
  }
  for (const std::string& key : absent) {
    if (reference.count(key) == 0) {
      ASSERT_EQ(hash.Find(key), nullptr);
    }
  }
}

TEST(KeyHashTest, Empty) {
  KeyHash hash;
  EXPECT_EQ(hash.Find("a"), nullptr);
  EXPECT_EQ(hash.Find(""), nullptr);
  EXPECT_EQ(hash.size(), 0u);
}

TEST(KeyHashTest, RandomAgainstUnorderedMap) {
  const uint32_t seed = RandomSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (int run = 0; run < 200; ++run) {
    SCOPED_TRACE("run " + std::to_string(run));
    EntryPool pool;
    KeyHash hash;
    std::unordered_map<std::string, KeyEntry*> reference;
    // Mostly small tables, where runs of occupied slots often wrap past
    // the end; a few large ones through many growth steps.
    const size_t keys_max = run % 10 == 0 ? 20'000 : 1 + rng() % 40;
    const size_t max_key = run % 3 == 0 ? 3 : 10;
    for (int round = 0; round < 4; ++round) {
      std::vector<std::string> absent;
      for (size_t i = 0; i < keys_max; ++i) {
        std::string key = RandomKey(rng, max_key);
        if (reference.count(key) != 0) {
          ASSERT_NE(hash.Find(key), nullptr);
          continue;
        }
        absent.push_back(RandomKey(rng, max_key + 1));
        KeyEntry* entry = pool.Make(key);
        hash.Insert(entry);
        reference.emplace(key, entry);
      }
      ExpectSame(hash, reference, absent);

      // Erase a random share, one at a time, checking every key after each
      // erase in small tables.
      std::vector<std::string> keys;
      for (const auto& [key, entry] : reference) keys.push_back(key);
      std::sort(keys.begin(), keys.end());
      std::shuffle(keys.begin(), keys.end(), rng);
      keys.resize(rng() % (keys.size() + 1));
      for (const std::string& key : keys) {
        hash.Erase(reference.at(key));
        reference.erase(key);
        absent.push_back(key);
        if (reference.size() < 64) ExpectSame(hash, reference, absent);
      }
      ExpectSame(hash, reference, absent);

      if (round == 2) {
        hash.Reset(reference.size());
        EXPECT_EQ(hash.size(), 0u);
        for (const auto& [key, entry] : reference) hash.Insert(entry);
        ExpectSame(hash, reference, absent);
      }
    }
  }
}

}  // namespace
}  // namespace natcd::testing
