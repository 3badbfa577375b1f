// KeyTree against std::set as the reference: random inserts, lower bounds,
// full iterations and EraseIf, with the tree's structural invariants checked
// along the way; plus the insertion orders that decide how full leaves are,
// and Build from sorted entries at sizes around the leaf and inner-node
// boundaries.
#include "mvcc/key_tree.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "core/mvcc/key_index_test_util.h"
#include "testutil.h"

namespace natcd::testing {
namespace {

constexpr uint32_t kLeaf = KeyTree::kLeafMax;

std::vector<std::string> Keys(const KeyTree& tree) {
  std::vector<std::string> keys;
  for (KeyEntry* entry : tree) keys.emplace_back(entry->key());
  return keys;
}

// The tree holds exactly the reference's keys, in order, and is well formed.
void ExpectSame(const KeyTree& tree, const std::set<std::string>& reference) {
  ASSERT_EQ(tree.TEST_CheckInvariants(), "");
  ASSERT_EQ(tree.size(), reference.size());
  ASSERT_EQ(Keys(tree), std::vector<std::string>(reference.begin(), reference.end()));
}

void ExpectLowerBound(const KeyTree& tree, const std::set<std::string>& reference,
                      const std::string& probe) {
  auto want = reference.lower_bound(probe);
  KeyTree::Iterator got = tree.LowerBound(probe);
  if (want == reference.end()) {
    ASSERT_TRUE(got == tree.end()) << "probe " << ::testing::PrintToString(probe);
  } else {
    ASSERT_FALSE(got == tree.end()) << "probe " << ::testing::PrintToString(probe);
    ASSERT_EQ((*got)->key(), *want) << "probe " << ::testing::PrintToString(probe);
  }
}

TEST(KeyTreeTest, Empty) {
  KeyTree tree;
  EXPECT_EQ(tree.TEST_CheckInvariants(), "");
  EXPECT_TRUE(tree.begin() == tree.end());
  EXPECT_TRUE(tree.LowerBound("a") == tree.end());
  tree.EraseIf([](KeyEntry*) { return true; });
  EXPECT_EQ(tree.size(), 0u);
  EXPECT_EQ(tree.TEST_CheckInvariants(), "");
}

TEST(KeyTreeTest, RandomAgainstStdSet) {
  const uint32_t seed = RandomSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (int run = 0; run < 20; ++run) {
    SCOPED_TRACE("run " + std::to_string(run));
    EntryPool pool;
    KeyTree tree;
    std::set<std::string> reference;
    // Short keys from a small alphabet collide often (skipped: the tree
    // takes only new keys); longer runs reach three inner levels' worth.
    const size_t max_key = run % 2 == 0 ? 4 : 12;
    const int rounds = 1 + run % 4;
    for (int round = 0; round < rounds; ++round) {
      const size_t inserts = rng() % (run < 15 ? 3000 : 40000);
      for (size_t i = 0; i < inserts; ++i) {
        std::string key = RandomKey(rng, max_key);
        if (!reference.insert(key).second) continue;
        tree.Insert(pool.Make(key));
        if (i % 997 == 0) {
          ASSERT_EQ(tree.TEST_CheckInvariants(), "");
        }
      }
      ExpectSame(tree, reference);
      for (int probe = 0; probe < 500; ++probe) {
        ExpectLowerBound(tree, reference, RandomKey(rng, max_key + 1));
      }
      for (const std::string& key : reference) ExpectLowerBound(tree, reference, key);

      // Erase a random share (sometimes none, sometimes all); pred sees
      // every key once, in order.
      const uint64_t share = rng() % 5;  // out of 4
      std::vector<std::string> seen;
      std::set<std::string> erased;
      tree.EraseIf([&](KeyEntry* entry) {
        seen.emplace_back(entry->key());
        if (rng() % 4 >= share) return false;
        erased.emplace(entry->key());
        return true;
      });
      ASSERT_EQ(seen, std::vector<std::string>(reference.begin(), reference.end()));
      for (const std::string& key : erased) reference.erase(key);
      ExpectSame(tree, reference);
      // Packed: every leaf full but the last.
      ASSERT_EQ(tree.TEST_leaf_count(), (reference.size() + kLeaf - 1) / kLeaf);
      for (int probe = 0; probe < 200; ++probe) {
        ExpectLowerBound(tree, reference, RandomKey(rng, max_key + 1));
      }
    }
  }
}

std::string Numbered(int i) {
  char buf[16];
  snprintf(buf, sizeof(buf), "k%07d", i);
  return buf;
}

TEST(KeyTreeTest, AscendingInsertsFillLeaves) {
  EntryPool pool;
  KeyTree tree;
  std::set<std::string> reference;
  const int n = 300'000;  // three inner levels of 64
  for (int i = 0; i < n; ++i) {
    tree.Insert(pool.Make(Numbered(i)));
    reference.insert(Numbered(i));
  }
  ExpectSame(tree, reference);
  EXPECT_EQ(tree.TEST_leaf_count(), (n + kLeaf - 1) / kLeaf);
}

TEST(KeyTreeTest, DescendingInsertsHalfFillLeaves) {
  EntryPool pool;
  KeyTree tree;
  std::set<std::string> reference;
  const int n = 20'000;
  for (int i = n - 1; i >= 0; --i) {
    tree.Insert(pool.Make(Numbered(i)));
    reference.insert(Numbered(i));
  }
  ExpectSame(tree, reference);
  EXPECT_LE(tree.TEST_leaf_count(), n / (kLeaf / 2) + 1);
}

// Keys arriving in descending order into the gap behind a full leaf that is
// not the last: the append shortcut must not fire there, or each key would
// get a leaf of its own.
TEST(KeyTreeTest, DescendingIntoGapAfterFullLeaf) {
  EntryPool pool;
  KeyTree tree;
  std::set<std::string> reference;
  for (int i = 0; i < 2 * static_cast<int>(kLeaf); ++i) {
    reference.insert(Numbered(i * 1000));
    tree.Insert(pool.Make(Numbered(i * 1000)));
  }
  tree.EraseIf([](KeyEntry*) { return false; });  // packs: two full leaves
  ASSERT_EQ(tree.TEST_leaf_count(), 2u);
  // Above the first leaf's last key, below the second leaf's first.
  const int first_leaf_last = (kLeaf - 1) * 1000;
  const int gap = 999;
  for (int i = gap; i > 0; --i) {
    reference.insert(Numbered(first_leaf_last + i));
    tree.Insert(pool.Make(Numbered(first_leaf_last + i)));
  }
  ExpectSame(tree, reference);
  EXPECT_LE(tree.TEST_leaf_count(), 2 + gap / (kLeaf / 2) + 1);
}

TEST(KeyTreeTest, EraseEverythingThenInsertAgain) {
  EntryPool pool;
  KeyTree tree;
  for (int i = 0; i < 5000; ++i) tree.Insert(pool.Make(Numbered(i)));
  tree.EraseIf([](KeyEntry*) { return true; });
  ExpectSame(tree, {});
  EXPECT_EQ(tree.TEST_leaf_count(), 0u);
  tree.Insert(pool.Make("b"));
  tree.Insert(pool.Make("a"));
  ExpectSame(tree, {"a", "b"});
}

// Builds from keys sorted as std::set sorts them, checks the tree and its
// packing, then goes on with the operations a built tree meets: lower
// bounds, random inserts (splitting full leaves) and an EraseIf.
void BuildAndUse(std::mt19937_64& rng, std::set<std::string> reference, size_t max_key) {
  EntryPool pool;
  std::vector<KeyEntry*> sorted;
  for (const std::string& key : reference) sorted.push_back(pool.Make(key));
  KeyTree tree;
  tree.Build(sorted);
  ExpectSame(tree, reference);
  ASSERT_EQ(tree.TEST_leaf_count(), (reference.size() + kLeaf - 1) / kLeaf);
  for (int probe = 0; probe < 200; ++probe) {
    ExpectLowerBound(tree, reference, RandomKey(rng, max_key + 1));
  }
  for (int i = 0; i < 300; ++i) {
    std::string key = RandomKey(rng, max_key);
    if (!reference.insert(key).second) continue;
    tree.Insert(pool.Make(key));
  }
  ExpectSame(tree, reference);
  tree.EraseIf([&](KeyEntry* entry) {
    if (rng() % 2 == 0) return false;
    reference.erase(std::string(entry->key()));
    return true;
  });
  ExpectSame(tree, reference);
}

TEST(KeyTreeTest, BuildAgainstStdSet) {
  const uint32_t seed = RandomSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  // Around one leaf, two leaves, a full root of leaves (kInnerMax of them:
  // one inner level) and one leaf more (two inner levels).
  std::vector<size_t> sizes = {
      0, 1, 2, kLeaf - 1, kLeaf, kLeaf + 1, 2 * kLeaf - 1, 2 * kLeaf, 2 * kLeaf + 1};
  for (size_t leaves : {KeyTree::kInnerMax, KeyTree::kInnerMax + 1}) {
    sizes.insert(sizes.end(), {leaves * kLeaf - 1, leaves * kLeaf, leaves * kLeaf + 1});
  }
  for (int i = 0; i < 10; ++i) sizes.push_back(rng() % 20'000);
  for (size_t n : sizes) {
    SCOPED_TRACE("size " + std::to_string(n));
    std::set<std::string> reference;
    while (reference.size() < n) reference.insert(RandomKey(rng, 12));
    BuildAndUse(rng, std::move(reference), 12);
  }
}

// Three inner levels: past kInnerMax^2 leaves.
TEST(KeyTreeTest, BuildDeepTree) {
  const size_t boundary = size_t{KeyTree::kInnerMax} * KeyTree::kInnerMax * kLeaf;
  for (size_t n : {boundary, boundary + 1}) {
    SCOPED_TRACE("size " + std::to_string(n));
    EntryPool pool;
    std::vector<KeyEntry*> sorted;
    for (size_t i = 0; i < n; ++i) sorted.push_back(pool.Make(Numbered(static_cast<int>(i))));
    KeyTree tree;
    tree.Build(sorted);
    ASSERT_EQ(tree.TEST_CheckInvariants(), "");
    ASSERT_EQ(tree.size(), n);
    ASSERT_EQ(tree.TEST_leaf_count(), (n + kLeaf - 1) / kLeaf);
    size_t i = 0;
    for (KeyEntry* entry : tree) ASSERT_EQ(entry, sorted[i++]);
    ASSERT_EQ(i, n);
    ASSERT_EQ(*tree.LowerBound(Numbered(static_cast<int>(n - 1))), sorted.back());
  }
}

// Build replaces what the tree held, whether the tree was built or grown.
TEST(KeyTreeTest, BuildReplacesContents) {
  EntryPool pool;
  KeyTree tree;
  for (int i = 0; i < 1000; ++i) tree.Insert(pool.Make(Numbered(2 * i)));
  std::vector<KeyEntry*> odd;
  std::set<std::string> reference;
  for (int i = 0; i < 500; ++i) {
    odd.push_back(pool.Make(Numbered(2 * i + 1)));
    reference.insert(Numbered(2 * i + 1));
  }
  tree.Build(odd);
  ExpectSame(tree, reference);
  tree.Build({});
  ExpectSame(tree, {});
  EXPECT_EQ(tree.TEST_leaf_count(), 0u);
  EXPECT_TRUE(tree.LowerBound("") == tree.end());
  tree.Insert(pool.Make("a"));
  ExpectSame(tree, {"a"});
}

}  // namespace
}  // namespace natcd::testing
