#include <gtest/gtest.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  // Every natcd a test starts (and does not size otherwise) gets small Raft
  // log segments: each is zero-filled when made, 64 MiB by default.
  setenv("NATCD_RAFT_LOG_SEGMENT_BYTES", "1048576", 0);
  return RUN_ALL_TESTS();
}
