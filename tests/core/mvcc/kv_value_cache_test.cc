// What the KvStore asks of its ValueCache: reads cache values and mark
// them used; the prev_kv a write reads of the value it replaces, and the
// values a filtered range leaves out, neither cache nor evict anything.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "lease/lease_manager.h"
#include "mvcc/kv_store.h"
#include "natcd/clock.h"
#include "storage/sqlite_backend.h"
#include "testutil.h"

namespace natcd::testing {
namespace {

constexpr int kHot = 4;
// Hot and cold values differ in size, so that the cache's byte count tells
// whether it holds only hot ones.
const std::string kHotValue(10, 'h');
const std::string kColdValue(30, 'c');

class KvValueCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<std::unique_ptr<SqliteBackend>> backend =
        SqliteBackend::Open(BackendOptions{dir_.File("kv.db"), /*sync=*/false});
    ASSERT_TRUE(backend.ok()) << backend.status().ToString();
    backend_ = std::move(backend).value();
    // Cold keys written by one store; a second one over the same database
    // (which caches nothing on Load) writes and reads the hot ones, with
    // room for their values and no more.
    OpenStore();
    for (int i = 0; i < 20; i++) Put("/cold/" + std::to_string(100 + i), kColdValue);
    OpenStore();
    for (int i = 0; i < kHot; i++) Put("/hot/" + std::to_string(i), kHotValue);
    for (int i = 0; i < kHot; i++) ASSERT_EQ(Read("/hot/" + std::to_string(i)).kvs.size(), 1u);
    ASSERT_TRUE(HotCached());
  }

  void OpenStore() {
    kv_ = std::make_unique<KvStore>(backend_.get(), &leases_,
                                    KvLimits{128, kHot * ValueCache::Charge(kHotValue.size())});
    ASSERT_TRUE(kv_->Load().ok());
  }
  void Put(const std::string& key, const std::string& value) {
    ASSERT_TRUE(backend_->BeginBatch().ok());
    PutRequest request;
    request.key = key;
    request.value = value;
    ASSERT_TRUE(kv_->Put(request).ok());
    ASSERT_TRUE(backend_->CommitBatch().ok());
  }
  RangeResponse Read(const std::string& key, const std::string& range_end = "",
                     int64_t min_mod_revision = 0) {
    RangeRequest request;
    request.key = key;
    request.range_end = range_end;
    request.min_mod_revision = min_mod_revision;
    Result<RangeResponse> response = kv_->Range(request);
    EXPECT_TRUE(response.ok()) << response.status().ToString();
    return response.ok() ? std::move(response).value() : RangeResponse{};
  }
  // The cache holds the hot keys' values and nothing else.
  bool HotCached() {
    return kv_->value_cache().size() == static_cast<size_t>(kHot) &&
           kv_->value_cache().bytes() == kHot * ValueCache::Charge(kHotValue.size());
  }

  TempDir dir_;
  ManualClock clock_;
  LeaseManager leases_{&clock_};
  std::unique_ptr<SqliteBackend> backend_;
  std::unique_ptr<KvStore> kv_;
};

TEST_F(KvValueCacheTest, DeletingUncachedKeysEvictsNothing) {
  ASSERT_TRUE(backend_->BeginBatch().ok());
  DeleteRangeRequest request;
  request.key = "/cold/";
  request.range_end = "/cold0";
  request.prev_kv = true;
  Result<DeleteRangeResponse> deleted = kv_->DeleteRange(request);
  ASSERT_TRUE(backend_->CommitBatch().ok());
  ASSERT_TRUE(deleted.ok());
  EXPECT_EQ(deleted->deleted, 20);
  ASSERT_EQ(deleted->prev_kvs.size(), 20u);
  EXPECT_EQ(deleted->prev_kvs[0].value, kColdValue);  // read from its row
  EXPECT_TRUE(HotCached());
}

TEST_F(KvValueCacheTest, AFilteredRangeLoadsOnlyTheValuesItReturns) {
  RangeResponse none = Read("/cold/", "/cold0", /*min_mod_revision=*/1'000);
  EXPECT_EQ(none.kvs.size(), 0u);
  EXPECT_TRUE(HotCached());
  // Without the filter the values are read (and cached: the hot ones,
  // read once, get a second chance but not a third).
  RangeResponse all = Read("/cold/", "/cold0");
  ASSERT_EQ(all.kvs.size(), 20u);
  EXPECT_EQ(all.kvs[19].value, kColdValue);
  EXPECT_FALSE(HotCached());
}

}  // namespace
}  // namespace natcd::testing
