// Engine: natcd's replicated state machine. It owns the MVCC store, the
// lease table, the watch hub and the SQLite database under them.
//
// Two kinds of calls:
//  - Writes (WriteRequest) are entries of the replicated log. Apply() applies
//    one deterministically: the same entries in the same order give the same
//    revisions, keys, leases and responses on every member. Errors that come
//    from the request (ErrLeaseNotFound, ErrDuplicateKey...) are part of that
//    determinism and change nothing. Server-chosen values (a lease ID) are
//    filled in by Prepare() before an entry is proposed, never during apply.
//  - Everything else is member-local: reads, lease keepalives and expiry
//    decisions (leader only), watches.
//
// Batches. Apply() writes into one open SQLite transaction, the batch.
// Publish(), once per Raft Ready, hands the events of what was applied since
// the last call to the watch hub: an answer waits for that (and for the
// entry to be durable in the Raft log), never for SQLite. Commit() commits
// the batch, the applied index in the same transaction as the rows it
// produced; a member commits when CommitDue() (the batch has been open
// EngineOptions::batch_interval_ms or holds batch_limit applied entries:
// etcd's backend batch) and whenever the database must be whole on disk
// (log compaction, a copy taken on another connection, defragmentation,
// shutdown). A crash loses the open batch, and a restart applies its
// entries again from the log (AlreadyApplied says where the database
// ends). Without a Raft log (an engine alone), acknowledge a write only
// after the Commit that follows its Apply returned OK. If a Commit fails
// (a disk error), the engine refuses all further calls with that error:
// the owner must close it and open it again, which rebuilds the state from
// what is durable.
//
// Thread safety: none. One thread (the node's engine loop) owns the engine.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "natcd/alarm.h"
#include "natcd/auth.h"
#include "natcd/clock.h"
#include "natcd/status.h"
#include "natcd/types.h"
#include "natcd/watch_hub.h"

namespace natcd {

class AlarmStore;
class AuthStore;
class SqliteBackend;
namespace raft {
class DurableRaftStorage;
}
namespace raftlog {
class LogFs;
struct RaftLogOptions;
}  // namespace raftlog

struct LeaseExpireResponse {
  ResponseHeader header;
  int64_t revoked = 0;  // leases that still existed and are now gone
};

struct LeaseCheckpointResponse {
  ResponseHeader header;
};

using WriteRequest =
    std::variant<PutRequest, DeleteRangeRequest, TxnRequest, CompactionRequest, LeaseGrantRequest,
                 LeaseRevokeRequest, LeaseExpireRequest, LeaseCheckpointRequest>;
using WriteResponse = std::variant<PutResponse, DeleteRangeResponse, TxnResponse,
                                   CompactionResponse, LeaseGrantResponse, LeaseRevokeResponse,
                                   LeaseExpireResponse, LeaseCheckpointResponse>;

struct EngineOptions {
  std::string db_path;     // the SQLite file; created if missing
  bool sync = true;        // fsync each commit; false only in tests and benchmarks
  Clock* clock = nullptr;  // required; leases expire on it
  uint64_t seed = 0;       // for server-chosen lease IDs
  int64_t max_txn_ops = 128;
  // The most memory the current values of keys may take (kept for reads
  // at the head and for prev_kv; others are read from SQLite).
  size_t value_cache_bytes = 64 << 20;
  // Leases: TTLs below the minimum are raised to it (etcd: ceil(1.5 x
  // election timeout) = 2 s by default); above the maximum is an error.
  int64_t lease_ttl_s_min = 2;
  int64_t lease_ttl_s_max = 9'000'000'000;
  // A lease offered for expiry whose revoke did not apply is offered again
  // after this long.
  int64_t lease_expire_retry_ms = 3'000;
  // Rows dropped by compaction removed per Publish, so that compaction never
  // stalls writes.
  size_t compaction_rows_per_commit = 1'000;
  // When the open batch is due for Commit: open this long, or holding this
  // many applied entries (etcd's --backend-batch-interval 100ms and
  // --backend-batch-limit 10000).
  int64_t batch_interval_ms = 100;
  size_t batch_limit = 10'000;
  // Keep each Publish's events for TakeCommittedEvents.
  bool retain_committed_events = false;
  WatchHubOptions watch;
};

class Engine final : public EventSource {
 public:
  static Result<std::unique_ptr<Engine>> Open(const EngineOptions& options);
  ~Engine() override;
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // ---- the replicated state machine ----

  // Fills in what the server chooses before an entry is proposed: the ID of a
  // LeaseGrant that asked for 0.
  void Prepare(WriteRequest* request);
  // Whether the log entry at index (> 0) is already in the state: Raft hands
  // back entries from its snapshot on, and the database (shipped whole to a
  // member that needed a snapshot) may be further along. Such an entry must
  // not be applied again.
  bool AlreadyApplied(uint64_t index) const { return index != 0 && index <= applied_index_; }
  // Applies one entry. index is the log index (0 outside Raft); it is stored
  // with the next Commit so a restarted member knows where to resume. With
  // an alarm raised, what it refuses (core/alarm/capped_apply.h:
  // ErrCorrupt, ErrNoSpace) changes nothing.
  Result<WriteResponse> Apply(const WriteRequest& request, uint64_t index = 0);
  // Applies one replicated auth change (a log entry, index as Apply's): in
  // the same batch as the writes, so it is durable with its applied index.
  // etcd's error for a change its rules refuse (core/auth/auth_store.h),
  // which changes nothing.
  Status ApplyAuth(const AuthChange& change, uint64_t index = 0);
  // The auth state as applied (member-local reads: permission checks,
  // UserGet, AuthStatus, ...).
  const AuthStore& auth() const;
  // Applies one replicated alarm change (a log entry, index as Apply's), in
  // the same batch as the writes. InvalidArgument (nothing changes) for an
  // action or alarm AlarmStore refuses.
  Status ApplyAlarm(const AlarmChange& change, uint64_t index = 0);
  // The alarm set as applied (core/alarm/alarm_store.h).
  const AlarmStore& alarms() const;
  // Opens the batch and records the log entry at index (0: none) as
  // applied: what every Apply* does first, and all an entry that changes
  // nothing of the engine's needs (a member's peer URLs, in the Raft
  // storage's rows), so that its rows and its applied index are durable
  // together and a restart does not apply it again.
  Status MarkApplied(uint64_t index);

  // Hands the events of every write applied since the last Publish to the
  // watch hub (CurrentRevision becomes revision()), and removes a bounded
  // number of rows dropped by compaction and of expired request ids, in the
  // open batch. Commits nothing.
  Status Publish();
  // Whether the open batch is due for Commit: open batch_interval_ms on the
  // clock, or holding batch_limit applied entries (a batch opened by the
  // Raft storage alone is due at once).
  bool CommitDue() const;
  // Whether a batch is open (writes not committed yet).
  bool batch_open() const;
  // Publish, then commit the open batch (no fsync when commits are not
  // synced: see SetCommitsSynced) with the applied index.
  Status Commit();

  // Idempotent retries. RememberRequest records, in the open batch (so it is
  // durable exactly when the write it answers is), the outcome of the write
  // just applied for a request that carried `id`; the outcome is opaque
  // bytes chosen by the caller. FindRequest returns it while the wall clock
  // is before expires_at_ms, else null. Expired records are removed, a
  // bounded number per Publish.
  Status RememberRequest(const std::string& id, int64_t expires_at_ms, std::string outcome);
  const std::string* FindRequest(const std::string& id);
  size_t remembered_requests() const { return requests_.size(); }

  // Typed conveniences over Prepare + Apply (they do not Commit).
  Result<PutResponse> Put(const PutRequest& request);
  Result<DeleteRangeResponse> DeleteRange(const DeleteRangeRequest& request);
  Result<TxnResponse> Txn(const TxnRequest& request);
  Result<CompactionResponse> Compact(const CompactionRequest& request);
  Result<LeaseGrantResponse> LeaseGrant(const LeaseGrantRequest& request);
  Result<LeaseRevokeResponse> LeaseRevoke(const LeaseRevokeRequest& request);

  // ---- member-local ----

  // Reads the applied state (including writes not yet committed: on a
  // member, their entries are durable in the Raft log).
  Result<RangeResponse> Range(const RangeRequest& request);
  LeaseKeepAliveResponse LeaseKeepAlive(const LeaseKeepAliveRequest& request);
  LeaseTimeToLiveResponse LeaseTimeToLive(const LeaseTimeToLiveRequest& request);
  LeaseLeasesResponse LeaseLeases();

  // This member now decides lease expiry (it became leader, or it is the
  // only member): every lease gets its replicated deadline (on this
  // member's clock: the grant or last checkpoint applied here, plus the TTL
  // it recorded) + extend_ms. The caller includes in extend_ms the time no
  // leader was reachable (holders could not renew) and the grace a new
  // leader gives; see core/lease/lease_manager.h.
  void PromoteLeases(int64_t extend_ms);
  void DemoteLeases();
  // The leases past their deadline (at most max), as one entry to propose;
  // nullopt when none is due. 100,000 leases due together are one entry.
  std::optional<LeaseExpireRequest> ExpiredLeases(size_t max = 100'000);
  // Remaining TTLs to propose, so that a new leader starts each lease from
  // a replicated deadline close to the one its holder earned (renewed
  // leases that ran more than half a TTL ahead of it), and, with scan_all,
  // so that a restart does not give an abandoned lease its full TTL again
  // (leases below half their TTL with a stale checkpoint). See
  // core/lease/lease_manager.h.
  std::optional<LeaseCheckpointRequest> LeaseCheckpoints(bool scan_all);
  // Raft refused the proposal of these checkpoints: offered again when
  // still needed (each lease has at most one in flight).
  void LeaseCheckpointsDropped(const LeaseCheckpointRequest& request);
  // Whether a keepalive that renewed lease `id` at renewed_at_ms (this
  // member's monotonic clock) may be answered: a new leader would give the
  // lease at least what it earned less half a TTL. A renewal that ran more
  // than half a TTL past the replicated deadline (or the lease's first on
  // this leader) needs its checkpoint (LeaseCheckpoints) applied first.
  // True for a lease that is gone; false unless this member decides expiry.
  bool LeaseRenewalRecorded(int64_t id, int64_t renewed_at_ms) const;

  WatchHub& watches() { return *watches_; }

  // The events of every Publish since the last call, oldest first (only when
  // EngineOptions::retain_committed_events; the node publishes them).
  std::vector<std::shared_ptr<const std::vector<Event>>> TakeCommittedEvents() {
    return std::exchange(committed_events_, {});
  }

  // ---- EventSource (for the watch hub) ----
  // The revision of the last Publish.
  int64_t CurrentRevision() const override { return published_revision_; }
  int64_t CompactRevision() const override;
  Status ReadEvents(const std::string& key, const std::string& range_end, int64_t from_revision,
                    int64_t to_revision, size_t max_events, bool with_prev_kv,
                    std::vector<Event>* out) override;

  // The revision including applied but unpublished writes.
  int64_t revision() const;
  uint64_t applied_index() const { return applied_index_; }
  size_t key_count() const;
  size_t lease_count() const;
  // The member's Raft storage: the log and hard state in the log file in
  // log_dir, the rest of its Raft state in the engine's database
  // (raft/durable_raft_storage.h). Close it before the engine. No batch may
  // be open.
  Result<std::unique_ptr<raft::DurableRaftStorage>> OpenRaftLog(
      raftlog::LogFs* fs, const std::string& log_dir, const raftlog::RaftLogOptions& log_options);
  // Whether Commit fsyncs (the default). A member whose Raft log is durable
  // in its own file commits without (false): after a power loss the
  // database is a prefix of its commits, applied index included, and the
  // log replays the rest (core/storage/sqlite_backend.h). Between Commits.
  Status SetCommitsSynced(bool synced);
  // The next Commit skips its fsync: for a batch that only applies entries
  // already durable in the log (a crash applies them again). EndSkipSync
  // undoes it if no Commit came (core/storage/sqlite_backend.h).
  Status SkipSyncOfNextCommit();
  Status EndSkipSync();
  // Rows dropped by compaction not yet removed from SQLite.
  size_t compaction_rows_pending() const;
  Result<int64_t> DatabaseSizeBytes();
  // The bytes of the file in use (not on SQLite's freelist).
  Result<int64_t> DatabaseSizeInUseBytes();

  // ---- maintenance (member-local) ----

  // etcd's HashKV over the applied state: ErrCompacted below the compact
  // revision, ErrFutureRev past the current one (see KvStore::HashKV and
  // core/mvcc/revision_hash.h for what is hashed and how). Reads every row
  // up to the revision: it takes as long as a scan of the database.
  Result<HashKVResponse> HashKV(const HashKVRequest& request);
  // etcd's Hash (testing only): the kv and lease tables as stored.
  Result<HashResponse> Hash();
  // etcd's Defragment: commits the open batch, removes at once every row
  // compaction dropped (otherwise removed a bounded number per Publish),
  // then rewrites the database without its free pages (VACUUM) so that the
  // file shrinks. The caller's thread is blocked meanwhile, about as long
  // as it takes to copy the live data twice: 100,000 writes of 1 KiB over
  // 10,000 keys, compacted to the last write of each (a 468 MB file, 47 MB
  // in use), took 0.49 s and left a 46 MB file (without fsync, on a shared
  // 2-core machine; DefragmentTest.DISABLED_PauseOn100kKeysOf1KiB). A
  // failed VACUUM changes nothing and does not stop the engine. On the
  // member thread this pauses Raft too (docs/PROTOCOL.md, maint.defrag).
  Result<DefragmentResponse> Defragment();
  // OK, or the error that stopped the engine.
  const Status& health() const { return failed_; }

 private:
  struct Parts;
  explicit Engine(const EngineOptions& options);
  Status Load();
  Result<WriteResponse> ApplyOne(const WriteRequest& request);
  Result<LeaseGrantResponse> ApplyLeaseGrant(const LeaseGrantRequest& request);
  Result<LeaseRevokeResponse> ApplyLeaseRevoke(const LeaseRevokeRequest& request);
  Result<LeaseExpireResponse> ApplyLeaseExpire(const LeaseExpireRequest& request);
  Result<LeaseCheckpointResponse> ApplyLeaseCheckpoint(const LeaseCheckpointRequest& request);
  Status RemoveLease(int64_t id);
  Status ForgetExpiredRequests(size_t max);
  Status OpenBatch();
  template <typename Resp>
  Result<Resp> ApplyAs(WriteRequest request);

  EngineOptions options_;
  std::unique_ptr<Parts> parts_;
  std::unique_ptr<WatchHub> watches_;
  std::mt19937_64 rng_;
  int64_t published_revision_ = 0;
  uint64_t applied_index_ = 0;
  // The open batch: when it opened (-1: not through the engine) and how
  // many entries it applied.
  int64_t batch_opened_ms_ = -1;
  size_t batch_entries_ = 0;
  // The applied index the meta table holds.
  uint64_t persisted_applied_index_ = 0;
  Status failed_;
  struct Remembered {
    int64_t expires_at_ms;
    std::string outcome;
  };
  std::unordered_map<std::string, Remembered> requests_;
  std::vector<std::shared_ptr<const std::vector<Event>>> committed_events_;
  // (expires_at_ms, id) of every remembered request, for pruning.
  std::set<std::pair<int64_t, std::string>> requests_by_expiry_;
};

}  // namespace natcd
