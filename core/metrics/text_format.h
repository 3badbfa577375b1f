// Pieces of the Prometheus text exposition format, version 0.0.4
// (https://prometheus.io/docs/instrumenting/exposition_formats/):
//
//   # HELP <name> <help, with \ and newline escaped>
//   # TYPE <name> counter|gauge|histogram|untyped
//   <name>{<label>="<value, with \ " and newline escaped>",...} <value>
//
// Values print as Go's strconv.FormatFloat(v, 'g', -1, 64) would read
// back: integers below 2^53 in full, others in the shortest form that
// round-trips, and +Inf, -Inf, NaN.
#pragma once

#include <string>
#include <string_view>

namespace natcd::metrics {

// The exposition's Content-Type.
inline constexpr std::string_view kTextContentType = "text/plain; version=0.0.4; charset=utf-8";

// [a-zA-Z_:][a-zA-Z0-9_:]*
bool IsValidMetricName(std::string_view name);
// [a-zA-Z_][a-zA-Z0-9_]*, not starting with "__" (reserved by Prometheus).
bool IsValidLabelName(std::string_view name);

// Appends text escaped for a HELP line: \ as \\ and newline as \n.
void AppendEscapedHelp(std::string* out, std::string_view help);
// Appends text escaped for a label value: \ as \\, " as \" and newline as \n.
void AppendEscapedLabelValue(std::string* out, std::string_view value);
// Appends a sample value (see the file comment).
void AppendValue(std::string* out, double value);

}  // namespace natcd::metrics
