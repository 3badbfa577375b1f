// examples/lock_counter.c: 4 processes x 25 increments under the mutex
// leave the counter at exactly 100.
#include <memory>

#include "examples/example_helpers.h"

namespace natcd::testing {
namespace {

using LockCounterExampleTest = ExampleTest;

TEST_F(LockCounterExampleTest, FourProcessesLoseNoIncrement) {
  std::vector<std::unique_ptr<ExampleProcess>> workers;
  for (int i = 0; i < 4; i++) {
    workers.push_back(std::make_unique<ExampleProcess>(
        "lock-counter", std::vector<std::string>{"25"}, server_.url(), dir_.path()));
    ASSERT_TRUE(workers.back()->Start());
  }
  for (auto& w : workers) {
    EXPECT_EQ(w->Wait(30000), 0) << w->Output();
    EXPECT_NE(w->Output().find("done: 25 increments"), std::string::npos) << w->Output();
  }

  natcdRangeResponse* got = nullptr;
  ASSERT_EQ(natcdKV_Get(&got, client_, NATCD_STR("/examples/counter"), nullptr), natcdStatus_OK);
  ASSERT_EQ(got->n_kvs, 1u);
  EXPECT_STREQ(got->kvs[0].value, "100");
  natcdRangeResponse_Destroy(got);

  // Every session was revoked: no lock key is left behind.
  natcdRangeOptions prefix = {};
  prefix.prefix = true;
  prefix.count_only = true;
  ASSERT_EQ(natcdKV_Get(&got, client_, NATCD_STR("/examples/counter-lock/"), &prefix),
            natcdStatus_OK);
  EXPECT_EQ(got->count, 0);
  natcdRangeResponse_Destroy(got);
}

}  // namespace
}  // namespace natcd::testing
