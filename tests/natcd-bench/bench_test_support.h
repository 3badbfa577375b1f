// What the natcd-bench tests share: where the binaries are, and running
// natcd-bench as a user would.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace natcd::bench {

// $name, or fallback when it is unset or empty.
inline std::string Env(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : fallback;
}

// Runs a shell command; its stdout and stderr go to *output. Returns its
// exit code, -1 if it did not exit normally.
inline int RunCommand(const std::string& command, std::string* output) {
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr) return -1;
  char buf[4096];
  while (fgets(buf, sizeof buf, p) != nullptr) *output += buf;
  const int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace natcd::bench
