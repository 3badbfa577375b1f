#include "plugin/natcd-bench/report.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace natcd::bench {

Row& Report::RowFor(const std::string& workload, const std::string& metric) {
  for (Row& row : rows_) {
    if (row.workload == workload && row.metric == metric) return row;
  }
  rows_.push_back(Row{});
  rows_.back().workload = workload;
  rows_.back().metric = metric;
  return rows_.back();
}

const Row* Report::Find(const std::string& workload, const std::string& metric) const {
  for (const Row& row : rows_) {
    if (row.workload == workload && row.metric == metric) return &row;
  }
  return nullptr;
}

void Report::Set(int number, const std::string& workload, const std::string& metric,
                 bool higher_better, int decimals, const std::string& system, double value) {
  Row& row = RowFor(workload, metric);
  row.number = number;
  row.higher_better = higher_better;
  row.decimals = decimals;
  row.values[system] = value;
}

void Report::SetFloor(const std::string& workload, const std::string& metric, bool higher_better,
                      int decimals, double value, const std::string& note) {
  Row& row = RowFor(workload, metric);
  if (row.values.empty()) {
    row.higher_better = higher_better;
    row.decimals = decimals;
  }
  row.floor = value;
  row.floor_note = note;
}

std::optional<double> Report::Get(const std::string& workload, const std::string& metric,
                                  const std::string& system) const {
  const Row* row = Find(workload, metric);
  if (row == nullptr) return std::nullopt;
  auto it = row->values.find(system);
  if (it == row->values.end()) return std::nullopt;
  return it->second;
}

std::optional<double> Report::Floor(const std::string& workload, const std::string& metric) const {
  const Row* row = Find(workload, metric);
  return row != nullptr ? row->floor : std::nullopt;
}

std::string Ratio(std::optional<double> ours, std::optional<double> theirs) {
  if (!ours || !theirs || *theirs == 0 || !std::isfinite(*ours) || !std::isfinite(*theirs)) {
    return "—";
  }
  char buf[32];
  snprintf(buf, sizeof buf, "%.2f", *ours / *theirs);
  return buf;
}

std::string FormatValue(double value, int decimals) {
  if (!std::isfinite(value)) return "—";
  char buf[64];
  snprintf(buf, sizeof buf, "%.*f", decimals, std::fabs(value));
  std::string digits(buf);
  const size_t dot = digits.find('.');
  std::string whole = digits.substr(0, dot);
  const std::string fraction = dot == std::string::npos ? "" : digits.substr(dot);
  for (int at = static_cast<int>(whole.size()) - 3; at > 0; at -= 3) whole.insert(at, ",");
  return (value < 0 ? "-" : "") + whole + fraction;
}

namespace {

struct Columns {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> cells;
};

Columns Layout(const std::vector<std::string>& systems, const std::vector<Row>& rows) {
  Columns c;
  c.header = {"#", "workload", "metric"};
  for (const auto& s : systems) c.header.push_back(s);
  c.header.push_back("floor");
  for (size_t s = 1; s < systems.size(); ++s) c.header.push_back(systems[0] + "/" + systems[s]);
  c.header.push_back(systems[0] + "/floor");
  for (const Row& row : rows) {
    std::vector<std::string> line = {row.number > 0 ? std::to_string(row.number) : "floor",
                                     row.workload, row.metric + (row.higher_better ? " ↑" : " ↓")};
    auto value_of = [&](const std::string& system) -> std::optional<double> {
      auto it = row.values.find(system);
      if (it == row.values.end()) return std::nullopt;
      return it->second;
    };
    // A floor-only row has no system figures: blank, not "n/a".
    const bool floor_only = row.values.empty();
    for (const auto& s : systems) {
      auto v = value_of(s);
      line.push_back(v ? FormatValue(*v, row.decimals) : (floor_only ? "" : "n/a"));
    }
    line.push_back(row.floor ? FormatValue(*row.floor, row.decimals) : "");
    for (size_t s = 1; s < systems.size(); ++s) {
      line.push_back(floor_only ? "" : Ratio(value_of(systems[0]), value_of(systems[s])));
    }
    line.push_back(row.floor && !floor_only ? Ratio(value_of(systems[0]), row.floor) : "");
    c.cells.push_back(line);
  }
  return c;
}

// Display width: every byte except UTF-8 continuation bytes.
size_t Width(const std::string& s) {
  size_t n = 0;
  for (unsigned char ch : s) n += (ch & 0xC0) != 0x80;
  return n;
}

}  // namespace

std::string Report::Text() const {
  const Columns c = Layout(systems_, rows_);
  std::vector<size_t> width(c.header.size(), 0);
  for (size_t i = 0; i < c.header.size(); ++i) width[i] = Width(c.header[i]);
  for (const auto& line : c.cells) {
    for (size_t i = 0; i < line.size(); ++i) width[i] = std::max(width[i], Width(line[i]));
  }
  std::ostringstream out;
  auto emit = [&](const std::vector<std::string>& line) {
    for (size_t i = 0; i < line.size(); ++i) {
      const size_t pad = width[i] - Width(line[i]);
      // Text left, figures right.
      if (i < 3) {
        out << line[i] << std::string(pad, ' ');
      } else {
        out << std::string(pad, ' ') << line[i];
      }
      out << (i + 1 < line.size() ? "  " : "\n");
    }
  };
  emit(c.header);
  for (const auto& line : c.cells) emit(line);
  return out.str();
}

std::string Report::MarkdownTable() const {
  const Columns c = Layout(systems_, rows_);
  std::ostringstream out;
  out << "|";
  for (const auto& h : c.header) out << " " << h << " |";
  out << "\n|";
  for (size_t i = 0; i < c.header.size(); ++i) out << (i < 3 ? " --- |" : " ---: |");
  out << "\n";
  for (const auto& line : c.cells) {
    out << "|";
    for (const auto& cell : line) out << " " << cell << " |";
    out << "\n";
  }
  return out.str();
}

std::vector<Goal> Report::Goals() const {
  std::vector<Goal> goals;
  auto judge = [&](const std::string& text, std::optional<double> ours, std::optional<double> bound,
                   bool at_least, const std::string& how) {
    Goal g;
    g.text = text;
    if (ours && bound) {
      g.met = at_least ? *ours >= *bound : *ours <= *bound;
      char buf[160];
      // Whole numbers for rates, a decimal for small figures (ms, MiB).
      auto figure = [](double v) { return FormatValue(v, v >= 1'000 ? 0 : 1); };
      snprintf(buf, sizeof buf, "%s vs %s", figure(*ours).c_str(), figure(*bound).c_str());
      g.measured = std::string(buf) + " " + how;
    } else {
      g.measured = "not measured";
    }
    goals.push_back(g);
  };
  auto times = [](std::optional<double> v, double k) -> std::optional<double> {
    if (!v) return std::nullopt;
    return *v * k;
  };
  const auto put256 = Get("put-256", "puts/s", "natcd");
  judge("puts at 256 in flight >= 2.5x etcd", put256, times(Get("put-256", "puts/s", "etcd"), 2.5),
        true, "(natcd vs 2.5 x etcd)");
  judge("puts at 256 in flight >= 0.9x the echo floor", put256,
        times(Floor("put-256", "puts/s"), 0.9), true, "(natcd vs 0.9 x echo)");
  judge("puts at 256 in flight >= 0.8x JetStream KV", put256,
        times(Get("put-256", "puts/s", "JetStream KV"), 0.8), true,
        "(natcd vs 0.8 x JetStream KV)");
  const auto get256 = Get("get-256", "gets/s", "natcd");
  judge("gets >= 5x etcd (linearizable)", get256, times(Get("get-256", "gets/s", "etcd"), 5), true,
        "(natcd vs 5 x etcd)");
  judge("gets >= 5x etcd (serializable)", Get("get-256-serializable", "gets/s", "natcd"),
        times(Get("get-256-serializable", "gets/s", "etcd"), 5), true, "(natcd vs 5 x etcd)");
  judge("gets >= 0.9x the echo floor", get256, times(Floor("get-256", "gets/s"), 0.9), true,
        "(natcd vs 0.9 x echo)");
  judge("single-client put p50 <= fsync p50 + echo round trip p50",
        Get("put-seq", "p50 µs", "natcd"), Floor("put-seq", "p50 µs"), false,
        "µs (natcd vs fsync + echo)");
  judge("watch fan-out to 100 watchers >= 2x etcd's events/s",
        Get("watch-100", "events/s", "natcd"), times(Get("watch-100", "events/s", "etcd"), 2), true,
        "(natcd vs 2 x etcd)");
  judge("watch fan-out to 100 watchers: p99 lag <= etcd's (paced writer)",
        Get("watch-100", "p99 lag ms (paced)", "natcd"),
        Get("watch-100", "p99 lag ms (paced)", "etcd"), false, "ms (natcd vs etcd)");
  judge("keepalives >= 3x etcd", Get("keepalive-256", "keepalives/s", "natcd"),
        times(Get("keepalive-256", "keepalives/s", "etcd"), 3), true, "(natcd vs 3 x etcd)");
  // Issue 14's goals: natcd over etcd's gRPC API, the same client code as etcd's.
  const char* grpc = "natcd (gRPC)";
  judge("natcd (gRPC): puts at 256 in flight >= 2.5x etcd", Get("put-256", "puts/s", grpc),
        times(Get("put-256", "puts/s", "etcd"), 2.5), true, "(natcd gRPC vs 2.5 x etcd)");
  judge("natcd (gRPC): gets >= 5x etcd (linearizable)", Get("get-256", "gets/s", grpc),
        times(Get("get-256", "gets/s", "etcd"), 5), true, "(natcd gRPC vs 5 x etcd)");
  judge("natcd (gRPC): keepalives >= 3x etcd", Get("keepalive-256", "keepalives/s", grpc),
        times(Get("keepalive-256", "keepalives/s", "etcd"), 3), true, "(natcd gRPC vs 3 x etcd)");
  judge("natcd (gRPC): watch fan-out to 100 watchers >= 2x etcd's events/s",
        Get("watch-100", "events/s", grpc), times(Get("watch-100", "events/s", "etcd"), 2), true,
        "(natcd gRPC vs 2 x etcd)");
  judge("RSS after 100,000 keys <= JetStream KV's", Get("footprint", "server RSS MiB", "natcd"),
        Get("footprint", "server RSS MiB", "JetStream KV"), false, "MiB (natcd vs nats-server)");
  return goals;
}

bool PlotCdf(const std::string& dir, const std::string& svg_name, const std::string& title,
             const std::vector<std::pair<std::string, Histogram>>& series, std::string* error) {
  std::ostringstream script;
  script
      << "set terminal svg size 1000,540 dynamic enhanced font 'sans,12' background rgb 'white'\n"
      << "set output '" << dir << "/" << svg_name << "'\n"
      << "set title '" << title << "'\n"
      << "set logscale x\nset grid\nset key outside right top\n"
      << "set xlabel 'latency (µs, log scale)'\nset ylabel 'fraction of requests'\n"
      << "set yrange [0:1]\nplot ";
  int n = 0;
  for (const auto& [label, histogram] : series) {
    if (histogram.count() == 0) continue;
    const std::string data = dir + "/cdf-" + std::to_string(n) + ".dat";
    std::ofstream out(data);
    out << "# latency_us fraction: " << label << "\n";
    for (const auto& [value, fraction] : histogram.Cdf())
      out << value / 1e3 << " " << fraction << "\n";
    script << (n ? ", " : "") << "'" << data << "' using 1:2 with steps lw 2 title '" << label
           << "'";
    ++n;
  }
  script << "\n";
  const std::string script_path = dir + "/put-latency-cdf.gnuplot";
  std::ofstream(script_path) << script.str();
  if (n == 0) {
    *error = "no latencies to plot";
    return false;
  }
  const std::string command = "gnuplot '" + script_path + "' 2>&1";
  FILE* p = popen(command.c_str(), "r");
  if (p == nullptr) {
    *error = "cannot run gnuplot";
    return false;
  }
  std::string output;
  char buf[256];
  while (fgets(buf, sizeof buf, p) != nullptr) output += buf;
  const int status = pclose(p);
  if (status != 0) {
    *error = "gnuplot failed (is Debian's gnuplot-nox installed?): " + output;
    return false;
  }
  return true;
}

}  // namespace natcd::bench
