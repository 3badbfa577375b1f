#include "natcd/engine.h"

#include "raft/durable_raft_storage.h"

#include <cassert>
#include <cstdint>

#include "alarm/alarm_store.h"
#include "alarm/capped_apply.h"
#include "auth/auth_store.h"
#include "lease/lease_manager.h"
#include "mvcc/kv_store.h"
#include "storage/sqlite_backend.h"

namespace natcd {

struct Engine::Parts {
  std::unique_ptr<SqliteBackend> backend;
  std::unique_ptr<LeaseManager> leases;
  std::unique_ptr<KvStore> kv;
  std::unique_ptr<AuthStore> auth;
  std::unique_ptr<AlarmStore> alarms;
};

namespace {

// Bounds the pruning work one Publish does.
constexpr size_t kRequestsForgottenPerPublish = 1'000;

Status Stopped(const Status& cause) {
  return Status::Unavailable(
      "ErrStopped", "etcdserver: server stopped after a storage error: " + cause.ToString());
}

}  // namespace

Engine::Engine(const EngineOptions& options)
    : options_(options), parts_(std::make_unique<Parts>()), rng_(options.seed) {}

Engine::~Engine() = default;

Result<std::unique_ptr<Engine>> Engine::Open(const EngineOptions& options) {
  if (options.clock == nullptr) return Status::InvalidArgument("ErrConfig", "engine needs a clock");
  std::unique_ptr<Engine> engine(new Engine(options));
  Status s = engine->Load();
  if (!s.ok()) return s;
  return engine;
}

Status Engine::Load() {
  Result<std::unique_ptr<SqliteBackend>> backend =
      SqliteBackend::Open(BackendOptions{options_.db_path, options_.sync});
  if (!backend.ok()) return backend.status();
  parts_->backend = std::move(backend).value();
  parts_->leases = std::make_unique<LeaseManager>(options_.clock);
  parts_->kv =
      std::make_unique<KvStore>(parts_->backend.get(), parts_->leases.get(),
                                KvLimits{options_.max_txn_ops, options_.value_cache_bytes});
  NATCD_RETURN_IF_ERROR(parts_->backend->ScanLeases(
      [this](const LeaseRow& row) { parts_->leases->Add(row.id, row.ttl_s, row.remaining_ms); }));
  NATCD_RETURN_IF_ERROR(parts_->kv->Load());
  parts_->auth = std::make_unique<AuthStore>(parts_->backend.get());
  NATCD_RETURN_IF_ERROR(parts_->auth->Load());
  parts_->alarms = std::make_unique<AlarmStore>(parts_->backend.get());
  NATCD_RETURN_IF_ERROR(parts_->alarms->Load());
  NATCD_RETURN_IF_ERROR(parts_->backend->ScanRequests([this](RequestRow&& row) {
    requests_by_expiry_.insert({row.expires_ms, row.id});
    requests_.emplace(std::move(row.id), Remembered{row.expires_ms, std::move(row.outcome)});
  }));
  Result<int64_t> applied = parts_->backend->GetMeta(SqliteBackend::kMetaAppliedIndex, 0);
  if (!applied.ok()) return applied.status();
  applied_index_ = persisted_applied_index_ = static_cast<uint64_t>(*applied);
  published_revision_ = parts_->kv->revision();
  watches_ = std::make_unique<WatchHub>(this, options_.watch);
  return Status::OK();
}

void Engine::Prepare(WriteRequest* request) {
  auto* grant = std::get_if<LeaseGrantRequest>(request);
  if (grant == nullptr || grant->id != 0) return;
  // Random positive IDs, like etcd's, so IDs from different members and
  // restarts do not collide; the PRNG is seeded by the owner.
  do {
    grant->id = static_cast<int64_t>(rng_() >> 1);
  } while (grant->id == 0 || parts_->leases->Exists(grant->id));
}

Result<WriteResponse> Engine::Apply(const WriteRequest& request, uint64_t index) {
  if (Status s = MarkApplied(index); !s.ok()) return s;
  // The raised alarms' appliers (etcd's capped and corrupt): refused, the
  // entry changes nothing but the applied index, on every member alike.
  if (Status refused = AlarmRefusal(*parts_->alarms, request); !refused.ok()) return refused;
  Result<WriteResponse> response = ApplyOne(request);
  Status::Code code = response.ok() ? Status::Code::kOk : response.status().code();
  if (code == Status::Code::kIOError || code == Status::Code::kBusy ||
      code == Status::Code::kCorruption) {
    // The in-memory state may now be ahead of what can be made durable.
    failed_ = response.status();
    parts_->backend->RollbackBatch();
    return Stopped(failed_);
  }
  return response;
}

Status Engine::ApplyAuth(const AuthChange& change, uint64_t index) {
  Status s = MarkApplied(index);
  if (!s.ok()) return s;
  s = parts_->auth->Apply(change);
  const Status::Code code = s.code();
  if (code == Status::Code::kIOError || code == Status::Code::kBusy ||
      code == Status::Code::kCorruption) {
    failed_ = s;
    parts_->backend->RollbackBatch();
    return Stopped(failed_);
  }
  return s;
}

const AuthStore& Engine::auth() const { return *parts_->auth; }

Status Engine::ApplyAlarm(const AlarmChange& change, uint64_t index) {
  if (!failed_.ok()) return Stopped(failed_);
  // Refused before the batch opens: a bad change changes nothing, not even
  // the applied index's batch.
  if (Status bad = AlarmStore::Check(change); !bad.ok()) {
    if (index != 0) applied_index_ = index;
    return bad;
  }
  Status s = MarkApplied(index);
  if (!s.ok()) return s;
  s = parts_->alarms->Apply(change);
  if (!s.ok()) {
    // Only a storage error remains (Check passed).
    failed_ = s;
    parts_->backend->RollbackBatch();
    return Stopped(failed_);
  }
  return s;
}

const AlarmStore& Engine::alarms() const { return *parts_->alarms; }

Status Engine::MarkApplied(uint64_t index) {
  if (!failed_.ok()) return Stopped(failed_);
  Status s = OpenBatch();
  if (!s.ok()) {
    failed_ = s;
    return Stopped(s);
  }
  ++batch_entries_;
  if (index != 0) applied_index_ = index;
  return Status::OK();
}

Status Engine::OpenBatch() {
  NATCD_RETURN_IF_ERROR(parts_->backend->BeginBatch());
  if (batch_opened_ms_ < 0) batch_opened_ms_ = options_.clock->MonotonicMs();
  return Status::OK();
}

Result<WriteResponse> Engine::ApplyOne(const WriteRequest& request) {
  KvStore& kv = *parts_->kv;
  return std::visit(
      [&](const auto& r) -> Result<WriteResponse> {
        using T = std::decay_t<decltype(r)>;
        auto wrap = [](auto result) -> Result<WriteResponse> {
          if (!result.ok()) return result.status();
          return WriteResponse(std::move(result).value());
        };
        if constexpr (std::is_same_v<T, PutRequest>) {
          return wrap(kv.Put(r));
        } else if constexpr (std::is_same_v<T, DeleteRangeRequest>) {
          return wrap(kv.DeleteRange(r));
        } else if constexpr (std::is_same_v<T, TxnRequest>) {
          return wrap(kv.Txn(r));
        } else if constexpr (std::is_same_v<T, CompactionRequest>) {
          NATCD_RETURN_IF_ERROR(kv.Compact(r));
          CompactionResponse response;
          response.header.revision = kv.revision();
          return WriteResponse(response);
        } else if constexpr (std::is_same_v<T, LeaseGrantRequest>) {
          return wrap(ApplyLeaseGrant(r));
        } else if constexpr (std::is_same_v<T, LeaseRevokeRequest>) {
          return wrap(ApplyLeaseRevoke(r));
        } else if constexpr (std::is_same_v<T, LeaseExpireRequest>) {
          return wrap(ApplyLeaseExpire(r));
        } else {
          static_assert(std::is_same_v<T, LeaseCheckpointRequest>);
          return wrap(ApplyLeaseCheckpoint(r));
        }
      },
      request);
}

Result<LeaseGrantResponse> Engine::ApplyLeaseGrant(const LeaseGrantRequest& request) {
  if (request.id <= 0) {
    return Status::InvalidArgument("ErrLeaseID", "lease ID must be positive (Prepare fills 0)");
  }
  if (request.ttl > options_.lease_ttl_s_max) {
    return Status(Status::Code::kLeaseTTLTooLarge, "ErrLeaseTTLTooLarge",
                  "etcdserver: too large lease TTL");
  }
  if (parts_->leases->Exists(request.id)) return Status::LeaseExists(request.id);
  int64_t ttl = std::max(request.ttl, options_.lease_ttl_s_min);
  NATCD_RETURN_IF_ERROR(parts_->backend->PutLease(LeaseRow{request.id, ttl, 0}));
  parts_->leases->Add(request.id, ttl, 0);
  LeaseGrantResponse response;
  response.header.revision = parts_->kv->revision();
  response.id = request.id;
  response.ttl = ttl;
  return response;
}

Status Engine::RemoveLease(int64_t id) {
  NATCD_RETURN_IF_ERROR(parts_->kv->DeleteLeaseKeys(id));
  NATCD_RETURN_IF_ERROR(parts_->backend->DeleteLease(id));
  parts_->leases->Remove(id);
  return Status::OK();
}

Result<LeaseRevokeResponse> Engine::ApplyLeaseRevoke(const LeaseRevokeRequest& request) {
  if (!parts_->leases->Exists(request.id)) return Status::LeaseNotFound(request.id);
  NATCD_RETURN_IF_ERROR(RemoveLease(request.id));
  LeaseRevokeResponse response;
  response.header.revision = parts_->kv->revision();
  return response;
}

Result<LeaseExpireResponse> Engine::ApplyLeaseExpire(const LeaseExpireRequest& request) {
  LeaseExpireResponse response;
  for (int64_t id : request.ids) {
    if (!parts_->leases->Exists(id)) continue;  // revoked meanwhile
    NATCD_RETURN_IF_ERROR(RemoveLease(id));
    ++response.revoked;
  }
  response.header.revision = parts_->kv->revision();
  return response;
}

Result<LeaseCheckpointResponse> Engine::ApplyLeaseCheckpoint(
    const LeaseCheckpointRequest& request) {
  // Validate everything first: a request error changes nothing.
  // (Entries for leases that are gone are skipped, as at apply.)
  for (const auto& cp : request.checkpoints) {
    if (cp.remaining_ms < 0 && parts_->leases->Exists(cp.id)) {
      return Status::InvalidArgument("ErrLeaseCheckpoint", "negative remaining TTL");
    }
  }
  for (const auto& cp : request.checkpoints) {
    Lease* lease = parts_->leases->Find(cp.id);
    if (lease == nullptr) continue;
    NATCD_RETURN_IF_ERROR(
        parts_->backend->PutLease(LeaseRow{cp.id, lease->ttl_s, cp.remaining_ms}));
    parts_->leases->SetCheckpoint(cp.id, cp.remaining_ms);
  }
  LeaseCheckpointResponse response;
  response.header.revision = parts_->kv->revision();
  return response;
}

Result<std::unique_ptr<raft::DurableRaftStorage>> Engine::OpenRaftLog(
    raftlog::LogFs* fs, const std::string& log_dir, const raftlog::RaftLogOptions& log_options) {
  return raft::DurableRaftStorage::Open(parts_->backend.get(), fs, log_dir, log_options);
}

Status Engine::SetCommitsSynced(bool synced) { return parts_->backend->SetCommitsSynced(synced); }

Status Engine::SkipSyncOfNextCommit() { return parts_->backend->SkipSyncOfNextCommit(); }
Status Engine::EndSkipSync() { return parts_->backend->EndSkipSync(); }

Status Engine::Publish() {
  if (!failed_.ok()) return Stopped(failed_);
  KvStore& kv = *parts_->kv;
  const bool requests_due = !requests_by_expiry_.empty() &&
                            requests_by_expiry_.begin()->first <= options_.clock->RealtimeMs();
  if (kv.pending_rows() > 0 || requests_due) {
    Status s = OpenBatch();
    if (s.ok()) s = kv.DeletePendingRows(options_.compaction_rows_per_commit).status();
    if (s.ok()) s = ForgetExpiredRequests(kRequestsForgottenPerPublish);
    if (!s.ok()) {
      parts_->backend->RollbackBatch();
      kv.DropEvents();
      failed_ = s;
      return Stopped(s);
    }
  }
  published_revision_ = kv.revision();
  std::vector<Event> events = kv.TakeEvents();
  if (!events.empty()) {
    auto batch = std::make_shared<const std::vector<Event>>(std::move(events));
    if (options_.retain_committed_events) committed_events_.push_back(batch);
    watches_->Notify(std::move(batch), published_revision_);
  }
  return Status::OK();
}

bool Engine::batch_open() const { return parts_->backend->in_batch(); }

bool Engine::CommitDue() const {
  if (!failed_.ok() || !batch_open()) return false;
  return batch_opened_ms_ < 0 || batch_entries_ >= options_.batch_limit ||
         options_.clock->MonotonicMs() - batch_opened_ms_ >= options_.batch_interval_ms;
}

Status Engine::Commit() {
  NATCD_RETURN_IF_ERROR(Publish());
  SqliteBackend& backend = *parts_->backend;
  if (!backend.in_batch()) return Status::OK();
  // The applied index is written only when it moved (a single member's
  // stays 0); the revision is not stored at all (KvStore::Load derives it).
  Status s;
  if (applied_index_ != persisted_applied_index_) {
    s = backend.SetMeta(SqliteBackend::kMetaAppliedIndex, static_cast<int64_t>(applied_index_));
  }
  if (s.ok()) s = backend.CommitBatch();
  if (!s.ok()) {
    backend.RollbackBatch();
    failed_ = s;
    return Stopped(s);
  }
  persisted_applied_index_ = applied_index_;
  batch_opened_ms_ = -1;
  batch_entries_ = 0;
  return Status::OK();
}

Status Engine::RememberRequest(const std::string& id, int64_t expires_at_ms, std::string outcome) {
  if (!failed_.ok()) return Stopped(failed_);
  Status s = OpenBatch();
  if (s.ok()) s = parts_->backend->PutRequest(RequestRow{id, expires_at_ms, outcome});
  if (!s.ok()) {
    failed_ = s;
    parts_->backend->RollbackBatch();
    return Stopped(s);
  }
  auto it = requests_.find(id);
  if (it != requests_.end()) requests_by_expiry_.erase({it->second.expires_at_ms, id});
  requests_by_expiry_.insert({expires_at_ms, id});
  requests_[id] = Remembered{expires_at_ms, std::move(outcome)};
  return Status::OK();
}

const std::string* Engine::FindRequest(const std::string& id) {
  auto it = requests_.find(id);
  if (it == requests_.end() || it->second.expires_at_ms <= options_.clock->RealtimeMs()) {
    return nullptr;
  }
  return &it->second.outcome;
}

Status Engine::ForgetExpiredRequests(size_t max) {
  int64_t now = options_.clock->RealtimeMs();
  for (size_t n = 0; n < max && !requests_by_expiry_.empty(); ++n) {
    auto first = requests_by_expiry_.begin();
    if (first->first > now) break;
    NATCD_RETURN_IF_ERROR(parts_->backend->DeleteRequest(first->second));
    requests_.erase(first->second);
    requests_by_expiry_.erase(first);
  }
  return Status::OK();
}

template <typename Resp>
Result<Resp> Engine::ApplyAs(WriteRequest request) {
  Prepare(&request);
  Result<WriteResponse> response = Apply(request);
  if (!response.ok()) return response.status();
  return std::get<Resp>(std::move(response).value());
}

Result<PutResponse> Engine::Put(const PutRequest& r) { return ApplyAs<PutResponse>(r); }
Result<DeleteRangeResponse> Engine::DeleteRange(const DeleteRangeRequest& r) {
  return ApplyAs<DeleteRangeResponse>(r);
}
Result<TxnResponse> Engine::Txn(const TxnRequest& r) { return ApplyAs<TxnResponse>(r); }
Result<CompactionResponse> Engine::Compact(const CompactionRequest& r) {
  return ApplyAs<CompactionResponse>(r);
}
Result<LeaseGrantResponse> Engine::LeaseGrant(const LeaseGrantRequest& r) {
  return ApplyAs<LeaseGrantResponse>(r);
}
Result<LeaseRevokeResponse> Engine::LeaseRevoke(const LeaseRevokeRequest& r) {
  return ApplyAs<LeaseRevokeResponse>(r);
}

Result<RangeResponse> Engine::Range(const RangeRequest& request) {
  if (!failed_.ok()) return Stopped(failed_);
  return parts_->kv->Range(request);
}

LeaseKeepAliveResponse Engine::LeaseKeepAlive(const LeaseKeepAliveRequest& request) {
  LeaseKeepAliveResponse response;
  response.header.revision = parts_->kv->revision();
  response.id = request.id;
  response.ttl = parts_->leases->KeepAlive(request.id);
  return response;
}

LeaseTimeToLiveResponse Engine::LeaseTimeToLive(const LeaseTimeToLiveRequest& request) {
  LeaseTimeToLiveResponse response;
  response.header.revision = parts_->kv->revision();
  response.id = request.id;
  Lease* lease = parts_->leases->Find(request.id);
  if (lease == nullptr) return response;  // ttl -1: etcd's answer for a missing lease
  int64_t remaining_ms = parts_->leases->RemainingMs(request.id);
  // etcd rounds the remaining time down to whole seconds.
  response.ttl = remaining_ms / 1000;
  response.granted_ttl = lease->ttl_s;
  if (request.keys) response.keys.assign(lease->keys.begin(), lease->keys.end());
  return response;
}

LeaseLeasesResponse Engine::LeaseLeases() {
  LeaseLeasesResponse response;
  response.header.revision = parts_->kv->revision();
  response.ids = parts_->leases->Ids();
  return response;
}

void Engine::PromoteLeases(int64_t extend_ms) { parts_->leases->Promote(extend_ms); }
void Engine::DemoteLeases() { parts_->leases->Demote(); }

std::optional<LeaseExpireRequest> Engine::ExpiredLeases(size_t max) {
  std::vector<int64_t> ids = parts_->leases->Expired(max, options_.lease_expire_retry_ms);
  if (ids.empty()) return std::nullopt;
  return LeaseExpireRequest{std::move(ids)};
}

std::optional<LeaseCheckpointRequest> Engine::LeaseCheckpoints(bool scan_all) {
  std::vector<LeaseManager::Checkpoint> due = parts_->leases->Checkpoints(scan_all);
  if (due.empty()) return std::nullopt;
  LeaseCheckpointRequest request;
  for (const auto& cp : due) request.checkpoints.push_back({cp.id, cp.remaining_ms});
  return request;
}

void Engine::LeaseCheckpointsDropped(const LeaseCheckpointRequest& request) {
  std::vector<int64_t> ids;
  ids.reserve(request.checkpoints.size());
  for (const auto& cp : request.checkpoints) ids.push_back(cp.id);
  parts_->leases->CheckpointsDropped(ids);
}

bool Engine::LeaseRenewalRecorded(int64_t id, int64_t renewed_at_ms) const {
  return parts_->leases->RenewalRecorded(id, renewed_at_ms);
}

int64_t Engine::CompactRevision() const { return parts_->kv->compact_revision(); }

Status Engine::ReadEvents(const std::string& key, const std::string& range_end,
                          int64_t from_revision, int64_t to_revision, size_t max_events,
                          bool with_prev_kv, std::vector<Event>* out) {
  if (!failed_.ok()) return Stopped(failed_);
  // Only published history: the hub learns of a write from Publish, after
  // its entry is durable in the Raft log and applied whole.
  return parts_->kv->ReadEvents(key, range_end, from_revision,
                                std::min(to_revision, published_revision_), max_events,
                                with_prev_kv, out);
}

int64_t Engine::revision() const { return parts_->kv->revision(); }
size_t Engine::key_count() const { return parts_->kv->key_count(); }
size_t Engine::lease_count() const { return parts_->leases->size(); }
size_t Engine::compaction_rows_pending() const { return parts_->kv->pending_rows(); }
Result<int64_t> Engine::DatabaseSizeBytes() { return parts_->backend->SizeBytes(); }
Result<int64_t> Engine::DatabaseSizeInUseBytes() { return parts_->backend->SizeInUseBytes(); }

Result<HashKVResponse> Engine::HashKV(const HashKVRequest& request) {
  if (!failed_.ok()) return Stopped(failed_);
  return parts_->kv->HashKV(request.revision);
}

Result<HashResponse> Engine::Hash() {
  if (!failed_.ok()) return Stopped(failed_);
  return parts_->kv->Hash();
}

Result<DefragmentResponse> Engine::Defragment() {
  if (!failed_.ok()) return Stopped(failed_);
  SqliteBackend& backend = *parts_->backend;
  KvStore& kv = *parts_->kv;
  if (kv.pending_rows() > 0) {
    // Otherwise their pages stay in use until Publishes remove them, and
    // the defragmented file would not shrink.
    Status s = OpenBatch();
    if (s.ok()) s = kv.DeletePendingRows(SIZE_MAX).status();
    if (!s.ok()) {
      failed_ = s;
      backend.RollbackBatch();
      kv.DropEvents();
      return Stopped(s);
    }
  }
  NATCD_RETURN_IF_ERROR(Commit());
  NATCD_RETURN_IF_ERROR(backend.Vacuum());
  DefragmentResponse response;
  response.header.revision = kv.revision();
  return response;
}

}  // namespace natcd
