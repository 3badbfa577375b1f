// Go's duration syntax (time.ParseDuration), which etcd's duration flags
// take: "0", "300ms", "1m30s", "2h", "1.5s"; units ns, us (µs), ms, s, m, h.
// natcd's --experimental-corrupt-check-time is one, as etcd's.
#pragma once

#include <cstdint>
#include <string_view>

#include "natcd/status.h"

namespace natcd {

// The duration in milliseconds (rounded down); InvalidArgument with Go's
// message when the text is not one ("time: invalid duration \"x\"",
// "time: missing unit in duration \"5\"", "time: unknown unit \"x\" in
// duration \"1x\"").
Result<int64_t> ParseGoDurationMs(std::string_view text);

}  // namespace natcd
