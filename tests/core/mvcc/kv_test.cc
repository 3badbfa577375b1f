// Put, Range and DeleteRange with etcd v3's meaning.
// Reference: etcd api_guarantees.md, rpc.proto comments, kvstore_test.go.
#include <sqlite3.h>

#include <random>
#include <string>
#include <vector>

#include "core/engine_fixture.h"
#include "natcd/key_range.h"

namespace natcd::testing {
namespace {

using KvTest = EngineTest;

TEST_F(KvTest, PutAssignsRevisionsAndVersions) {
  EXPECT_EQ(engine_->revision(), 1);  // as etcd's: the first write is revision 2
  EXPECT_EQ(Put("a", "1").header.revision, 2);
  EXPECT_EQ(Put("b", "1").header.revision, 3);
  EXPECT_EQ(Put("a", "2").header.revision, 4);
  KeyValue a = Get("a");
  EXPECT_EQ(a.value, "2");
  EXPECT_EQ(a.create_revision, 2);
  EXPECT_EQ(a.mod_revision, 4);
  EXPECT_EQ(a.version, 2);
  EXPECT_EQ(a.lease, 0);
}

// Stores written before natcd numbered from etcd's empty revision (1) have
// their first write at revision 1: they keep every revision, and the next
// write follows the last.
TEST_F(KvTest, AStoreWhoseFirstWriteIsRevisionOneKeepsItsRevisions) {
  Put("a", "1");
  Put("b", "1");
  engine_.reset();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(dir_.File("natcd.db").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "UPDATE kv SET rev = rev - 1, create_rev = create_rev - 1", nullptr,
                         nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  Reopen();
  EXPECT_EQ(engine_->revision(), 2);
  EXPECT_EQ(Get("a").mod_revision, 1);
  EXPECT_EQ(Get("a", 1).value, "1");
  EXPECT_EQ(Put("c", "1").header.revision, 3);
}

TEST_F(KvTest, PutPrevKv) {
  Put("k", "old");
  PutRequest request{"k", "new", 0, /*prev_kv=*/true};
  Result<PutResponse> response = engine_->Put(request);
  ASSERT_TRUE(response.ok());
  ASSERT_TRUE(response->has_prev_kv);
  EXPECT_EQ(response->prev_kv.value, "old");
  EXPECT_EQ(response->prev_kv.mod_revision, 2);
  // No prev_kv for a new key.
  Result<PutResponse> fresh = engine_->Put(PutRequest{"fresh", "v", 0, true});
  ASSERT_TRUE(fresh.ok());
  EXPECT_FALSE(fresh->has_prev_kv);
}

TEST_F(KvTest, PutEmptyKeyIsRejected) {
  Result<PutResponse> response = engine_->Put(PutRequest{"", "v"});
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.status().name(), "ErrEmptyKey");
  EXPECT_EQ(engine_->revision(), kEmptyStoreRevision);
}

TEST_F(KvTest, IgnoreValueAndIgnoreLease) {
  int64_t lease = Grant(60);
  Put("k", "v1", lease);
  PutRequest keep_value{"k", "", 0};
  keep_value.ignore_value = true;
  keep_value.ignore_lease = true;
  ASSERT_TRUE(engine_->Put(keep_value).ok());
  KeyValue kv = Get("k");
  EXPECT_EQ(kv.value, "v1");
  EXPECT_EQ(kv.lease, lease);
  EXPECT_EQ(kv.version, 2);

  // Drop the lease but keep the value.
  PutRequest drop_lease{"k", "", 0};
  drop_lease.ignore_value = true;
  ASSERT_TRUE(engine_->Put(drop_lease).ok());
  EXPECT_EQ(Get("k").lease, 0);
  EXPECT_EQ(Get("k").value, "v1");
}

TEST_F(KvTest, IgnoreFlagsFailOnMissingKeyAndOnProvidedFields) {
  PutRequest missing{"nope", "", 0};
  missing.ignore_value = true;
  Result<PutResponse> r1 = engine_->Put(missing);
  ASSERT_FALSE(r1.ok());
  EXPECT_EQ(r1.status().name(), "ErrKeyNotFound");
  EXPECT_EQ(r1.status().message(), "etcdserver: key not found");

  Put("k", "v");
  PutRequest both{"k", "value", 0};
  both.ignore_value = true;
  EXPECT_EQ(engine_->Put(both).status().name(), "ErrValueProvided");
  PutRequest lease_both{"k", "x", 5};
  lease_both.ignore_lease = true;
  EXPECT_EQ(engine_->Put(lease_both).status().name(), "ErrLeaseProvided");
  EXPECT_EQ(engine_->revision(), 2);
}

TEST_F(KvTest, PutWithMissingLeaseFails) {
  Result<PutResponse> response = engine_->Put(PutRequest{"k", "v", 12345});
  ASSERT_FALSE(response.ok());
  EXPECT_TRUE(response.status().IsLeaseNotFound());
  EXPECT_EQ(engine_->revision(), kEmptyStoreRevision);
  EXPECT_EQ(Get("k").version, 0);
}

TEST_F(KvTest, DeleteResetsVersionAndStartsNewGeneration) {
  Put("k", "1");                          // rev 2
  Put("k", "2");                          // rev 3
  DeleteRangeResponse del = Delete("k");  // rev 4
  EXPECT_EQ(del.deleted, 1);
  EXPECT_EQ(del.header.revision, 4);
  ASSERT_EQ(del.prev_kvs.size(), 1u);
  EXPECT_EQ(del.prev_kvs[0].value, "2");
  EXPECT_EQ(Get("k").version, 0);
  Put("k", "3");  // rev 5: a new generation
  KeyValue kv = Get("k");
  EXPECT_EQ(kv.version, 1);
  EXPECT_EQ(kv.create_revision, 5);
  // History still shows the first generation.
  EXPECT_EQ(Get("k", 3).value, "2");
  EXPECT_EQ(Get("k", 3).create_revision, 2);
  EXPECT_EQ(Get("k", 3).version, 2);
  EXPECT_EQ(Get("k", 4).version, 0);
}

TEST_F(KvTest, DeleteOfNothingKeepsTheRevision) {
  Put("a", "1");
  DeleteRangeResponse del = Delete("zzz");
  EXPECT_EQ(del.deleted, 0);
  EXPECT_EQ(del.header.revision, 2);
  EXPECT_EQ(engine_->revision(), 2);
}

TEST_F(KvTest, DeleteRangeSharesOneRevision) {
  Put("p/1", "a");
  Put("p/2", "b");
  Put("q", "c");
  DeleteRangeResponse del = Delete("p/", PrefixRangeEnd("p/"));
  EXPECT_EQ(del.deleted, 2);
  EXPECT_EQ(del.header.revision, 5);
  EXPECT_EQ(Get("q").value, "c");
}

class RangeTest : public EngineTest {
 protected:
  void SetUp() override {
    EngineTest::SetUp();
    // Revisions 2 to 8, with distinct versions and values.
    Put("a", "z");  // 2
    Put("b", "y");  // 3
    Put("c", "x");  // 4
    Put("b", "w");  // 5
    Put("d", "v");  // 6
    Put("c", "u");  // 7
    Put("c", "t");  // 8
  }
  RangeResponse Run(RangeRequest request) {
    Result<RangeResponse> response = engine_->Range(request);
    EXPECT_TRUE(response.ok()) << response.status().ToString();
    return response.ok() ? response.value() : RangeResponse{};
  }
  static std::string Keys(const RangeResponse& r) {
    std::string out;
    for (const KeyValue& kv : r.kvs) out += kv.key;
    return out;
  }
};

TEST_F(RangeTest, SingleKeyRangeAndFromKey) {
  RangeRequest one;
  one.key = "b";
  EXPECT_EQ(Keys(Run(one)), "b");
  RangeRequest range;
  range.key = "b";
  range.range_end = "d";
  EXPECT_EQ(Keys(Run(range)), "bc");
  RangeRequest from;
  from.key = "b";
  from.range_end = std::string("\0", 1);
  EXPECT_EQ(Keys(Run(from)), "bcd");
  RangeRequest all;
  all.key = std::string("\0", 1);
  all.range_end = std::string("\0", 1);
  RangeResponse r = Run(all);
  EXPECT_EQ(Keys(r), "abcd");
  EXPECT_EQ(r.count, 4);
  EXPECT_EQ(r.header.revision, 8);
}

TEST_F(RangeTest, LimitMoreAndCount) {
  RangeRequest request;
  request.key = "a";
  request.range_end = "z";
  request.limit = 2;
  RangeResponse r = Run(request);
  EXPECT_EQ(Keys(r), "ab");
  EXPECT_TRUE(r.more);
  EXPECT_EQ(r.count, 4);
  request.limit = 4;
  r = Run(request);
  EXPECT_FALSE(r.more);
  EXPECT_EQ(r.kvs.size(), 4u);
}

TEST_F(RangeTest, HistoricalRead) {
  RangeRequest request;
  request.key = "a";
  request.range_end = "z";
  request.revision = 4;
  RangeResponse r = Run(request);
  EXPECT_EQ(Keys(r), "abc");
  EXPECT_EQ(r.kvs[1].value, "y");
  EXPECT_EQ(r.kvs[1].version, 1);
  request.revision = 6;
  r = Run(request);
  EXPECT_EQ(Keys(r), "abcd");
  EXPECT_EQ(r.kvs[1].value, "w");
  EXPECT_EQ(r.kvs[1].version, 2);
  EXPECT_EQ(r.kvs[2].value, "x");
}

TEST_F(RangeTest, FutureRevisionFails) {
  RangeRequest request;
  request.key = "a";
  request.revision = 9;
  Result<RangeResponse> r = engine_->Range(request);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsFutureRevision());
}

TEST_F(RangeTest, SortTargetsAndOrders) {
  RangeRequest request;
  request.key = "a";
  request.range_end = "z";
  request.sort_order = SortOrder::kDescend;
  EXPECT_EQ(Keys(Run(request)), "dcba");
  request.sort_target = SortTarget::kValue;
  request.sort_order = SortOrder::kAscend;
  EXPECT_EQ(Keys(Run(request)), "cdba");  // t v w z
  request.sort_target = SortTarget::kMod;
  request.sort_order = SortOrder::kNone;  // non-key target: ascending by default
  EXPECT_EQ(Keys(Run(request)), "abdc");  // 2 5 6 8
  request.sort_target = SortTarget::kVersion;
  request.sort_order = SortOrder::kDescend;
  EXPECT_EQ(Keys(Run(request)), "cbad");  // 3 2 1 1 (stable: a before d)
  request.sort_target = SortTarget::kCreate;
  request.sort_order = SortOrder::kDescend;
  request.limit = 2;
  RangeResponse r = Run(request);
  EXPECT_EQ(Keys(r), "dc");
  EXPECT_TRUE(r.more);
}

TEST_F(RangeTest, KeysOnlyAndCountOnly) {
  RangeRequest request;
  request.key = "a";
  request.range_end = "z";
  request.keys_only = true;
  RangeResponse r = Run(request);
  ASSERT_EQ(r.kvs.size(), 4u);
  EXPECT_TRUE(r.kvs[0].value.empty());
  EXPECT_EQ(r.kvs[2].version, 3);
  request.keys_only = false;
  request.count_only = true;
  r = Run(request);
  EXPECT_TRUE(r.kvs.empty());
  EXPECT_EQ(r.count, 4);
}

TEST_F(RangeTest, MinMaxRevisionFiltersDoNotChangeCount) {
  RangeRequest request;
  request.key = "a";
  request.range_end = "z";
  request.min_mod_revision = 5;
  RangeResponse r = Run(request);
  EXPECT_EQ(Keys(r), "bcd");
  EXPECT_EQ(r.count, 4);
  request.min_mod_revision = 0;
  request.max_create_revision = 3;
  EXPECT_EQ(Keys(Run(request)), "ab");
  request.max_create_revision = 0;
  request.min_create_revision = 4;
  request.max_mod_revision = 6;
  EXPECT_EQ(Keys(Run(request)), "d");
}

TEST_F(RangeTest, EmptyKeyIsRejected) {
  RangeRequest request;
  Result<RangeResponse> r = engine_->Range(request);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().name(), "ErrEmptyKey");
}

TEST_F(RangeTest, RangeEndBelowKeyIsEmpty) {
  RangeRequest request;
  request.key = "c";
  request.range_end = "b";
  RangeResponse r = Run(request);
  EXPECT_TRUE(r.kvs.empty());
  EXPECT_EQ(r.count, 0);
}

// A reopen reads rows in revision order, which for keys created in random
// order is no key order: the index it rebuilds must answer every read as
// before, at the head and at older revisions, and find the leased keys.
TEST_F(KvTest, ReopenAfterKeysCreatedInRandomOrder) {
  const uint32_t seed = RandomSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const int64_t lease = Grant(60);
  for (int i = 0; i < 1500; ++i) {
    const std::string key = "k/" + std::to_string(rng() % 1000);
    if (rng() % 5 == 0) {
      Delete(key);
    } else {
      Put(key, "v" + std::to_string(i), rng() % 4 == 0 ? lease : 0);
    }
  }
  ASSERT_TRUE(engine_->Compact({engine_->revision() / 3}).ok());
  ASSERT_OK(engine_->Commit());
  const std::string kAll("\0", 1);
  auto read_all = [&](int64_t rev) {
    RangeRequest request;
    request.key = kAll;
    request.range_end = kAll;
    request.revision = rev;
    Result<RangeResponse> response = engine_->Range(request);
    EXPECT_TRUE(response.ok()) << response.status().ToString();
    return response.ok() ? response->kvs : std::vector<KeyValue>{};
  };
  const int64_t head = engine_->revision();
  std::vector<int64_t> revs = {0, head / 3, head / 2, head - 1};
  std::vector<std::vector<KeyValue>> before;
  for (int64_t rev : revs) before.push_back(read_all(rev));
  ASSERT_GT(before[0].size(), 100u);

  Reopen();
  for (size_t i = 0; i < revs.size(); ++i) {
    EXPECT_EQ(read_all(revs[i]), before[i]) << "at revision " << revs[i];
  }
  // The leased keys are attached again: revoking the lease deletes them.
  Result<LeaseRevokeResponse> revoked = engine_->LeaseRevoke({lease});
  ASSERT_TRUE(revoked.ok()) << revoked.status().ToString();
  ASSERT_OK(engine_->Commit());
  size_t unleased = 0;
  for (const KeyValue& kv : before[0]) unleased += kv.lease == 0 ? 1 : 0;
  ASSERT_LT(unleased, before[0].size());
  EXPECT_EQ(read_all(0).size(), unleased);
}

TEST(KeyRangeTest, PrefixRangeEnd) {
  EXPECT_EQ(PrefixRangeEnd("abc"), "abd");
  EXPECT_EQ(PrefixRangeEnd(std::string("a\xff", 2)), "b");
  EXPECT_EQ(PrefixRangeEnd(std::string("\xff\xff", 2)), std::string("\0", 1));
  EXPECT_TRUE(KeyInRange("abz", "abc", PrefixRangeEnd("ab")));
  EXPECT_FALSE(KeyInRange("ac", "ab", PrefixRangeEnd("ab")));
  EXPECT_TRUE(KeyInRange("zzz", "a", std::string("\0", 1)));
  EXPECT_FALSE(KeyInRange("b", "a", ""));
}

}  // namespace
}  // namespace natcd::testing
