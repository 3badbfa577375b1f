#include "support/crash_writer_child.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

namespace natcd::testing {

CrashWriterAcked RunCrashWriterAndKill(const std::string& writer, const std::string& db, int seed,
                                       int min_acks) {
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]);
    close(fds[1]);
    std::string seed_arg = std::to_string(seed);
    execl(writer.c_str(), writer.c_str(), db.c_str(), seed_arg.c_str(), nullptr);
    _exit(127);
  }
  close(fds[1]);
  FILE* out = fdopen(fds[0], "r");
  CrashWriterAcked last;
  char line[128];
  int acks = 0;
  while (acks < min_acks && fgets(line, sizeof line, out) != nullptr) {
    long long rev = 0;
    if (sscanf(line, "acked %ld %lld", &last.count, &rev) == 2) {
      last.revision = rev;
      ++acks;
    }
  }
  kill(pid, SIGKILL);
  // Lines already written before the kill were acknowledged too.
  while (fgets(line, sizeof line, out) != nullptr) {
    long long rev = 0;
    long count = 0;
    if (sscanf(line, "acked %ld %lld", &count, &rev) == 2) {
      last.count = count;
      last.revision = rev;
    }
  }
  fclose(out);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status)) << "writer exited by itself: status " << status;
  return last;
}

}  // namespace natcd::testing
