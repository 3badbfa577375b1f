// The canonical encoding the hashes cover (core/mvcc/revision_hash.h) is
// compared between members: pinned byte for byte.
#include "mvcc/revision_hash.h"

#include <string>

#include "storage/crc32c.h"
#include "testutil.h"

namespace natcd {
namespace {

std::string Le64(uint64_t v) {
  std::string out;
  for (int i = 0; i < 8; i++) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  return out;
}

TEST(RevisionHashTest, PutRowBytesArePinned) {
  RevisionRow row;
  row.rev = 5;
  row.sub = 1;
  row.kv.key = "key";
  row.kv.value = "value";
  row.kv.create_revision = 3;
  row.kv.version = 2;
  row.kv.lease = 7;
  row.kv.mod_revision = 5;
  const std::string bytes = Le64(5) + Le64(1) + std::string(1, '\0') + Le64(3) + "key" + Le64(3) +
                            Le64(2) + Le64(7) + Le64(5) + "value";
  EXPECT_EQ(HashRevisionRow(0, row), Crc32c(bytes));
  EXPECT_EQ(HashRevisionRow(0, row), 0xb5922091u);
}

TEST(RevisionHashTest, TombstoneRowHasNoValueFields) {
  RevisionRow row;
  row.rev = 9;
  row.sub = 0;
  row.tombstone = true;
  row.kv.key = "gone";
  row.kv.value = "ignored";
  row.kv.version = 4;  // meaningless on a tombstone: not hashed
  const std::string bytes = Le64(9) + Le64(0) + std::string(1, '\1') + Le64(4) + "gone";
  EXPECT_EQ(HashRevisionRow(0, row), Crc32c(bytes));
}

TEST(RevisionHashTest, RowsChainInOrder) {
  RevisionRow a;
  a.rev = 1;
  a.kv.key = "a";
  RevisionRow b = a;
  b.rev = 2;
  EXPECT_NE(HashRevisionRow(HashRevisionRow(0, a), b), HashRevisionRow(HashRevisionRow(0, b), a));
}

TEST(RevisionHashTest, LeaseBytesArePinned) {
  EXPECT_EQ(HashLeaseRow(0, LeaseRow{11, 60, 1'500}), Crc32c(Le64(11) + Le64(60) + Le64(1'500)));
}

}  // namespace
}  // namespace natcd
