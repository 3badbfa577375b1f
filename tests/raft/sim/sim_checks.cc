// The checks: leaders per term, convergence, acknowledged writes,
// linearizability, healing (simulation_impl.h).
#include "raft/sim/simulation_impl.h"

namespace natcd::raft::sim {
namespace {

uint64_t AppliedIndexOf(const Engine& engine) {
  uint64_t lo = 0, hi = 1;
  while (engine.AlreadyApplied(hi)) {
    lo = hi;
    hi *= 2;
  }
  // AlreadyApplied(lo) (or lo == 0), !AlreadyApplied(hi)
  while (hi - lo > 1) {
    const uint64_t mid = lo + (hi - lo) / 2;
    if (engine.AlreadyApplied(mid)) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return lo;
}

}  // namespace

// ---------------------------------------------------------------------------
// Checks

void Simulation::CheckLeaders() {
  for (auto& [id, m] : members_) {
    if (!m->up() || !m->member->is_leader()) continue;
    const uint64_t term = m->member->raft_term();
    auto [it, first] = leader_of_term_.emplace(term, id);
    if (first) Trace("%s leads term %llu", m->name.c_str(), static_cast<unsigned long long>(term));
    if (!first && it->second != id) {
      Fail(Str("two leaders in term %llu: %s and %s", static_cast<unsigned long long>(term),
               members_.at(it->second)->name.c_str(), m->name.c_str()));
    }
  }
}

// Asks every member for its state (read on its thread in its next turn)
// and the leader for the membership; true once every member of it has
// applied the same entries and holds the same state, with every revision
// published and every abandoned lease expired.
bool Simulation::TryConverge() {
  SimMember* leader = Leader();
  if (leader == nullptr) return false;
  const uint64_t generation = ++probe_generation_;
  leader->member->Submit([&] {
    auto request = std::make_unique<server::Request>();
    request->payload = server::MemberListRequest{};
    request->received_ms = leader->clock->MonotonicMs();
    request->responder =
        std::make_unique<CallbackResponder>([this, generation](Result<Response> answer) {
          if (finished_ || !answer.ok()) return;
          if (auto* list = std::get_if<server::MemberListResponse>(&answer.value())) {
            final_members_ = list->members;
            final_members_generation_ = generation;
          }
        });
    return request;
  }());
  for (SimMember* m : Alive()) {
    const NodeId id = m->id;
    m->member->RunOnMemberThread([this, id, generation](Engine& engine) {
      EngineState& s = probes_[id];
      s.generation = generation;
      s.applied_index = AppliedIndexOf(engine);
      s.revision = engine.revision();
      RangeRequest all;
      all.key = std::string(1, '\0');
      all.range_end = std::string(1, '\0');
      all.serializable = true;
      Result<RangeResponse> range = engine.Range(all);
      s.kvs = range.ok() ? range->kvs : std::vector<KeyValue>{};
      s.leases = engine.LeaseLeases().ids;
      std::sort(s.leases.begin(), s.leases.end());
    });
  }
  // One step: every member takes a turn and answers.
  Step();
  if (!result_.ok || final_members_generation_ != generation) return false;
  // Members outside the configuration (an add whose outcome was lost, a
  // removal not acknowledged) leave.
  std::set<NodeId> config;
  for (const server::MemberInfo& info : final_members_) config.insert(info.id);
  for (auto& [id, m] : members_) {
    if (!m->removed && config.count(id) == 0) {
      Trace("%s is not in the configuration: stopped", m->name.c_str());
      Crash(*m);
      m->removed = true;
    }
  }
  const EngineState* first = nullptr;
  for (NodeId id : config) {
    auto it = members_.find(id);
    if (it == members_.end()) {
      Fail(Str("member %016llx in the configuration was never started",
               static_cast<unsigned long long>(id)));
      return false;
    }
    if (it->second->removed) {
      // Stopped as not in the configuration, but added since (the add was
      // still on its way): back it comes.
      it->second->removed = false;
      return false;
    }
    auto probe = probes_.find(id);
    if (!it->second->up() || probe == probes_.end() || probe->second.generation != generation) {
      return false;
    }
    const EngineState& s = probe->second;
    if (first == nullptr) {
      first = &s;
      continue;
    }
    if (s.revision == first->revision && s.kvs != first->kvs) {
      Fail(Str("%s holds other keys than another member at the same revision %lld",
               it->second->name.c_str(), static_cast<long long>(s.revision)));
      return false;
    }
    if (s.applied_index != first->applied_index) return false;
    if (s.revision != first->revision || s.leases != first->leases) {
      Fail(Str("%s applied the same entries (to %llu) as another member but holds another state",
               it->second->name.c_str(), static_cast<unsigned long long>(s.applied_index)));
      return false;
    }
  }
  if (first == nullptr) return false;
  // Every revision was published by some leader (continuity of events):
  // every one after the empty store's.
  for (int64_t r = kEmptyStoreRevision + 1; r <= first->revision; r++) {
    if (published_.count(r) == 0) return false;
  }
  // Every abandoned lease expired.
  if (!first->leases.empty()) return false;
  for (const KeyValue& kv : first->kvs) {
    if (kv.key.rfind(kLeaseKeyPrefix, 0) == 0) return false;
  }
  result_.stats.final_revision = first->revision;
  Trace("converged: %zu members at index %llu, revision %lld", config.size(),
        static_cast<unsigned long long>(first->applied_index),
        static_cast<long long>(first->revision));
  return true;
}

// Every acknowledged write is in the state, at the revision it was
// acknowledged with.
void Simulation::CheckAckedWrites(SimMember& m) {
  std::vector<AckedWrite> acked = acked_;
  std::string failure;
  m.member->RunOnMemberThread([&acked, &failure](Engine& engine) {
    for (const AckedWrite& w : acked) {
      RangeRequest at;
      at.key = w.key;
      at.revision = w.revision;
      at.serializable = true;
      Result<RangeResponse> range = engine.Range(at);
      const bool deleted = w.value.empty();
      if (!range.ok() || (deleted && !range->kvs.empty()) ||
          (!deleted && (range->kvs.empty() || range->kvs[0].mod_revision != w.revision ||
                        range->kvs[0].value != w.value))) {
        failure = Str("acknowledged write of '%s' to %s at revision %lld is not in the state",
                      w.value.c_str(), w.key.c_str(), static_cast<long long>(w.revision));
        return;
      }
    }
  });
  m.member->RunOneTurn();
  if (!failure.empty()) Fail(failure);
}

void Simulation::CheckHistory() {
  std::vector<KvOp> history;
  for (size_t i = 0; i < history_.size(); i++) {
    if (!discarded_[i]) history.push_back(history_[i]);
  }
  CheckResult lin = CheckLinearizable(history, options_.check_steps);
  if (!lin.linearizable) {
    Fail(std::string(lin.gave_up ? "linearizability check gave up" : "not linearizable") +
         " on key " + lin.key);
  }
}

bool Simulation::Heal() {
  faulty_ = false;
  network_.set_faulty(false);
  heal_partition_at_ = 0;
  const int64_t healed_at = now_;
  const int64_t give_up = now_ + options_.heal_budget_ms;
  int64_t next_try = now_;
  while (now_ < give_up && result_.ok) {
    Step();
    if (!live_acked_ && now_ >= next_try) {
      next_try = now_ + 1'000;
      PutRequest put;
      put.key = kLivenessKey;
      put.value = "live";
      SimMember* to = RandomMember();
      Trace("liveness write to %s", to->name.c_str());
      Call(to->id, put, "live", [this](Result<Response> answer) {
        if (finished_ || !answer.ok() || live_acked_) return;
        live_acked_ = true;
        // Leases abandoned at the latest now: TTL (2 s at most) plus an
        // election timeout of grace for each of a few leader changes.
        converge_from_ = now_ + 2'000 + 4 * kElectionMs;
        Trace("liveness write acknowledged");
      });
    }
    if (live_acked_ && now_ >= converge_from_ && now_ % 100 == 0 && TryConverge()) {
      result_.stats.heal_ms = now_ - healed_at;
      return true;
    }
  }
  if (!result_.ok) return false;
  if (!live_acked_) {
    Fail(Str("no write acknowledged within %lld ms after the faults healed",
             static_cast<long long>(options_.heal_budget_ms)));
    return false;
  }
  std::string leases;
  for (const auto& [id, rec] : leases_) {
    if (!rec.gone) leases += " " + std::to_string(id);
  }
  Fail(
      Str("members did not converge within %lld ms after the faults healed (leases not seen "
          "expiring:%s)",
          static_cast<long long>(options_.heal_budget_ms), leases.c_str()));
  return false;
}

}  // namespace natcd::raft::sim
