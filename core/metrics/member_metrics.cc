#include "metrics/member_metrics.h"

#include <cstdio>
#include <string>

namespace natcd::metrics {
namespace {

// natcd_request_duration_seconds: 0.1 ms (a read served from memory) up to
// 0.1 ms * 2^17 = 13.1 s (past the 5 s request timeout).
std::vector<double> RequestBuckets() { return ExponentialBuckets(0.0001, 2, 18); }

}  // namespace

// Help texts and buckets are etcd's, word for word (see the header).
MemberMetrics::MemberMetrics(Registry& r, std::string_view version)
    : has_leader(r.AddGauge("etcd_server_has_leader",
                            "Whether or not a leader exists. 1 is existence, 0 is not.")),
      is_leader(r.AddGauge("etcd_server_is_leader",
                           "Whether or not this member is a leader. 1 if is, 0 otherwise.")),
      leader_changes(r.AddCounter("etcd_server_leader_changes_seen_total",
                                  "The number of leader changes seen.")),
      proposals_committed(r.AddGauge("etcd_server_proposals_committed_total",
                                     "The total number of consensus proposals committed.")),
      proposals_applied(r.AddGauge("etcd_server_proposals_applied_total",
                                   "The total number of consensus proposals applied.")),
      proposals_pending(r.AddGauge("etcd_server_proposals_pending",
                                   "The current number of pending proposals to commit.")),
      proposals_failed(r.AddCounter("etcd_server_proposals_failed_total",
                                    "The total number of failed proposals seen.")),
      slow_apply(r.AddCounter("etcd_server_slow_apply_total",
                              "The total number of slow apply requests (likely overloaded from "
                              "slow disk).")),
      heartbeat_send_failures(r.AddCounter("etcd_server_heartbeat_send_failures_total",
                                           "The total number of leader heartbeat send failures "
                                           "(likely overloaded from slow disk).")),
      slow_read_indexes(r.AddCounter("etcd_server_slow_read_indexes_total",
                                     "The total number of pending read indexes not in sync with "
                                     "leader's or timed out read index requests.")),
      read_indexes_failed(r.AddCounter("etcd_server_read_indexes_failed_total",
                                       "The total number of failed read indexes seen.")),
      lease_expired(r.AddCounter("etcd_debugging_server_lease_expired_total",
                                 "The total number of expired leases.")),
      quota_backend_bytes(r.AddGauge("etcd_server_quota_backend_bytes",
                                     "Current backend storage quota size in bytes.")),
      snapshot_apply_in_progress(
          r.AddGauge("etcd_server_snapshot_apply_in_progress_total",
                     "1 if the server is applying the incoming snapshot. 0 if none.")),
      server_version(r.AddGaugeFamily(
          "etcd_server_version",
          "Which version is running. 1 for 'server_version' label with current version.",
          {"server_version"})),
      server_id(r.AddGaugeFamily(
          "etcd_server_id",
          "Server or member ID in hexadecimal format. 1 for 'server_id' label with current ID.",
          {"server_id"})),
      health_success(r.AddCounter("etcd_server_health_success",
                                  "The total number of successful health checks")),
      health_failures(
          r.AddCounter("etcd_server_health_failures", "The total number of failed health checks")),

      range_total(
          r.AddCounter("etcd_mvcc_range_total", "Total number of ranges seen by this member.")),
      put_total(r.AddCounter("etcd_mvcc_put_total", "Total number of puts seen by this member.")),
      delete_total(
          r.AddCounter("etcd_mvcc_delete_total", "Total number of deletes seen by this member.")),
      txn_total(r.AddCounter("etcd_mvcc_txn_total", "Total number of txns seen by this member.")),
      db_total_size(
          r.AddGauge("etcd_mvcc_db_total_size_in_bytes",
                     "Total size of the underlying database physically allocated in bytes.")),
      db_total_size_in_use(
          r.AddGauge("etcd_mvcc_db_total_size_in_use_in_bytes",
                     "Total size of the underlying database logically in use in bytes.")),
      keys_total(r.AddGauge("etcd_debugging_mvcc_keys_total", "Total number of keys.")),
      watch_stream_total(
          r.AddGauge("etcd_debugging_mvcc_watch_stream_total", "Total number of watch streams.")),
      watcher_total(r.AddGauge("etcd_debugging_mvcc_watcher_total", "Total number of watchers.")),
      slow_watcher_total(r.AddGauge("etcd_debugging_mvcc_slow_watcher_total",
                                    "Total number of unsynced slow watchers.")),
      events_total(r.AddCounter("etcd_debugging_mvcc_events_total",
                                "Total number of events sent by this member.")),
      pending_events_total(r.AddGauge("etcd_debugging_mvcc_pending_events_total",
                                      "Total number of pending events to be sent.")),
      current_revision(
          r.AddGauge("etcd_debugging_mvcc_current_revision", "The current revision of store.")),
      compact_revision(r.AddGauge("etcd_debugging_mvcc_compact_revision",
                                  "The revision of the last compaction in store.")),
      db_compaction_keys(r.AddCounter("etcd_debugging_mvcc_db_compaction_keys_total",
                                      "Total number of db keys compacted.")),
      db_compaction_pause_ms(r.AddHistogram(
          "etcd_debugging_mvcc_db_compaction_pause_duration_milliseconds",
          "Bucketed histogram of db compaction pause duration.", ExponentialBuckets(1, 2, 13))),
      db_compaction_total_ms(r.AddHistogram(
          "etcd_debugging_mvcc_db_compaction_total_duration_milliseconds",
          "Bucketed histogram of db compaction total duration.", ExponentialBuckets(100, 2, 14))),
      total_put_size(r.AddGauge("etcd_debugging_mvcc_total_put_size_in_bytes",
                                "The total size of put kv pairs seen by this member.")),
      hash_seconds(r.AddHistogram("etcd_mvcc_hash_duration_seconds",
                                  "The latency distribution of storage hash operation.",
                                  ExponentialBuckets(.01, 2, 15))),
      hash_rev_seconds(
          r.AddHistogram("etcd_mvcc_hash_rev_duration_seconds",
                         "The latency distribution of storage hash by revision operation.",
                         ExponentialBuckets(.01, 2, 15))),

      wal_fsync_seconds(r.AddHistogram("etcd_disk_wal_fsync_duration_seconds",
                                       "The latency distributions of fsync called by WAL.",
                                       ExponentialBuckets(0.001, 2, 14))),
      wal_write_bytes(
          r.AddGauge("etcd_disk_wal_write_bytes_total", "Total number of bytes written in WAL.")),
      backend_commit_seconds(
          r.AddHistogram("etcd_disk_backend_commit_duration_seconds",
                         "The latency distributions of commit called by backend.",
                         ExponentialBuckets(0.001, 2, 14))),
      backend_defrag_seconds(r.AddHistogram("etcd_disk_backend_defrag_duration_seconds",
                                            "The latency distribution of backend defragmentation.",
                                            ExponentialBuckets(.1, 2, 13))),
      backend_snapshot_seconds(r.AddHistogram("etcd_disk_backend_snapshot_duration_seconds",
                                              "The latency distribution of backend snapshots.",
                                              ExponentialBuckets(.01, 2, 17))),
      defrag_inflight(r.AddGauge(
          "etcd_disk_defrag_inflight",
          "Whether or not defrag is active on the member. 1 means active, 0 means not.")),

      lease_granted(r.AddCounter("etcd_debugging_lease_granted_total",
                                 "The total number of granted leases.")),
      lease_revoked(r.AddCounter("etcd_debugging_lease_revoked_total",
                                 "The total number of revoked leases.")),
      lease_renewed(r.AddCounter("etcd_debugging_lease_renewed_total",
                                 "The number of renewed leases seen by the leader.")),
      lease_ttl_seconds(r.AddHistogram("etcd_debugging_lease_ttl_total",
                                       "Bucketed histogram of lease TTLs.",
                                       ExponentialBuckets(1, 2, 24))),

      nats_connected(r.AddGauge("natcd_nats_connected",
                                "Whether the member's NATS connection is up. 1 if it is, 0 "
                                "while it is lost and nats.c reconnects.")),
      nats_reconnects(r.AddCounter("natcd_nats_reconnects_total",
                                   "The total number of times the NATS connection was lost and "
                                   "reestablished.")),
      forwarded_requests(r.AddCounter("natcd_forwarded_requests_total",
                                      "The total number of requests this member handed to the "
                                      "leader (P.fwd.*).")),
      watch_slow_consumer_cancels(r.AddCounter(
          "natcd_watch_slow_consumer_cancels_total",
          "The total number of watches canceled because their client did not keep up.")),
      events_published(r.AddCounter("natcd_events_published_total",
                                    "The total number of events published on the P.ev.* "
                                    "stream.")),
      watch_groups(
          r.AddGauge("natcd_watch_groups", "Watch groups on this member (each one hub watcher).")),
      watch_group_members(
          r.AddGauge("natcd_watch_group_members", "Watches delivered through a watch group.")),
      request_seconds(r.AddHistogramFamily(
          "natcd_request_duration_seconds",
          "The latency distributions of requests, from arrival to reply, by wire endpoint.",
          {"endpoint"}, RequestBuckets())) {
  server_version.WithLabels({version}).Set(1);
}

void MemberMetrics::SetServerId(uint64_t member_id) {
  char hex[17];
  snprintf(hex, sizeof hex, "%llx", static_cast<unsigned long long>(member_id));
  server_id.WithLabels({std::string_view(hex)}).Set(1);
}

}  // namespace natcd::metrics
