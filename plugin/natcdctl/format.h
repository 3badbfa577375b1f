// natcdctl: text helpers shared by the printers (etcdctl's conventions:
// Go's %q quoting, base64 in JSON, humanize.Bytes sizes, tablewriter tables).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace natcdctl {

// Go's strconv.Quote (what fmt's %q prints for a string).
std::string GoQuote(std::string_view s);
// Standard base64 with padding (Go's encoding/json for []byte).
std::string Base64(std::string_view s);
// A JSON string literal (quotes included).
std::string JsonString(std::string_view s);
// go-humanize's Bytes: SI units ("20 kB", "1.5 MB", "7 B").
std::string HumanBytes(uint64_t n);
// A table as etcdctl's tablewriter draws it: centered upper-case header,
// right-aligned cells.
std::string Table(const std::vector<std::string>& header,
                  const std::vector<std::vector<std::string>>& rows);
// Go's time.Duration.String(): "0s", "750ns", "1.5µs", "25.077164ms", "1m2.5s".
std::string GoDuration(int64_t ns);
// "5s", "500ms", "1m", "2h", "1.5s" or a bare number of seconds -> ms; -1 if bad.
int64_t ParseDurationMs(std::string_view s);
// Splits a line into words as etcdctl's txn reader does: blanks separate,
// "double quoted" words may hold blanks and Go escapes.
std::vector<std::string> Argify(std::string_view line);
// Go's strconv.Unquote for a "double-quoted" string; false if malformed.
bool GoUnquote(std::string_view quoted, std::string* out);

}  // namespace natcdctl
