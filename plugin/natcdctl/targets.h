// natcdctl: the members a --cluster command asks one by one. Without
// --cluster, the one member the connection reaches; with it, every member
// of the member list, each asked on its own P.to.<member ID>.* subject
// (docs/PROTOCOL.md, "Clusters") and named by its name (a member has no
// URL of its own).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "plugin/natcdctl/context.h"

namespace natcdctl {

struct Target {
  uint64_t id = 0;  // 0: the member the connection reaches
  std::string endpoint;
};

// Prints the error and returns its exit code when the member list fails.
int Targets(const Context& ctx, const Conn& c, std::vector<Target>* out);

}  // namespace natcdctl
