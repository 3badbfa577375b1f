// The KV subjects over a real nats-server: put, range, delete, txn,
// compaction, in protobuf and in JSON.
#include "natcd/natcd_fixture.h"
#include "natcd/natcd_helpers.h"

namespace natcd::testing {
namespace {

using KvWireTest = NatcdTest;

TEST_F(KvWireTest, PutRangeDelete) {
  EXPECT_EQ(client_->Put("/a", "1"), 2);
  EXPECT_EQ(client_->Put("/b", "2"), 3);
  EXPECT_EQ(client_->Put("/a", "3"), 4);
  auto range = client_->Range("/", "0");  // every key under "/"
  ASSERT_TRUE(range);
  ASSERT_EQ(range->n_kvs, 2u);
  EXPECT_EQ(range->count, 2);
  EXPECT_EQ(range->header->revision, 4);
  EXPECT_EQ(
      std::string(reinterpret_cast<char*>(range->kvs[0]->value.data), range->kvs[0]->value.len),
      "3");
  EXPECT_EQ(range->kvs[0]->version, 2);
  EXPECT_EQ(range->kvs[0]->create_revision, 2);
  auto old = client_->Range("/a", "", 2);
  ASSERT_EQ(old->n_kvs, 1u);
  EXPECT_EQ(old->kvs[0]->version, 1);
  EXPECT_EQ(client_->Delete("/a"), 1);
  EXPECT_EQ(client_->Range("/a")->n_kvs, 0u);
}

// With no memory for values, every value a reply carries is read from its
// SQLite row, before and after a restart.
class KvWireNoValueCacheTest : public NatcdTest {
  std::vector<std::string> ExtraArgs() override {
    std::vector<std::string> args = NatcdTest::ExtraArgs();
    args.insert(args.end(), {"--value-cache-mib", "0"});
    return args;
  }
};

TEST_F(KvWireNoValueCacheTest, ValuesComeFromDisk) {
  EXPECT_EQ(client_->Put("/a", "1"), 2);
  EXPECT_EQ(client_->Put("/b", std::string(5000, 'b')), 3);
  EXPECT_EQ(client_->Put("/a", "3"), 4);
  for (int pass = 0; pass < 2; ++pass) {
    SCOPED_TRACE(pass == 0 ? "before restart" : "after restart");
    auto range = client_->Range("/", "0");
    ASSERT_TRUE(range);
    ASSERT_EQ(range->n_kvs, 2u);
    EXPECT_EQ(Str(range->kvs[0]->value), "3");
    EXPECT_EQ(Str(range->kvs[1]->value), std::string(5000, 'b'));
    EXPECT_EQ(Str(client_->Range("/a", "", 2)->kvs[0]->value), "1");
    if (pass == 0) {
      natcd_->Stop();
      ASSERT_TRUE(natcd_->Start());
    }
  }
}

}  // namespace
}  // namespace natcd::testing
