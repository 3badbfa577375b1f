// MemberMetrics: the metrics of one natcd member, registered on a Registry
// by name, help text, type and buckets exactly as etcd 3.5 defines them
// (server/etcdserver/metrics.go, server/mvcc/metrics.go, server/wal/
// metrics.go, server/mvcc/backend/metrics.go, server/lease/metrics.go), so
// etcd's Grafana dashboards and alerts work on natcd unchanged; plus
// natcd's own, named natcd_*.
//
// Each field says what it counts and who records it where. A metric that
// etcd types as a gauge although its name ends in _total
// (proposals_committed_total, wal_write_bytes_total) stays a gauge here:
// dashboards query it by name and type.
//
// Thread safety: as Registry. Construct once (it registers every name, so a
// registry holds at most one MemberMetrics); record from any thread.
#pragma once

#include <cstdint>
#include <string_view>

#include "metrics/registry.h"

namespace natcd::metrics {

struct MemberMetrics {
  // Registers every metric on `registry`, and etcd_server_version{
  // server_version=<version>} 1.
  MemberMetrics(Registry& registry, std::string_view version);
  MemberMetrics(const MemberMetrics&) = delete;
  MemberMetrics& operator=(const MemberMetrics&) = delete;

  // etcd_server_id{server_id="<member ID in lowercase hex>"} 1 (etcd's
  // types.ID.String()). Call once the ID is known.
  void SetServerId(uint64_t member_id);

  // --- etcd_server_* (server/etcdserver/metrics.go) ---------------------
  Gauge& has_leader;                  // 1 while this member knows a leader, else 0
  Gauge& is_leader;                   // 1 while this member leads, else 0
  Counter& leader_changes;            // each time the known leader changes (to a new one)
  Gauge& proposals_committed;         // set to Raft's commit index
  Gauge& proposals_applied;           // set to the applied index
  Gauge& proposals_pending;           // Inc on propose, Dec when applied or failed
  Counter& proposals_failed;          // a proposal dropped or timed out
  Counter& slow_apply;                // an apply longer than etcd's 100 ms warning
  Counter& heartbeat_send_failures;   // the leader could not send a heartbeat
  Counter& slow_read_indexes;         // a read index not in sync with the leader's, or late
  Counter& read_indexes_failed;       // a read index request failed
  Counter& lease_expired;             // etcd_debugging_server_lease_expired_total
  Gauge& quota_backend_bytes;         // --quota-backend-bytes, set at start
  Gauge& snapshot_apply_in_progress;  // 1 while a received snapshot is applied
  Family<Gauge>& server_version;      // {server_version}: set by the constructor
  Family<Gauge>& server_id;           // {server_id}: SetServerId
  // etcd_server_health_success / _failures (etcdhttp): each /health,
  // /readyz or /livez answer, counted by the metrics listener.
  Counter& health_success;
  Counter& health_failures;

  // --- etcd_mvcc_* and etcd_debugging_mvcc_* (server/mvcc/metrics.go) --
  Counter& range_total;               // etcd_mvcc_range_total: each range served
  Counter& put_total;                 // etcd_mvcc_put_total: each put applied
  Counter& delete_total;              // etcd_mvcc_delete_total: each delete range applied
  Counter& txn_total;                 // etcd_mvcc_txn_total: each txn applied
  Gauge& db_total_size;               // etcd_mvcc_db_total_size_in_bytes: the database file
  Gauge& db_total_size_in_use;        // etcd_mvcc_db_total_size_in_use_in_bytes: pages in use
  Gauge& keys_total;                  // etcd_debugging_mvcc_keys_total: live keys
  Gauge& watch_stream_total;          // etcd_debugging_mvcc_watch_stream_total: watch streams
  Gauge& watcher_total;               // etcd_debugging_mvcc_watcher_total: watches
  Gauge& slow_watcher_total;          // etcd_debugging_mvcc_slow_watcher_total: unsynced watches
  Counter& events_total;              // etcd_debugging_mvcc_events_total: events sent to watches
  Gauge& pending_events_total;        // etcd_debugging_mvcc_pending_events_total: queued
  Gauge& current_revision;            // etcd_debugging_mvcc_current_revision
  Gauge& compact_revision;            // etcd_debugging_mvcc_compact_revision
  Counter& db_compaction_keys;        // etcd_debugging_mvcc_db_compaction_keys_total
  Histogram& db_compaction_pause_ms;  // ..._db_compaction_pause_duration_milliseconds
  Histogram& db_compaction_total_ms;  // ..._db_compaction_total_duration_milliseconds
  Gauge& total_put_size;              // etcd_debugging_mvcc_total_put_size_in_bytes
  Histogram& hash_seconds;            // etcd_mvcc_hash_duration_seconds
  Histogram& hash_rev_seconds;        // etcd_mvcc_hash_rev_duration_seconds

  // --- etcd_disk_* (server/wal/metrics.go, server/mvcc/backend/metrics.go)
  Histogram& wal_fsync_seconds;         // etcd_disk_wal_fsync_duration_seconds
  Gauge& wal_write_bytes;               // etcd_disk_wal_write_bytes_total (a gauge in etcd)
  Histogram& backend_commit_seconds;    // etcd_disk_backend_commit_duration_seconds
  Histogram& backend_defrag_seconds;    // etcd_disk_backend_defrag_duration_seconds
  Histogram& backend_snapshot_seconds;  // etcd_disk_backend_snapshot_duration_seconds
  Gauge& defrag_inflight;               // etcd_disk_defrag_inflight

  // --- etcd_debugging_lease_* (server/lease/metrics.go) ------------------
  Counter& lease_granted;        // each grant applied
  Counter& lease_revoked;        // each revoke applied (expiry included)
  Counter& lease_renewed;        // each keepalive the leader renews
  Histogram& lease_ttl_seconds;  // etcd_debugging_lease_ttl_total: TTL of each grant

  // --- natcd's own --------------------------------------------------------
  Gauge& nats_connected;        // natcd_nats_connected: 1 while the NATS connection is up (daemon)
  Counter& nats_reconnects;     // natcd_nats_reconnects_total (daemon, reconnected callback)
  Counter& forwarded_requests;  // natcd_forwarded_requests_total: handed to the leader
  Counter& watch_slow_consumer_cancels;  // natcd_watch_slow_consumer_cancels_total
  Counter& events_published;             // natcd_events_published_total: on P.ev.*
  // Watch groups (set by the NATS front end after each delivery round):
  // etcd's watcher_total counts hub watchers, and a group's members have
  // none of their own.
  Gauge& watch_groups;         // natcd_watch_groups
  Gauge& watch_group_members;  // natcd_watch_group_members
  // natcd_request_duration_seconds{endpoint}: from a request's arrival to
  // its reply, by wire endpoint ("kv.put", "kv.range"...). Resolve each
  // endpoint's child once with request_seconds.WithLabels({"kv.put"}).
  Family<Histogram>& request_seconds;
};

}  // namespace natcd::metrics
