// The KV subjects over a real nats-server: put, range, delete, txn,
// compaction, in protobuf and in JSON.
#include "natcd/natcd_fixture.h"

namespace natcd::testing {
namespace {

using KvWireTest = NatcdTest;

TEST_F(KvWireTest, PutRangeDelete) {
  EXPECT_EQ(client_->Put("/a", "1"), 1);
  EXPECT_EQ(client_->Put("/b", "2"), 2);
  EXPECT_EQ(client_->Put("/a", "3"), 3);
  auto range = client_->Range("/", "0");  // every key under "/"
  ASSERT_TRUE(range);
  ASSERT_EQ(range->n_kvs, 2u);
  EXPECT_EQ(range->count, 2);
  EXPECT_EQ(range->header->revision, 3);
  EXPECT_EQ(
      std::string(reinterpret_cast<char*>(range->kvs[0]->value.data), range->kvs[0]->value.len),
      "3");
  EXPECT_EQ(range->kvs[0]->version, 2);
  EXPECT_EQ(range->kvs[0]->create_revision, 1);
  auto old = client_->Range("/a", "", 1);
  ASSERT_EQ(old->n_kvs, 1u);
  EXPECT_EQ(old->kvs[0]->version, 1);
  EXPECT_EQ(client_->Delete("/a"), 1);
  EXPECT_EQ(client_->Range("/a")->n_kvs, 0u);
}

}  // namespace
}  // namespace natcd::testing
