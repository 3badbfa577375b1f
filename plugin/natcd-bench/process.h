// The servers a comparison starts: child processes on loopback, each with
// its log in a file, killed with natcd-bench if it dies
// (PR_SET_PDEATHSIG), stopped with SIGTERM (then SIGKILL) by Stop or the
// destructor. Also what the report reads about them: resident memory and
// bytes on disk.
//
// Thread safety: none; one thread starts and stops processes.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace natcd::bench {

class Process {
 public:
  Process() = default;
  ~Process() { Stop(); }
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  // Starts argv[0] (a path) with stdout and stderr to log_path, and waits
  // up to timeout_ms until the log contains ready_text (if not empty) and
  // 127.0.0.1:ready_port accepts connections (if not 0). False, with the
  // log's tail in *error, if it exits or is not ready in time.
  bool Start(const std::vector<std::string>& argv, const std::string& log_path,
             const std::string& ready_text, int ready_port, int64_t timeout_ms, std::string* error);
  // SIGTERM, SIGKILL after 10 s; nothing if not running.
  void Stop();

  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  // VmRSS from /proc; -1 if unknown.
  int64_t RssBytes() const;
  std::string LogTail(size_t bytes = 2'000) const;

 private:
  pid_t pid_ = -1;
  std::string log_path_;
};

// A loopback port that was free a moment ago (the kernel's pick for port 0).
int PickFreeLoopbackPort();
bool LoopbackPortAccepts(int port);
// Bytes allocated on disk under path (st_blocks, as du counts).
int64_t DiskBytes(const std::string& path);
// The first executable of `names` found in PATH or the given directories;
// "" if none.
std::string FindExecutable(const std::string& name, const std::vector<std::string>& also_in);
// A fresh directory "<stem>-XXXXXX" under parent (if empty: $TMPDIR, else
// /tmp); "" on failure.
std::string MakeTempDir(const std::string& stem, const std::string& parent);
void RemoveTree(const std::string& path);

}  // namespace natcd::bench
