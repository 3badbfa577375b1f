// ValueCache: values round-trip (in place, from a view of themselves,
// resized, empty), the budget holds under random use, what is found is
// always the value last put, and CLOCK keeps what was read over what was
// not.
#include "mvcc/value_cache.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "core/mvcc/key_index_test_util.h"
#include "testutil.h"

namespace natcd::testing {
namespace {

size_t Charge(size_t value_size) { return ValueCache::Charge(value_size); }

std::string Found(ValueCache& cache, KeyEntry* entry) {
  std::optional<std::string_view> value = cache.Find(entry);
  return value ? std::string(*value) : std::string("<none>");
}

TEST(ValueCacheTest, PutFindReplaceDrop) {
  EntryPool pool;
  ValueCache cache(1 << 20);
  KeyEntry* entry = pool.Make("k");
  EXPECT_EQ(Found(cache, entry), "<none>");
  cache.Put(entry, "hello");
  EXPECT_EQ(Found(cache, entry), "hello");
  const CachedValue* block = entry->cached_value();
  cache.Put(entry, "world");  // same size: in place
  EXPECT_EQ(entry->cached_value(), block);
  EXPECT_EQ(Found(cache, entry), "world");
  cache.Put(entry, cache.Find(entry)->substr(1));  // a view of its own value
  EXPECT_EQ(Found(cache, entry), "orld");
  cache.Put(entry, cache.Find(entry)->substr(0, 4));
  EXPECT_EQ(Found(cache, entry), "orld");
  cache.Put(entry, std::string(1000, 'x'));
  EXPECT_EQ(Found(cache, entry), std::string(1000, 'x'));
  EXPECT_EQ(cache.bytes(), Charge(1000));
  cache.Put(entry, "");  // an empty value is a value
  EXPECT_EQ(Found(cache, entry), "");
  EXPECT_EQ(cache.size(), 1u);
  cache.Drop(entry);
  EXPECT_EQ(Found(cache, entry), "<none>");
  EXPECT_EQ(cache.bytes(), 0u);
  EXPECT_EQ(cache.size(), 0u);
  cache.Drop(entry);  // not cached: nothing to do
  EXPECT_EQ(cache.size(), 0u);
}

TEST(ValueCacheTest, ValuesBeyondTheBudgetAreNotCached) {
  EntryPool pool;
  ValueCache cache(Charge(10));
  KeyEntry* entry = pool.Make("k");
  cache.Put(entry, "0123456789");
  EXPECT_EQ(Found(cache, entry), "0123456789");
  cache.Put(entry, std::string(30, 'x'));  // the older, smaller value goes too
  EXPECT_EQ(Found(cache, entry), "<none>");
  EXPECT_EQ(cache.bytes(), 0u);

  ValueCache none(0);
  none.Put(entry, "");
  EXPECT_EQ(Found(none, entry), "<none>");
}

// Room for three one-byte values, a, b and c cached, d not yet.
class ValueCacheClockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cache_.Put(a_, "a");
    cache_.Put(b_, "b");
    cache_.Put(c_, "c");
  }
  EntryPool pool_;
  ValueCache cache_{3 * Charge(1)};
  KeyEntry* a_ = pool_.Make("a");
  KeyEntry* b_ = pool_.Make("b");
  KeyEntry* c_ = pool_.Make("c");
  KeyEntry* d_ = pool_.Make("d");
};

// Second chance: the one read survives the next insert and the oldest
// unread one goes.
TEST_F(ValueCacheClockTest, EvictsUnreadFirst) {
  EXPECT_EQ(Found(cache_, a_), "a");
  cache_.Put(d_, "d");
  EXPECT_EQ(Found(cache_, a_), "a");
  EXPECT_EQ(Found(cache_, b_), "<none>");
  EXPECT_EQ(Found(cache_, c_), "c");
  EXPECT_EQ(Found(cache_, d_), "d");
  EXPECT_EQ(cache_.size(), 3u);
}

// Peek (a write looking at the value it replaces) is no read: the value
// peeked at is the first to go.
TEST_F(ValueCacheClockTest, PeekDoesNotMarkAValueUsed) {
  EXPECT_EQ(*cache_.Peek(a_), "a");
  EXPECT_EQ(*cache_.Peek(b_), "b");
  EXPECT_EQ(Found(cache_, b_), "b");
  cache_.Put(d_, "d");
  EXPECT_FALSE(cache_.Peek(a_).has_value());
  EXPECT_EQ(*cache_.Peek(b_), "b");
}

// The budget counts what a value costs beyond its bytes: the block's
// header and rounding, and its place in the ring.
TEST(ValueCacheTest, ChargeCountsTheBlockAndTheRing) {
  EXPECT_GE(ValueCache::Charge(0), sizeof(CachedValue) + sizeof(void*));
  EXPECT_EQ(ValueCache::Charge(100) % 8, 0u);
  EXPECT_GE(ValueCache::Charge(100), 100 + sizeof(CachedValue) + sizeof(void*));
  EXPECT_LE(ValueCache::Charge(100), 100 + sizeof(CachedValue) + sizeof(void*) + 15);
}

// Random puts, finds and drops over a few keys against a map of the last
// value put: every find is that value or nothing, the budget is never
// exceeded, and the bytes counted are the bytes held.
TEST(ValueCacheTest, RandomUseKeepsTheBudgetAndTheValues) {
  const uint32_t seed = RandomSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (size_t budget : {size_t{0}, Charge(5), size_t{200}, size_t{2'000}, size_t{1} << 20}) {
    SCOPED_TRACE("budget " + std::to_string(budget));
    EntryPool pool;
    ValueCache cache(budget);
    std::vector<KeyEntry*> entries;
    for (int i = 0; i < 40; ++i) entries.push_back(pool.Make("k" + std::to_string(i)));
    std::map<KeyEntry*, std::string> last;
    for (int step = 0; step < 20'000; ++step) {
      KeyEntry* entry = entries[rng() % entries.size()];
      switch (rng() % 4) {
        case 0:
        case 1: {
          std::string value(rng() % 60, static_cast<char>('a' + rng() % 26));
          cache.Put(entry, value);
          last[entry] = value;
          break;
        }
        case 2: {
          std::optional<std::string_view> found = cache.Find(entry);
          if (found) {
            ASSERT_TRUE(last.count(entry)) << "step " << step;
            ASSERT_EQ(*found, last[entry]) << "step " << step;
          }
          break;
        }
        default:
          cache.Drop(entry);
          last.erase(entry);
      }
      ASSERT_LE(cache.bytes(), budget) << "step " << step;
      size_t held = 0, cached = 0;
      for (KeyEntry* e : entries) {
        if (const CachedValue* v = e->cached_value()) {
          held += Charge(v->size);
          ++cached;
        }
      }
      ASSERT_EQ(cache.bytes(), held) << "step " << step;
      ASSERT_EQ(cache.size(), cached) << "step " << step;
    }
  }
}

}  // namespace
}  // namespace natcd::testing
