// A strict parser of the Prometheus text exposition format 0.0.4, for tests
// of what natcd serves on /metrics. Stricter than Prometheus where natcd has
// no reason to differ: every sample belongs to a family declared by a TYPE
// line before it, a family's lines are contiguous, no series appears
// twice, and each histogram series has cumulative buckets in increasing
// `le` order ending at +Inf, a _sum, and a _count equal to its +Inf bucket.
//
//   ParsedExposition p;
//   std::string error = ParseExposition(text, &p);   // "" when valid
//   double v = p.Value("etcd_server_has_leader");
#pragma once

#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace natcd::testing {

struct ParsedSample {
  std::string name;                           // with its _bucket/_sum/_count suffix
  std::map<std::string, std::string> labels;  // unescaped
  double value = 0;
};

struct ParsedFamily {
  std::string type;  // counter, gauge, histogram, summary, untyped
  std::string help;  // unescaped
  std::vector<ParsedSample> samples;
};

struct ParsedExposition {
  std::map<std::string, ParsedFamily> families;

  // The value of the sample with this name and labels, if present.
  std::optional<double> Find(const std::string& name,
                             const std::map<std::string, std::string>& labels = {}) const {
    for (const auto& [family_name, family] : families) {
      for (const ParsedSample& s : family.samples) {
        if (s.name == name && s.labels == labels) return s.value;
      }
    }
    return std::nullopt;
  }
};

namespace prometheus_text_internal {

inline bool IsNameChar(char c, bool first, bool colon) {
  bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (colon && c == ':');
  return alpha || (!first && c >= '0' && c <= '9');
}

// Reads a metric (colon) or label name at line[*pos].
inline std::string ReadName(std::string_view line, size_t* pos, bool colon) {
  size_t start = *pos;
  while (*pos < line.size() && IsNameChar(line[*pos], *pos == start, colon)) ++*pos;
  return std::string(line.substr(start, *pos - start));
}

inline bool ParseValue(std::string_view text, double* out) {
  if (text == "+Inf" || text == "Inf") {
    *out = INFINITY;
    return true;
  }
  if (text == "-Inf") {
    *out = -INFINITY;
    return true;
  }
  if (text == "NaN") {
    *out = NAN;
    return true;
  }
  if (text.empty()) return false;
  std::string s(text);
  char* end = nullptr;
  *out = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size() && s.find_first_of("xXpP") == std::string::npos;
}

// Unescapes \\ and \n (and \" when quote); false on any other escape.
inline bool Unescape(std::string_view text, bool quote, std::string* out) {
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\') {
      *out += text[i];
      continue;
    }
    if (++i == text.size()) return false;
    if (text[i] == '\\') {
      *out += '\\';
    } else if (text[i] == 'n') {
      *out += '\n';
    } else if (quote && text[i] == '"') {
      *out += '"';
    } else {
      return false;
    }
  }
  return true;
}

// The family a sample name belongs to, given the declared families.
inline std::string FamilyOf(const std::string& sample, const ParsedExposition& p) {
  if (p.families.count(sample)) return sample;
  for (const char* suffix : {"_bucket", "_sum", "_count"}) {
    std::string_view sv(sample);
    std::string_view suf(suffix);
    if (sv.size() > suf.size() && sv.substr(sv.size() - suf.size()) == suf) {
      std::string base(sv.substr(0, sv.size() - suf.size()));
      auto it = p.families.find(base);
      if (it != p.families.end() &&
          (it->second.type == "histogram" || (it->second.type == "summary" && suf != "_bucket"))) {
        return base;
      }
    }
  }
  return "";
}

inline std::string CheckHistogram(const std::string& name, const ParsedFamily& f) {
  // Series by their labels without le.
  struct Series {
    std::vector<std::pair<double, double>> buckets;  // (le, value) in order of appearance
    std::optional<double> sum, count;
  };
  std::map<std::map<std::string, std::string>, Series> series;
  for (const ParsedSample& s : f.samples) {
    std::map<std::string, std::string> labels = s.labels;
    if (s.name == name + "_bucket") {
      auto le = labels.find("le");
      if (le == labels.end()) return name + "_bucket without le";
      double bound = 0;
      if (!ParseValue(le->second, &bound)) return name + ": bad le " + le->second;
      labels.erase(le);
      series[labels].buckets.push_back({bound, s.value});
    } else if (s.name == name + "_sum") {
      series[labels].sum = s.value;
    } else if (s.name == name + "_count") {
      series[labels].count = s.value;
    } else {
      return "histogram " + name + " has a sample " + s.name;
    }
  }
  for (const auto& [labels, s] : series) {
    if (s.buckets.empty()) return name + ": a series without buckets";
    for (size_t i = 1; i < s.buckets.size(); ++i) {
      if (!(s.buckets[i - 1].first < s.buckets[i].first)) return name + ": le not increasing";
      if (s.buckets[i - 1].second > s.buckets[i].second) return name + ": buckets not cumulative";
    }
    if (!std::isinf(s.buckets.back().first)) return name + ": last bucket is not +Inf";
    if (!s.sum) return name + ": no _sum";
    if (!s.count) return name + ": no _count";
    if (*s.count != s.buckets.back().second) return name + ": _count is not the +Inf bucket";
  }
  return "";
}

}  // namespace prometheus_text_internal

// Parses text into *out. Returns "" when the text is valid, else the first
// problem with its line number.
inline std::string ParseExposition(std::string_view text, ParsedExposition* out) {
  namespace in = prometheus_text_internal;
  if (text.empty() || text.back() != '\n') return "the exposition does not end with a newline";
  std::set<std::string> closed;  // families whose group of lines has ended
  std::set<std::pair<std::string, std::map<std::string, std::string>>> seen;
  std::string current;
  int line_no = 0;
  for (size_t start = 0; start < text.size();) {
    size_t nl = text.find('\n', start);
    std::string_view line = text.substr(start, nl - start);
    start = nl + 1;
    ++line_no;
    auto fail = [&](const std::string& why) {
      return "line " + std::to_string(line_no) + ": " + why + ": " + std::string(line);
    };
    if (line.empty()) return fail("empty line");
    auto enter = [&](const std::string& family) -> bool {
      if (family == current) return true;
      if (closed.count(family)) return false;
      if (!current.empty()) closed.insert(current);
      current = family;
      return true;
    };
    if (line[0] == '#') {
      bool help = line.rfind("# HELP ", 0) == 0;
      bool type = line.rfind("# TYPE ", 0) == 0;
      if (!help && !type) continue;  // a plain comment
      size_t pos = 7;
      std::string name = in::ReadName(line, &pos, true);
      if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return fail("bad metric name");
      if (!enter(name)) return fail("family's lines are not contiguous");
      ParsedFamily& f = out->families[name];
      if (help) {
        if (pos < line.size() && line[pos] != ' ') return fail("bad metric name");
        std::string_view rest = pos < line.size() ? line.substr(pos + 1) : std::string_view();
        if (!f.help.empty()) return fail("second HELP");
        if (!in::Unescape(rest, false, &f.help)) return fail("bad escape in HELP");
        if (f.help.empty()) f.help = " ";  // declared, even if empty
      } else {
        if (pos >= line.size() || line[pos] != ' ') return fail("TYPE without a type");
        std::string t(line.substr(pos + 1));
        if (!f.type.empty()) return fail("second TYPE");
        if (!f.samples.empty()) return fail("TYPE after samples");
        if (t != "counter" && t != "gauge" && t != "histogram" && t != "summary" &&
            t != "untyped") {
          return fail("unknown type " + t);
        }
        f.type = t;
      }
      continue;
    }
    ParsedSample s;
    size_t pos = 0;
    s.name = in::ReadName(line, &pos, true);
    if (s.name.empty()) return fail("bad metric name");
    if (pos < line.size() && line[pos] == '{') {
      ++pos;
      while (true) {
        if (pos < line.size() && line[pos] == '}') {
          ++pos;
          break;
        }
        std::string label = in::ReadName(line, &pos, false);
        if (label.empty() || label.rfind("__", 0) == 0) return fail("bad label name");
        if (line.substr(pos, 2) != "=\"") return fail("label without =\"");
        pos += 2;
        size_t value_start = pos;
        while (pos < line.size() && line[pos] != '"') pos += line[pos] == '\\' ? 2 : 1;
        if (pos >= line.size()) return fail("unterminated label value");
        std::string value;
        if (!in::Unescape(line.substr(value_start, pos - value_start), true, &value)) {
          return fail("bad escape in label value");
        }
        ++pos;  // the closing quote
        if (!s.labels.emplace(label, value).second) return fail("label twice");
        if (pos < line.size() && line[pos] == ',') {
          ++pos;
          if (pos < line.size() && line[pos] == '}') return fail("trailing comma");
        } else if (pos >= line.size() || line[pos] != '}') {
          return fail("expected , or }");
        }
      }
    }
    if (pos >= line.size() || line[pos] != ' ') return fail("no space before the value");
    std::string_view rest = line.substr(pos + 1);
    size_t space = rest.find(' ');
    std::string_view value = rest.substr(0, space);
    if (!in::ParseValue(value, &s.value)) return fail("bad value");
    if (space != std::string_view::npos) {
      std::string_view ts = rest.substr(space + 1);
      double t = 0;
      if (ts.empty() || !in::ParseValue(ts, &t) || ts.find('.') != std::string_view::npos) {
        return fail("bad timestamp");
      }
    }
    std::string family = in::FamilyOf(s.name, *out);
    if (family.empty() || out->families[family].type.empty()) {
      return fail("sample of a family without TYPE");
    }
    if (!enter(family)) return fail("family's lines are not contiguous");
    if (!seen.insert({s.name, s.labels}).second) return fail("series twice");
    out->families[family].samples.push_back(std::move(s));
  }
  for (const auto& [name, f] : out->families) {
    if (f.type.empty()) return name + ": HELP without TYPE";
    if (f.type == "histogram") {
      if (std::string e = in::CheckHistogram(name, f); !e.empty()) return e;
    }
  }
  return "";
}

}  // namespace natcd::testing
