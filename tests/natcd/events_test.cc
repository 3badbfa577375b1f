// Live events on P.ev.<key tokens>: what any NATS client sees with
// `nats sub 'natcd.ev.>'`.
#include <set>
#include <thread>

#include "natcd/natcd_fixture.h"
#include "natcd/natcd_helpers.h"

namespace natcd::testing {
namespace {

using EventsTest = NatcdTest;

TEST_F(EventsTest, PutAndDeleteHeaders) {
  Sub events(client_->nc(), "natcd.ev.>");
  int64_t lease = client_->Grant(60);
  ASSERT_NE(lease, 0);
  ASSERT_EQ(client_->Put("/svc/10.0.0.1:80", "addr", lease), 2);
  ASSERT_EQ(client_->Put("/svc/10.0.0.1:80", "addr2"), 3);
  ASSERT_EQ(client_->Delete("/svc/10.0.0.1:80"), 1);

  auto got = events.Take(3);
  ASSERT_EQ(got.size(), 3u);
  for (const Received& m : got) EXPECT_EQ(m.subject, "natcd.ev.svc.10%2E0%2E0%2E1:80");

  const Received& put = got[0];
  EXPECT_EQ(put.data, "addr");
  EXPECT_EQ(put.Header("Natcd-Op"), "PUT");
  EXPECT_EQ(put.Header("Natcd-Revision"), "2");
  EXPECT_EQ(put.Header("Natcd-Create-Revision"), "2");
  EXPECT_EQ(put.Header("Natcd-Version"), "1");
  EXPECT_EQ(put.Header("Natcd-Lease"), LeaseHex(lease));
  EXPECT_EQ(put.Header("Natcd-Key"), "/svc/10.0.0.1:80");

  const Received& again = got[1];
  EXPECT_EQ(again.data, "addr2");
  EXPECT_EQ(again.Header("Natcd-Revision"), "3");
  EXPECT_EQ(again.Header("Natcd-Create-Revision"), "2");
  EXPECT_EQ(again.Header("Natcd-Version"), "2");
  EXPECT_FALSE(again.HasHeader("Natcd-Lease")) << "no lease: no header";

  const Received& del = got[2];
  EXPECT_EQ(del.Header("Natcd-Op"), "DEL");
  EXPECT_EQ(del.data, "");
  EXPECT_EQ(del.Header("Natcd-Revision"), "4");
  EXPECT_EQ(del.Header("Natcd-Version"), "0");
  EXPECT_EQ(del.Header("Natcd-Key"), "/svc/10.0.0.1:80");
  EXPECT_TRUE(events.Drain(150).empty()) << "an event was published twice";
}

TEST_F(EventsTest, AwkwardKeysAndSubjectFilters) {
  Sub all(client_->nc(), "natcd.ev.>");
  Sub pods(client_->nc(), "natcd.ev.registry.pods.>");
  struct Case {
    std::string key;
    std::string subject;
    std::string header;
  };
  std::vector<Case> cases = {
      {"/registry/pods/default/web-1", "natcd.ev.registry.pods.default.web-1",
       "/registry/pods/default/web-1"},
      {"/a b/100%", "natcd.ev.a%20b.100%25", "/a%20b/100%25"},
      {"/a//b/", "natcd.ev.a.%.b.%", "/a//b/"},
      {"/wild/*/>", "natcd.ev.wild.%2A.%3E", "/wild/*/>"},
      {std::string("/bin/\x01\xff", 7), "natcd.ev.bin.%01%FF", "/bin/%01%FF"},
      {"noslash", "natcd.ev.noslash", "noslash"},
      {"/registry/pods/kube-system/dns", "natcd.ev.registry.pods.kube-system.dns",
       "/registry/pods/kube-system/dns"},
  };
  for (const Case& c : cases) ASSERT_GT(client_->Put(c.key, "v"), 0) << c.key;
  auto got = all.Take(cases.size());
  ASSERT_EQ(got.size(), cases.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    EXPECT_EQ(got[i].subject, cases[i].subject) << cases[i].header;
    EXPECT_EQ(got[i].Header("Natcd-Key"), cases[i].header);
  }
  auto filtered = pods.Take(2);
  ASSERT_EQ(filtered.size(), 2u);
  EXPECT_EQ(filtered[0].Header("Natcd-Key"), "/registry/pods/default/web-1");
  EXPECT_EQ(filtered[1].Header("Natcd-Key"), "/registry/pods/kube-system/dns");
  EXPECT_TRUE(pods.Drain(150).empty());
}

TEST_F(EventsTest, RevisionOrderUnderConcurrentWriters) {
  Sub events(client_->nc(), "natcd.ev.>");
  constexpr int kWriters = 4;
  constexpr int kEach = 100;
  std::vector<std::thread> writers;
  for (int t = 0; t < kWriters; ++t) {
    writers.emplace_back([&, t] {
      WireClient c(server_.url());
      for (int i = 0; i < kEach; ++i) c.Put("/ord/" + std::to_string(t), std::to_string(i));
    });
  }
  for (auto& w : writers) w.join();
  // A txn: several events of one revision.
  std::string txn = "{\"success\":[{\"requestPut\":{\"key\":\"" + B64("/ord/x") +
                    "\"}},{\"requestPut\":{\"key\":\"" + B64("/ord/y") + "\"}}]}";
  ASSERT_TRUE(CallJson(client_.get(), "kv.txn", txn).reply.ok());
  auto got = events.Take(kWriters * kEach + 2, 10000);
  ASSERT_EQ(got.size(), static_cast<size_t>(kWriters * kEach + 2));
  for (size_t i = 0; i < kWriters * kEach; ++i) {
    ASSERT_EQ(got[i].Header("Natcd-Revision"), std::to_string(i + 2)) << "at " << i;
  }
  EXPECT_EQ(got[kWriters * kEach].Header("Natcd-Revision"), std::to_string(kWriters * kEach + 2));
  EXPECT_EQ(got[kWriters * kEach + 1].Header("Natcd-Revision"),
            std::to_string(kWriters * kEach + 2));
  EXPECT_EQ(got[kWriters * kEach].Header("Natcd-Key"), "/ord/x");
  EXPECT_EQ(got[kWriters * kEach + 1].Header("Natcd-Key"), "/ord/y");
}

TEST_F(EventsTest, LeaseExpiryDeletesKeysAndPublishesDel) {
  Sub events(client_->nc(), "natcd.ev.>");
  int64_t lease = client_->Grant(1);  // --lease-ttl-min 1 in the fixture
  ASSERT_NE(lease, 0);
  ASSERT_EQ(client_->Put("/exp/a", "1", lease), 2);
  ASSERT_EQ(client_->Put("/exp/b", "2", lease), 3);
  ASSERT_EQ(client_->Put("/exp/keep", "3"), 4);
  auto puts = events.Take(3);
  ASSERT_EQ(puts.size(), 3u);
  auto start = Clock::now();
  auto dels = events.Take(2, 5000);
  ASSERT_EQ(dels.size(), 2u) << "no DEL events for the expired lease's keys";
  EXPECT_LT(Clock::now() - start, milliseconds(4000));
  std::set<std::string> keys;
  for (const Received& d : dels) {
    EXPECT_EQ(d.Header("Natcd-Op"), "DEL");
    EXPECT_EQ(d.Header("Natcd-Revision"), "5") << "one revision for the whole expiry";
    keys.insert(d.Header("Natcd-Key"));
  }
  EXPECT_EQ(keys, (std::set<std::string>{"/exp/a", "/exp/b"}));
  auto left = client_->Range("/exp/", "/exp0");
  ASSERT_EQ(left->n_kvs, 1u);
  EXPECT_EQ(Str(left->kvs[0]->key), "/exp/keep");
  EXPECT_EQ(TimeToLive(client_.get(), lease)->ttl, -1);
}

}  // namespace
}  // namespace natcd::testing
