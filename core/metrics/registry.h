// Registry: the metrics one natcd process exposes, and their exposition in
// the Prometheus text format (0.0.4).
//
//   metrics::Registry registry;                       // the daemon owns it
//   metrics::Counter& puts = registry.AddCounter("etcd_mvcc_put_total", "...");
//   puts.Inc();                                       // lock-free
//   auto& latency = registry.AddHistogramFamily(
//       "natcd_request_duration_seconds", "...", {"endpoint"}, ExponentialBuckets(1e-4, 2, 18));
//   metrics::Histogram& put_latency = latency.WithLabels({"kv.put"});  // once
//   std::string text = registry.TextExposition();     // on a scrape
//
// There is no global registry: the daemon creates one and passes it to what
// records into it. Names and label names are checked when added; a name
// added twice, or an invalid one, is a programmer error (assert).
//
// Thread safety: everything may be called from any thread. Adding takes the
// registry's lock; a metric, once added, lives as long as the registry and
// its updates are lock-free (see Counter, Gauge, Histogram). Functions given
// to AddGaugeFunc/AddCounterFunc run on the scraping thread, under the
// registry's lock: they must be thread-safe and must not add metrics.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "metrics/family.h"

namespace natcd::metrics {

class Registry {
 public:
  Registry() = default;
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  Counter& AddCounter(std::string_view name, std::string_view help);
  Gauge& AddGauge(std::string_view name, std::string_view help);
  Histogram& AddHistogram(std::string_view name, std::string_view help,
                          std::vector<double> upper_bounds);

  Family<Counter>& AddCounterFamily(std::string_view name, std::string_view help,
                                    std::vector<std::string> label_names);
  Family<Gauge>& AddGaugeFamily(std::string_view name, std::string_view help,
                                std::vector<std::string> label_names);
  // Every child has these bounds. "le" is not a valid label name here.
  Family<Histogram>& AddHistogramFamily(std::string_view name, std::string_view help,
                                        std::vector<std::string> label_names,
                                        std::vector<double> upper_bounds);

  // A value read when scraped (the process's memory, a file's size...).
  // nullopt: no sample this time (the family's HELP and TYPE remain).
  using ReadFn = std::function<std::optional<double>()>;
  void AddGaugeFunc(std::string_view name, std::string_view help, ReadFn read);
  void AddCounterFunc(std::string_view name, std::string_view help, ReadFn read);

  // Every family, sorted by name, in the text exposition format.
  std::string TextExposition() const;

 private:
  template <typename Metric>
  Family<Metric>& AddFamily(std::string_view name, std::string_view help, MetricType type,
                            std::vector<std::string> label_names,
                            std::function<std::unique_ptr<Metric>()> make);
  void Insert(std::unique_ptr<internal::FamilyBase> family);

  mutable std::mutex mu_;
  std::vector<std::unique_ptr<internal::FamilyBase>> families_;  // guarded by mu_
};

}  // namespace natcd::metrics
