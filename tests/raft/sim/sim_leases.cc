// The lease clients and the lease contract's check (simulation_impl.h).
#include "raft/sim/simulation_impl.h"

namespace natcd::raft::sim {

// ---------------------------------------------------------------------------
// Leases

void Simulation::RunLeaseClients() {
  for (size_t l = 0; l < lease_clients_.size(); l++) {
    LeaseClient& lc = lease_clients_[l];
    switch (lc.stage) {
      case LeaseClient::Stage::kIdle:
        if (!faulty_ || now_ < lc.next_at) break;
        lc.lease = ++next_lease_;
        leases_[lc.lease] =
            LeaseRecord{kLeaseKeyPrefix + std::to_string(lc.lease), 0, -1, false, false};
        lc.stage = LeaseClient::Stage::kGranting;
        lc.payload = LeaseGrantRequest{Rand(1, 2), lc.lease};
        lc.request_id = "g" + std::to_string(lc.lease);
        lc.attempts = 0;
        lc.first_sent = now_;
        SendLeaseStep(l);
        break;
      case LeaseClient::Stage::kGranting:
      case LeaseClient::Stage::kAttaching:
        if (now_ >= lc.deadline) {
          if (lc.attempts < kWriteAttempts) {
            SendLeaseStep(l);
          } else {
            AbandonLease(l);
          }
        }
        break;
      case LeaseClient::Stage::kKeeping: {
        if (!faulty_ || now_ >= lc.keep_until) {
          AbandonLease(l);
          break;
        }
        if (lc.keepalive_busy && now_ >= lc.keepalive_deadline) lc.keepalive_busy = false;
        if (lc.keepalive_busy || now_ < lc.next_keepalive) break;
        LeaseRecord& rec = leases_[lc.lease];
        lc.keepalive_busy = true;
        lc.keepalive_serial = ++next_serial_;
        lc.keepalive_sent = now_;
        lc.keepalive_deadline = now_ + kClientTimeoutMs;
        lc.next_keepalive = now_ + rec.ttl_ms / 4;
        SimMember* to = RandomMember();
        const uint64_t serial = lc.keepalive_serial;
        Trace("lease %lld: keepalive to %s", static_cast<long long>(lc.lease), to->name.c_str());
        Call(to->id, LeaseKeepAliveRequest{lc.lease}, "",
             [this, l, serial](Result<Response> answer) {
               if (!finished_) OnKeepAlive(l, serial, std::move(answer));
             });
        break;
      }
    }
  }
}

void Simulation::SendLeaseStep(size_t l) {
  LeaseClient& lc = lease_clients_[l];
  lc.attempts++;
  lc.serial = ++next_serial_;
  lc.deadline = now_ + kClientTimeoutMs;
  SimMember* to = RandomMember();
  const uint64_t serial = lc.serial;
  Trace("lease %lld: %s attempt %d to %s", static_cast<long long>(lc.lease),
        lc.stage == LeaseClient::Stage::kGranting ? "grant" : "attach", lc.attempts,
        to->name.c_str());
  Call(to->id, lc.payload, lc.request_id, [this, l, serial](Result<Response> answer) {
    if (!finished_) OnLeaseAnswer(l, serial, std::move(answer));
  });
}

void Simulation::OnLeaseAnswer(size_t l, uint64_t serial, Result<Response> answer) {
  LeaseClient& lc = lease_clients_[l];
  if (lc.serial != serial) return;
  if (!answer.ok()) {
    Trace("lease %lld: failed: %s", static_cast<long long>(lc.lease),
          answer.status().ToString().c_str());
    lc.deadline = now_;  // again at once, or give up
    return;
  }
  LeaseRecord& rec = leases_[lc.lease];
  if (lc.stage == LeaseClient::Stage::kGranting) {
    const LeaseGrantResponse* typed = As<LeaseGrantResponse>(answer, "lease grant");
    if (typed == nullptr) return;
    const LeaseGrantResponse& grant = *typed;
    rec.ttl_ms = grant.ttl * 1000;
    // Granted no earlier than the first attempt was sent.
    rec.kept_from = lc.first_sent;
    Trace("lease %lld granted, ttl %lld s", static_cast<long long>(lc.lease),
          static_cast<long long>(grant.ttl));
    lc.stage = LeaseClient::Stage::kAttaching;
    PutRequest put;
    put.key = rec.key;
    put.value = "held";
    put.lease = lc.lease;
    lc.payload = put;
    lc.request_id = "a" + std::to_string(lc.lease);
    lc.attempts = 0;
    SendLeaseStep(l);
    return;
  }
  if (lc.stage == LeaseClient::Stage::kAttaching) {
    if (As<PutResponse>(answer, "put with a lease") == nullptr) return;
    Trace("lease %lld: key attached", static_cast<long long>(lc.lease));
    lc.stage = LeaseClient::Stage::kKeeping;
    rec.keeping = true;
    lc.keep_until = now_ + Rand(500, 6'000);
    lc.next_keepalive = now_;
    lc.keepalive_busy = false;
    lc.keepalive_serial = 0;  // a late answer to the last lease's keepalive is not this one's
  }
}

void Simulation::OnKeepAlive(size_t l, uint64_t serial, Result<Response> answer) {
  LeaseClient& lc = lease_clients_[l];
  if (lc.stage != LeaseClient::Stage::kKeeping || lc.keepalive_serial != serial) return;
  lc.keepalive_busy = false;
  if (!answer.ok()) return;
  LeaseRecord& rec = leases_[lc.lease];
  const LeaseKeepAliveResponse* typed = As<LeaseKeepAliveResponse>(answer, "lease keepalive");
  if (typed == nullptr) return;
  const LeaseKeepAliveResponse& kept = *typed;
  if (kept.ttl > 0) {
    if (rec.kept_from < lc.keepalive_sent) result_.stats.leases_kept++;
    rec.kept_from = std::max(rec.kept_from, lc.keepalive_sent);
    return;
  }
  // Gone: it must have had its TTL since the last keepalive that kept it.
  Trace("lease %lld: keepalive finds it gone", static_cast<long long>(lc.lease));
  LeaseGone(lc.lease, "gone");
  rec.keeping = false;
  lc.stage = LeaseClient::Stage::kIdle;
  lc.next_at = now_ + Rand(0, 500);
}

void Simulation::AbandonLease(size_t l) {
  LeaseClient& lc = lease_clients_[l];
  Trace("lease %lld abandoned", static_cast<long long>(lc.lease));
  leases_[lc.lease].abandoned = true;
  leases_[lc.lease].keeping = false;
  lc.stage = LeaseClient::Stage::kIdle;
  lc.serial = 0;
  lc.next_at = now_ + Rand(0, 500);
}

void Simulation::OnPublish(NodeId from, const std::vector<Event>& events) {
  int64_t previous = 0;
  for (const Event& e : events) {
    if (e.kv.mod_revision < previous) {
      Fail(Str("%s published revision %lld after %lld", members_.at(from)->name.c_str(),
               static_cast<long long>(e.kv.mod_revision), static_cast<long long>(previous)));
    }
    previous = e.kv.mod_revision;
    published_.insert(e.kv.mod_revision);
    if (e.type == Event::Type::kPut) {
      Observe(e.kv, "event");
      continue;
    }
    if (e.kv.key.rfind(kLeaseKeyPrefix, 0) != 0) continue;  // a client's delete
    const int64_t lease = std::strtoll(e.kv.key.c_str() + 2, nullptr, 10);
    Trace("lease %lld expired (key deleted at revision %lld)", static_cast<long long>(lease),
          static_cast<long long>(e.kv.mod_revision));
    LeaseGone(lease, "expired");
  }
}

// A lease's end, seen now (no earlier than the leader decided it), against
// the last keepalive that kept it (or its grant), kept_from. etcd's promise
// is the whole TTL from there; natcd's (lease_manager.h) is weaker across a
// change of leader: the replicated deadline a new leader starts from may lag
// what the holder earned by half a TTL, and the new leader adds a grace of
// an election timeout (plus the time without a leader, not counted here).
// Short of natcd's promise fails the run; short of etcd's only counts.
void Simulation::LeaseGone(int64_t lease, const char* how) {
  LeaseRecord& rec = leases_[lease];
  if (rec.gone) return;
  rec.gone = true;
  result_.stats.leases_expired++;
  if (rec.kept_from < 0 || now_ >= rec.kept_from + rec.ttl_ms) return;
  const std::string what =
      Str("lease %lld (ttl %lld ms) %s by t=%lld though kept alive at t=%lld%s",
          static_cast<long long>(lease), static_cast<long long>(rec.ttl_ms), how,
          static_cast<long long>(now_), static_cast<long long>(rec.kept_from),
          rec.keeping ? " and still being kept alive" : ", abandoned since");
  if (now_ < rec.kept_from + rec.ttl_ms / 2 + kElectionMs) {
    Fail(what);
    return;
  }
  result_.stats.leases_cut_short++;
  Trace("%s: short of its TTL", what.c_str());
}

}  // namespace natcd::raft::sim
