// Model-based property test of the Engine (STYLE.md item 18; etcd's
// quorum/quick_test.go). Thousands of random sequences of puts, deletes,
// txns (nested, with duplicate keys), lease grants/revokes/keepalives,
// expiry on a manual clock, checkpoints, compactions, commits and restarts
// run against the Engine and against the naive Model (model.h). After every
// step both must agree on the revisions, on every write's response, on Range
// over random ranges at random revisions with random options, on the event
// history (ReadEvents) and on the lease table.
//
// Seed: natcd::testing::RandomSeed() (--gtest_random_seed) and the sequence
// number, both printed on failure with the last operations. Environment:
//   NATCD_MODEL_ITERATIONS=<n>  run n sequences instead of the default
//   NATCD_MODEL_SEQUENCE=<i>    run only sequence i (to replay a failure)
//   NATCD_MODEL_STATS=1         print how often each kind of outcome occurred
#include <stdlib.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "core/model/model.h"
#include "natcd/engine.h"
#include "natcd/key_range.h"
#include "testutil.h"

namespace natcd::testing {
namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr int kDefaultSequences = 250;
#else
constexpr int kDefaultSequences = 1500;
#endif

// Checkpoint entries with a negative TTL: rejected whole, changing nothing.
constexpr bool kBadCheckpoints = true;

// Keys over a few prefixes, with bytes that stress range ends: a key that
// is a prefix of others, 0xff bytes (PrefixRangeEnd carries), and a key
// whose prefix range is "every key >= it".
const std::vector<std::string> kKeys = {"a",   "a/0", "a/1",   "a/1/x",  "a/2",  "a/3",     "ab",
                                        "b/0", "b/1", "b/2",   "b/3",    "c/x",  "c/y",     "d",
                                        "z/0", "z/1", "z\xff", "c/\xff", "\xff", "\xff\xff"};
// Range bounds that are not keys.
const std::vector<std::string> kBounds = {
    "a/",  "a/1/", "a0", "b", "b/", "c", "c/", "c/\xff", "e", "z", "z/", std::string("\xff\x00", 2),
    "\xfe"};
const std::vector<std::string> kPrefixes = {"a",      "a/", "a/1",  "b/",      "c/",
                                            "c/\xff", "z",  "\xff", "\xff\xff"};
const std::vector<std::string> kValues = {"", "v0", "v1", "v2", "v3", "vv", std::string("x\0y", 3)};

class Gen {
 public:
  explicit Gen(uint64_t seed) : rng_(seed) {}
  // Uniform in [lo, hi].
  int64_t Int(int64_t lo, int64_t hi) {
    EXPECT_LE(lo, hi);
    if (hi < lo) return lo;
    return lo + static_cast<int64_t>(rng_() % static_cast<uint64_t>(hi - lo + 1));
  }
  bool Chance(int percent) { return Int(0, 99) < percent; }
  template <typename T>
  const T& Pick(const std::vector<T>& v) {
    return v[Int(0, static_cast<int64_t>(v.size()) - 1)];
  }

 private:
  std::mt19937_64 rng_;
};

// The random choices that need the current state.
class Generator {
 public:
  Generator(Gen* g, const Model* m) : g_(*g), m_(*m) {}

  std::string Key() { return g_.Chance(90) ? g_.Pick(kKeys) : g_.Pick(kBounds); }
  // Now and then an empty key (ErrEmptyKey); rarer inside txns, which hold
  // many keys.
  bool EmptyKey() { return g_.Int(0, 999) < (in_txn_ ? 2 : 10); }
  std::string Value() { return g_.Pick(kValues); }

  // A key range in each of etcd's spellings.
  std::pair<std::string, std::string> KeyRange() {
    const std::string nul(1, '\0');
    switch (g_.Int(0, 9)) {
      case 0:
      case 1:
      case 2:
        return {Key(), ""};
      case 3:
      case 4: {
        std::string p = g_.Pick(kPrefixes);
        return {p, PrefixRangeEnd(p)};
      }
      case 5:
      case 6: {
        std::string a = Key(), b = Key();
        if (a > b && g_.Chance(80)) std::swap(a, b);  // sometimes an empty range
        return {a, b};
      }
      case 7:
        return {Key(), nul};
      case 8:
        return {nul, nul};
      default:
        return {g_.Pick(kBounds), g_.Chance(50) ? nul : g_.Pick(kBounds)};
    }
  }

  int64_t Lease() {
    const auto& leases = m_.leases();
    if (leases.empty() || g_.Chance(10)) return g_.Int(1, 4);  // often missing
    auto it = leases.begin();
    std::advance(it, g_.Int(0, static_cast<int64_t>(leases.size()) - 1));
    return it->first;
  }

  // A revision to read at: mostly valid, sometimes compacted or future.
  int64_t ReadRevision() {
    int64_t rev = m_.revision(), compact = m_.compact_revision();
    int roll = static_cast<int>(g_.Int(0, 99));
    if (roll < 35) return 0;
    if (roll < 38) return -g_.Int(1, 3);  // <= 0 also means "now"
    if (roll < 44 && compact > 1) return g_.Int(1, compact - 1);
    if (roll < 50) return rev + g_.Int(1, 2);
    return g_.Int(std::max<int64_t>(compact, 1), std::max<int64_t>(rev, 1));
  }

  int64_t AnyRevision() { return g_.Int(0, m_.revision() + 1); }

  RangeRequest Range() {
    RangeRequest r;
    std::tie(r.key, r.range_end) = KeyRange();
    if (EmptyKey()) r.key.clear();
    r.revision = ReadRevision();
    if (g_.Chance(50)) r.limit = g_.Int(1, 5);
    if (g_.Chance(50)) {
      r.sort_order = static_cast<SortOrder>(g_.Int(0, 2));
      r.sort_target = static_cast<SortTarget>(g_.Int(0, 4));
    }
    r.keys_only = g_.Chance(15);
    r.count_only = g_.Chance(10);
    r.serializable = g_.Chance(50);
    if (g_.Chance(15)) r.min_mod_revision = AnyRevision();
    if (g_.Chance(15)) r.max_mod_revision = AnyRevision();
    if (g_.Chance(15)) r.min_create_revision = AnyRevision();
    if (g_.Chance(15)) r.max_create_revision = AnyRevision();
    return r;
  }

  PutRequest Put() {
    PutRequest p;
    p.key = Key();
    if (EmptyKey()) p.key.clear();
    p.value = Value();
    if (g_.Chance(25)) p.lease = Lease();
    p.prev_kv = g_.Chance(50);
    if (g_.Chance(8)) {
      p.ignore_value = true;
      if (!g_.Chance(5)) p.value.clear();  // else ErrValueProvided
    }
    if (g_.Chance(8)) {
      p.ignore_lease = true;
      if (!g_.Chance(5)) p.lease = 0;  // else ErrLeaseProvided
    }
    return p;
  }

  DeleteRangeRequest Delete() {
    DeleteRangeRequest d;
    std::tie(d.key, d.range_end) = KeyRange();
    if (EmptyKey()) d.key.clear();
    d.prev_kv = g_.Chance(50);
    return d;
  }

  Compare Cmp() {
    Compare c;
    c.target = static_cast<Compare::Target>(g_.Int(0, 4));
    c.result = static_cast<Compare::Result>(g_.Int(0, 3));
    if (g_.Chance(20)) {
      std::tie(c.key, c.range_end) = KeyRange();
    } else {
      c.key = Key();
    }
    if (EmptyKey()) c.key.clear();
    c.version = g_.Int(0, 4);
    c.create_revision = AnyRevision();
    c.mod_revision = AnyRevision();
    c.value = Value();
    c.lease = g_.Chance(50) ? 0 : Lease();
    // Often compare against the key's actual state, so both branches run.
    auto it = m_.Head().find(c.key);
    if (it != m_.Head().end() && g_.Chance(50)) {
      c.version = it->second.version;
      c.create_revision = it->second.create_revision;
      c.mod_revision = it->second.mod_revision;
      c.value = it->second.value;
      c.lease = it->second.lease;
    }
    return c;
  }

  std::vector<RequestOp> Branch(int depth) {
    std::vector<RequestOp> ops(static_cast<size_t>(g_.Int(0, 4)));
    for (RequestOp& op : ops) {
      int roll = static_cast<int>(g_.Int(0, 99));
      if (roll < 30) {
        op.op = Range();
      } else if (roll < 65) {
        op.op = Put();
      } else if (roll < 88 || depth >= 2) {
        op.op = Delete();
      } else {
        op.op = std::make_shared<TxnRequest>(TxnOnce(depth + 1));
      }
    }
    return ops;
  }

  TxnRequest TxnOnce(int depth) {
    TxnRequest t;
    int n = static_cast<int>(g_.Int(0, 3));
    for (int i = 0; i < n; ++i) t.compare.push_back(Cmp());
    t.success = Branch(depth);
    t.failure = Branch(depth);
    return t;
  }

  // Mostly txns without duplicate keys (they would all fail), sometimes
  // whatever comes out.
  TxnRequest Txn() {
    in_txn_ = true;
    TxnRequest t = TxnOnce(0);
    if (!g_.Chance(15)) {
      for (int tries = 0; tries < 5 && !Model::NoDuplicateKeys(t); ++tries) t = TxnOnce(0);
    }
    in_txn_ = false;
    return t;
  }

 private:
  Gen& g_;
  const Model& m_;
  bool in_txn_ = false;
};

std::string Kind(const WriteRequest& r) {
  static const char* kKinds[] = {"put",         "delete",       "txn",          "compact",
                                 "lease-grant", "lease-revoke", "lease-expire", "lease-checkpoint"};
  return kKinds[r.index()];
}

int EnvInt(const char* name, int fallback) {
  const char* v = getenv(name);
  return v != nullptr && *v != '\0' ? atoi(v) : fallback;
}

class ModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Creating a database costs a few fsyncs even with sync off; every
    // sequence starts from a copy of one empty database instead.
    template_db_ = dir_.File("template.db");
    EngineOptions options;
    options.db_path = template_db_;
    options.sync = false;
    options.clock = &clock_;
    Result<std::unique_ptr<Engine>> engine = Engine::Open(options);
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  }

  // One random sequence; returns false when it found a mismatch.
  bool RunSequence(uint64_t seed, int index);

  TempDir dir_;
  ManualClock clock_;
  std::string template_db_;
  std::map<std::string, int> stats_;
};

class Sequence {
 public:
  Sequence(uint64_t seed, std::string db_path, std::map<std::string, int>* stats)
      : g_(seed),
        gen_(&g_, &model_),
        // Sometimes a small txn bound, for ErrTooManyOps (nested txns get
        // what their parent leaves).
        model_(&clock_, ModelLimits{.max_txn_ops = g_.Chance(20) ? 5 : 128}),
        db_path_(std::move(db_path)),
        stats_(*stats) {
    options_.db_path = db_path_;
    options_.sync = false;
    options_.clock = &clock_;
    options_.seed = seed;
    options_.max_txn_ops = model_.limits().max_txn_ops;
    // Small bounds exercise compaction's deferred row removal, also across
    // restarts.
    const size_t kRowsPerCommit[] = {1, 3, 1000};
    options_.compaction_rows_per_commit = kRowsPerCommit[g_.Int(0, 2)];
    // Small value caches make reads, prev_kv and value compares go to the
    // rows (0: always; 300 bytes: a few values, evicted all the time).
    const size_t kValueCacheBytes[] = {0, 300, EngineOptions().value_cache_bytes};
    options_.value_cache_bytes = kValueCacheBytes[g_.Int(0, 2)];
  }

  void Run(int steps);
  const std::deque<std::string>& log() const { return log_; }

 private:
  void Open();
  void Step();
  void Write(WriteRequest request);
  void Commit();
  void Reopen();
  void Expire();
  void Check();
  void CheckEvents();
  void Log(std::string line) {
    log_.push_back(std::to_string(step_) + ": " + std::move(line));
    if (log_.size() > 60) log_.pop_front();
  }
  bool Failed() const { return ::testing::Test::HasFailure(); }

  ManualClock clock_;  // each sequence has its own: a replay is exact
  Gen g_;
  Generator gen_;
  Model model_;
  std::string db_path_;
  EngineOptions options_;
  std::unique_ptr<Engine> engine_;
  uint64_t next_index_ = 0;
  int step_ = 0;
  int64_t events_checked_at_ = -1;  // committed revision of the last full check
  std::deque<std::string> log_;
  std::map<std::string, int>& stats_;  // outcome counts, for NATCD_MODEL_STATS
};

void Sequence::Open() {
  Result<std::unique_ptr<Engine>> engine = Engine::Open(options_);
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  engine_ = std::move(engine).value();
  engine_->PromoteLeases(0);
}

void Sequence::Run(int steps) {
  Open();
  if (Failed()) return;
  Check();
  for (step_ = 1; step_ <= steps && !Failed(); ++step_) {
    Step();
    if (Failed()) return;
    Check();
  }
  if (Failed()) return;
  // End with everything committed and one more restart.
  Commit();
  if (!Failed()) Reopen();
}

void Sequence::Step() {
  int roll = static_cast<int>(g_.Int(0, 99));
  if (roll < 22) {
    Write(gen_.Put());
  } else if (roll < 30) {
    Write(gen_.Delete());
  } else if (roll < 50) {
    Write(gen_.Txn());
  } else if (roll < 55) {
    LeaseGrantRequest grant;
    grant.ttl = g_.Pick(std::vector<int64_t>{0, 1, 2, 3, 5, 10});
    if (g_.Chance(1)) grant.ttl = 9'000'000'001;  // ErrLeaseTTLTooLarge
    if (g_.Chance(30)) grant.id = g_.Int(1, 4);   // may exist: ErrLeaseExist
    if (g_.Chance(1)) grant.id = -1;              // ErrLeaseID
    Write(grant);
  } else if (roll < 58) {
    Write(LeaseRevokeRequest{gen_.Lease()});
  } else if (roll < 61) {
    int64_t id = gen_.Lease();
    int64_t expected = model_.KeepAlive(id);
    LeaseKeepAliveResponse got = engine_->LeaseKeepAlive({id});
    Log("keepalive(" + std::to_string(id) + ") -> " + std::to_string(got.ttl));
    EXPECT_EQ(got.ttl, expected) << "keepalive " << id;
    const int64_t now = clock_.MonotonicMs();
    EXPECT_EQ(engine_->LeaseRenewalRecorded(id, now), model_.RenewalRecorded(id, now))
        << "LeaseRenewalRecorded " << id;
  } else if (roll < 67) {
    Expire();
  } else if (roll < 69) {
    const bool scan_all = g_.Chance(50);
    std::optional<LeaseCheckpointRequest> got = engine_->LeaseCheckpoints(scan_all);
    LeaseCheckpointRequest expected{model_.Checkpoints(scan_all)};
    std::string want = expected.checkpoints.empty() ? "none" : Str(WriteRequest(expected));
    EXPECT_EQ(got ? Str(WriteRequest(*got)) : "none", want) << "LeaseCheckpoints";
    if (got && g_.Chance(85)) {
      Write(*got);
    } else if (got) {
      // Raft refused the proposal: offered again when still needed.
      Log("checkpoints dropped");
      engine_->LeaseCheckpointsDropped(*got);
      model_.CheckpointsDropped(*got);
    }
  } else if (roll < 70 && kBadCheckpoints) {
    // A checkpoint with one bad entry is a request error: it changes nothing.
    LeaseCheckpointRequest bad;
    bad.checkpoints.push_back({gen_.Lease(), g_.Int(1, 5000)});
    bad.checkpoints.push_back({gen_.Lease(), -1});
    Write(bad);
  } else if (roll < 74) {
    CompactionRequest c;
    c.revision = g_.Int(0, model_.revision() + 1);
    if (g_.Chance(70)) c.revision = g_.Int(model_.compact_revision(), model_.revision());
    c.physical = g_.Chance(20);
    Write(c);
  } else if (roll < 77) {
    clock_.AdvanceMs(g_.Int(0, 2000));
    Log("advance clock");
  } else if (roll < 92) {
    Commit();
  } else if (roll < 95) {
    if (g_.Chance(50)) Commit();
    if (!Failed()) Reopen();
  } else {
    // A step that writes nothing: one more read (Check reads more).
    RangeRequest r = gen_.Range();
    Log(Str(r));
    EXPECT_EQ(Str(engine_->Range(r)), Str(model_.Range(r))) << Str(r);
  }
}

void Sequence::Write(WriteRequest request) {
  engine_->Prepare(&request);
  // Mostly through the log path with an index, sometimes outside Raft.
  uint64_t index = g_.Chance(80) ? ++next_index_ : 0;
  const int64_t revision_before = model_.revision();
  Result<WriteResponse> expected = model_.Apply(request, index);
  Result<WriteResponse> got = engine_->Apply(request, index);
  Log(Str(request) + " -> " + Str(got));
  ++stats_[Kind(request) + (got.ok() ? " ok" : " " + std::string(got.status().name()))];
  if (auto* txn = std::get_if<TxnRequest>(&request); txn && got.ok()) {
    const auto& r = std::get<TxnResponse>(got.value());
    ++stats_[std::string("txn ") + (r.succeeded ? "then" : "else") +
             (r.header.revision > revision_before ? " wrote" : " read-only")];
    for (const RequestOp& op : r.succeeded ? txn->success : txn->failure) {
      if (std::holds_alternative<std::shared_ptr<TxnRequest>>(op.op)) ++stats_["txn nested taken"];
    }
  }
  EXPECT_EQ(Str(got), Str(expected)) << "request " << Str(request);
}

void Sequence::Commit() {
  Log("commit");
  ++stats_["commit"];
  ASSERT_OK(engine_->Commit());
  model_.Commit();
}

void Sequence::Reopen() {
  Log("reopen");
  ++stats_["reopen"];
  engine_.reset();
  Open();
  model_.Reopen();
  events_checked_at_ = -1;
}

void Sequence::Expire() {
  clock_.AdvanceMs(g_.Int(0, 4000));
  std::vector<int64_t> expected = model_.Expired();
  std::optional<LeaseExpireRequest> got = engine_->ExpiredLeases();
  std::vector<int64_t> got_ids = got ? got->ids : std::vector<int64_t>{};
  EXPECT_EQ(got_ids, expected) << "ExpiredLeases at " << clock_.MonotonicMs();
  if (!got) return;
  if (g_.Chance(80)) {
    Write(*got);
  } else {
    Log("expiry of " + std::to_string(got->ids.size()) + " leases dropped");  // offered again later
  }
}

void Sequence::Check() {
  ASSERT_EQ(engine_->revision(), model_.revision());
  ASSERT_EQ(engine_->CurrentRevision(), model_.committed_revision());
  ASSERT_EQ(engine_->CompactRevision(), model_.compact_revision());
  ASSERT_EQ(engine_->applied_index(), model_.applied_index());
  ASSERT_EQ(engine_->lease_count(), model_.leases().size());
  ASSERT_OK(engine_->health());

  for (int i = 0; i < 4; ++i) {
    RangeRequest r = gen_.Range();
    ASSERT_EQ(Str(engine_->Range(r)), Str(model_.Range(r))) << Str(r);
  }
  // The whole state at one random valid revision, and at the head.
  for (int64_t rev : {gen_.ReadRevision(), int64_t{0}}) {
    RangeRequest all;
    all.key = std::string(1, '\0');
    all.range_end = all.key;
    all.revision = rev;
    ASSERT_EQ(Str(engine_->Range(all)), Str(model_.Range(all))) << Str(all);
  }

  if (events_checked_at_ != model_.committed_revision()) {
    CheckEvents();
    if (Failed()) return;
    events_checked_at_ = model_.committed_revision();
  }
  // A random slice of the history.
  auto [key, end] = gen_.KeyRange();
  // (A compaction not yet committed may be above the committed revision.)
  int64_t from = g_.Int(std::max<int64_t>(0, model_.compact_revision() - 1),
                        std::max(model_.compact_revision(), model_.committed_revision()) + 1);
  int64_t to = g_.Int(from - 1, std::max(from, model_.revision()) + 1);
  size_t max = g_.Chance(30) ? SIZE_MAX : static_cast<size_t>(g_.Int(0, 6));
  bool prev = g_.Chance(50);
  std::vector<Event> got, expected;
  Status got_status = engine_->ReadEvents(key, end, from, to, max, prev, &got);
  Status expected_status = model_.ReadEvents(key, end, from, to, max, prev, &expected);
  ASSERT_EQ(Str(got_status) + " " + Str(got), Str(expected_status) + " " + Str(expected))
      << "ReadEvents(" << Bytes(key) << ", " << Bytes(end) << ", " << from << ", " << to << ", "
      << max << ", " << prev << ")";

  if (g_.Chance(20)) {
    LeaseLeasesResponse leases = engine_->LeaseLeases();
    ASSERT_EQ(leases.ids, model_.LeaseIds());
    LeaseTimeToLiveRequest q{gen_.Lease(), g_.Chance(50)};
    LeaseTimeToLiveResponse got_ttl = engine_->LeaseTimeToLive(q);
    LeaseTimeToLiveResponse want_ttl = model_.TimeToLive(q);
    EXPECT_EQ(got_ttl.ttl, want_ttl.ttl) << "TimeToLive " << q.id;
    EXPECT_EQ(got_ttl.granted_ttl, want_ttl.granted_ttl) << "TimeToLive " << q.id;
    EXPECT_EQ(got_ttl.keys, want_ttl.keys) << "TimeToLive " << q.id;
  }
}

// Every committed event from the compact revision on, with prev_kv.
void Sequence::CheckEvents() {
  const std::string all(1, '\0');
  int64_t from = model_.compact_revision();
  std::vector<Event> got, expected;
  ASSERT_OK(engine_->ReadEvents(all, all, from, engine_->CurrentRevision(), SIZE_MAX, true, &got));
  ASSERT_OK(
      model_.ReadEvents(all, all, from, model_.committed_revision(), SIZE_MAX, true, &expected));
  ASSERT_EQ(Str(got), Str(expected)) << "events from " << from;
  if (from > 0) {
    got.clear();
    Status below =
        engine_->ReadEvents(all, all, from - 1, engine_->CurrentRevision(), SIZE_MAX, false, &got);
    ASSERT_TRUE(below.IsCompacted()) << below.ToString();
  }
}

bool ModelTest::RunSequence(uint64_t seed, int index) {
  std::string db = dir_.File("seq-" + std::to_string(index) + ".db");
  std::filesystem::copy_file(template_db_, db);
  const uint64_t seq_seed = (seed << 32) ^ static_cast<uint64_t>(index) ^ 0x9e3779b97f4a7c15ull;
  Sequence sequence(seq_seed, db, &stats_);
  Gen lengths(seq_seed + 1);
  sequence.Run(static_cast<int>(lengths.Int(10, 120)));
  bool failed = HasFailure();
  if (failed) {
    std::string log;
    for (const std::string& line : sequence.log()) log += "  " + line + "\n";
    ADD_FAILURE() << "sequence " << index << " (seed " << seed
                  << "; replay with --gtest_random_seed=" << seed
                  << " NATCD_MODEL_SEQUENCE=" << index << ") failed; last operations:\n"
                  << log;
  }
  std::error_code ignored;
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db + suffix, ignored);
  return !failed;
}

TEST_F(ModelTest, RandomSequencesMatchTheModel) {
  const uint32_t seed = RandomSeed();
  const int only = EnvInt("NATCD_MODEL_SEQUENCE", -1);
  const int sequences = EnvInt("NATCD_MODEL_ITERATIONS", kDefaultSequences);
  auto start = std::chrono::steady_clock::now();
  int run = 0;
  for (int i = only >= 0 ? only : 0; i < (only >= 0 ? only + 1 : sequences); ++i) {
    SCOPED_TRACE("seed " + std::to_string(seed) + " sequence " + std::to_string(i));
    ++run;
    if (!RunSequence(seed, i)) break;
  }
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                  start)
                .count();
  RecordProperty("sequences", run);
  if (EnvInt("NATCD_MODEL_STATS", 0)) {
    for (const auto& [what, n] : stats_) printf("[ model    ] %8d %s\n", n, what.c_str());
  }
  printf("[ model    ] seed %u: %d sequences in %lld ms\n", seed, run, static_cast<long long>(ms));
}

}  // namespace
}  // namespace natcd::testing
