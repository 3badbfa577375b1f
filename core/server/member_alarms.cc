// Member: alarms (see member_impl.h). etcd's model: an alarm is raised and
// cleared through the log (v3alarm), so every member refuses the same
// entries at apply (the engine's capped and corrupt appliers,
// core/alarm/capped_apply.h); a member also refuses at once what a raised
// alarm would refuse, and checks the backend quota on what it receives
// (etcd's quotaKVServer), raising NOSPACE for itself when its database is
// full. The leader's periodic corruption check compares every member's
// HashKV with its own and raises CORRUPT for a member that differs.
#include <cinttypes>
#include <cstdio>

#include "alarm/alarm_errors.h"
#include "alarm/alarm_store.h"
#include "alarm/backend_quota.h"
#include "server/member_impl.h"

namespace natcd::server {
namespace {

// etcd's applierV3Corrupt refuses these (reads included); the maintenance
// calls, membership and the alarms themselves stay served, so an operator
// can look and repair.
bool RefusedWhileCorrupt(const RequestPayload& p) {
  return std::holds_alternative<RangeRequest>(p) || std::holds_alternative<PutRequest>(p) ||
         std::holds_alternative<DeleteRangeRequest>(p) || std::holds_alternative<TxnRequest>(p) ||
         std::holds_alternative<CompactionRequest>(p) ||
         std::holds_alternative<LeaseGrantRequest>(p) ||
         std::holds_alternative<LeaseRevokeRequest>(p);
}

int64_t Cost(const RequestPayload& p) {
  if (const auto* put = std::get_if<PutRequest>(&p)) return QuotaCost(*put);
  if (const auto* txn = std::get_if<TxnRequest>(&p)) return QuotaCost(*txn);
  if (const auto* grant = std::get_if<LeaseGrantRequest>(&p)) return QuotaCost(*grant);
  return 0;
}

bool IsMemberOf(const raft::ConfState& cs, NodeId id) {
  for (const auto* list : {&cs.voters, &cs.learners}) {
    for (NodeId m : *list) {
      if (m == id) return true;
    }
  }
  return false;
}

}  // namespace

// Answers a corruption check's hash request, from whatever thread the
// transport answers on, by queueing the answer for the member thread (while
// the member is there to take it).
namespace {

Result<HashKVResponse> HashAnswer(Result<Response> response) {
  if (!response.ok()) return response.status();
  if (auto* hash = std::get_if<HashKVResponse>(&response.value())) return *hash;
  return Status::Internal("not a HashKV answer");
}

}  // namespace

class Member::Impl::PeerHashResponder final : public Responder {
 public:
  PeerHashResponder(std::shared_ptr<HashAnswers> to, uint64_t round, NodeId peer)
      : to_(std::move(to)), round_(round), peer_(peer) {}

  void Respond(Result<Response> response, const ResponseContext&) override {
    Result<HashKVResponse> answer = HashAnswer(std::move(response));
    MutexLock lock(&to_->mu);
    Member::Impl* impl = to_->impl;
    if (impl == nullptr) return;
    Member::Impl::Item item;
    item.kind = Member::Impl::Item::Kind::kTask;
    item.task = [impl, round = round_, peer = peer_, answer = std::move(answer)](Engine&) mutable {
      impl->member_thread.AssertHeld();
      impl->OnPeerHash(round, peer, std::move(answer));
    };
    impl->Enqueue(std::move(item));
  }

 private:
  std::shared_ptr<HashAnswers> to_;
  uint64_t round_;
  NodeId peer_;
};

Status Member::Impl::AlarmGate(const Request& request) {
  const RequestPayload& p = request.payload;
  const AlarmStore& alarms = engine->alarms();
  if (alarms.Any(AlarmType::kCorrupt) && RefusedWhileCorrupt(p)) return alarm::ErrCorrupt();
  const int64_t cost = Cost(p);
  if (cost == 0) return Status::OK();
  // A retry of a write already applied gets its first outcome (HandleWrite),
  // whatever has been raised since.
  if (!request.request_id.empty() && engine->FindRequest(request.request_id) != nullptr) {
    return Status::OK();
  }
  if (alarms.Any(AlarmType::kNoSpace)) return alarm::ErrNoSpace();
  if (options.quota_backend_bytes <= 0) return Status::OK();
  if (quota_db_size < 0) {
    Result<int64_t> size = engine->DatabaseSizeBytes();
    quota_db_size = size.ok() ? *size : 0;
  }
  if (QuotaAvailable(options.quota_backend_bytes, quota_db_size, cost)) return Status::OK();
  RaiseAlarm(AlarmType::kNoSpace, options.member_id);
  return alarm::ErrNoSpace();
}

void Member::Impl::RaiseAlarm(AlarmType type, NodeId member) {
  if (engine->alarms().Has(AlarmMember{member, type})) return;
  if (type == AlarmType::kNoSpace && member == options.member_id) {
    const int64_t now = clock->MonotonicMs();
    if (now < next_nospace_raise_ms) return;  // the last one is on its way
    next_nospace_raise_ms = now + options.election_timeout_ms;
    fprintf(stderr,
            "natcd %s: database space exceeded (quota %" PRId64
            " bytes): raising the NOSPACE alarm\n",
            options.name.c_str(), options.quota_backend_bytes);
  }
  LogCommand command;
  command.alarm = AlarmChange{AlarmAction::kActivate, member, type};
  Propose(std::move(command));
}

std::vector<std::string> Member::Impl::AlarmErrors() const {
  std::vector<std::string> errors;
  for (const AlarmMember& a : engine->alarms().List()) errors.push_back(AlarmText(a));
  return errors;
}

void Member::Impl::HandleAlarm(std::unique_ptr<Request> request, Answers* answers) {
  const AlarmRequest& r = std::get<AlarmRequest>(request->payload);
  if (r.action == AlarmAction::kGet) {
    Answer_(answers, std::move(request), Response(AlarmResponse{Now(), engine->alarms().List()}));
    return;
  }
  const AlarmChange change{r.action, r.member_id, r.alarm};
  if (Status bad = AlarmStore::Check(change); !bad.ok()) {
    Answer_(answers, std::move(request), std::move(bad));
    return;
  }
  // An alarm is about a member of the cluster; one raised for a member
  // removed since can still be cleared.
  const bool raised = engine->alarms().Has(AlarmMember{r.member_id, r.alarm});
  if (!IsMemberOf(raft->conf_state(), r.member_id) &&
      !(r.action == AlarmAction::kDeactivate && raised)) {
    Answer_(answers, std::move(request),
            Status::NotFound("ErrMemberNotFound", "etcdserver: member not found"));
    return;
  }
  LogCommand command;
  command.alarm = change;
  ProposeFor(std::move(command), std::move(request));
}

void Member::Impl::ApplyAlarmChange(const AlarmChange& change, uint64_t index,
                                    std::unique_ptr<Request> request, Answers* answers) {
  const AlarmMember alarm{change.member_id, change.alarm};
  const bool was_raised = engine->alarms().Has(alarm);
  Status s = engine->ApplyAlarm(change, index);
  const bool raised = engine->alarms().Has(alarm);
  if (s.ok() && raised != was_raised) {
    fprintf(stderr, "natcd %s: alarm %s %s for member %016" PRIx64 "\n", options.name.c_str(),
            std::string(AlarmName(change.alarm)).c_str(), raised ? "raised" : "cleared",
            change.member_id);
  }
  // Cleared: no raise of this member's NOSPACE is on its way any more, so
  // the next write past the quota raises it again at once.
  if (s.ok() && was_raised && !raised &&
      alarm == AlarmMember{options.member_id, AlarmType::kNoSpace}) {
    next_nospace_raise_ms = 0;
  }
  if (request == nullptr) return;
  if (!s.ok()) {
    Answer_(answers, std::move(request), std::move(s), true);
    return;
  }
  // etcd answers the alarm activated, or the one deactivated (none when it
  // was not raised).
  AlarmResponse out{Now(), {}};
  if (change.action == AlarmAction::kActivate || was_raised) out.alarms.push_back(alarm);
  Answer_(answers, std::move(request), Response(std::move(out)), true);
}

void Member::Impl::MaybeCheckCorruption(int64_t now) {
  if (options.corrupt_check_interval_ms <= 0) return;
  if (corrupt_check.round != 0) {
    if (now >= corrupt_check.deadline_ms) FinishCorruptCheck();
    return;
  }
  if (!leader || transport == nullptr || now < next_corrupt_check_ms) return;
  next_corrupt_check_ms = now + options.corrupt_check_interval_ms;
  const raft::ConfState cs = raft->conf_state();
  std::vector<NodeId> peers;
  for (const auto* list : {&cs.voters, &cs.learners}) {
    for (NodeId m : *list) {
      if (m != options.member_id) peers.push_back(m);
    }
  }
  if (peers.empty()) return;
  Result<HashKVResponse> own = engine->HashKV(HashKVRequest{0});
  if (!own.ok()) return;
  corrupt_check.round = ++corrupt_check_rounds;
  // The transport answers ErrTimeout after the request timeout; the
  // deadline only bounds a round whose answers were lost.
  corrupt_check.deadline_ms = now + 2 * options.request_timeout_ms;
  corrupt_check.own = std::move(own).value();
  corrupt_check.answers.clear();
  for (NodeId peer : peers) corrupt_check.answers[peer] = std::nullopt;
  for (NodeId peer : peers) {
    auto ask = std::make_unique<Request>();
    ask->payload = HashKVRequest{corrupt_check.own.hash_revision};
    ask->received_ms = now;
    ask->auth_checked = true;
    ask->responder = std::make_unique<PeerHashResponder>(hash_answers, corrupt_check.round, peer);
    transport->Ask(peer, std::move(ask));
  }
}

void Member::Impl::OnPeerHash(uint64_t round, NodeId peer, Result<HashKVResponse> answer) {
  if (round == 0 || round != corrupt_check.round) return;  // a finished round's straggler
  auto it = corrupt_check.answers.find(peer);
  if (it == corrupt_check.answers.end()) return;
  it->second = std::move(answer);
  for (const auto& [id, a] : corrupt_check.answers) {
    if (!a.has_value()) return;
  }
  FinishCorruptCheck();
}

// etcd's rule (checkHashKV): only hashes of the same revision and the same
// compact revision compare; every member whose hash differs from the
// leader's gets CORRUPT. A member that did not answer, or answered an
// error, is unknown: it is neither raised nor taken as agreeing.
void Member::Impl::FinishCorruptCheck() {
  const HashKVResponse& own = corrupt_check.own;
  for (const auto& [peer, a] : corrupt_check.answers) {
    if (!a.has_value() || !a->ok()) {
      fprintf(stderr,
              "natcd %s: corruption check: member %016" PRIx64 " gave no hash at revision %" PRId64
              " (%s): its state is unknown\n",
              options.name.c_str(), peer, own.hash_revision,
              a.has_value() ? a->status().ToString().c_str() : "no answer in time");
      continue;
    }
    const HashKVResponse& theirs = a->value();
    if (theirs.hash_revision != own.hash_revision ||
        theirs.compact_revision != own.compact_revision) {
      continue;  // not comparable (compacted since): the next round compares
    }
    if (theirs.hash != own.hash && leader) {
      fprintf(stderr,
              "natcd %s: corruption check: member %016" PRIx64
              "'s hash %08x differs from %08x at "
              "revision %" PRId64 " (compact revision %" PRId64 "): raising CORRUPT\n",
              options.name.c_str(), peer, theirs.hash, own.hash, own.hash_revision,
              own.compact_revision);
      RaiseAlarm(AlarmType::kCorrupt, peer);
    }
  }
  corrupt_check = CorruptCheck{};
}

}  // namespace natcd::server
