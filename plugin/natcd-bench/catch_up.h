// natcd-bench catch-up: how long a member added to a loaded cluster takes
// to catch up (issue 6). A nats-server and a 3-member natcd cluster
// (m1..m3) on loopback, `keys` keys loaded (key_loader.h), then m4 added as
// a learner and started with an empty data folder; the time is from the
// member add until the leader accepts m4's promotion, which it refuses
// while m4 is behind. Everything runs in a temporary folder, removed at
// the end.
//
// RUN:    natcd-bench catch-up --keys 1000000 [--in-flight 512]
// OUTPUT: the keys and the rate they were loaded at, the leader's data
//         folder on disk, "m4 caught up and promoted in X s".
#pragma once

#include <cstdint>
#include <string>

namespace natcd::bench {

struct CatchUpOptions {
  uint64_t keys = 0;
  int in_flight = 512;    // puts outstanding while loading
  std::string natcd_bin;  // the natcd to start
  std::string tmp_dir;    // parent of the temporary folder ("": $TMPDIR or /tmp)
};

// Runs the measurement and prints it; the exit status: 0 once m4 is
// promoted, 1 when anything fails or takes longer than its bound (which
// grows with keys).
int RunCatchUp(const CatchUpOptions& options);

}  // namespace natcd::bench
