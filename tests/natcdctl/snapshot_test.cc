// natcdctl snapshot save / status / restore against a real natcd: a backup
// taken while a writer runs restores to exactly the state at its revision,
// into a one-member and a three-member new cluster that then serve; a
// damaged file is refused.
#include <atomic>
#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

#include "natcdctl/natcdctl_fixture.h"

namespace natcd::testing {
namespace {

class SnapshotTest : public NatcdctlTest {
 protected:
  // The "kvs":[...] of a JSON get: every field of every key, no header.
  static std::string Kvs(const std::string& json) {
    const size_t at = json.find("\"kvs\":[");
    if (at == std::string::npos) return "";
    const size_t end = json.find("],\"count\"", at);
    return json.substr(at, end == std::string::npos ? std::string::npos : end - at);
  }
  static int64_t JsonInt(const std::string& json, const std::string& field) {
    std::smatch m;
    if (!std::regex_search(json, m, std::regex("\"" + field + "\":([0-9]+)"))) return -1;
    return std::stoll(m[1]);
  }
  static std::string Slurp(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), {});
  }
  static void Spit(const std::string& path, const std::string& bytes) {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f << bytes;
  }
};

// Values big enough that the database spans several 1 MiB chunks (the
// default max_payload), a lease with a key, and a writer running during
// the save.
TEST_F(SnapshotTest, SaveUnderWriteLoadRestoresToItsRevision) {
  const std::string big(60'000, 'v');
  for (int i = 0; i < 60; ++i) {
    ASSERT_EQ(Ctl({"put", "/snap/big/" + std::to_string(i), big + std::to_string(i)}).code, 0);
  }
  CtlResult grant = Ctl({"lease", "grant", "600"});
  ASSERT_EQ(grant.code, 0) << grant.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(grant.out, m, std::regex("lease ([0-9a-f]+) granted")));
  const std::string lease = m[1];
  ASSERT_EQ(Ctl({"put", "--lease", lease, "/snap/leased", "held"}).code, 0);
  ASSERT_EQ(Ctl({"del", "/snap/big/0"}).code, 0);

  std::atomic<bool> stop{false};
  std::atomic<int> writes{0};
  std::thread writer([&] {
    for (int i = 0; !stop.load(); ++i) {
      if (Ctl({"put", "/snap/w/" + std::to_string(i % 7), std::to_string(i)}).code == 0) ++writes;
    }
  });
  while (writes.load() < 3) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const std::string file = dir_->File("under-load.db");
  CtlResult save = Ctl({"snapshot", "save", file});
  const int during = writes.load();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  stop = true;
  writer.join();
  ASSERT_EQ(save.code, 0) << save.err;
  EXPECT_EQ(save.out, "Snapshot saved at " + file + "\n");
  EXPECT_GT(writes.load(), during) << "the writer must go on after the save";
  EXPECT_GT(Slurp(file).size(), size_t{3} << 20) << "several chunks";

  CtlResult status = Ctl({"snapshot", "status", file, "-w", "json"}, "", {}, true);
  ASSERT_EQ(status.code, 0) << status.err;
  const int64_t rev = JsonInt(status.out, "revision");
  ASSERT_GT(rev, 60);
  EXPECT_LT(rev, Revision()) << "the writer wrote after the backup";
  EXPECT_GT(JsonInt(status.out, "totalKey"), 60);
  CtlResult table = Ctl({"snapshot", "status", file, "-w", "table"}, "", {}, true);
  // The hash is printed as %x, so its column is as wide as its digits (one
  // hash in sixteen has a leading zero and one digit fewer).
  EXPECT_TRUE(std::regex_search(
      table.out, std::regex(R"(\|  +HASH  +\| REVISION \| TOTAL KEYS \| TOTAL SIZE \|)")))
      << table.out;

  // The state at rev, read from the live cluster (in parts: a reply must
  // fit in one NATS message): every key's metadata, and the values of the
  // small keys; the big values were written once each.
  const std::string at = std::to_string(rev);
  CtlResult meta_at = Ctl({"get", "/snap/", "--prefix", "--keys-only", "-w", "json", "--rev", at});
  ASSERT_EQ(meta_at.code, 0) << meta_at.err;
  CtlResult small_at = Ctl({"get", "/snap/l", "/snap/x", "-w", "json", "--rev", at});
  ASSERT_EQ(small_at.code, 0) << small_at.err;
  ASSERT_FALSE(Kvs(meta_at.out).empty());
  ASSERT_GE(JsonInt(small_at.out, "count"), 2) << "the leased key and the writer's";

  // ... is what a new cluster restored from the backup serves.
  const std::string data = dir_->File("restored-1");
  CtlResult restore = Ctl({"snapshot", "restore", file, "--data-dir", data, "--name", "solo",
                           "--initial-cluster", "solo=http://127.0.0.1:2380"},
                          "", {}, true);
  ASSERT_EQ(restore.code, 0) << restore.err;
  EXPECT_NE(restore.out.find("revision " + std::to_string(rev)), std::string::npos) << restore.out;
  NatcdProcess restored(Url(), data,
                        {"--name", "solo", "--initial-cluster", "solo", "--prefix", "restored1",
                         "--cluster-name", "restored1", "--log-level", "warn"});
  ASSERT_TRUE(restored.Start());
  auto restored_get = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"--prefix", "restored1", "get"});
    return Ctl(args);
  };
  CtlResult meta = restored_get({"/snap/", "--prefix", "--keys-only", "-w", "json"});
  ASSERT_EQ(meta.code, 0) << meta.err << restored.Log();
  EXPECT_EQ(Kvs(meta.out), Kvs(meta_at.out));
  EXPECT_EQ(JsonInt(meta.out, "revision"), rev);
  EXPECT_EQ(Kvs(restored_get({"/snap/l", "/snap/x", "-w", "json"}).out), Kvs(small_at.out));
  for (int i = 1; i < 60; i += 7) {
    EXPECT_EQ(restored_get({"/snap/big/" + std::to_string(i), "--print-value-only"}).out,
              big + std::to_string(i) + "\n");
  }
  CtlResult leases = Ctl({"--prefix", "restored1", "lease", "list"});
  EXPECT_NE(leases.out.find(lease), std::string::npos) << leases.out;
  // It writes on from the backup's revision.
  CtlResult put = Ctl({"--prefix", "restored1", "put", "/snap/new", "x", "-w", "json"});
  ASSERT_EQ(put.code, 0) << put.err;
  EXPECT_EQ(JsonInt(put.out, "revision"), rev + 1);
}

TEST_F(SnapshotTest, RestoresIntoThreeMemberClusterThatServes) {
  ASSERT_EQ(Ctl({"put", "/snap3/a", "1"}).code, 0);
  ASSERT_EQ(Ctl({"put", "/snap3/b", "2"}).code, 0);
  const std::string file = dir_->File("three.db");
  ASSERT_EQ(Ctl({"snapshot", "save", file}).code, 0);
  const int64_t rev = Revision();
  std::vector<std::unique_ptr<NatcdProcess>> members;
  for (const std::string name : {"m1", "m2", "m3"}) {
    const std::string data = dir_->File("three-" + name);
    CtlResult r = Ctl({"snapshot", "restore", file, "--data-dir", data, "--name", name,
                       "--initial-cluster", "m1,m2,m3", "--initial-cluster-token", "three"},
                      "", {}, true);
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("--cluster-name three"), std::string::npos) << r.out;
    members.push_back(std::make_unique<NatcdProcess>(
        Url(), data,
        std::vector<std::string>{"--name", name, "--initial-cluster", "m1,m2,m3", "--prefix",
                                 "three", "--cluster-name", "three", "--log-level", "warn"}));
  }
  for (auto& m : members) ASSERT_TRUE(m->Start());
  CtlResult list;
  for (int i = 0; i < 100; ++i) {
    list = Ctl({"--prefix", "three", "put", "/snap3/c", "3", "-w", "json"});
    if (list.code == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(list.code, 0) << list.err << members[0]->Log();
  EXPECT_EQ(JsonInt(list.out, "revision"), rev + 1);
  CtlResult members_out = Ctl({"--prefix", "three", "member", "list"});
  for (const char* name : {"m1", "m2", "m3"}) {
    EXPECT_NE(members_out.out.find(name), std::string::npos) << members_out.out;
  }
  CtlResult get = Ctl({"--prefix", "three", "get", "/snap3/", "--prefix", "--print-value-only"});
  EXPECT_EQ(get.out, "1\n2\n3\n");
  // Every member serves the restored data (asked of each).
  CtlResult status = Ctl({"--prefix", "three", "endpoint", "status", "--cluster"});
  EXPECT_EQ(status.code, 0) << status.out << status.err;
}

TEST_F(SnapshotTest, DamagedFileIsRefused) {
  ASSERT_EQ(Ctl({"put", "/snapbad/a", "1"}).code, 0);
  const std::string file = dir_->File("good.db");
  ASSERT_EQ(Ctl({"snapshot", "save", file}).code, 0);
  const std::string good = Slurp(file);
  ASSERT_GT(good.size(), size_t{4096});
  // The client ended the backup: the member dropped its copy (not only
  // after its idle timeout).
  auto copies_left = [] {
    int n = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir_->path())) {
      n += e.path().filename().string().rfind("natcd-backup-", 0) == 0;
    }
    return n;
  };
  for (int i = 0; i < 100 && copies_left() > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(copies_left(), 0);

  std::string flipped = good;
  flipped[flipped.size() / 2] ^= 0x01;
  const std::string flipped_file = dir_->File("flipped.db");
  Spit(flipped_file, flipped);
  CtlResult st = Ctl({"snapshot", "status", flipped_file}, "", {}, true);
  EXPECT_EQ(st.code, 1);
  EXPECT_NE(st.err.find("is damaged: expected sha256"), std::string::npos) << st.err;
  const std::string data = dir_->File("never");
  CtlResult rs = Ctl({"snapshot", "restore", flipped_file, "--data-dir", data}, "", {}, true);
  EXPECT_EQ(rs.code, 1);
  EXPECT_NE(rs.err.find("is damaged"), std::string::npos) << rs.err;
  EXPECT_NE(access(data.c_str(), F_OK), 0) << "no data dir is left behind";

  const std::string cut_file = dir_->File("cut.db");
  Spit(cut_file, good.substr(0, good.size() - 100));
  st = Ctl({"snapshot", "status", cut_file}, "", {}, true);
  EXPECT_EQ(st.code, 1);
  EXPECT_NE(st.err.find("is truncated or not a snapshot"), std::string::npos) << st.err;
  rs = Ctl({"snapshot", "restore", cut_file, "--data-dir", data}, "", {}, true);
  EXPECT_EQ(rs.code, 1);
  EXPECT_NE(access(data.c_str(), F_OK), 0);

  // The good one is fine, and a restore never overwrites a data dir.
  EXPECT_EQ(Ctl({"snapshot", "status", file}, "", {}, true).code, 0);
  ASSERT_EQ(Ctl({"snapshot", "restore", file, "--data-dir", data}, "", {}, true).code, 0);
  rs = Ctl({"snapshot", "restore", file, "--data-dir", data}, "", {}, true);
  EXPECT_EQ(rs.code, 1);
  EXPECT_NE(rs.err.find("data-dir \"" + data + "\" exists"), std::string::npos) << rs.err;
}

}  // namespace
}  // namespace natcd::testing
