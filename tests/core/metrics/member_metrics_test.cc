// MemberMetrics registers etcd's names, types, help texts and buckets.
#include "metrics/member_metrics.h"

#include <gtest/gtest.h>

#include "support/prometheus_text.h"

namespace natcd::metrics {
namespace {

using natcd::testing::ParsedExposition;
using natcd::testing::ParseExposition;

TEST(MemberMetricsTest, EtcdNamesTypesAndHelp) {
  Registry r;
  MemberMetrics m(r, "0.1.0");
  ParsedExposition p;
  ASSERT_EQ(ParseExposition(r.TextExposition(), &p), "") << r.TextExposition();
  struct Expected {
    const char* name;
    const char* type;
    const char* help;
  };
  for (const Expected& e : std::vector<Expected>{
           {"etcd_server_has_leader", "gauge",
            "Whether or not a leader exists. 1 is existence, 0 is not."},
           {"etcd_server_is_leader", "gauge",
            "Whether or not this member is a leader. 1 if is, 0 otherwise."},
           {"etcd_server_leader_changes_seen_total", "counter",
            "The number of leader changes seen."},
           // etcd registers these two as gauges despite _total.
           {"etcd_server_proposals_committed_total", "gauge",
            "The total number of consensus proposals committed."},
           {"etcd_server_proposals_applied_total", "gauge",
            "The total number of consensus proposals applied."},
           {"etcd_server_proposals_pending", "gauge",
            "The current number of pending proposals to commit."},
           {"etcd_server_proposals_failed_total", "counter",
            "The total number of failed proposals seen."},
           {"etcd_server_quota_backend_bytes", "gauge",
            "Current backend storage quota size in bytes."},
           {"etcd_mvcc_db_total_size_in_bytes", "gauge",
            "Total size of the underlying database physically allocated in bytes."},
           {"etcd_mvcc_db_total_size_in_use_in_bytes", "gauge",
            "Total size of the underlying database logically in use in bytes."},
           {"etcd_disk_wal_fsync_duration_seconds", "histogram",
            "The latency distributions of fsync called by WAL."},
           {"etcd_disk_backend_commit_duration_seconds", "histogram",
            "The latency distributions of commit called by backend."},
           {"etcd_debugging_mvcc_keys_total", "gauge", "Total number of keys."},
           {"etcd_debugging_mvcc_watcher_total", "gauge", "Total number of watchers."},
           {"etcd_debugging_lease_granted_total", "counter", "The total number of granted leases."},
           {"etcd_debugging_lease_revoked_total", "counter", "The total number of revoked leases."},
           {"etcd_debugging_lease_renewed_total", "counter",
            "The number of renewed leases seen by the leader."},
           {"natcd_nats_connected", "gauge", nullptr},
           {"natcd_nats_reconnects_total", "counter", nullptr},
           {"natcd_forwarded_requests_total", "counter", nullptr},
           {"natcd_watch_slow_consumer_cancels_total", "counter", nullptr},
           {"natcd_events_published_total", "counter", nullptr},
           {"natcd_watch_groups", "gauge", nullptr},
           {"natcd_watch_group_members", "gauge", nullptr},
           {"natcd_request_duration_seconds", "histogram", nullptr},
       }) {
    ASSERT_TRUE(p.families.count(e.name)) << e.name;
    EXPECT_EQ(p.families[e.name].type, e.type) << e.name;
    if (e.help) {
      EXPECT_EQ(p.families[e.name].help, e.help) << e.name;
    }
  }
  EXPECT_EQ(p.Find("etcd_server_version", {{"server_version", "0.1.0"}}), 1);
}

TEST(MemberMetricsTest, FsyncBucketsAreEtcds) {
  Registry r;
  MemberMetrics m(r, "0.1.0");
  m.wal_fsync_seconds.Observe(0.003);
  ParsedExposition p;
  ASSERT_EQ(ParseExposition(r.TextExposition(), &p), "");
  std::vector<std::string> bounds;
  for (const auto& s : p.families["etcd_disk_wal_fsync_duration_seconds"].samples) {
    if (s.name == "etcd_disk_wal_fsync_duration_seconds_bucket")
      bounds.push_back(s.labels.at("le"));
  }
  EXPECT_EQ(bounds, (std::vector<std::string>{"0.001", "0.002", "0.004", "0.008", "0.016", "0.032",
                                              "0.064", "0.128", "0.256", "0.512", "1.024", "2.048",
                                              "4.096", "8.192", "+Inf"}));
  EXPECT_EQ(p.Find("etcd_disk_wal_fsync_duration_seconds_bucket", {{"le", "0.002"}}), 0);
  EXPECT_EQ(p.Find("etcd_disk_wal_fsync_duration_seconds_bucket", {{"le", "0.004"}}), 1);
  EXPECT_EQ(p.Find("etcd_disk_wal_fsync_duration_seconds_count"), 1);
}

TEST(MemberMetricsTest, ServerIdIsLowercaseHexAndRequestsByEndpoint) {
  Registry r;
  MemberMetrics m(r, "0.1.0");
  m.SetServerId(0x9bd11d00c67a72ffULL);
  m.request_seconds.WithLabels({"kv.put"}).Observe(0.0002);
  m.has_leader.Set(1);
  ParsedExposition p;
  ASSERT_EQ(ParseExposition(r.TextExposition(), &p), "");
  EXPECT_EQ(p.Find("etcd_server_id", {{"server_id", "9bd11d00c67a72ff"}}), 1);
  EXPECT_EQ(p.Find("natcd_request_duration_seconds_count", {{"endpoint", "kv.put"}}), 1);
  EXPECT_EQ(p.Find("etcd_server_has_leader"), 1);
}

}  // namespace
}  // namespace natcd::metrics
