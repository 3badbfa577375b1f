// Disk faults at the SQLite seam (STYLE.md item 17; leveldb
// fault_injection_test.cc, SQLite's I/O-error tests). A fixed workload of
// puts, txns, lease grants/revokes/expiry, deletes, compactions and
// remembered request ids runs on an Engine whose SQLite goes through FaultVfs,
// with the Nth xWrite (or xSync) failing -- once (transient), from then on
// (persistent), or with every write, sync and delete after it (disk gone) --
// for N = 1, 2, ... until the workload and the close complete without the
// fault firing.
//
// After each failure: the engine reports it (health() is an IOError; Apply,
// Commit, Range and ReadEvents refuse with ErrStopped) and does not crash.
// Then, with the faulty VFS out of the way (and, in the "power loss"
// variants, every unsynced byte dropped), the store is opened again with
// SQLite's normal VFS and compared against the model (core/model/model.h):
//  - every write whose Commit returned OK is there, with its history, leases
//    and remembered request ids, and the store works (a new write commits);
//  - nothing of a failed commit is visible, unless the fault was a failed
//    fsync whose data did reach the file (no power loss): then the failed
//    commit may be there, but whole (all or nothing, never half a txn).
//    engine.h only promises what an OK Commit acknowledged; a write whose
//    Commit failed is "unknown", as after a timeout.
#include <sqlite3.h>

#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/model/model.h"
#include "core/storage/fault_vfs.h"
#include "natcd/engine.h"
#include "testutil.h"

namespace natcd::testing {
namespace {

const std::string kAll(1, '\0');
constexpr int64_t kRememberMs = 3'600'000;  // request ids outlive the test

// One batch of the workload: writes, request ids remembered with them, then
// a Commit. An empty batch is an idle Commit (it removes compacted rows).
struct Batch {
  std::vector<WriteRequest> writes;
  std::vector<std::pair<std::string, std::string>> remember;  // (request id, outcome)
};

PutRequest Put(std::string key, std::string value, int64_t lease = 0) {
  PutRequest p;
  p.key = std::move(key);
  p.value = std::move(value);
  p.lease = lease;
  return p;
}

template <typename T>
RequestOp MakeOp(T request) {
  RequestOp op;
  op.op = std::move(request);
  return op;
}

// Values of a few pages, so that commits write several WAL frames.
std::string Big(char c, size_t n) { return std::string(n, c); }

// The workload's batch b (the compactions pick revisions from the model,
// which is the same in every run up to the failure).
std::optional<Batch> Workload(int b, const Model& m) {
  Batch batch;
  switch (b) {
    case 0:
      batch.writes = {LeaseGrantRequest{60, 7}, Put("a", "v1"), Put("b", "v1", 7)};
      batch.remember = {{"req-1", "put a"}};
      break;
    case 1: {
      TxnRequest txn;
      Compare c;
      c.key = "a";
      c.version = 1;
      txn.compare = {c};
      txn.success = {MakeOp(Put("a", "v2")), MakeOp(Put("c", Big('c', 3000))),
                     MakeOp(DeleteRangeRequest{"b", "", true})};
      txn.failure = {MakeOp(Put("z", "failure"))};
      batch.writes = {txn};
      break;
    }
    case 2:
      for (int i = 0; i < 10; ++i) {
        batch.writes.push_back(Put("k0" + std::to_string(i), Big('a' + i, 700)));
      }
      break;
    case 3:
      batch.writes = {DeleteRangeRequest{"k00", "k05", false}, Put("d", "v1", 7)};
      batch.remember = {{"req-2", "put d"}};
      break;
    case 4:
      batch.writes = {CompactionRequest{m.revision() - 3, false}};
      break;
    case 5:
      batch.writes = {LeaseGrantRequest{5, 8}, Put("e", "v1", 8), Put("a", "v3"),
                      LeaseRevokeRequest{7}};
      break;
    case 6:
      break;  // idle: removes compacted rows (2 per Commit)
    case 7: {
      auto nested = std::make_shared<TxnRequest>();
      nested->success = {MakeOp(Put("f", Big('f', 5000)))};
      TxnRequest txn;
      txn.success = {MakeOp(nested), MakeOp(Put("g", "v1")),
                     MakeOp(DeleteRangeRequest{"k05", "k08", true})};
      batch.writes = {txn};
      break;
    }
    case 8:
      batch.writes = {LeaseExpireRequest{{8, 99}}};
      break;
    case 9:
      batch.writes = {CompactionRequest{m.revision() - 1, true}, Put("h", Big('h', 2500))};
      break;
    case 10:
      batch.writes = {Put("k08", Big('x', 1500)), Put("k09", Big('y', 1500))};
      batch.remember = {{"req-3", "put k08 k09"}};
      break;
    case 11:
      break;
    case 12:
      batch.writes = {Put("last", "v1")};
      break;
    default:
      return std::nullopt;
  }
  return batch;
}

const std::vector<std::string> kRequestIds = {"req-1", "req-2", "req-3"};

// The durable state as text, read through the Engine's API: what a reopen
// must reproduce.
std::string StateOf(Engine& e) {
  std::string out = "revision " + std::to_string(e.revision()) + " compact " +
                    std::to_string(e.CompactRevision()) + " index " +
                    std::to_string(e.applied_index()) + "\n";
  for (int64_t rev = std::max<int64_t>(1, e.CompactRevision()); rev <= e.revision(); ++rev) {
    RangeRequest all{kAll, kAll};
    all.revision = rev;
    out += "@" + std::to_string(rev) + " " + Str(e.Range(all)) + "\n";
  }
  std::vector<Event> events;
  Status s = e.ReadEvents(kAll, kAll, e.CompactRevision(), e.revision(), SIZE_MAX, true, &events);
  out += "events " + (s.ok() ? Str(events) : Str(s)) + "\n";
  for (int64_t id : e.LeaseLeases().ids) {
    LeaseTimeToLiveResponse ttl = e.LeaseTimeToLive({id, true});
    out += "lease " + std::to_string(id) + " ttl " + std::to_string(ttl.granted_ttl) + " keys";
    for (const std::string& k : ttl.keys) out += " " + Bytes(k);
    out += "\n";
  }
  for (const std::string& id : kRequestIds) {
    const std::string* outcome = e.FindRequest(id);
    out += id + ": " + (outcome ? *outcome : "-") + "\n";
  }
  return out;
}

std::string StateOf(const Model& m, const std::map<std::string, std::string>& remembered) {
  std::string out = "revision " + std::to_string(m.revision()) + " compact " +
                    std::to_string(m.compact_revision()) + " index " +
                    std::to_string(m.applied_index()) + "\n";
  for (int64_t rev = std::max<int64_t>(1, m.compact_revision()); rev <= m.revision(); ++rev) {
    RangeRequest all{kAll, kAll};
    all.revision = rev;
    out += "@" + std::to_string(rev) + " " + Str(m.Range(all)) + "\n";
  }
  std::vector<Event> events;
  Status s = m.ReadEvents(kAll, kAll, m.compact_revision(), m.revision(), SIZE_MAX, true, &events);
  out += "events " + (s.ok() ? Str(events) : Str(s)) + "\n";
  for (int64_t id : m.LeaseIds()) {
    LeaseTimeToLiveResponse ttl = m.TimeToLive({id, true});
    out += "lease " + std::to_string(id) + " ttl " + std::to_string(ttl.granted_ttl) + " keys";
    for (const std::string& k : ttl.keys) out += " " + Bytes(k);
    out += "\n";
  }
  for (const std::string& id : kRequestIds) {
    auto it = remembered.find(id);
    out += id + ": " + (it != remembered.end() ? it->second : "-") + "\n";
  }
  return out;
}

struct Variant {
  FaultVfs::Op op;
  FaultVfs::Mode mode;
  bool power_loss;  // drop unsynced data before reopening

  std::string Name() const {
    static const char* kModes[] = {" transient", " persistent", " disk gone"};
    return std::string(op == FaultVfs::Op::kWrite ? "xWrite" : "xSync") +
           kModes[static_cast<int>(mode)] + (power_loss ? " + power loss" : "");
  }
};

// What the runs of one variant saw.
struct Tally {
  int runs = 0;
  int failed_open = 0;
  int failed_apply = 0;
  int failed_commit = 0;
  int failed_remember = 0;
  int fired_at_close = 0;  // the workload completed; closing hit the fault
  int failed_commit_visible = 0;
  int power_loss_dropped_data = 0;  // runs where the power loss changed a file
};

class FaultInjectionTest : public ::testing::Test {
 protected:
  // One run with the nth call faulty. Returns whether the fault fired.
  bool RunOnce(const Variant& v, int64_t n, Tally* tally);
  void RunAll(const Variant& v);

  FaultVfs vfs_;
};

EngineOptions Options(const std::string& path, Clock* clock) {
  EngineOptions options;
  options.db_path = path;
  options.sync = true;  // synchronous=FULL: SQLite syncs each commit through the VFS
  options.clock = clock;
  options.seed = 11;
  options.compaction_rows_per_commit = 2;
  return options;
}

bool FaultInjectionTest::RunOnce(const Variant& v, int64_t n, Tally* tally) {
  SCOPED_TRACE(v.Name() + ", fault at call " + std::to_string(n));
  TempDir dir;
  const std::string path = dir.File("natcd.db");
  ManualClock clock;
  Model model(&clock);
  Model acked = model;
  std::map<std::string, std::string> remembered, remembered_acked;
  enum class Failed { kNone, kOpen, kApply, kRemember, kCommit } failed = Failed::kNone;

  vfs_.Register(/*as_default=*/true);
  vfs_.FailNth(v.op, n, v.mode);
  {
    Result<std::unique_ptr<Engine>> opened = Engine::Open(Options(path, &clock));
    if (!opened.ok()) {
      failed = Failed::kOpen;
      EXPECT_TRUE(vfs_.fired()) << opened.status().ToString();
    } else {
      std::unique_ptr<Engine> engine = std::move(opened).value();
      engine->PromoteLeases(0);
      uint64_t index = 0;
      for (int b = 0; failed == Failed::kNone; ++b) {
        std::optional<Batch> batch = Workload(b, model);
        if (!batch) break;
        for (const WriteRequest& w : batch->writes) {
          Result<WriteResponse> got = engine->Apply(w, ++index);
          if (!got.ok() && got.status().code() == Status::Code::kUnavailable) {
            failed = Failed::kApply;
            break;
          }
          Result<WriteResponse> expected = model.Apply(w, index);
          EXPECT_EQ(Str(got), Str(expected)) << "batch " << b << ": " << Str(w);
        }
        for (const auto& [id, outcome] : batch->remember) {
          if (failed != Failed::kNone) break;
          Status s = engine->RememberRequest(id, clock.RealtimeMs() + kRememberMs, outcome);
          if (!s.ok()) {
            failed = Failed::kRemember;
            break;
          }
          remembered[id] = outcome;
        }
        if (failed != Failed::kNone) break;
        Status s = engine->Commit();
        if (!s.ok()) {
          failed = Failed::kCommit;
          EXPECT_EQ(s.code(), Status::Code::kUnavailable) << s.ToString();
          break;
        }
        model.Commit();
        acked = model;
        remembered_acked = remembered;
      }
      if (failed != Failed::kNone) {
        // The engine reports the failure and refuses everything after it.
        EXPECT_TRUE(vfs_.fired());
        EXPECT_EQ(engine->health().code(), Status::Code::kIOError) << engine->health().ToString();
        Result<WriteResponse> put = engine->Apply(Put("after", "failure"));
        EXPECT_FALSE(put.ok());
        EXPECT_EQ(put.status().name(), "ErrStopped");
        EXPECT_EQ(engine->Commit().name(), "ErrStopped");
        Result<RangeResponse> range = engine->Range(RangeRequest{kAll, kAll});
        EXPECT_FALSE(range.ok());
        std::vector<Event> events;
        EXPECT_FALSE(engine->ReadEvents(kAll, kAll, 0, 100, 100, false, &events).ok());
        EXPECT_FALSE(engine->RememberRequest("after", 0, "x").ok());
      }
      // Closing goes through the faulty VFS too (SQLite checkpoints the WAL).
    }
  }
  const bool fired = vfs_.fired();
  if (fired && failed == Failed::kNone) ++tally->fired_at_close;
  ++tally->runs;
  tally->failed_open += failed == Failed::kOpen;
  tally->failed_apply += failed == Failed::kApply;
  tally->failed_remember += failed == Failed::kRemember;
  tally->failed_commit += failed == Failed::kCommit;

  vfs_.Disarm();
  if (v.power_loss) {
    EXPECT_OK(vfs_.DropUnsyncedData());
    tally->power_loss_dropped_data += vfs_.dropped_files() > 0;
  } else {
    vfs_.ForgetUnsyncedData();
  }
  vfs_.Unregister();
  EXPECT_EQ(vfs_.open_files(), 0);

  // Reopen with SQLite's own VFS.
  Result<std::unique_ptr<Engine>> reopened = Engine::Open(Options(path, &clock));
  EXPECT_TRUE(reopened.ok()) << reopened.status().ToString();
  if (!reopened.ok()) return fired;
  std::unique_ptr<Engine> engine = std::move(reopened).value();
  engine->PromoteLeases(0);
  acked.Reopen();
  const std::string state = StateOf(*engine);
  const std::string want = StateOf(acked, remembered_acked);
  // A commit whose fsync failed but whose bytes reached the file may be there
  // after a reopen (its outcome was unknown), but only whole.
  std::string attempted;
  if (failed == Failed::kCommit && v.op == FaultVfs::Op::kSync && !v.power_loss) {
    Model whole = model;
    whole.Commit();
    whole.Reopen();
    attempted = StateOf(whole, remembered);
  }
  if (!attempted.empty() && state == attempted && state != want) {
    ++tally->failed_commit_visible;
  } else {
    EXPECT_EQ(state, want) << "after a failure at "
                           << (failed == Failed::kCommit ? "Commit" : "another call");
  }

  // The store works on.
  Result<WriteResponse> put = engine->Apply(Put("after", "reopen"));
  EXPECT_TRUE(put.ok()) << put.status().ToString();
  EXPECT_OK(engine->Commit());
  EXPECT_EQ(engine->revision(), engine->CurrentRevision());
  return fired;
}

void FaultInjectionTest::RunAll(const Variant& v) {
  Tally tally;
  int64_t n = 1;
  for (; n <= 5'000; ++n) {
    if (!RunOnce(v, n, &tally)) break;
    if (HasFailure()) {
      ADD_FAILURE() << v.Name() << ": stopped at fault " << n;
      return;
    }
  }
  EXPECT_LT(n, 5'000) << "the fault kept firing";
  // The loop must have failed commits, not just opens and closes.
  EXPECT_GT(tally.failed_commit, 0);
  printf(
      "[ faults   ] %-28s %4d runs: failed open %d, apply %d, remember %d, commit %d; fired while "
      "closing %d; failed commit visible after reopen %d; power loss dropped data %d\n",
      v.Name().c_str(), tally.runs, tally.failed_open, tally.failed_apply, tally.failed_remember,
      tally.failed_commit, tally.fired_at_close, tally.failed_commit_visible,
      tally.power_loss_dropped_data);
}

TEST_F(FaultInjectionTest, WriteFaults) {
  for (auto mode :
       {FaultVfs::Mode::kTransient, FaultVfs::Mode::kPersistent, FaultVfs::Mode::kDiskGone}) {
    for (bool power_loss : {false, true}) {
      RunAll({FaultVfs::Op::kWrite, mode, power_loss});
      if (HasFailure()) return;
    }
  }
}

TEST_F(FaultInjectionTest, SyncFaults) {
  for (auto mode :
       {FaultVfs::Mode::kTransient, FaultVfs::Mode::kPersistent, FaultVfs::Mode::kDiskGone}) {
    for (bool power_loss : {false, true}) {
      RunAll({FaultVfs::Op::kSync, mode, power_loss});
      if (HasFailure()) return;
    }
  }
}

// The VFS itself: registered as the default for its lifetime only, and a
// power loss puts files back as they were at their last sync.
TEST(FaultVfsTest, DefaultVfsIsRestoredAndUnsyncedDataIsDropped) {
  sqlite3_vfs* before = sqlite3_vfs_find(nullptr);
  TempDir dir;
  const std::string path = dir.File("plain.db");
  {
    FaultVfs vfs;
    vfs.Register(true);
    EXPECT_EQ(sqlite3_vfs_find(nullptr), sqlite3_vfs_find(vfs.name().c_str()));
    sqlite3* db = nullptr;
    ASSERT_EQ(
        sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr),
        SQLITE_OK);
    EXPECT_EQ(vfs.open_files(), 1);
    auto exec = [db](const char* sql) { return sqlite3_exec(db, sql, nullptr, nullptr, nullptr); };
    ASSERT_EQ(exec("PRAGMA journal_mode=DELETE; PRAGMA synchronous=FULL;"
                   "CREATE TABLE t(x); INSERT INTO t VALUES (1)"),
              SQLITE_OK);
    // synchronous=OFF: this commit is written but never synced.
    ASSERT_EQ(exec("PRAGMA synchronous=OFF; INSERT INTO t VALUES (2)"), SQLITE_OK);
    vfs.FailNth(FaultVfs::Op::kWrite, 1, FaultVfs::Mode::kTransient);
    EXPECT_NE(exec("INSERT INTO t VALUES (3)"), SQLITE_OK);
    EXPECT_TRUE(vfs.fired());
    EXPECT_EQ(exec("INSERT INTO t VALUES (4)"), SQLITE_OK);  // transient: works again
    sqlite3_close(db);
    EXPECT_EQ(vfs.open_files(), 0);
    ASSERT_OK(vfs.DropUnsyncedData());
    vfs.Unregister();
    EXPECT_EQ(sqlite3_vfs_find(nullptr), before);
  }
  EXPECT_EQ(sqlite3_vfs_find(nullptr), before);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT group_concat(x) FROM t", -1, &stmt, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(stmt), SQLITE_ROW);
  // Only the synced commit survived the power loss.
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0)), "1");
  sqlite3_finalize(stmt);
  sqlite3_close(db);
}

TEST(FaultVfsTest, DurableContentsIsWhatTheLastSyncLeftWhileTheFileIsOpen) {
  TempDir dir;
  const std::string path = dir.File("open.db");
  FaultVfs vfs;
  vfs.Register(true);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr),
            SQLITE_OK);
  auto exec = [](sqlite3* on, const char* sql) {
    return sqlite3_exec(on, sql, nullptr, nullptr, nullptr);
  };
  ASSERT_EQ(exec(db,
                 "PRAGMA journal_mode=DELETE; PRAGMA synchronous=FULL;"
                 "CREATE TABLE t(x); INSERT INTO t VALUES (1)"),
            SQLITE_OK);
  ASSERT_EQ(exec(db, "PRAGMA synchronous=OFF; INSERT INTO t VALUES (2)"), SQLITE_OK);
  // The file is still open: what a power loss now would leave of it.
  Result<std::string> durable = vfs.DurableContents(path);
  ASSERT_TRUE(durable.ok()) << durable.status().ToString();
  vfs.ForgetUnsyncedDataUnder(dir.File(""));
  Result<std::string> forgotten = vfs.DurableContents(path);
  ASSERT_TRUE(forgotten.ok());
  EXPECT_NE(*durable, *forgotten);  // forgotten: all of it counts as durable
  sqlite3_close(db);
  vfs.Unregister();
  auto read_back = [&](const std::string& contents) {
    const std::string copy = dir.File("copy.db");
    FILE* f = fopen(copy.c_str(), "wb");
    fwrite(contents.data(), 1, contents.size(), f);
    fclose(f);
    sqlite3* c = nullptr;
    EXPECT_EQ(sqlite3_open_v2(copy.c_str(), &c, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
    sqlite3_stmt* stmt = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(c, "SELECT group_concat(x) FROM t", -1, &stmt, nullptr),
              SQLITE_OK);
    EXPECT_EQ(sqlite3_step(stmt), SQLITE_ROW);
    std::string out = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
    sqlite3_finalize(stmt);
    sqlite3_close(c);
    return out;
  };
  EXPECT_EQ(read_back(*durable), "1");
  EXPECT_EQ(read_back(*forgotten), "1,2");
}

}  // namespace
}  // namespace natcd::testing
