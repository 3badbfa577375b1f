// The comparison as a table: one row per measured figure (a workload and a
// metric), one column per system, then the ratios natcd/<other> and
// natcd/floor. Printed as text for the terminal and as Markdown, with the
// issue's goals judged against the figures and a CDF plot of put latency
// (gnuplot, SVG).
//
// Thread safety: none.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "plugin/natcd-bench/histogram.h"

namespace natcd::bench {

struct Row {
  int number = 0;  // the workload number; 0 = a floor
  std::string workload;
  std::string metric;
  bool higher_better = true;
  int decimals = 0;
  std::map<std::string, double> values;  // by system name
  std::optional<double> floor;
  std::string floor_note;  // what the floor is, for this row
};

// One goal of the issue, judged.
struct Goal {
  std::string text;
  std::string measured;     // the figures it was judged on
  std::optional<bool> met;  // nullopt: a figure is missing
};

class Report {
 public:
  // The systems, in column order; the first is the one the ratios are of
  // (natcd).
  explicit Report(std::vector<std::string> systems) : systems_(std::move(systems)) {}

  void Set(int number, const std::string& workload, const std::string& metric, bool higher_better,
           int decimals, const std::string& system, double value);
  // A floor beside a row (created if missing, as a floor-only row).
  void SetFloor(const std::string& workload, const std::string& metric, bool higher_better,
                int decimals, double value, const std::string& note);
  // nullopt when the row or the system's figure is missing.
  std::optional<double> Get(const std::string& workload, const std::string& metric,
                            const std::string& system) const;
  std::optional<double> Floor(const std::string& workload, const std::string& metric) const;
  const std::vector<Row>& rows() const { return rows_; }
  const std::vector<std::string>& systems() const { return systems_; }

  // Fixed-width text, one line per row.
  std::string Text() const;
  // A Markdown table of the same.
  std::string MarkdownTable() const;

  // The goals, judged (system names "natcd", "etcd", "JetStream KV").
  std::vector<Goal> Goals() const;

 private:
  Row& RowFor(const std::string& workload, const std::string& metric);
  const Row* Find(const std::string& workload, const std::string& metric) const;

  std::vector<std::string> systems_;
  std::vector<Row> rows_;
};

// "1.23" for a ratio; "—" when either side is missing or zero.
std::string Ratio(std::optional<double> ours, std::optional<double> theirs);
// A figure with the row's decimals, thousands separated by ','.
std::string FormatValue(double value, int decimals);

// Writes a gnuplot script and data for the CDFs (label -> histogram, values
// in ns, plotted in µs) into dir and runs gnuplot to make svg_name there.
// False with *error if gnuplot is missing or fails (the data stays).
bool PlotCdf(const std::string& dir, const std::string& svg_name, const std::string& title,
             const std::vector<std::pair<std::string, Histogram>>& series, std::string* error);

}  // namespace natcd::bench
