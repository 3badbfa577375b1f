#include "metrics/registry.h"

#include <algorithm>
#include <cassert>

#include "metrics/text_format.h"

namespace natcd::metrics {
namespace internal {
namespace {

const char* TypeName(MetricType type) {
  switch (type) {
    case MetricType::kCounter:
      return "counter";
    case MetricType::kGauge:
      return "gauge";
    case MetricType::kHistogram:
      return "histogram";
  }
  return "untyped";
}

}  // namespace

FamilyBase::FamilyBase(std::string name, std::string help, MetricType type,
                       std::vector<std::string> label_names)
    : name_(std::move(name)),
      help_(std::move(help)),
      type_(type),
      label_names_(std::move(label_names)) {
  assert(IsValidMetricName(name_));
  for (const std::string& label : label_names_) {
    assert(IsValidLabelName(label));
    // A histogram's bucket label.
    assert(!(type_ == MetricType::kHistogram && label == "le"));
    (void)label;
  }
}

void FamilyBase::Write(std::string* out) const {
  *out += "# HELP ";
  *out += name_;
  *out += ' ';
  AppendEscapedHelp(out, help_);
  *out += "\n# TYPE ";
  *out += name_;
  *out += ' ';
  *out += TypeName(type_);
  *out += '\n';
  WriteSamples(out);
}

void FamilyBase::WriteSample(std::string* out, std::string_view suffix,
                             const std::vector<std::string>& label_values, std::string_view extra,
                             double value) const {
  *out += name_;
  *out += suffix;
  if (!label_values.empty() || !extra.empty()) {
    *out += '{';
    for (size_t i = 0; i < label_values.size(); ++i) {
      if (i > 0) *out += ',';
      *out += label_names_[i];
      *out += "=\"";
      AppendEscapedLabelValue(out, label_values[i]);
      *out += '"';
    }
    if (!extra.empty()) {
      if (!label_values.empty()) *out += ',';
      *out += extra;
    }
    *out += '}';
  }
  *out += ' ';
  AppendValue(out, value);
  *out += '\n';
}

void WriteChild(const FamilyBase& family, std::string* out, const std::vector<std::string>& labels,
                const Counter& c) {
  family.WriteSample(out, "", labels, "", static_cast<double>(c.Value()));
}

void WriteChild(const FamilyBase& family, std::string* out, const std::vector<std::string>& labels,
                const Gauge& g) {
  family.WriteSample(out, "", labels, "", g.Value());
}

void WriteChild(const FamilyBase& family, std::string* out, const std::vector<std::string>& labels,
                const Histogram& h) {
  Histogram::Snapshot s = h.Read();
  const std::vector<double>& bounds = h.upper_bounds();
  std::string le;
  for (size_t i = 0; i <= bounds.size(); ++i) {
    le = "le=\"";
    if (i < bounds.size()) {
      AppendValue(&le, bounds[i]);
    } else {
      le += "+Inf";
    }
    le += '"';
    family.WriteSample(out, "_bucket", labels, le, static_cast<double>(s.cumulative[i]));
  }
  family.WriteSample(out, "_sum", labels, "", s.sum);
  family.WriteSample(out, "_count", labels, "", static_cast<double>(s.count));
}

namespace {

class FuncFamily final : public FamilyBase {
 public:
  FuncFamily(std::string name, std::string help, MetricType type, Registry::ReadFn read)
      : FamilyBase(std::move(name), std::move(help), type, {}), read_(std::move(read)) {}

 protected:
  void WriteSamples(std::string* out) const override {
    if (std::optional<double> v = read_()) WriteSample(out, "", {}, "", *v);
  }

 private:
  const Registry::ReadFn read_;
};

}  // namespace
}  // namespace internal

template <typename Metric>
Family<Metric>& Registry::AddFamily(std::string_view name, std::string_view help, MetricType type,
                                    std::vector<std::string> label_names,
                                    std::function<std::unique_ptr<Metric>()> make) {
  auto family = std::make_unique<Family<Metric>>(std::string(name), std::string(help), type,
                                                 std::move(label_names), std::move(make));
  Family<Metric>& ref = *family;
  Insert(std::move(family));
  return ref;
}

void Registry::Insert(std::unique_ptr<internal::FamilyBase> family) {
  std::lock_guard lock(mu_);
  for ([[maybe_unused]] const auto& f : families_) assert(f->name() != family->name());
  families_.push_back(std::move(family));
}

Counter& Registry::AddCounter(std::string_view name, std::string_view help) {
  return AddCounterFamily(name, help, {}).WithLabels({});
}

Gauge& Registry::AddGauge(std::string_view name, std::string_view help) {
  return AddGaugeFamily(name, help, {}).WithLabels({});
}

Histogram& Registry::AddHistogram(std::string_view name, std::string_view help,
                                  std::vector<double> upper_bounds) {
  return AddHistogramFamily(name, help, {}, std::move(upper_bounds)).WithLabels({});
}

Family<Counter>& Registry::AddCounterFamily(std::string_view name, std::string_view help,
                                            std::vector<std::string> label_names) {
  return AddFamily<Counter>(name, help, MetricType::kCounter, std::move(label_names),
                            [] { return std::make_unique<Counter>(); });
}

Family<Gauge>& Registry::AddGaugeFamily(std::string_view name, std::string_view help,
                                        std::vector<std::string> label_names) {
  return AddFamily<Gauge>(name, help, MetricType::kGauge, std::move(label_names),
                          [] { return std::make_unique<Gauge>(); });
}

Family<Histogram>& Registry::AddHistogramFamily(std::string_view name, std::string_view help,
                                                std::vector<std::string> label_names,
                                                std::vector<double> upper_bounds) {
  return AddFamily<Histogram>(
      name, help, MetricType::kHistogram, std::move(label_names),
      [bounds = std::move(upper_bounds)] { return std::make_unique<Histogram>(bounds); });
}

void Registry::AddGaugeFunc(std::string_view name, std::string_view help, ReadFn read) {
  Insert(std::make_unique<internal::FuncFamily>(std::string(name), std::string(help),
                                                MetricType::kGauge, std::move(read)));
}

void Registry::AddCounterFunc(std::string_view name, std::string_view help, ReadFn read) {
  Insert(std::make_unique<internal::FuncFamily>(std::string(name), std::string(help),
                                                MetricType::kCounter, std::move(read)));
}

std::string Registry::TextExposition() const {
  std::lock_guard lock(mu_);
  std::vector<const internal::FamilyBase*> sorted;
  sorted.reserve(families_.size());
  for (const auto& f : families_) sorted.push_back(f.get());
  std::sort(sorted.begin(), sorted.end(),
            [](const auto* a, const auto* b) { return a->name() < b->name(); });
  std::string out;
  for (const internal::FamilyBase* f : sorted) f->Write(&out);
  return out;
}

}  // namespace natcd::metrics
