// `etcdctl snapshot save` (etcd-client 3.4) against natcd's
// Maintenance.Snapshot stream: the file it writes is a natcd backup
// (database, then etcd's SHA-256 trailer) that natcdctl's snapshot status
// reads at the revision it was taken.
#include <sys/stat.h>

#include <regex>

#include "grpc/etcdctl_fixture.h"

namespace natcd::testing {
namespace {

using SnapshotSaveTest = EtcdctlTest;

TEST_F(SnapshotSaveTest, SnapshotSaveStreamsABackupNatcdctlReads) {
  const std::string big(200'000, 'x');
  for (int i = 0; i < 12; ++i) {
    // The value on stdin: one argument may not be this long.
    ASSERT_EQ(Run({"put", "/grpcsnap/" + std::to_string(i)}, big).code, 0);
  }
  CommandResult get = Run({"get", "/grpcsnap/0", "-w", "json"});
  std::smatch m;
  ASSERT_TRUE(std::regex_search(get.out, m, std::regex("\"revision\":([0-9]+)"))) << get.out;
  const int64_t rev = std::stoll(m[1]);

  const std::string file = dir_->File("etcdctl-snapshot.db");
  CommandResult save = Run({"snapshot", "save", file});
  ASSERT_EQ(save.code, 0) << save.out << save.err;
  EXPECT_NE(save.out.find("Snapshot saved at " + file), std::string::npos) << save.out;
  struct stat st;
  ASSERT_EQ(stat(file.c_str(), &st), 0);
  EXPECT_GT(st.st_size, 2 << 20) << "more than one 1 MiB message";
  EXPECT_EQ(st.st_size % 512, 32) << "etcd's layout: pages, then the sha256";

  CommandResult status = RunArgv({Natcdctl(), "snapshot", "status", file, "-w", "json"});
  ASSERT_EQ(status.code, 0) << status.err;
  ASSERT_TRUE(std::regex_search(status.out, m, std::regex("\"revision\":([0-9]+)"))) << status.out;
  EXPECT_GE(std::stoll(m[1]), rev);
}

}  // namespace
}  // namespace natcd::testing
