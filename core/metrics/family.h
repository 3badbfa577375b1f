// Family: one metric name with a small fixed set of label names, and one
// child metric (Counter, Gauge or Histogram) per combination of label
// values, e.g. natcd_request_duration_seconds{endpoint="kv.put"}.
//
// Thread safety: WithLabels takes the family's lock and allocates the child
// on first use. Resolve the children once (at start, for a fixed set of
// values such as the endpoints) and keep the references: the child's
// updates are lock-free, and a child lives as long as its registry.
#pragma once

#include <cassert>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "metrics/counter.h"
#include "metrics/gauge.h"
#include "metrics/histogram.h"

namespace natcd::metrics {

enum class MetricType { kCounter, kGauge, kHistogram };

namespace internal {

// What the registry knows of every family: its name, help and type, and
// how to append its samples to an exposition.
class FamilyBase {
 public:
  FamilyBase(std::string name, std::string help, MetricType type,
             std::vector<std::string> label_names);
  virtual ~FamilyBase() = default;
  FamilyBase(const FamilyBase&) = delete;
  FamilyBase& operator=(const FamilyBase&) = delete;

  const std::string& name() const { return name_; }
  const std::string& help() const { return help_; }
  MetricType type() const { return type_; }
  const std::vector<std::string>& label_names() const { return label_names_; }

  // Appends "# HELP", "# TYPE" and every sample line.
  void Write(std::string* out) const;

  // Appends `name{labels[,extra]} value\n`; labels as the family's names
  // with these values; extra (e.g. le="0.5") is appended verbatim.
  void WriteSample(std::string* out, std::string_view suffix,
                   const std::vector<std::string>& label_values, std::string_view extra,
                   double value) const;

 protected:
  // Appends the sample lines only.
  virtual void WriteSamples(std::string* out) const = 0;

 private:
  const std::string name_;
  const std::string help_;
  const MetricType type_;
  const std::vector<std::string> label_names_;
};

void WriteChild(const FamilyBase& family, std::string* out, const std::vector<std::string>& labels,
                const Counter& c);
void WriteChild(const FamilyBase& family, std::string* out, const std::vector<std::string>& labels,
                const Gauge& g);
void WriteChild(const FamilyBase& family, std::string* out, const std::vector<std::string>& labels,
                const Histogram& h);

}  // namespace internal

template <typename Metric>
class Family final : public internal::FamilyBase {
 public:
  Family(std::string name, std::string help, MetricType type, std::vector<std::string> label_names,
         std::function<std::unique_ptr<Metric>()> make)
      : FamilyBase(std::move(name), std::move(help), type, std::move(label_names)),
        make_(std::move(make)) {}

  // The child for these label values, one per label name, in order.
  Metric& WithLabels(std::initializer_list<std::string_view> values) {
    return WithLabels(std::vector<std::string>(values.begin(), values.end()));
  }
  Metric& WithLabels(std::vector<std::string> values) {
    assert(values.size() == label_names().size());
    std::lock_guard lock(mu_);
    auto [it, inserted] = children_.try_emplace(std::move(values));
    if (inserted) it->second = make_();
    return *it->second;
  }

 protected:
  void WriteSamples(std::string* out) const override {
    std::lock_guard lock(mu_);
    for (const auto& [labels, child] : children_) internal::WriteChild(*this, out, labels, *child);
  }

 private:
  const std::function<std::unique_ptr<Metric>()> make_;
  mutable std::mutex mu_;
  // Ordered: the exposition lists the children sorted by label values.
  std::map<std::vector<std::string>, std::unique_ptr<Metric>> children_;  // guarded by mu_
};

}  // namespace natcd::metrics
