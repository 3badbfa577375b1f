// tests/crash/crash_writer.cc as a child process: it writes with the engine
// alone (durable commits, no Raft) and prints "acked <n> <revision>" after
// each commit, until it is killed. Used to test recovery after SIGKILL, and
// as a database written before natcd had Raft.
#pragma once

#include <cstdint>
#include <string>

namespace natcd::testing {

struct CrashWriterAcked {
  long count = 0;  // keys k0 .. k(count-1) were acknowledged
  int64_t revision = 0;
};

// Runs the writer on db until it has acknowledged at least min_acks
// commits, then kills it with SIGKILL; returns the last acknowledgement it
// printed (count 0 if none). Fails the current test if the writer ended by
// itself.
CrashWriterAcked RunCrashWriterAndKill(const std::string& writer, const std::string& db, int seed,
                                       int min_acks);

}  // namespace natcd::testing
