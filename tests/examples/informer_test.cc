// examples/informer.c: writes before it starts (the listing), while it
// watches, and right after natcd is killed (SIGKILL) and restarted; the
// informer's final cache equals a fresh range, and the revisions it printed
// run from the listing's + 1 to the last write, each exactly once.
#include <map>
#include <string>

#include "examples/example_helpers.h"

namespace natcd::testing {
namespace {

class InformerExampleTest : public ExampleTest {
 protected:
  int64_t Put(const std::string& key, const std::string& value) {
    natcdPutResponse* resp = nullptr;
    natcdStatus s =
        natcdKV_Put(&resp, client_, key.data(), key.size(), value.data(), value.size(), nullptr);
    EXPECT_EQ(s, natcdStatus_OK) << "put " << key;
    int64_t rev = s == natcdStatus_OK ? resp->header.revision : 0;
    natcdPutResponse_Destroy(resp);
    return rev;
  }
  int64_t Delete(const std::string& key) {
    natcdDeleteResponse* resp = nullptr;
    natcdStatus s = natcdKV_Delete(&resp, client_, key.data(), key.size(), nullptr);
    EXPECT_EQ(s, natcdStatus_OK) << "delete " << key;
    EXPECT_EQ(s == natcdStatus_OK ? resp->deleted : 0, 1) << "delete " << key;
    int64_t rev = s == natcdStatus_OK ? resp->header.revision : 0;
    natcdDeleteResponse_Destroy(resp);
    return rev;
  }
  std::map<std::string, std::string> Range(const std::string& prefix) {
    std::map<std::string, std::string> out;
    natcdRangeResponse* resp = nullptr;
    natcdRangeOptions opts = {};
    opts.prefix = true;
    EXPECT_EQ(natcdKV_Get(&resp, client_, prefix.data(), prefix.size(), &opts), natcdStatus_OK);
    for (size_t i = 0; resp != nullptr && i < resp->n_kvs; i++) {
      out[resp->kvs[i].key] = resp->kvs[i].value;
    }
    natcdRangeResponse_Destroy(resp);
    return out;
  }
};

TEST_F(InformerExampleTest, SurvivesNatcdRestartWithoutMissingOrRepeating) {
  // Before: the listing. A key outside the prefix is not the informer's.
  for (int i = 0; i < 5; i++) Put("/inf/k" + std::to_string(i), "v" + std::to_string(i));
  Put("/other", "x");
  int64_t listed = Delete("/inf/k0");

  ExampleProcess informer("informer", {"/inf/", "--heartbeat-ms", "200"}, server_.url(),
                          dir_.path());
  ASSERT_TRUE(informer.Start());
  ASSERT_TRUE(informer.WaitForLine("listed 4 key(s) at revision " + std::to_string(listed), 5000))
      << informer.Output();

  // During.
  for (int i = 5; i < 10; i++) Put("/inf/k" + std::to_string(i), "v" + std::to_string(i));
  Put("/inf/k1", "changed");
  int64_t before_crash = Delete("/inf/k2");
  ASSERT_TRUE(WaitUntil(
      [&] {
        return informer.Output().find("rev " + std::to_string(before_crash) + " ") !=
               std::string::npos;
      },
      5000))
      << informer.Output();

  // natcd crashes and comes back on the same data; these writes happen
  // before the informer's watch notices (3 silent heartbeats = 600 ms).
  natcd_->Kill();
  ASSERT_TRUE(natcd_->Start());
  for (int i = 10; i < 15; i++) Put("/inf/k" + std::to_string(i), "v" + std::to_string(i));
  Put("/other", "y");
  Delete("/inf/k3");
  int64_t last = Put("/inf/k4", "after restart");

  ASSERT_TRUE(WaitUntil(
      [&] {
        return informer.Output().find("rev " + std::to_string(last) + " ") != std::string::npos;
      },
      10000))
      << informer.Output();
  ASSERT_EQ(informer.Terminate(), 0) << informer.Output();

  // Every revision from listed + 1 to last (but the one that wrote /other)
  // exactly once, in order; then the cache.
  std::map<std::string, std::string> cache;
  std::vector<int64_t> revisions;
  std::string summary;
  for (const std::string& line : informer.Lines()) {
    if (line.rfind("rev ", 0) == 0) revisions.push_back(std::stoll(line.substr(4)));
    if (line.rfind("cache /", 0) == 0) {
      size_t eq = line.find(" = ");
      ASSERT_NE(eq, std::string::npos) << line;
      cache[line.substr(6, eq - 6)] = line.substr(eq + 3);
    }
    if (line.rfind("cache: ", 0) == 0) summary = line;
  }
  ASSERT_FALSE(revisions.empty()) << informer.Output();
  EXPECT_EQ(revisions.front(), listed + 1) << informer.Output();
  EXPECT_EQ(revisions.back(), last) << informer.Output();
  int64_t other = last - 2;  // Put("/other", "y")
  for (size_t i = 1; i < revisions.size(); i++) {
    int64_t expected = revisions[i - 1] + 1 == other ? other + 1 : revisions[i - 1] + 1;
    EXPECT_EQ(revisions[i], expected) << "after revision " << revisions[i - 1] << ":\n"
                                      << informer.Output();
  }
  EXPECT_EQ(revisions.size(), static_cast<size_t>(last - listed - 1)) << informer.Output();

  EXPECT_EQ(cache, Range("/inf/")) << informer.Output();
  EXPECT_EQ(cache.size(), 12u);  // k1 k4..k14
  EXPECT_EQ(cache["/inf/k1"], "changed");
  EXPECT_EQ(cache["/inf/k4"], "after restart");
  // The restart was survived by resuming, not by listing again.
  EXPECT_EQ(SplitLines(informer.Output()).size() - revisions.size() - cache.size(), 2u)
      << "more than one listing:\n"
      << informer.Output();
  EXPECT_EQ(summary.find(" 0 resume(s)"), std::string::npos) << summary;
}

}  // namespace
}  // namespace natcd::testing
