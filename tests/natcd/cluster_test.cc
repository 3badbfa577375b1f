// natcd clusters: three natcd processes on one nats-server, talking Raft
// over NATS. Any member takes any request; the leader can be killed under
// load without losing an acknowledged write; a restarted member catches up;
// leases kept alive survive a failover and abandoned ones still expire.
#include <gtest/gtest.h>

#include <signal.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "natcd/client.h"
#include "natcd/natcd_helpers.h"
#include "support/crash_writer_child.h"
#include "support/natcd_process.h"
#include "support/nats_server.h"
#include "support/tcp_proxy.h"
#include "support/wire_client.h"
#include "testutil.h"

namespace natcd::testing {
namespace {

constexpr int kElectionTimeoutMs = 500;
constexpr int kWatchHeartbeatMs = 300;
const std::vector<std::string> kNames = {"n1", "n2", "n3"};

// A client's keepalive loop on its own thread: a renewal lost with a dying
// leader is not waited for long, the next one follows.
class LeaseKeeper {
 public:
  LeaseKeeper(const std::string& url, int64_t lease, int interval_ms)
      : thread_([this, url, lease, interval_ms] {
          WireClient client(url);
          Natcd__V1__LeaseKeepAliveRequest req;
          natcd__v1__lease_keep_alive_request__init(&req);
          req.id = lease;
          std::string body(protobuf_c_message_get_packed_size(&req.base), '\0');
          protobuf_c_message_pack(&req.base, reinterpret_cast<uint8_t*>(body.data()));
          while (!stop_.load()) {
            (void)client.Raw(client.Subject("lease.keepalive"), body, {}, 500);
            std::this_thread::sleep_for(std::chrono::milliseconds(interval_ms));
          }
        }) {}
  ~LeaseKeeper() { Stop(); }
  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// natcdctl member add <name> --learner.
Unpacked<Natcd__V1__MemberAddResponse> AddLearner(WireClient* client, const char* name) {
  Natcd__V1__MemberAddRequest add;
  natcd__v1__member_add_request__init(&add);
  add.name = const_cast<char*>(name);
  add.islearner = true;
  return CallOk<Natcd__V1__MemberAddResponse>(client, "cluster.member.add", &add.base,
                                              &natcd__v1__member_add_response__descriptor);
}

class ClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.Start());
    for (const std::string& name : kNames) {
      dirs_[name] = std::make_unique<TempDir>();
      std::vector<std::string> args = {"--name",
                                       name,
                                       "--initial-cluster",
                                       "n1,n2,n3",
                                       "--heartbeat-interval",
                                       std::to_string(HeartbeatIntervalMs()),
                                       "--election-timeout",
                                       std::to_string(ElectionTimeoutMs()),
                                       "--lease-ttl-min",
                                       "1",
                                       "--watch-heartbeat-ms",
                                       std::to_string(kWatchHeartbeatMs),
                                       "--log-level",
                                       "warn"};
      for (const std::string& arg : ExtraArgs()) args.push_back(arg);
      members_[name] = std::make_unique<NatcdProcess>(server_.url(), dirs_[name]->path(), args);
      ASSERT_TRUE(members_[name]->Start());
    }
    client_ = std::make_unique<WireClient>(server_.url());
    ASSERT_TRUE(client_->connected());
    ASSERT_TRUE(WaitFor([&] { return Leader() != 0; }, 10'000)) << "no leader elected";
  }
  virtual std::vector<std::string> ExtraArgs() const { return {}; }
  virtual int HeartbeatIntervalMs() const { return 50; }
  virtual int ElectionTimeoutMs() const { return kElectionTimeoutMs; }
  void TearDown() override {
    if (!HasFailure()) return;
    for (auto& [name, m] : members_) std::cerr << "--- " << name << " log:\n" << m->Log() << "\n";
  }

  // A request with a short timeout, retried: any member may be the one
  // that was just killed or frozen (its subscriptions linger until NATS
  // notices, or for as long as it is frozen).
  WireReply Ask(const std::string& suffix, const ProtobufCMessage* message) {
    std::string body(protobuf_c_message_get_packed_size(message), '\0');
    protobuf_c_message_pack(message, reinterpret_cast<uint8_t*>(body.data()));
    WireReply reply;
    for (int attempt = 0; attempt < 10; attempt++) {
      reply = client_->Raw(client_->Subject(suffix), body, {}, 1'000);
      if (reply.ok()) break;
    }
    return reply;
  }
  // The leader's member ID as some member reports it (0: none known).
  uint64_t Leader() {
    Natcd__V1__StatusRequest req;
    natcd__v1__status_request__init(&req);
    WireReply reply = Ask("maint.status", &req.base);
    if (!reply.ok()) return 0;
    auto status = WireClient::Decode<Natcd__V1__StatusResponse>(
        &natcd__v1__status_response__descriptor, reply);
    return status ? status->leader : 0;
  }
  // Member name -> ID, from the cluster's member list.
  std::map<std::string, uint64_t> MemberIds() {
    Natcd__V1__MemberListRequest req;
    natcd__v1__member_list_request__init(&req);
    WireReply reply = Ask("cluster.member.list", &req.base);
    EXPECT_TRUE(reply.ok()) << reply.code << " " << reply.error;
    auto list = WireClient::Decode<Natcd__V1__MemberListResponse>(
        &natcd__v1__member_list_response__descriptor, reply);
    std::map<std::string, uint64_t> out;
    for (size_t i = 0; list && i < list->n_members; i++) {
      out[list->members[i]->name] = list->members[i]->id;
    }
    return out;
  }
  std::string LeaderName() {
    uint64_t leader = Leader();
    for (auto& [name, id] : MemberIds()) {
      if (id == leader) return name;
    }
    return "";
  }
  // The number of keys at key, or -1 when no answer came within a short
  // timeout (a request may be lost with a killed member).
  int64_t KeyCount(const std::string& key) {
    Natcd__V1__RangeRequest range;
    natcd__v1__range_request__init(&range);
    range.key = Bytes(key);
    range.count_only = true;
    std::string body(protobuf_c_message_get_packed_size(&range.base), '\0');
    protobuf_c_message_pack(&range.base, reinterpret_cast<uint8_t*>(body.data()));
    WireReply reply = client_->Raw(client_->Subject("kv.range"), body, {}, 1'000);
    if (!reply.ok()) return -1;
    auto r =
        WireClient::Decode<Natcd__V1__RangeResponse>(&natcd__v1__range_response__descriptor, reply);
    return r ? r->count : -1;
  }
  // Puts until acknowledged (a retry carries the same request id), or
  // gives up after timeout_ms.
  // Each attempt waits 1 s at most: a request the NATS server handed to a
  // member in the instant it was killed gets no answer.
  // Kills and restarts every member once, the leader first (the other two
  // keep the quorum), with 15 acknowledged puts of prefix<n> before the
  // first kill and after each; *written: how many were written.
  void KillEachMemberWhileWriting(const std::string& prefix, int* written) {
    int& next = *written;
    next = 0;
    auto write = [&](int n) {
      for (int i = 0; i < n; i++, next++) {
        ASSERT_TRUE(PutAcked(prefix + std::to_string(next), "v")) << next;
      }
    };
    ASSERT_NO_FATAL_FAILURE(write(15));
    std::vector<std::string> order = {LeaderName()};
    for (const std::string& name : kNames) {
      if (name != order[0]) order.push_back(name);
    }
    for (const std::string& name : order) {
      members_[name]->Kill();
      ASSERT_NO_FATAL_FAILURE(write(15));
      ASSERT_TRUE(members_[name]->Start());
    }
  }
  bool PutAcked(const std::string& key, const std::string& value, int timeout_ms = 10'000) {
    Natcd__V1__PutRequest put;
    natcd__v1__put_request__init(&put);
    put.key = Bytes(key);
    put.value = Bytes(value);
    std::string body(protobuf_c_message_get_packed_size(&put.base), '\0');
    protobuf_c_message_pack(&put.base, reinterpret_cast<uint8_t*>(body.data()));
    std::vector<std::pair<std::string, std::string>> headers = {{"Natcd-Request-Id", "put-" + key}};
    return WaitFor(
        [&] { return client_->Raw(client_->Subject("kv.put"), body, headers, 1'000).ok(); },
        timeout_ms, 50);
  }

  NatsServer server_;
  std::map<std::string, std::unique_ptr<TempDir>> dirs_;
  std::map<std::string, std::unique_ptr<NatcdProcess>> members_;
  std::unique_ptr<WireClient> client_;
};

TEST_F(ClusterTest, EveryMemberTakesWritesAndLinearizableReads) {
  std::map<std::string, uint64_t> ids = MemberIds();
  ASSERT_EQ(ids.size(), 3u);
  // The queue group spreads requests over the three members: followers
  // hand writes to the leader, and their reads wait for the leader's
  // commit index (read-your-writes whichever member answers).
  for (int i = 0; i < 60; i++) {
    std::string key = "/c/k" + std::to_string(i);
    WireReply put = PutReply(client_.get(), key, "v" + std::to_string(i));
    ASSERT_TRUE(put.ok()) << put.code << " " << put.error;
    auto got = client_->Range(key);
    ASSERT_TRUE(got);
    ASSERT_EQ(got->n_kvs, 1u) << key << " not visible right after its put";
    EXPECT_EQ(Str(got->kvs[0]->value), "v" + std::to_string(i));
  }
  auto all = client_->Range("/c/", "/c0");
  ASSERT_TRUE(all);
  EXPECT_EQ(all->count, 60);
}

TEST_F(ClusterTest, KillingTheLeaderUnderLoadLosesNoAcknowledgedWrite) {
  std::string old_leader = LeaderName();
  ASSERT_FALSE(old_leader.empty());
  std::vector<std::string> acked;
  int64_t last_revision = 0;
  for (int i = 0; i < 100; i++) {
    std::string key = "/f/k" + std::to_string(1000 + i);
    ASSERT_TRUE(PutAcked(key, "before"));
    acked.push_back(key);
  }
  last_revision = Revision(client_.get());
  members_[old_leader]->Kill();
  auto killed_at = std::chrono::steady_clock::now();
  // The next write is acknowledged once a new leader is elected.
  ASSERT_TRUE(PutAcked("/f/k1100", "after"));
  auto failover_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::steady_clock::now() - killed_at)
                         .count();
  acked.push_back("/f/k1100");
  std::cout << "failover: next write acknowledged " << failover_ms << " ms after kill -9"
            << std::endl;
  // Two election timeouts, plus slack for a loaded 2-core machine.
  EXPECT_LT(failover_ms, 2 * kElectionTimeoutMs + 2'000);
  EXPECT_NE(LeaderName(), old_leader);
  for (int i = 101; i < 200; i++) {
    std::string key = "/f/k" + std::to_string(1000 + i);
    ASSERT_TRUE(PutAcked(key, "after"));
    acked.push_back(key);
  }
  auto all = client_->Range("/f/", "/f0");
  ASSERT_TRUE(all);
  EXPECT_EQ(all->count, static_cast<int64_t>(acked.size()));
  EXPECT_GT(all->header->revision, last_revision) << "revisions continue";

  // The old leader restarts and catches up: with another member stopped,
  // the cluster needs it for a quorum.
  ASSERT_TRUE(members_[old_leader]->Start());
  std::string other;
  for (const std::string& name : kNames) {
    if (name != old_leader && name != LeaderName()) other = name;
  }
  ASSERT_FALSE(other.empty());
  EXPECT_EQ(members_[other]->Stop(), 0);
  ASSERT_TRUE(PutAcked("/f/k2000", "with the restarted member", 15'000));
  auto again = client_->Range("/f/", "/f0");
  ASSERT_TRUE(again);
  EXPECT_EQ(again->count, static_cast<int64_t>(acked.size()) + 1);
}

TEST_F(ClusterTest, KeptLeaseSurvivesFailoverAndAbandonedOneExpires) {
  int64_t kept = client_->Grant(3);
  int64_t abandoned = client_->Grant(3);
  ASSERT_NE(kept, 0);
  ASSERT_NE(abandoned, 0);
  ASSERT_TRUE(PutReply(client_.get(), "/l/kept", "x", kept).ok());
  ASSERT_TRUE(PutReply(client_.get(), "/l/abandoned", "x", abandoned).ok());
  LeaseKeeper keeper(server_.url(), kept, 300);
  std::string leader = LeaderName();
  ASSERT_FALSE(leader.empty());
  members_[leader]->Kill();
  // The abandoned lease still expires within TTL + an election timeout
  // (+ slack); the kept one lives on.
  bool gone = WaitFor([&] { return KeyCount("/l/abandoned") == 0; },
                      3'000 + kElectionTimeoutMs + 5'000, 100);
  std::this_thread::sleep_for(std::chrono::milliseconds(1'000));
  auto kept_key = client_->Range("/l/kept");
  auto ttl = TimeToLive(client_.get(), kept);
  keeper.Stop();
  EXPECT_TRUE(gone) << "the abandoned lease outlived the failover";
  ASSERT_TRUE(kept_key);
  EXPECT_EQ(kept_key->n_kvs, 1u) << "the kept lease expired during the failover";
  ASSERT_TRUE(ttl);
  EXPECT_GT(ttl->ttl, 0);
}

// Leadership moved ten times in a row, faster than the leases' TTL: each
// new leader extends every lease by an election timeout, but from the
// replicated deadline, so the extensions never add up.
TEST_F(ClusterTest, TenForcedElectionsKeepTheKeptLeaseAndExpireTheAbandonedOne) {
  constexpr int64_t kTtlMs = 3'000;
  int64_t kept = client_->Grant(kTtlMs / 1000);
  ASSERT_NE(kept, 0);
  ASSERT_TRUE(PutReply(client_.get(), "/e/kept", "x", kept).ok());
  int64_t abandoned = client_->Grant(kTtlMs / 1000);
  ASSERT_NE(abandoned, 0);
  const auto granted_at = std::chrono::steady_clock::now();
  ASSERT_TRUE(PutReply(client_.get(), "/e/abandoned", "x", abandoned).ok());
  LeaseKeeper keeper(server_.url(), kept, kTtlMs / 3);  // every TTL/3, as etcd clients do
  std::map<std::string, uint64_t> ids = MemberIds();
  ASSERT_EQ(ids.size(), 3u);
  int64_t gone_after_ms = -1;
  auto note_gone = [&] {
    if (gone_after_ms < 0 && KeyCount("/e/abandoned") == 0) {
      gone_after_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::steady_clock::now() - granted_at)
                          .count();
    }
  };
  int elections = 0;
  for (int i = 0; elections < 10 && i < 40; i++) {
    const uint64_t leader = Leader();
    uint64_t target = 0;
    for (const std::string& name : kNames) {
      if (ids[name] != leader && (target == 0 || i % 2 == 0)) target = ids[name];
    }
    Natcd__V1__MoveLeaderRequest move;
    natcd__v1__move_leader_request__init(&move);
    move.targetid = target;
    WireReply moved = Ask("maint.moveleader", &move.base);
    if (moved.ok()) elections++;
    for (int j = 0; j < 4; j++) {  // 400 ms between elections
      note_gone();
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  EXPECT_EQ(elections, 10);
  ASSERT_TRUE(WaitFor(
      [&] {
        note_gone();
        return gone_after_ms >= 0;
      },
      10'000, 50))
      << "the abandoned lease never expired";
  std::cout << "abandoned lease (TTL " << kTtlMs << " ms) gone " << gone_after_ms
            << " ms after its grant, through " << elections << " elections" << std::endl;
  // TTL + one election timeout, plus slack for the lease check, the revoke's
  // commit and a loaded 2-core machine.
  EXPECT_LE(gone_after_ms, kTtlMs + kElectionTimeoutMs + 1'500);
  auto kept_key = client_->Range("/e/kept");
  auto ttl = TimeToLive(client_.get(), kept);
  keeper.Stop();
  ASSERT_TRUE(kept_key);
  EXPECT_EQ(kept_key->n_kvs, 1u) << "the kept lease expired during the elections";
  ASSERT_TRUE(ttl);
  EXPECT_GT(ttl->ttl, 0);
}

// kv.put requests each member counts in $SRV.STATS, by member name.
std::map<std::string, int64_t> PutsCounted(natsConnection* nc) {
  Sub inbox(nc);
  EXPECT_EQ(natsConnection_PublishRequest(nc, "$SRV.STATS.natcd", inbox.subject().c_str(), "", 0),
            NATS_OK);
  std::map<std::string, int64_t> out;
  for (const Received& m : inbox.Drain(500)) {
    std::optional<Json> stats = Json::Parse(m.data);
    if (!stats) continue;
    for (const Json& e : (*stats)["endpoints"].items) {
      if (e["name"].text == "kv_put") {
        out[(*stats)["metadata"]["member"].text] = std::stoll(e["num_requests"].text);
      }
    }
  }
  return out;
}

// --leader-request-weight: the leader holds 48 subscriptions in each write
// subject's queue group, a follower one, so NATS hands about 24 in 25 writes
// to the leader directly; after a leader change the new leader has them.
// Forwarded requests are counted on the wire (P.fwd.<member>.*). Each
// request counts once in $SRV.STATS, where it arrived.
TEST_F(ClusterTest, MostWritesReachTheLeaderWithoutAForward) {
  constexpr int kPuts = 300;
  std::map<std::string, int64_t> counted = PutsCounted(client_->nc());
  for (int round = 0; round < 2; round++) {
    const std::string leader = LeaderName();
    ASSERT_FALSE(leader.empty());
    Sub forwarded(client_->nc(), "natcd.fwd.>");
    for (int i = 0; i < kPuts; i++) {
      WireReply put = PutReply(client_.get(), "/lw/k" + std::to_string(i), "v");
      ASSERT_TRUE(put.ok()) << put.code << " " << put.error;
    }
    const size_t n = forwarded.Drain(300).size();
    std::cerr << "round " << round << ": " << n << " of " << kPuts << " puts forwarded\n";
    // An even share would forward 200 of 300; with the weight about 12
    // (none at all: once in 200,000 rounds).
    EXPECT_LT(n, 60u) << "round " << round;
    EXPECT_GT(n, 0u) << "round " << round << ": nothing forwarded, nothing to count twice";
    std::map<std::string, int64_t> now_counted = PutsCounted(client_->nc());
    ASSERT_EQ(now_counted.size(), 3u);
    int64_t at_followers = 0;
    for (const std::string& name : kNames) {
      if (name != leader) at_followers += now_counted[name] - counted[name];
    }
    EXPECT_EQ(now_counted[leader] - counted[leader], kPuts - static_cast<int64_t>(n))
        << "round " << round << ": the leader counts only what reached it directly";
    EXPECT_EQ(at_followers, static_cast<int64_t>(n)) << "round " << round;
    counted = now_counted;
    if (round == 0) {
      std::map<std::string, uint64_t> ids = MemberIds();
      Natcd__V1__MoveLeaderRequest move;
      natcd__v1__move_leader_request__init(&move);
      move.targetid = ids[leader == "n1" ? "n2" : "n1"];
      ASSERT_TRUE(Ask("maint.moveleader", &move.base).ok());
      ASSERT_TRUE(WaitFor([&] { return Leader() == move.targetid; }, 5'000));
    }
  }
}

TEST_F(ClusterTest, MoveLeaderRefusesAMemberThatIsNotAVoter) {
  Natcd__V1__MoveLeaderRequest move;
  natcd__v1__move_leader_request__init(&move);
  move.targetid = 0x1234;
  WireReply reply = Ask("maint.moveleader", &move.base);
  EXPECT_FALSE(reply.ok());
  EXPECT_NE(reply.error.find("bad leader transferee"), std::string::npos) << reply.error;
  // To the current leader: nothing to do, answered at once.
  move.targetid = Leader();
  EXPECT_TRUE(Ask("maint.moveleader", &move.base).ok());
}

// P.ev.* across leader changes: a new leader continues from the last
// revision the old one published. After a handover, every revision exactly
// once; after a kill -9, no revision missing (the few the dead leader had
// in flight may come twice).
TEST_F(ClusterTest, EventsContinueAcrossLeaderChangesWithoutAGap) {
  Sub events(client_->nc(), "natcd.ev.ec.>");
  std::map<std::string, uint64_t> ids = MemberIds();
  int next = 0;
  auto write = [&](int n) {
    for (int i = 0; i < n; i++, next++) {
      ASSERT_TRUE(PutAcked("/ec/k" + std::to_string(next), "v")) << next;
    }
  };
  write(30);
  const std::string first = LeaderName();
  std::string target;
  for (const std::string& name : kNames) {
    if (name != first) target = name;
  }
  Natcd__V1__MoveLeaderRequest move;
  natcd__v1__move_leader_request__init(&move);
  move.targetid = ids[target];
  ASSERT_TRUE(Ask("maint.moveleader", &move.base).ok());
  write(30);
  members_[LeaderName()]->Kill();
  write(30);
  std::map<int64_t, int> seen;  // revision -> copies
  std::set<std::string> keys;
  for (const Received& m : events.Drain(1'000)) {
    seen[std::stoll(m.headers.at("Natcd-Revision"))]++;
    keys.insert(m.headers.at("Natcd-Key"));
  }
  EXPECT_EQ(keys.size(), static_cast<size_t>(next))
      << "every acknowledged put has its event: "
      << (keys.empty() ? "" : *keys.begin() + " .. " + *keys.rbegin()) << " revs "
      << (seen.empty() ? 0 : seen.begin()->first) << ".."
      << (seen.empty() ? 0 : seen.rbegin()->first);
  ASSERT_FALSE(seen.empty());
  const int64_t lo = seen.begin()->first;
  const int64_t hi = seen.rbegin()->first;
  EXPECT_EQ(hi - lo + 1, static_cast<int64_t>(seen.size())) << "a revision is missing";
  int duplicated = 0;
  for (const auto& [revision, copies] : seen) {
    if (copies == 1) continue;
    duplicated++;
    // Not across the handover: only what the killed leader had in flight.
    EXPECT_GE(revision - lo, 30) << "revision " << revision << " published twice";
  }
  std::cout << "P.ev.*: " << seen.size() << " revisions through a handover and a kill -9, "
            << duplicated << " published twice" << std::endl;
}

// A new cluster's first leader publishes P.ev.* from the first write on,
// without first waiting a heartbeat for a predecessor's marker (there is
// none): a leader that handed over before that wait ended had published
// nothing. With a 1 s heartbeat, the first event comes well within it.
class SlowHeartbeatClusterTest : public ClusterTest {
 protected:
  int HeartbeatIntervalMs() const override { return 1'000; }
  int ElectionTimeoutMs() const override { return 2'000; }
};

TEST_F(SlowHeartbeatClusterTest, TheFirstLeaderPublishesTheFirstWriteAtOnce) {
  Sub events(client_->nc(), "natcd.ev.first.>");
  auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(PutAcked("/first/k", "v"));
  std::optional<Received> event = events.Next(3'000);
  ASSERT_TRUE(event) << "no event for the first write";
  const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::steady_clock::now() - start)
                          .count();
  EXPECT_EQ(event->Header("Natcd-Revision"), "2");
  EXPECT_LT(waited, 500) << "the first leader held its first event back";
}

// Watches (natcd's C client, in watch groups: three of one shape, one with
// prev_kv) while every member is killed in turn, the leader first: each sees
// every event once, in order. Watches on a member that died are re-created
// by the client from their last revision + 1 and join a group again on the
// member that takes them; the groups' sequences show any loss.
TEST_F(ClusterTest, WatchGroupsAcrossFailoversMissNothing) {
  natcdClientOptions client_options;
  natcdClientOptions_Init(&client_options);
  natcdClient* client = nullptr;
  ASSERT_EQ(natcdClient_Create(&client, client_->nc(), &client_options), natcdStatus_OK);
  struct Seen {
    std::mutex mu;
    std::vector<std::pair<int64_t, std::string>> events;  // (revision, key)
  };
  constexpr int kWatches = 4;  // the last one with prev_kv
  std::vector<std::unique_ptr<Seen>> seen;
  std::vector<natcdWatch*> watches;
  for (int i = 0; i < kWatches; ++i) {
    seen.push_back(std::make_unique<Seen>());
    natcdWatchOptions watch_options{};
    watch_options.prefix = true;
    watch_options.heartbeat_ms = kWatchHeartbeatMs;
    watch_options.prev_kv = i == kWatches - 1;
    natcdWatch* watch = nullptr;
    ASSERT_EQ(natcdWatch_Create(
                  &watch, client, "/wf/", 4, nullptr, 0, 0, &watch_options,
                  [](natcdWatch*, const natcdWatchNotice* notice, void* closure) {
                    if (notice->kind != natcdWatchNotice_Event) return;
                    auto* s = static_cast<Seen*>(closure);
                    std::lock_guard<std::mutex> lock(s->mu);
                    s->events.emplace_back(notice->revision,
                                           std::string(static_cast<const char*>(notice->kv->key),
                                                       notice->kv->key_len));
                  },
                  seen.back().get()),
              natcdStatus_OK);
    watches.push_back(watch);
  }
  auto in_groups = [&] {
    for (natcdWatch* watch : watches) {
      natcdWatchStats stats{};
      if (natcdWatch_GetStats(&stats, watch) != natcdStatus_OK || !stats.in_group) return false;
    }
    return true;
  };
  EXPECT_TRUE(WaitFor(in_groups, 10'000, 20)) << "the watches did not join their groups";
  // Every member is killed once (so the one holding the watches is).
  int next = 0;
  ASSERT_NO_FATAL_FAILURE(KillEachMemberWhileWriting("/wf/k", &next));
  const int64_t last = Revision(client_.get());
  for (int i = 0; i < kWatches; ++i) {
    natcdWatchStats stats{};
    EXPECT_TRUE(WaitFor(
        [&] {
          return natcdWatch_GetStats(&stats, watches[i]) == natcdStatus_OK &&
                 stats.last_revision >= last;
        },
        15'000, 50))
        << "watch " << i << " stopped at revision " << stats.last_revision << " of " << last;
    EXPECT_GE(stats.group_joins, 1) << i;
    std::cout << "watch " << i << ": " << stats.events << " events while each member was killed, "
              << stats.resumes << " resumes, " << stats.group_joins << " group joins" << std::endl;
  }
  EXPECT_TRUE(WaitFor(in_groups, 10'000, 20)) << "the watches are back in groups";
  for (natcdWatch* watch : watches) natcdWatch_Destroy(watch);
  natcdClient_Destroy(client);
  for (int i = 0; i < kWatches; ++i) {
    std::set<std::string> keys;
    int64_t previous = 0;
    for (const auto& [revision, key] : seen[i]->events) {
      EXPECT_GT(revision, previous) << "watch " << i << ": out of order or repeated at " << key;
      previous = revision;
      keys.insert(key);
    }
    EXPECT_EQ(keys.size(), static_cast<size_t>(next)) << i;
    EXPECT_EQ(seen[i]->events.size(), static_cast<size_t>(next)) << i;
  }
}

// The same with a watch that opts out of groups: its own stream, as before.
TEST_F(ClusterTest, AWatchAcrossFailoversMissesNothing) {
  natcdClientOptions client_options;
  natcdClientOptions_Init(&client_options);
  natcdClient* client = nullptr;
  ASSERT_EQ(natcdClient_Create(&client, client_->nc(), &client_options), natcdStatus_OK);
  struct Seen {
    std::mutex mu;
    std::vector<std::pair<int64_t, std::string>> events;  // (revision, key)
  } seen;
  natcdWatchOptions watch_options{};
  watch_options.prefix = true;
  watch_options.heartbeat_ms = kWatchHeartbeatMs;
  watch_options.no_group = true;
  natcdWatch* watch = nullptr;
  ASSERT_EQ(natcdWatch_Create(
                &watch, client, "/wf/", 4, nullptr, 0, 0, &watch_options,
                [](natcdWatch*, const natcdWatchNotice* notice, void* closure) {
                  if (notice->kind != natcdWatchNotice_Event) return;
                  auto* s = static_cast<Seen*>(closure);
                  std::lock_guard<std::mutex> lock(s->mu);
                  s->events.emplace_back(
                      notice->revision,
                      std::string(static_cast<const char*>(notice->kv->key), notice->kv->key_len));
                },
                &seen),
            natcdStatus_OK);
  // Every member is killed once (so the one holding the watch is).
  int next = 0;
  ASSERT_NO_FATAL_FAILURE(KillEachMemberWhileWriting("/wf/k", &next));
  const int64_t last = Revision(client_.get());
  natcdWatchStats stats{};
  EXPECT_TRUE(WaitFor(
      [&] {
        return natcdWatch_GetStats(&stats, watch) == natcdStatus_OK && stats.last_revision >= last;
      },
      15'000, 50))
      << "the watch stopped at revision " << stats.last_revision << " of " << last;
  natcdWatch_Destroy(watch);
  natcdClient_Destroy(client);
  std::set<std::string> keys;
  int64_t previous = 0;
  for (const auto& [revision, key] : seen.events) {
    EXPECT_GT(revision, previous) << "out of order or repeated at " << key;
    previous = revision;
    keys.insert(key);
  }
  EXPECT_EQ(keys.size(), static_cast<size_t>(next));
  EXPECT_EQ(seen.events.size(), static_cast<size_t>(next));
  std::cout << "watch: " << seen.events.size() << " events while each member was killed, "
            << stats.resumes << " resumes" << std::endl;
}

// A leader cut off from NATS (its process keeps running): the others elect
// a new leader and go on; when the network heals it follows the new leader
// and catches up.
TEST_F(ClusterTest, APartitionedLeaderRejoinsWhenTheNetworkHeals) {
  // n3 reaches NATS through a relay the test can cut.
  TcpProxy proxy(std::stoi(server_.url().substr(server_.url().rfind(':') + 1)));
  ASSERT_TRUE(proxy.Start());
  EXPECT_EQ(members_["n3"]->Stop(), 0);
  members_["n3"] = std::make_unique<NatcdProcess>(
      "nats://127.0.0.1:" + std::to_string(proxy.port()), dirs_["n3"]->path(),
      std::vector<std::string>{"--name", "n3", "--initial-cluster", "n1,n2,n3",
                               "--heartbeat-interval", "50", "--election-timeout",
                               std::to_string(kElectionTimeoutMs), "--log-level", "warn"});
  ASSERT_TRUE(members_["n3"]->Start());
  std::map<std::string, uint64_t> ids = MemberIds();
  Natcd__V1__MoveLeaderRequest move;
  natcd__v1__move_leader_request__init(&move);
  move.targetid = ids["n3"];
  ASSERT_TRUE(WaitFor([&] { return Ask("maint.moveleader", &move.base).ok(); }, 10'000, 100));
  for (int i = 0; i < 10; i++) ASSERT_TRUE(PutAcked("/x/before" + std::to_string(i), "v"));

  proxy.Cut();
  for (int i = 0; i < 30; i++) ASSERT_TRUE(PutAcked("/x/during" + std::to_string(i), "v"));
  EXPECT_NE(LeaderName(), "n3");

  proxy.Heal();
  // Make n3 necessary: stop the follower that is not the leader.
  const std::string leader = LeaderName();
  const std::string other = leader == "n1" ? "n2" : "n1";
  EXPECT_EQ(members_[other]->Stop(), 0);
  ASSERT_TRUE(PutAcked("/x/after", "v", 20'000)) << "n3 did not rejoin";
  auto all = client_->Range("/x/", "/x0");
  ASSERT_TRUE(all);
  EXPECT_EQ(all->count, 41);
}

TEST_F(ClusterTest, MembersAreAddedAsLearnersPromotedAndRemoved) {
  for (int i = 0; i < 20; i++) ASSERT_TRUE(PutAcked("/m/k" + std::to_string(i), "v"));
  // Add n4 as a learner, then start it: it joins (never founds a cluster
  // of its own) and gets the whole log from the leader.
  auto added = AddLearner(client_.get(), "n4");
  ASSERT_TRUE(added);
  ASSERT_TRUE(added->member);
  EXPECT_STREQ(added->member->name, "n4");
  EXPECT_TRUE(added->member->islearner);
  EXPECT_EQ(added->n_members, 4u);
  uint64_t n4 = added->member->id;
  dirs_["n4"] = std::make_unique<TempDir>();
  members_["n4"] = std::make_unique<NatcdProcess>(
      server_.url(), dirs_["n4"]->path(),
      std::vector<std::string>{"--name", "n4", "--initial-cluster-state", "existing",
                               "--heartbeat-interval", "50", "--election-timeout",
                               std::to_string(kElectionTimeoutMs), "--log-level", "warn"});
  ASSERT_TRUE(members_["n4"]->Start());
  // Promotion waits until the learner has caught up.
  Natcd__V1__MemberPromoteRequest promote;
  natcd__v1__member_promote_request__init(&promote);
  promote.id = n4;
  ASSERT_TRUE(WaitFor([&] { return client_->Call("cluster.member.promote", &promote.base).ok(); },
                      10'000, 100))
      << "n4 never caught up";
  std::map<std::string, uint64_t> ids = MemberIds();
  ASSERT_EQ(ids.size(), 4u);
  // With four voters the quorum is three: with one founding member gone,
  // writes need n4's vote.
  std::string gone;
  for (const std::string& name : kNames) {
    if (name != LeaderName()) gone = name;
  }
  members_[gone]->Kill();
  ASSERT_TRUE(PutAcked("/m/with-n4", "v"));
  // Remove the dead member: back to three voters.
  Natcd__V1__MemberRemoveRequest remove;
  natcd__v1__member_remove_request__init(&remove);
  remove.id = ids[gone];
  auto removed =
      CallOk<Natcd__V1__MemberRemoveResponse>(client_.get(), "cluster.member.remove", &remove.base,
                                              &natcd__v1__member_remove_response__descriptor);
  ASSERT_TRUE(removed);
  EXPECT_EQ(removed->n_members, 3u);
  ASSERT_TRUE(PutAcked("/m/after-remove", "v"));
  auto all = client_->Range("/m/", "/m0");
  ASSERT_TRUE(all);
  EXPECT_EQ(all->count, 22);
}

// A cluster shrunk to its leader alone, which then crashes: it restarts
// as the sole voter it was, not as one of the three it began with (that
// quorum is gone for good). The membership changes it applied must
// survive the crash, however many writes it took after them.
TEST_F(ClusterTest, AClusterShrunkToOneMemberRestartsAsItsOnlyVoter) {
  for (int i = 0; i < 10; i++) ASSERT_TRUE(PutAcked("/s/k" + std::to_string(i), "v"));
  const std::string leader = LeaderName();
  ASSERT_FALSE(leader.empty());
  std::map<std::string, uint64_t> ids = MemberIds();
  for (const std::string& name : kNames) {
    if (name == leader) continue;
    // The request may reach the member being removed, or time out on a
    // loaded machine: ask again until the member list says it is gone.
    Natcd__V1__MemberRemoveRequest remove;
    natcd__v1__member_remove_request__init(&remove);
    remove.id = ids[name];
    ASSERT_TRUE(WaitFor(
        [&] {
          (void)Ask("cluster.member.remove", &remove.base);
          return MemberIds().count(name) == 0;
        },
        20'000, 200))
        << "removing " << name;
    members_[name]->Kill();
  }
  for (int i = 10; i < 20; i++) ASSERT_TRUE(PutAcked("/s/k" + std::to_string(i), "v"));
  members_[leader]->Kill();
  ASSERT_TRUE(members_[leader]->Start());
  ASSERT_TRUE(WaitFor([&] { return Leader() == ids[leader]; }, 10'000))
      << leader << " never led again";
  ASSERT_TRUE(PutAcked("/s/after-restart", "v"));
  EXPECT_EQ(MemberIds().size(), 1u);
  auto all = client_->Range("/s/", "/s0");
  ASSERT_TRUE(all);
  EXPECT_EQ(all->count, 21);
}

TEST_F(ClusterTest, AFrozenLeaderStepsDownAndCatchesUpWhenItReturns) {
  // A leader that stops answering (SIGSTOP: as if cut off) is replaced;
  // when it comes back it learns the newer term, follows, and catches up.
  std::string frozen = LeaderName();
  ASSERT_FALSE(frozen.empty());
  for (int i = 0; i < 10; i++) ASSERT_TRUE(PutAcked("/p/before" + std::to_string(i), "v"));
  ASSERT_EQ(kill(members_[frozen]->pid(), SIGSTOP), 0);
  for (int i = 0; i < 30; i++) ASSERT_TRUE(PutAcked("/p/during" + std::to_string(i), "v"));
  EXPECT_NE(LeaderName(), frozen);
  ASSERT_EQ(kill(members_[frozen]->pid(), SIGCONT), 0);
  // Make the returned member necessary: stop the other follower.
  std::string leader = LeaderName();
  std::string other;
  for (const std::string& name : kNames) {
    if (name != frozen && name != leader) other = name;
  }
  ASSERT_FALSE(other.empty());
  EXPECT_EQ(members_[other]->Stop(), 0);
  ASSERT_TRUE(PutAcked("/p/after", "v", 15'000));
  auto all = client_->Range("/p/", "/p0");
  ASSERT_TRUE(all);
  EXPECT_EQ(all->count, 41);
}

// Members that compact their log every 20 entries (keeping 10): a member
// that misses more than that can only catch up from the leader's database.
class SnapshotClusterTest : public ClusterTest {
 protected:
  std::vector<std::string> ExtraArgs() const override { return {"--snapshot-count", "20"}; }
};

TEST_F(SnapshotClusterTest, AMemberBehindTheKeptLogCatchesUpFromTheLeadersDatabase) {
  // Any member may answer: one that has not heard from the leader yet
  // knows none (seen under load: n3 still starting when n1 led).
  std::string leader;
  ASSERT_TRUE(WaitFor(
      [&] {
        leader = LeaderName();
        return !leader.empty();
      },
      5'000));
  std::string behind, other;
  for (const std::string& name : kNames) {
    if (name == leader) continue;
    (behind.empty() ? behind : other) = name;
  }
  for (int i = 0; i < 20; i++) ASSERT_TRUE(PutAcked("/s/k" + std::to_string(i), "v"));
  EXPECT_EQ(members_[behind]->Stop(), 0);
  // 300 entries while it is away: far past the 10 the others keep.
  for (int i = 20; i < 320; i++) ASSERT_TRUE(PutAcked("/s/k" + std::to_string(i), "v"));
  ASSERT_TRUE(members_[behind]->Start());
  // With the other follower stopped, nothing commits until the member that
  // was behind has the database and follows the log again.
  EXPECT_EQ(members_[other]->Stop(), 0);
  ASSERT_TRUE(PutAcked("/s/after", "v", 20'000));
  auto all = client_->Range("/s/", "/s0");
  ASSERT_TRUE(all);
  EXPECT_EQ(all->count, 321);
  EXPECT_NE(members_[behind]->Log().find("installed the leader's snapshot"), std::string::npos)
      << members_[behind]->Log();
  EXPECT_NE(members_[LeaderName()]->Log().find("sent to"), std::string::npos);
}

// A member added after the log was compacted starts from the leader's
// database; the membership change that added it comes after the copy's
// index, so the snapshot carries the membership before it and the log
// brings the change.
TEST_F(SnapshotClusterTest, AMemberAddedAfterCompactionStartsFromTheLeadersDatabase) {
  for (int i = 0; i < 100; i++) ASSERT_TRUE(PutAcked("/j/k" + std::to_string(i), "v"));
  auto added = AddLearner(client_.get(), "n4");
  ASSERT_TRUE(added);
  ASSERT_TRUE(added->member);
  dirs_["n4"] = std::make_unique<TempDir>();
  members_["n4"] = std::make_unique<NatcdProcess>(
      server_.url(), dirs_["n4"]->path(),
      std::vector<std::string>{"--name", "n4", "--initial-cluster-state", "existing",
                               "--heartbeat-interval", "50", "--election-timeout",
                               std::to_string(kElectionTimeoutMs), "--snapshot-count", "20",
                               "--log-level", "warn"});
  ASSERT_TRUE(members_["n4"]->Start());
  Natcd__V1__MemberPromoteRequest promote;
  natcd__v1__member_promote_request__init(&promote);
  promote.id = added->member->id;
  ASSERT_TRUE(WaitFor([&] { return client_->Call("cluster.member.promote", &promote.base).ok(); },
                      15'000, 100))
      << "n4 never caught up";
  EXPECT_NE(members_["n4"]->Log().find("installed the leader's snapshot"), std::string::npos)
      << members_["n4"]->Log();
  // n4 knows every member by name from the database it received (it was
  // told none): ask it as the leader.
  Natcd__V1__MoveLeaderRequest move;
  natcd__v1__move_leader_request__init(&move);
  move.targetid = added->member->id;
  ASSERT_TRUE(WaitFor([&] { return Ask("maint.moveleader", &move.base).ok(); }, 10'000, 100));
  ASSERT_TRUE(WaitFor([&] { return Leader() == added->member->id; }, 5'000));
  std::map<std::string, uint64_t> ids = MemberIds();
  for (const char* name : {"n1", "n2", "n3", "n4"}) {
    EXPECT_EQ(ids.count(name), 1u) << name << " unnamed in n4's member list";
  }
  // Four voters: with two founding members stopped, writes need n4.
  const std::string leader = LeaderName();
  int stopped = 0;
  for (const std::string& name : kNames) {
    if (name != leader && stopped < 1) {
      EXPECT_EQ(members_[name]->Stop(), 0);
      stopped++;
    }
  }
  ASSERT_TRUE(PutAcked("/j/after", "v", 20'000));
  auto all = client_->Range("/j/", "/j0");
  ASSERT_TRUE(all);
  EXPECT_EQ(all->count, 101);
}

// A database written by natcd before it had Raft (the engine alone:
// crash_writer, killed after a few commits) grows into a cluster: its
// member, started on it, leads a cluster of one; a member added later gets
// the whole database shipped and can be promoted.
TEST(PreRaftDatabaseTest, GrowsIntoACluster) {
  const char* writer = getenv("NATCD_CRASH_WRITER");
  if (writer == nullptr) GTEST_SKIP() << "NATCD_CRASH_WRITER not set (make check-natcd sets it)";
  NatsServer server;
  ASSERT_TRUE(server.Start());
  TempDir n1_dir, n2_dir;
  const CrashWriterAcked acked =
      RunCrashWriterAndKill(writer, n1_dir.path() + "/natcd.db", 7, /*min_acks=*/3);
  ASSERT_GT(acked.count, 0) << "crash_writer wrote nothing";
  const std::vector<std::string> timing = {
      "--heartbeat-interval", "50",  "--election-timeout", std::to_string(kElectionTimeoutMs),
      "--log-level",          "warn"};
  std::vector<std::string> n1_args = {"--name", "n1"};
  n1_args.insert(n1_args.end(), timing.begin(), timing.end());
  NatcdProcess n1(server.url(), n1_dir.path(), n1_args);
  ASSERT_TRUE(n1.Start());
  WireClient client(server.url());
  ASSERT_TRUE(client.connected());
  auto pair = client.Range("pair/a");
  ASSERT_TRUE(pair);
  ASSERT_EQ(pair->n_kvs, 1u) << "the old data is not served";
  const int64_t revision = pair->header->revision;
  ASSERT_TRUE(client.Put("after/raft", "v"));

  auto added = AddLearner(&client, "n2");
  ASSERT_TRUE(added && added->member);
  std::vector<std::string> n2_args = {"--name", "n2", "--initial-cluster-state", "existing"};
  n2_args.insert(n2_args.end(), timing.begin(), timing.end());
  NatcdProcess n2(server.url(), n2_dir.path(), n2_args);
  ASSERT_TRUE(n2.Start());
  Natcd__V1__MemberPromoteRequest promote;
  natcd__v1__member_promote_request__init(&promote);
  promote.id = added->member->id;
  ASSERT_TRUE(WaitFor([&] { return client.Call("cluster.member.promote", &promote.base).ok(); },
                      15'000, 100))
      << "n2 never caught up:\n"
      << n2.Log();
  EXPECT_NE(n2.Log().find("installed the leader's snapshot"), std::string::npos) << n2.Log();
  // n2 can lead, and holds the old data itself: serializable reads (each
  // member answers from its own state, the queue group picks one at
  // random) all see it.
  Natcd__V1__MoveLeaderRequest move;
  natcd__v1__move_leader_request__init(&move);
  move.targetid = added->member->id;
  ASSERT_TRUE(
      WaitFor([&] { return client.Call("maint.moveleader", &move.base).ok(); }, 10'000, 100));
  ASSERT_TRUE(PutReply(&client, "with/n2/leading", "v").ok());
  Natcd__V1__RangeRequest range;
  natcd__v1__range_request__init(&range);
  const std::string key = "pair/a";
  range.key = Bytes(key);
  range.serializable = true;
  for (int i = 0; i < 20; i++) {
    WireReply reply = client.Call("kv.range", &range.base);
    ASSERT_TRUE(reply.ok()) << reply.code << " " << reply.error;
    auto r =
        WireClient::Decode<Natcd__V1__RangeResponse>(&natcd__v1__range_response__descriptor, reply);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->n_kvs, 1u) << "a member lacks the data written before Raft";
    EXPECT_GE(r->header->revision, revision);
  }
}

}  // namespace
}  // namespace natcd::testing
