#include "metrics/process_metrics.h"

#include <sys/resource.h>
#include <unistd.h>

#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>
#include <vector>

namespace natcd::metrics {
namespace {

std::optional<double> ParseNumber(std::string_view text) {
  double v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

std::optional<double> BootTimeSeconds() {
  std::ifstream in("/proc/stat");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("btime ", 0) == 0) return ParseNumber(line.substr(6));
  }
  return std::nullopt;
}

}  // namespace

std::optional<ProcessStats> ReadProcessStats(const std::string& proc_dir) {
  std::ifstream in(proc_dir + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so
  // the fields are counted from the last ')'.
  size_t paren = stat.rfind(')');
  if (paren == std::string::npos) return std::nullopt;
  std::istringstream fields(stat.substr(paren + 1));
  std::vector<std::string> f;  // f[0] is field 3 (state) of proc(5)
  for (std::string s; fields >> s;) f.push_back(s);
  if (f.size() < 22) return std::nullopt;
  std::optional<double> boot = BootTimeSeconds();
  if (!boot) return std::nullopt;
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
  std::optional<double> utime = ParseNumber(f[11]);  // fields 14, 15, 22, 23, 24
  std::optional<double> stime = ParseNumber(f[12]);
  std::optional<double> start = ParseNumber(f[19]);
  std::optional<double> vsize = ParseNumber(f[20]);
  std::optional<double> rss_pages = ParseNumber(f[21]);
  if (!utime || !stime || !start || !vsize || !rss_pages) return std::nullopt;
  ProcessStats s;
  s.cpu_seconds = (*utime + *stime) / ticks;
  s.start_time_seconds = *boot + *start / ticks;
  s.virtual_memory_bytes = *vsize;
  s.resident_memory_bytes = *rss_pages * page;
  return s;
}

std::optional<double> CountOpenFds(const std::string& proc_dir) {
  std::error_code ec;
  double n = 0;
  for (std::filesystem::directory_iterator it(proc_dir + "/fd", ec), end; !ec && it != end;
       it.increment(ec)) {
    ++n;
  }
  if (ec) return std::nullopt;
  return n;
}

void AddProcessMetrics(Registry& r) {
  auto stat = [](double ProcessStats::*field) {
    return [field]() -> std::optional<double> {
      std::optional<ProcessStats> s = ReadProcessStats("/proc/self");
      if (!s) return std::nullopt;
      return (*s).*field;
    };
  };
  r.AddCounterFunc("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.",
                   stat(&ProcessStats::cpu_seconds));
  r.AddGaugeFunc("process_resident_memory_bytes", "Resident memory size in bytes.",
                 stat(&ProcessStats::resident_memory_bytes));
  r.AddGaugeFunc("process_virtual_memory_bytes", "Virtual memory size in bytes.",
                 stat(&ProcessStats::virtual_memory_bytes));
  r.AddGaugeFunc("process_start_time_seconds",
                 "Start time of the process since unix epoch in seconds.",
                 stat(&ProcessStats::start_time_seconds));
  r.AddGaugeFunc("process_open_fds", "Number of open file descriptors.",
                 [] { return CountOpenFds("/proc/self"); });
  r.AddGaugeFunc("process_max_fds", "Maximum number of open file descriptors.",
                 []() -> std::optional<double> {
                   rlimit limit{};
                   if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return std::nullopt;
                   return static_cast<double>(limit.rlim_cur);
                 });
}

}  // namespace natcd::metrics
