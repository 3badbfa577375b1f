// Member: committed log entries into the engine, and the outcomes
// remembered for idempotent retries (see member_impl.h).
#include <cstdio>

#include "auth/auth_errors.h"
#include "auth/auth_store.h"

#include "server/member_identity.h"
#include "server/member_impl.h"
#include "server/request_outcome.h"
#include "server/write_kind.h"

namespace natcd::server {
namespace {

WriteKind WriteKindOf(const RequestPayload& p) {
  if (std::holds_alternative<PutRequest>(p)) return WriteKind::kPut;
  if (std::holds_alternative<DeleteRangeRequest>(p)) return WriteKind::kDeleteRange;
  if (std::holds_alternative<TxnRequest>(p)) return WriteKind::kTxn;
  if (std::holds_alternative<CompactionRequest>(p)) return WriteKind::kCompaction;
  if (std::holds_alternative<LeaseGrantRequest>(p)) return WriteKind::kLeaseGrant;
  return WriteKind::kLeaseRevoke;
}

Result<Response> ToResponse(Result<WriteResponse> written) {
  if (!written.ok()) return written.status();
  return std::visit(
      [](auto&& r) -> Result<Response> {
        using T = std::decay_t<decltype(r)>;
        if constexpr (std::is_constructible_v<Response, T>) {
          return Response(std::move(r));
        } else {
          return Status::Internal("an internal entry has no client response");
        }
      },
      std::move(written).value());
}

// etcd's counts of what was applied.
void RecordApplied(const WriteRequest& request, const WriteResponse& response,
                   metrics::MemberMetrics* m) {
  if (m == nullptr) return;
  switch (KindOf(request)) {
    case WriteKind::kPut:
      m->put_total.Inc();
      break;
    case WriteKind::kDeleteRange:
      m->delete_total.Inc();
      break;
    case WriteKind::kTxn:
      m->txn_total.Inc();
      break;
    case WriteKind::kLeaseGrant:
      m->lease_granted.Inc();
      m->lease_ttl_seconds.Observe(static_cast<double>(std::get<LeaseGrantResponse>(response).ttl));
      break;
    case WriteKind::kLeaseRevoke:
      m->lease_revoked.Inc();
      break;
    case WriteKind::kLeaseExpire: {
      const auto revoked = static_cast<uint64_t>(std::get<LeaseExpireResponse>(response).revoked);
      m->lease_expired.Add(revoked);
      m->lease_revoked.Add(revoked);
      break;
    }
    case WriteKind::kCompaction:
    case WriteKind::kLeaseCheckpoint:
      break;
  }
}

}  // namespace

// The answer remembered for a request id (a retry), or nullopt.
std::optional<Result<Response>> Member::Impl::Remembered(const Request& request) {
  if (request.request_id.empty()) return std::nullopt;
  const std::string* outcome = engine->FindRequest(request.request_id);
  if (outcome == nullptr) return std::nullopt;
  return ToResponse(DecodeOutcome(*outcome, WriteKindOf(request.payload)));
}

void Member::Impl::ApplyConfChange(const raft::Entry& entry, Answers* answers) {
  raft::ConfChange cc;
  if (!raft::DecodeConfChange(entry.data, &cc)) return;
  membership.Record(entry.index, raft->ApplyConfChange(cc));
  const ConfChangeContext context = DecodeConfChangeContext(cc.context);
  if (!context.member_name.empty()) {
    membership.SetName(cc.node_id, context.member_name);
    // Recorded with the applied entry (one transaction), so the name
    // outlives the log entry that brought it.
    Status recorded = raft_storage->SetMemberName(cc.node_id, context.member_name);
    if (!recorded.ok()) {
      fprintf(stderr, "natcd %s: recording member %s: %s\n", options.name.c_str(),
              context.member_name.c_str(), recorded.ToString().c_str());
    }
  }
  // The URL rows, as etcd's member store keeps them: a MemberAdd's peer
  // URLs recorded, a removed member's URLs gone. Not again after a restart
  // (the rows are as of the applied index; a later MemberUpdate's must
  // stay), so the entry counts as applied.
  const bool adds_urls = cc.type != raft::ConfChangeType::kRemoveNode && !context.peer_urls.empty();
  if ((adds_urls || cc.type == raft::ConfChangeType::kRemoveNode) &&
      !engine->AlreadyApplied(entry.index)) {
    Status recorded = engine->MarkApplied(entry.index);
    if (recorded.ok() && adds_urls) {
      recorded = raft_storage->SetMemberPeerUrls(cc.node_id, context.peer_urls);
      if (recorded.ok()) membership.SetPeerUrls(cc.node_id, context.peer_urls);
    } else if (recorded.ok()) {
      recorded = raft_storage->ForgetMemberUrls(cc.node_id);
      if (recorded.ok()) membership.ForgetUrls(cc.node_id);
    }
    if (!recorded.ok()) {
      fprintf(stderr, "natcd %s: recording member %016llx's URLs: %s\n", options.name.c_str(),
              static_cast<unsigned long long>(cc.node_id), recorded.ToString().c_str());
    }
  }
  if (context.origin_member != options.member_id) return;
  std::unique_ptr<Request> request = proposals.Take(context.origin_seq, entry.term);
  if (request == nullptr) return;
  std::vector<MemberInfo> members = membership.Members(raft->conf_state());
  if (std::holds_alternative<MemberAddRequest>(request->payload)) {
    MemberAddResponse r{Now(), MemberInfo{cc.node_id, context.member_name, false, {}, {}}, members};
    for (const MemberInfo& m : members) {
      if (m.id == cc.node_id) r.member = m;
    }
    Answer_(answers, std::move(request), Response(std::move(r)));
  } else {
    Answer_(answers, std::move(request), Response(MembershipResponse{Now(), std::move(members)}));
  }
}

void Member::Impl::ApplyEntry(const raft::Entry& entry, Answers* answers) {
  if (entry.type == raft::EntryType::kConfChange) {
    ApplyConfChange(entry, answers);
    return;
  }
  if (entry.data.empty()) return;
  LogCommand command;
  if (std::optional<LogCommand> proposed = proposed_commands.Take(entry.index, entry.term)) {
    command = std::move(*proposed);
  } else if (Status s = DecodeLogCommand(entry.data, &command); !s.ok()) {
    // Only natcd writes entries: this is a bug or a corrupt log. Skipping
    // keeps every member identical (they all skip it).
    fprintf(stderr, "natcd: log entry %llu does not decode: %s\n",
            static_cast<unsigned long long>(entry.index), s.ToString().c_str());
    return;
  }
  // Not the engine's (so read again from the kept log after a restart).
  if (command.events_published) {
    continuity.OnRecorded(*command.events_published);
    return;
  }
  if (command.member_attributes &&
      command.member_attributes->sets == MemberAttribute::kClientUrls) {
    // Not again after a restart: a member removed since has no row.
    if (engine->AlreadyApplied(entry.index)) return;
    const MemberAttributes& a = *command.member_attributes;
    membership.SetClientUrls(a.member_id, a.client_urls);
    Status recorded = raft_storage->SetMemberClientUrls(a.member_id, a.client_urls);
    if (!recorded.ok()) {
      fprintf(stderr, "natcd: recording member %016llx's client URLs: %s\n",
              static_cast<unsigned long long>(a.member_id), recorded.ToString().c_str());
    }
    return;
  }
  if (engine->AlreadyApplied(entry.index)) return;
  if (command.member_attributes) {
    ApplyPeerUrls(command, entry, answers);
    return;
  }
  std::unique_ptr<Request> request;
  if (command.origin_member == options.member_id) {
    request = proposals.Take(command.origin_seq, entry.term);
  }
  // Checked against permissions the auth store has changed since (one may
  // have been revoked): refused on every member alike, as etcd's applier
  // refuses it, and neither applied nor remembered, so the client's retry
  // is checked anew.
  const AuthStore& auth = engine->auth();
  if (command.auth_revision != 0 && auth.enabled() && command.auth_revision < auth.revision()) {
    // etcd's server tries an Authenticate again while the auth store
    // moved under it (v3_server.go Authenticate): checked against the
    // store as it is now and proposed anew, within the request's time.
    if (request != nullptr && command.auth_change &&
        command.auth_change->kind == AuthChangeKind::kAuthenticate &&
        clock->MonotonicMs() - request->received_ms <= options.request_timeout_ms) {
      Item again;
      again.kind = Item::Kind::kRequest;
      again.request = std::move(request);
      Enqueue(std::move(again));
      return;
    }
    if (request != nullptr) Answer_(answers, std::move(request), auth::ErrAuthOldRevision(), true);
    return;
  }
  if (command.auth_change) {
    ApplyAuthChange(*command.auth_change, entry.index, std::move(request), answers);
    return;
  }
  if (command.alarm) {
    ApplyAlarmChange(*command.alarm, entry.index, std::move(request), answers);
    return;
  }
  // The same request id proposed twice (a retry raced the first attempt):
  // applied once, on every member alike.
  if (!command.request_id.empty() && engine->FindRequest(command.request_id) != nullptr) {
    if (request != nullptr) {
      std::optional<Result<Response>> remembered = Remembered(*request);
      Answer_(answers, std::move(request), std::move(*remembered), true);
    }
    return;
  }
  Result<WriteResponse> response = engine->Apply(command.request, entry.index);
  if (response.ok()) RecordApplied(command.request, response.value(), options.metrics);
  // Remember the outcome of what was applied (a deterministic error
  // included), never that of a request the engine could not process.
  Status remembered;
  if (!command.request_id.empty() && engine->health().ok()) {
    remembered = engine->RememberRequest(command.request_id, command.request_expires_ms,
                                         EncodeOutcome(response));
  }
  // The leader's own entries (expiry, checkpoints, compaction) have no
  // client: nothing to answer.
  if (request == nullptr) return;
  Answer_(answers, std::move(request),
          remembered.ok() ? ToResponse(std::move(response)) : remembered, true);
}

}  // namespace natcd::server
