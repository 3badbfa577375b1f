// The one clock every measurement uses: steady, in nanoseconds.
#pragma once

#include <chrono>
#include <cstdint>

namespace natcd::bench {

inline int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace natcd::bench
