// A naive in-memory model of the Engine's replicated state, written from
// etcd's documented semantics (mvcc, apply.go, v3rpc/key.go, lessor.go) and
// engine.h, not from the engine's code: it keeps the complete key set of
// every revision and answers each read by scanning, filtering, sorting and
// cutting that set. Slow and obviously right is the point.
//
// Used by the model-based property test (model_test.cc) and by the storage
// fault-injection test, which compares what survives a reopen against it.
//
// Thread safety: none.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "natcd/clock.h"
#include "natcd/engine.h"
#include "natcd/status.h"
#include "natcd/types.h"

namespace natcd::testing {

// Printable forms, so that a mismatch reads as a diff of two lines.
std::string Bytes(const std::string& s);
std::string Str(const KeyValue& kv);
std::string Str(const Event& e);
std::string Str(const std::vector<Event>& events);
std::string Str(const RangeResponse& r);
std::string Str(const PutResponse& r);
std::string Str(const DeleteRangeResponse& r);
std::string Str(const TxnResponse& r);
std::string Str(const ResponseOp& op);
std::string Str(const WriteResponse& r);
std::string Str(const Status& s);
std::string Str(const RangeRequest& r);
std::string Str(const PutRequest& r);
std::string Str(const DeleteRangeRequest& r);
std::string Str(const Compare& c);
std::string Str(const TxnRequest& r);
std::string Str(const RequestOp& op);
std::string Str(const WriteRequest& r);
template <typename T>
std::string Str(const Result<T>& r) {
  return r.ok() ? Str(r.value()) : Str(r.status());
}

using KvMap = std::map<std::string, KeyValue>;

struct ModelLease {
  int64_t ttl_s = 0;
  int64_t remaining_ms = 0;  // checkpointed remaining TTL; 0: none
  int64_t deadline_ms = 0;   // the engine is always the primary here
  // When the replicated state (grant or last checkpoint) says it ends.
  int64_t replicated_deadline_ms = 0;
  bool renewed = false;   // kept alive since the last Checkpoints()
  bool expiring = false;  // offered by ExpiredLeases, revoke not applied
  // Checkpointed at its next renewal whatever the lag (since a reopen,
  // which promotes: lease_manager.h).
  bool checkpoint_due = false;
  // A checkpoint offered by Checkpoints() not applied (or dropped) yet:
  // the deadline it records (offer time + remaining) and its remaining TTL.
  int64_t in_flight_ms = 0;
  int64_t in_flight_remaining_ms = 0;
};

// Engine settings the model must know.
struct ModelLimits {
  int64_t max_txn_ops = 128;
  int64_t lease_ttl_s_min = 2;
  int64_t lease_ttl_s_max = 9'000'000'000;
  int64_t lease_expire_retry_ms = 3'000;
};

class Model {
 public:
  explicit Model(Clock* clock, ModelLimits limits = {});

  // ---- the replicated state machine ----
  // Applies one entry as the engine must (requests must have been through
  // Engine::Prepare). index as in Engine::Apply.
  Result<WriteResponse> Apply(const WriteRequest& request, uint64_t index = 0);
  // Everything applied so far is now durable.
  void Commit();
  // The engine was closed and opened again: what was not committed is gone,
  // and PromoteLeases(0) gave every lease now + (checkpoint or TTL).
  void Reopen();

  // ---- reads ----
  Result<RangeResponse> Range(const RangeRequest& request) const;
  // As EventSource::ReadEvents on the engine (committed history only).
  Status ReadEvents(const std::string& key, const std::string& range_end, int64_t from_revision,
                    int64_t to_revision, size_t max_events, bool with_prev_kv,
                    std::vector<Event>* out) const;
  // The leases past their deadline, earliest first (a naive scan); marks
  // them as Engine::ExpiredLeases does.
  std::vector<int64_t> Expired();
  int64_t KeepAlive(int64_t id);
  LeaseTimeToLiveResponse TimeToLive(const LeaseTimeToLiveRequest& request) const;
  std::vector<int64_t> LeaseIds() const;
  // What Engine::LeaseCheckpoints must propose (lease_manager.h's rule).
  std::vector<LeaseCheckpointRequest::Checkpoint> Checkpoints(bool scan_all);
  // Engine::LeaseCheckpointsDropped: those leases' checkpoints never applied.
  void CheckpointsDropped(const LeaseCheckpointRequest& request);
  // Engine::LeaseRenewalRecorded.
  bool RenewalRecorded(int64_t id, int64_t renewed_at_ms) const;

  const ModelLimits& limits() const { return limits_; }
  int64_t revision() const { return revision_; }
  int64_t committed_revision() const { return committed_.revision; }
  int64_t compact_revision() const { return compact_; }
  uint64_t applied_index() const { return index_; }
  const KvMap& Head() const { return history_.at(revision_); }
  const KvMap& At(int64_t revision) const { return history_.at(revision); }
  const std::map<int64_t, ModelLease>& leases() const { return leases_; }
  // The events of each revision, with prev_kv always set when there was one.
  const std::map<int64_t, std::vector<Event>>& events() const { return events_; }

  // etcd's checkIntervals (v3rpc/key.go) over a txn: false for
  // ErrDuplicateKey. Exposed so generators can steer away from it.
  static bool NoDuplicateKeys(const TxnRequest& txn);

 private:
  // One write request in progress: the key set it builds and the events of
  // its revision (revision_ + 1).
  struct Pending {
    KvMap state;
    std::vector<Event> events;
  };
  struct Durable {
    int64_t revision = kEmptyStoreRevision;
    int64_t compact = 0;
    uint64_t index = 0;
    std::map<int64_t, ModelLease> leases;
  };

  Result<RangeResponse> RangeIn(const RangeRequest& request, const KvMap& working,
                                int64_t header_revision) const;
  Status CheckPut(const PutRequest& request) const;
  void PutKey(Pending* p, const PutRequest& request, PutResponse* response) const;
  void DeleteKeys(Pending* p, const std::string& key, const std::string& range_end, bool prev_kv,
                  DeleteRangeResponse* response) const;
  // Ends a write request: a new revision when it wrote anything.
  void Finish(Pending&& p);
  bool CompareHolds(const Compare& c) const;
  Result<TxnResponse> Txn(const TxnRequest& request);
  Status RemoveLease(int64_t id);

  Clock* clock_;
  ModelLimits limits_;
  int64_t revision_ = kEmptyStoreRevision;
  int64_t compact_ = 0;
  uint64_t index_ = 0;
  std::map<int64_t, KvMap> history_;  // revision -> every live key after it
  std::map<int64_t, std::vector<Event>> events_;
  std::map<int64_t, ModelLease> leases_;
  Durable committed_;
};

}  // namespace natcd::testing
