// etcdctl's recipes as the very first writes of a fresh natcd. clientv3's
// Election.Campaign puts its key, then always waits for the keys created up
// to "its revision - 1", where 0 means no bound: etcd's empty store is at
// revision 1, so its first write gets revision 2 and waits for nothing; a
// store whose first write got revision 1 had it wait for its own key for
// ever. (etcdctl 3.4's Mutex.Lock returns at once when its own key is the
// oldest of the prefix, so it did not hang; its key's create revision, 1
// then, is what etcd would not give.)
#include "grpc/etcdctl_fixture.h"

namespace natcd::testing {
namespace {

// A nats-server and a natcd of its own for each test (the suite-wide ones
// of EtcdctlTest have been written to by other tests).
class FreshStoreTest : public EtcdctlTest {
 public:
  static void SetUpTestSuite() {}
  static void TearDownTestSuite() {}
  void SetUp() override { EtcdctlTest::SetUpTestSuite(); }
  void TearDown() override {
    EtcdctlTest::TearDown();
    EtcdctlTest::TearDownTestSuite();
  }
};

TEST_F(FreshStoreTest, LockAsTheFirstWriteIsAcquired) {
  ASSERT_EQ(HeaderRevision(Run({"get", "/locks/", "--prefix", "-w", "json"}).out), 1);
  auto holder = Start({"lock", "/locks/first"});
  ASSERT_TRUE(holder->WaitFor("/locks/first/", std::chrono::seconds(5))) << holder->Output();
  // Its key is the store's first write, at revision 2 as in etcd.
  CommandResult r = Run({"get", "/locks/first/", "--prefix", "-w", "json"});
  EXPECT_NE(r.out.find("\"create_revision\":2,"), std::string::npos) << r.out;
  holder->Stop();
}

TEST_F(FreshStoreTest, CampaignAsTheFirstWriteIsElected) {
  ASSERT_EQ(HeaderRevision(Run({"get", "/elections/", "--prefix", "-w", "json"}).out), 1);
  auto candidate = Start({"elect", "/elections/first", "alice"});
  ASSERT_TRUE(candidate->WaitFor("alice", std::chrono::seconds(5))) << candidate->Output();
  CommandResult r = Run({"get", "/elections/first/", "--prefix", "-w", "json"});
  EXPECT_NE(r.out.find("\"create_revision\":2,"), std::string::npos) << r.out;
  candidate->Stop();
}

}  // namespace
}  // namespace natcd::testing
