// The process's own metrics, read from /proc when scraped, under the names
// of Prometheus' standard process collector (client_golang's
// NewProcessCollector), so process panels of existing dashboards work:
//
//   process_cpu_seconds_total       user + system CPU time (counter)
//   process_resident_memory_bytes   resident set size
//   process_virtual_memory_bytes    virtual memory size
//   process_open_fds                open file descriptors
//   process_max_fds                 the soft RLIMIT_NOFILE
//   process_start_time_seconds      start time, seconds since the Unix epoch
//
// Linux only. A value that cannot be read is left out of that scrape.
#pragma once

#include <optional>
#include <string>

#include "metrics/registry.h"

namespace natcd::metrics {

// What /proc/<pid>/stat and friends say about a process, in SI units.
struct ProcessStats {
  double cpu_seconds = 0;
  double resident_memory_bytes = 0;
  double virtual_memory_bytes = 0;
  double start_time_seconds = 0;
};

// Reads proc_dir/stat (proc_dir: "/proc/self" or "/proc/<pid>") and
// /proc/stat's boot time. nullopt if either cannot be read or parsed.
std::optional<ProcessStats> ReadProcessStats(const std::string& proc_dir);
// Entries of proc_dir/fd; nullopt if it cannot be listed.
std::optional<double> CountOpenFds(const std::string& proc_dir);

// Registers the six metrics above for the calling process.
void AddProcessMetrics(Registry& registry);

}  // namespace natcd::metrics
