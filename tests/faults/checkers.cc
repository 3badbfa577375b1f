#include "faults/checkers.h"

#include <algorithm>
#include <cstdio>
#include <set>
#include <sstream>

#include "raft/sim/linearizability.h"

namespace natcd::testing {
namespace {

using raft::sim::KvOp;
using raft::sim::OpKind;

std::string Describe(const KvRecord& r) {
  static const char* kinds[] = {"put", "cas", "get"};
  std::ostringstream out;
  out << "client " << r.client << " " << kinds[static_cast<int>(r.kind)] << " " << r.key;
  if (r.kind == KvRecord::Kind::kCas) out << " " << (r.expected.empty() ? "<absent>" : r.expected);
  if (r.is_write()) out << " -> " << r.value;
  out << " [" << r.call_us / 1000 << ", " << r.ret_us / 1000 << "] ms " << OutcomeName(r.outcome);
  if (r.outcome == Outcome::kOk) {
    if (r.kind == KvRecord::Kind::kGet) out << " = " << (r.output.empty() ? "<absent>" : r.output);
    if (r.kind == KvRecord::Kind::kCas) out << (r.cas_ok ? " succeeded" : " compare failed");
    out << " rev " << r.revision;
  }
  return out.str();
}

// Per-key budget of the linearizability search: far beyond what a real
// history of a few dozen operations per key needs, small enough to end.
constexpr uint64_t kMaxSteps = 20'000'000;

}  // namespace

std::string CheckReport::ToString() const {
  std::ostringstream out;
  for (const std::string& a : anomalies) out << "ANOMALY: " << a << "\n";
  for (const std::string& n : notes) out << "note: " << n << "\n";
  return out.str();
}

void CheckLinearizable(const std::vector<KvRecord>& records, CheckReport* report) {
  std::vector<KvOp> ops;
  int unknown = 0;
  for (const KvRecord& r : records) {
    if (r.outcome == Outcome::kFailed) continue;  // no effect, nothing observed
    KvOp op;
    op.key = r.key;
    op.call = r.call_us;
    op.ret = r.outcome == Outcome::kOk ? r.ret_us : KvOp::kNever;
    unknown += r.outcome == Outcome::kUnknown;
    switch (r.kind) {
      case KvRecord::Kind::kPut:
        op.kind = OpKind::kPut;
        op.value = r.value;
        break;
      case KvRecord::Kind::kCas:
        op.kind = OpKind::kCas;
        op.value = r.value;
        op.expected = r.expected;
        op.ok = r.cas_ok;
        break;
      case KvRecord::Kind::kGet:
        op.kind = OpKind::kGet;
        op.output = r.output;
        break;
    }
    ops.push_back(std::move(op));
  }
  raft::sim::CheckResult result = raft::sim::CheckLinearizable(ops, kMaxSteps);
  if (result.gave_up) {
    report->notes.push_back("linearizability: inconclusive (search budget) on key " + result.key);
  } else if (!result.linearizable) {
    std::ostringstream out;
    out << "KV history not linearizable on key " << result.key << ":";
    for (const KvRecord& r : records) {
      if (r.key == result.key) out << "\n    " << Describe(r);
    }
    report->anomalies.push_back(out.str());
  }
  report->notes.push_back("linearizability: " + std::to_string(ops.size()) + " operations (" +
                          std::to_string(unknown) + " unknown) checked");
}

void CheckCommitted(const std::vector<KvRecord>& records, const CommittedHistory& committed,
                    CheckReport* report) {
  std::map<int64_t, std::vector<const WatchEvent*>> by_revision;
  std::map<std::string, std::vector<const WatchEvent*>> by_value;
  for (const WatchEvent& e : committed.events) {
    by_revision[e.revision].push_back(&e);
    if (!e.is_delete) by_value[e.value].push_back(&e);
  }
  std::map<std::string, const KvRecord*> writer;  // value -> the write that made it
  for (const KvRecord& r : records) {
    if (r.is_write()) writer[r.value] = &r;
  }
  int acked = 0;
  for (const KvRecord& r : records) {
    const bool applied_ack =
        r.outcome == Outcome::kOk &&
        (r.kind == KvRecord::Kind::kPut || (r.kind == KvRecord::Kind::kCas && r.cas_ok));
    if (applied_ack) {
      acked++;
      auto it = by_revision.find(r.revision);
      bool found = false;
      if (it != by_revision.end()) {
        for (const WatchEvent* e : it->second) {
          found |= !e->is_delete && e->key == r.key && e->value == r.value;
        }
      }
      if (!found) {
        report->anomalies.push_back("acknowledged write lost: " + Describe(r) +
                                    " is not the committed event of its revision");
      }
      auto state = committed.final_state.find(r.key);
      if (state == committed.final_state.end() || state->second.second < r.revision) {
        report->anomalies.push_back("acknowledged write lost: " + Describe(r) +
                                    ": the key's final mod_revision is older");
      }
    }
    if (r.kind == KvRecord::Kind::kGet && r.outcome == Outcome::kOk && !r.output.empty()) {
      auto it = by_revision.find(r.mod_revision);
      bool found = false;
      if (it != by_revision.end()) {
        for (const WatchEvent* e : it->second) found |= e->key == r.key && e->value == r.output;
      }
      if (!found) {
        report->anomalies.push_back("a read returned what was never committed: " + Describe(r) +
                                    " (mod_revision " + std::to_string(r.mod_revision) + ")");
      }
    }
  }
  for (const auto& [value, events] : by_value) {
    if (events[0]->key.rfind("/f/e", 0) != 0) continue;  // the harness's own keys
    if (events.size() > 1) {
      report->anomalies.push_back("value " + value + " committed " + std::to_string(events.size()) +
                                  " times (a write applied twice)");
    }
    auto w = writer.find(value);
    if (w == writer.end()) {
      report->anomalies.push_back("value " + value + " committed but never written");
    } else if (w->second->outcome == Outcome::kFailed) {
      report->anomalies.push_back("a failed write took effect: " + Describe(*w->second));
    } else if (w->second->outcome == Outcome::kOk && w->second->kind == KvRecord::Kind::kCas &&
               !w->second->cas_ok) {
      report->anomalies.push_back("a CAS whose compare failed took effect: " +
                                  Describe(*w->second));
    }
  }
  // The events replayed give the final state, and every sampled state.
  std::map<std::string, std::string> state;
  std::map<std::string, int64_t> mod;
  auto sample = committed.sampled_states.begin();
  auto compare = [&](const std::map<std::string, std::string>& want, const std::string& what) {
    if (state != want) {
      report->anomalies.push_back("the committed events replayed do not give " + what + " (" +
                                  std::to_string(state.size()) + " keys replayed, " +
                                  std::to_string(want.size()) + " read)");
    }
  };
  for (size_t i = 0; i <= committed.events.size(); i++) {
    const int64_t rev = i < committed.events.size() ? committed.events[i].revision : INT64_MAX;
    while (sample != committed.sampled_states.end() && sample->first < rev) {
      compare(sample->second, "the range at revision " + std::to_string(sample->first));
      ++sample;
    }
    if (i == committed.events.size()) break;
    const WatchEvent& e = committed.events[i];
    if (e.is_delete) {
      state.erase(e.key);
      mod.erase(e.key);
    } else {
      state[e.key] = e.value;
      mod[e.key] = e.revision;
    }
  }
  std::map<std::string, std::string> final_values;
  for (const auto& [key, vm] : committed.final_state) final_values[key] = vm.first;
  compare(final_values, "the final state");
  report->notes.push_back("committed history: " + std::to_string(committed.events.size()) +
                          " events to revision " + std::to_string(committed.end_revision) + "; " +
                          std::to_string(acked) + " acknowledged writes checked, " +
                          std::to_string(committed.sampled_states.size()) +
                          " past revisions compared");
}

void CheckWatch(const std::string& name, const std::vector<WatchEvent>& delivered,
                const CommittedHistory& committed, CheckReport* report) {
  int64_t last = 0;
  for (size_t i = 0; i < delivered.size(); i++) {
    if (delivered[i].revision < last) {
      report->anomalies.push_back(name + ": event " + std::to_string(i) + " at revision " +
                                  std::to_string(delivered[i].revision) + " after revision " +
                                  std::to_string(last));
      return;
    }
    last = delivered[i].revision;
  }
  size_t n = 0;
  while (n < delivered.size() && delivered[n].revision <= committed.end_revision) n++;
  const size_t want = committed.events.size();
  for (size_t i = 0; i < std::min(n, want); i++) {
    const WatchEvent& d = delivered[i];
    const WatchEvent& c = committed.events[i];
    if (d.revision != c.revision || d.key != c.key || d.is_delete != c.is_delete ||
        d.value != c.value) {
      std::ostringstream out;
      out << name << ": event " << i << " is rev " << d.revision << " " << d.key << "=" << d.value
          << ", the committed one rev " << c.revision << " " << c.key << "=" << c.value
          << (d.revision == c.revision ? "" : (d.revision > c.revision ? " (missed)" : " (extra)"));
      report->anomalies.push_back(out.str());
      return;
    }
  }
  if (n != want) {
    report->anomalies.push_back(name + ": delivered " + std::to_string(n) + " events up to rev " +
                                std::to_string(committed.end_revision) + ", committed " +
                                std::to_string(want));
  }
}

void CheckLeases(const std::vector<LeaseHistory>& leases, int64_t end_us, int64_t slack_us,
                 CheckReport* report) {
  int64_t worst_late_us = INT64_MIN;
  int abandoned_checked = 0;
  for (const LeaseHistory& lease : leases) {
    const std::string name = "lease " + std::to_string(lease.id) + " (" + lease.key + ")";
    const int64_t ttl_us = lease.granted_ttl_s * 1'000'000;
    if (lease.kept_alive) {
      // The lease lives at least a TTL past any renewal that found it: the
      // leader renewed it after that renewal's call. So its key may be gone
      // only a TTL after the call of the last renewal that found it.
      const LeaseRecord* missing = nullptr;  // the first read that found no key
      for (const LeaseRecord& r : lease.records) {
        if (r.kind == LeaseRecord::Kind::kRead && r.ok && !r.present) {
          missing = &r;
          break;
        }
      }
      if (missing == nullptr) continue;
      const LeaseRecord* renewed = nullptr;  // the latest renewal that found the lease
      bool came_back = false;
      for (const LeaseRecord& r : lease.records) {
        if (r.kind == LeaseRecord::Kind::kKeepAlive && r.ok && r.present &&
            (renewed == nullptr || r.call_us > renewed->call_us)) {
          renewed = &r;
        }
        came_back |=
            r.kind == LeaseRecord::Kind::kRead && r.ok && r.present && r.call_us > missing->ret_us;
      }
      std::ostringstream what;
      what << name << ": its key was gone by " << missing->ret_us / 1000 << " ms; the last renewal "
           << "that found the lease was called at "
           << (renewed ? std::to_string(renewed->call_us / 1000) : std::string("-")) << " ms, TTL "
           << lease.granted_ttl_s << " s";
      if (came_back) {
        report->anomalies.push_back(name + ": its key came back after it was gone");
      } else if (renewed != nullptr && renewed->call_us + ttl_us > missing->ret_us) {
        report->anomalies.push_back("a kept-alive lease expired early: " + what.str());
      } else {
        report->notes.push_back("kept lease lost (no renewal got through for a TTL): " +
                                what.str());
      }
      continue;
    }
    const int64_t deadline = lease.grant_call_us + ttl_us;
    const LeaseRecord* gone = nullptr;
    for (const LeaseRecord& r : lease.records) {
      if (r.kind != LeaseRecord::Kind::kRead || !r.ok) continue;
      if (!r.present && r.ret_us < deadline) {
        report->anomalies.push_back(name + ": expired early: gone at " +
                                    std::to_string(r.ret_us / 1000) + " ms, TTL " +
                                    std::to_string(lease.granted_ttl_s) + " s from " +
                                    std::to_string(lease.grant_call_us / 1000) + " ms");
      }
      if (!r.present && gone == nullptr) gone = &r;
      if (r.present && r.call_us > lease.grant_ret_us + ttl_us + slack_us) {
        report->anomalies.push_back(name + ": still there at " + std::to_string(r.call_us / 1000) +
                                    " ms, TTL " + std::to_string(lease.granted_ttl_s) + " s from " +
                                    std::to_string(lease.grant_ret_us / 1000) + " ms + slack " +
                                    std::to_string(slack_us / 1000) + " ms");
        break;
      }
    }
    if (gone != nullptr) {
      abandoned_checked++;
      worst_late_us = std::max(worst_late_us, gone->ret_us - (lease.grant_ret_us + ttl_us));
    } else if (lease.grant_ret_us + ttl_us + slack_us < end_us) {
      report->anomalies.push_back(name + ": never seen expired (run ended " +
                                  std::to_string(end_us / 1000) + " ms)");
    }
  }
  std::ostringstream out;
  out << "leases: " << leases.size() << " checked, " << abandoned_checked
      << " abandoned ones seen expired";
  if (abandoned_checked > 0) out << ", the latest " << worst_late_us / 1000 << " ms after its TTL";
  report->notes.push_back(out.str());
}

void CheckLocks(const std::vector<LockHold>& holds, int64_t slack_us, CheckReport* report) {
  std::vector<LockHold> by_fence = holds;
  std::sort(by_fence.begin(), by_fence.end(), [](const LockHold& a, const LockHold& b) {
    return a.fencing_revision < b.fencing_revision;
  });
  auto describe = [](const LockHold& h) {
    std::ostringstream out;
    out << "client " << h.client << " fencing revision " << h.fencing_revision << " held ["
        << h.acquired_us / 1000 << ", " << h.released_us / 1000 << "] ms (asked at "
        << h.acquire_call_us / 1000 << " ms)";
    return out.str();
  };
  for (size_t i = 0; i < by_fence.size(); i++) {
    for (size_t j = i + 1; j < by_fence.size(); j++) {
      const LockHold& older = by_fence[i];
      const LockHold& newer = by_fence[j];
      if (older.fencing_revision == newer.fencing_revision) {
        report->anomalies.push_back("two holders with one fencing revision: " + describe(older) +
                                    "; " + describe(newer));
        continue;
      }
      // The newer key was created after the older one, so the newer holder
      // cannot have been done before the older one even asked.
      if (newer.released_us < older.acquire_call_us) {
        report->anomalies.push_back("fencing revisions out of order: " + describe(newer) +
                                    " before " + describe(older));
      }
      const int64_t overlap = std::min(older.released_us, newer.released_us) -
                              std::max(older.acquired_us, newer.acquired_us);
      if (overlap > slack_us) {
        report->anomalies.push_back("two lock holders at once for " +
                                    std::to_string(overlap / 1000) + " ms: " + describe(older) +
                                    "; " + describe(newer));
      }
    }
  }
  report->notes.push_back("locks: " + std::to_string(holds.size()) + " holdings checked");
}

std::string Availability::ToString() const {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "%s: longest gap without an acknowledged write %.1f s; writes from 2 election "
                "timeouts in: %d/%d ok (%.1f%%), %d unknown; acknowledged in %.2f s median, "
                "%.2f s max; reads %d/%d ok, answered in %.2f s median, %.2f s max",
                fault.c_str(), longest_gap_us / 1e6, writes_ok, writes, 100.0 * share_ok(),
                writes_unknown, median_write_us / 1e6, max_write_us / 1e6, reads_ok, reads,
                median_read_us / 1e6, max_read_us / 1e6);
  return buf;
}

int64_t LongestWriteGapUs(const std::vector<KvRecord>& records, int64_t begin_us, int64_t end_us) {
  std::vector<int64_t> acks;
  for (const KvRecord& r : records) {
    if (r.is_write() && r.outcome == Outcome::kOk && r.ret_us >= begin_us && r.ret_us <= end_us) {
      acks.push_back(r.ret_us);
    }
  }
  std::sort(acks.begin(), acks.end());
  int64_t longest = 0;
  int64_t prev = begin_us;
  for (int64_t t : acks) {
    longest = std::max(longest, t - prev);
    prev = t;
  }
  return std::max(longest, end_us - prev);
}

Availability MeasureAvailability(const std::vector<KvRecord>& records, const FaultRecord& fault,
                                 int64_t settle_us) {
  Availability a;
  a.fault = fault.kind + " " + fault.target;
  a.longest_gap_us = LongestWriteGapUs(records, fault.begin_us, fault.end_us + 5'000'000);
  std::vector<int64_t> latencies;
  std::vector<int64_t> read_latencies;
  for (const KvRecord& r : records) {
    if (r.call_us < fault.begin_us + settle_us || r.call_us > fault.end_us) continue;
    if (!r.is_write()) {
      a.reads++;
      a.reads_ok += r.outcome == Outcome::kOk;
      if (r.outcome == Outcome::kOk) read_latencies.push_back(r.ret_us - r.call_us);
      continue;
    }
    a.writes++;
    a.writes_ok += r.outcome == Outcome::kOk;
    a.writes_unknown += r.outcome == Outcome::kUnknown;
    if (r.outcome == Outcome::kOk) latencies.push_back(r.ret_us - r.call_us);
  }
  std::sort(latencies.begin(), latencies.end());
  if (!latencies.empty()) {
    a.median_write_us = latencies[latencies.size() / 2];
    a.max_write_us = latencies.back();
  }
  std::sort(read_latencies.begin(), read_latencies.end());
  if (!read_latencies.empty()) {
    a.median_read_us = read_latencies[read_latencies.size() / 2];
    a.max_read_us = read_latencies.back();
  }
  return a;
}

}  // namespace natcd::testing
