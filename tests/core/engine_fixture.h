// A test fixture owning an Engine on a temporary database with a manual
// clock, plus short helpers that apply a write and commit it.
#pragma once

#include <memory>
#include <string>

#include "natcd/engine.h"
#include "testutil.h"

namespace natcd::testing {

class EngineTest : public ::testing::Test {
 protected:
  void SetUp() override { Open(); }

  virtual EngineOptions Options() {
    EngineOptions options;
    options.db_path = dir_.File("natcd.db");
    options.sync = false;  // durability has its own tests
    options.clock = &clock_;
    options.seed = 7;
    return options;
  }

  void Open() {
    Result<std::unique_ptr<Engine>> engine = Engine::Open(Options());
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    engine_ = std::move(engine).value();
    engine_->PromoteLeases(0);
  }
  void Reopen() {
    engine_.reset();
    Open();
  }

  PutResponse Put(const std::string& key, const std::string& value, int64_t lease = 0) {
    PutRequest request;
    request.key = key;
    request.value = value;
    request.lease = lease;
    Result<PutResponse> response = engine_->Put(request);
    EXPECT_TRUE(response.ok()) << response.status().ToString();
    EXPECT_OK(engine_->Commit());
    return response.ok() ? response.value() : PutResponse{};
  }

  DeleteRangeResponse Delete(const std::string& key, const std::string& range_end = "") {
    DeleteRangeRequest request;
    request.key = key;
    request.range_end = range_end;
    request.prev_kv = true;
    Result<DeleteRangeResponse> response = engine_->DeleteRange(request);
    EXPECT_TRUE(response.ok()) << response.status().ToString();
    EXPECT_OK(engine_->Commit());
    return response.ok() ? response.value() : DeleteRangeResponse{};
  }

  // The key's KeyValue at rev (0 = head); version 0 when absent.
  KeyValue Get(const std::string& key, int64_t rev = 0) {
    RangeRequest request;
    request.key = key;
    request.revision = rev;
    Result<RangeResponse> response = engine_->Range(request);
    EXPECT_TRUE(response.ok()) << response.status().ToString();
    if (!response.ok() || response->kvs.empty()) return KeyValue{};
    return response->kvs[0];
  }

  int64_t Grant(int64_t ttl_s, int64_t id = 0) {
    Result<LeaseGrantResponse> response = engine_->LeaseGrant({ttl_s, id});
    EXPECT_TRUE(response.ok()) << response.status().ToString();
    EXPECT_OK(engine_->Commit());
    return response.ok() ? response->id : 0;
  }

  TempDir dir_;
  ManualClock clock_;
  std::unique_ptr<Engine> engine_;
};

}  // namespace natcd::testing
