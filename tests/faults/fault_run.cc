#include "faults/fault_run.h"

#include <chrono>
#include <mutex>
#include <sstream>
#include <thread>

namespace natcd::testing {
namespace {

using Clock = std::chrono::steady_clock;

void SleepMs(int64_t ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

bool WaitUntil(const std::function<bool()>& done, int64_t timeout_ms) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  while (!done()) {
    if (Clock::now() >= deadline) return false;
    SleepMs(100);
  }
  return true;
}

std::string Text(const char* data, size_t len) { return std::string(data, len); }

// The prefix's keys at `revision` (0: latest): key -> (value, mod_revision).
// Retried a few times (a member that just lost its leader may time out);
// the last failure's status and text go to *error.
bool RangeAt(natcdClient* client, int64_t revision,
             std::map<std::string, std::pair<std::string, int64_t>>* out, std::string* error) {
  natcdRangeOptions opts{};
  opts.prefix = true;
  opts.revision = revision;
  for (int attempt = 0; attempt < 5; attempt++) {
    natcdRangeResponse* resp = nullptr;
    if (natcdKV_Get(&resp, client, NATCD_STR(kKvPrefix), &opts) != natcdStatus_OK) {
      natcdError e;
      natcd_GetLastError(&e);
      *error = std::string(natcdStatus_GetText(e.status)) + ": " + e.text;
      SleepMs(1000);
      continue;
    }
    out->clear();
    for (size_t i = 0; i < resp->n_kvs; i++) {
      const natcdKeyValue& kv = resp->kvs[i];
      (*out)[Text(kv.key, kv.key_len)] = {Text(kv.value, kv.value_len), kv.mod_revision};
    }
    natcdRangeResponse_Destroy(resp);
    return true;
  }
  return false;
}

struct Replay {
  std::mutex mu;
  std::vector<WatchEvent> events;
};

void OnReplay(natcdWatch*, const natcdWatchNotice* notice, void* closure) {
  if (notice->kind != natcdWatchNotice_Event) return;
  auto* replay = static_cast<Replay*>(closure);
  WatchEvent e;
  e.revision = notice->revision;
  e.is_delete = notice->type == natcdEventType_Delete;
  e.key = Text(notice->kv->key, notice->kv->key_len);
  e.value = Text(notice->kv->value, notice->kv->value_len);
  e.last_in_revision = notice->last_in_revision;
  std::lock_guard<std::mutex> lock(replay->mu);
  replay->events.push_back(std::move(e));
}

// After the run, with every fault healed: a last put marks the end
// revision; the history to it is read back with a watch from revision 1,
// the final state and a sample of past states with ranges.
::testing::AssertionResult ReadCommitted(const std::string& urls, CommittedHistory* committed) {
  natcdClient* client = ConnectClient(urls, 2000, 5);
  if (client == nullptr) return ::testing::AssertionFailure() << "no client for the read-back";
  std::unique_ptr<natcdClient, void (*)(natcdClient*)> owned(client, DestroyClient);
  natcdPutResponse* put = nullptr;
  const bool put_ok = WaitUntil(
      [&] {
        return natcdKV_Put(&put, client, NATCD_STR("/f/zz-end"), NATCD_STR("end"), nullptr) ==
               natcdStatus_OK;
      },
      60'000);
  if (!put_ok) {
    return ::testing::AssertionFailure() << "the cluster took no write within 60 s of healing";
  }
  committed->end_revision = put->header.revision;
  natcdPutResponse_Destroy(put);

  Replay replay;
  natcdWatch* watch = nullptr;
  natcdWatchOptions wopts{};
  wopts.prefix = true;
  wopts.heartbeat_ms = 500;
  natcdStatus s = natcdWatch_Create(&watch, client, NATCD_STR(kKvPrefix), nullptr, 0, 1, &wopts,
                                    OnReplay, &replay);
  if (s != natcdStatus_OK) {
    return ::testing::AssertionFailure() << "replay watch: " << natcdStatus_GetText(s);
  }
  const bool replayed = WaitUntil(
      [&] {
        std::lock_guard<std::mutex> lock(replay.mu);
        return !replay.events.empty() && replay.events.back().revision >= committed->end_revision;
      },
      60'000);
  natcdWatch_Destroy(watch);
  if (!replayed) return ::testing::AssertionFailure() << "the replay watch did not reach the end";
  for (WatchEvent& e : replay.events) {
    if (e.revision <= committed->end_revision) committed->events.push_back(std::move(e));
  }
  std::string error;
  if (!RangeAt(client, committed->end_revision, &committed->final_state, &error)) {
    return ::testing::AssertionFailure() << "final range failed: " << error;
  }
  constexpr int kSamples = 12;
  for (int i = 1; i <= kSamples; i++) {
    const int64_t rev = committed->end_revision * i / (kSamples + 1);
    if (rev <= 0) continue;
    std::map<std::string, std::pair<std::string, int64_t>> state;
    if (!RangeAt(client, rev, &state, &error)) {
      return ::testing::AssertionFailure() << "range at revision " << rev << " failed: " << error;
    }
    for (auto& [key, vm] : state) committed->sampled_states[rev][key] = vm.first;
    committed->sampled_states[rev];  // an empty state is a state too
  }
  return ::testing::AssertionSuccess();
}

}  // namespace

std::string RunResult::Describe(const RunOptions& options, const std::string& replay) const {
  std::ostringstream out;
  out << "seed " << options.seed << "; replay: " << replay << "\n";
  if (!setup_error.empty()) out << "setup: " << setup_error << "\n";
  out << "schedule: " << ScheduleToString(steps) << "\n";
  for (const FaultRecord& f : faults) {
    out << "  " << f.kind << " " << f.target << " [" << f.begin_us / 1000 << ", " << f.end_us / 1000
        << "] ms\n";
  }
  out << operations << " operations, " << watch_events << " watch events, " << duration_ms
      << " ms\n";
  out << report.ToString();
  for (const Availability& a : availability) out << "availability: " << a.ToString() << "\n";
  out << "longest gap without an acknowledged write (whole run): " << longest_gap_us / 1000
      << " ms\n";
  out << logs;
  return out.str();
}

RunResult RunFaults(const RunOptions& options) {
  RunResult result;
  const auto started_at = Clock::now();
  RunClock clock;
  result.steps = options.steps.empty()
                     ? MakeSchedule(options.seed, options.kinds, options.schedule_ms,
                                    options.min_fault_ms, options.max_fault_ms, options.quiet_ms)
                     : options.steps;
  FaultCluster cluster(options.topology);
  if (auto up = cluster.Start(); !up) {
    result.setup_error = up.message();
    result.logs = cluster.Logs();
    return result;
  }
  WorkloadOptions wopts = options.workload;
  wopts.seed = options.seed;
  if (wopts.client_urls.empty()) {
    if (options.pin_clients && cluster.servers() > 1) {
      // A client on each server, with the others to fail over to.
      for (int s = 0; s < cluster.servers(); s++) {
        std::string urls = cluster.ServerUrl(s);
        for (int o = 0; o < cluster.servers(); o++) {
          if (o != s) urls += "," + cluster.ServerUrl(o);
        }
        wopts.client_urls.push_back(urls);
      }
    } else {
      wopts.client_urls.push_back(cluster.ClientUrls());
    }
  }
  Workload workload(wopts, &clock);
  if (auto up = workload.Start(); !up) {
    result.setup_error = up.message();
    result.logs = cluster.Logs();
    return result;
  }
  result.started = true;
  SleepMs(options.warmup_ms);

  Nemesis nemesis(&cluster, &clock, options.seed);
  for (const FaultStep& step : result.steps) {
    FaultRecord record;
    auto applied = nemesis.Apply(step, &record);
    result.faults.push_back(record);
    if (!applied) {
      result.setup_error = applied.message();
      break;
    }
  }
  const int64_t clients_end_us = clock.NowUs();
  workload.StopClients();
  if (auto healed = cluster.HealAll(); !healed) {
    result.setup_error += std::string(healed.message());
  }

  CommittedHistory committed;
  auto read = ReadCommitted(cluster.ClientUrls(), &committed);
  const std::vector<KvRecord> records = workload.KvRecords();
  result.operations = static_cast<int>(records.size());
  if (!read) {
    result.report.anomalies.push_back("read-back failed: " + std::string(read.message()));
  } else {
    // The live watches must catch up to the end (they resume by themselves).
    for (int w = 0; w < workload.watchers(); w++) {
      WaitUntil([&] { return workload.WatchLastRevision(w) >= committed.end_revision; }, 60'000);
    }
    CheckLinearizable(records, &result.report);
    CheckCommitted(records, committed, &result.report);
    for (int w = 0; w < workload.watchers(); w++) {
      std::vector<WatchEvent> events = workload.WatchEvents(w);
      result.watch_events += static_cast<int>(events.size());
      CheckWatch("watch " + std::to_string(w), events, committed, &result.report);
      result.report.notes.push_back("watch " + std::to_string(w) + ": " + workload.WatchStats(w));
    }
  }
  workload.StopWatches();

  int64_t longest_fault_ms = 0;
  for (const FaultStep& step : result.steps) {
    longest_fault_ms = std::max(longest_fault_ms, step.duration_ms);
  }
  const int64_t slack_ms = options.lease_slack_ms > 0
                               ? options.lease_slack_ms
                               : longest_fault_ms + 4 * options.topology.election_timeout_ms + 3000;
  CheckLeases(workload.Leases(), clients_end_us, slack_ms * 1000, &result.report);
  CheckLocks(workload.LockHolds(), options.lock_slack_ms * 1000, &result.report);

  const int64_t settle_us = 2 * int64_t{options.topology.election_timeout_ms} * 1000;
  for (const FaultRecord& f : result.faults) {
    result.availability.push_back(MeasureAvailability(records, f, settle_us));
  }
  result.longest_gap_us = LongestWriteGapUs(records, options.warmup_ms * 1000, clients_end_us);
  result.duration_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started_at).count();
  if (!result.report.ok() || !result.setup_error.empty() || options.keep_logs) {
    result.logs = cluster.Logs();
  }
  return result;
}

}  // namespace natcd::testing
