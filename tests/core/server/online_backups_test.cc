// OnlineBackups, the backup file and restore: a backup taken while another
// thread writes, read in many small chunks, is a file whose checksum holds
// and that restores to exactly the state of the commit it copied, with the
// old cluster's Raft state gone; sessions are bounded and dropped when
// idle; a damaged file is refused with a clear error.
#include "server/online_backups.h"

#include <sys/stat.h>

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "natcd/clock.h"
#include "natcd/engine.h"
#include "raft/durable_raft_storage.h"
#include "server/backup_restore.h"
#include "storage/backup_file.h"
#include "testutil.h"

namespace natcd::server {
namespace {

constexpr uint64_t kKeys = 300;
constexpr uint64_t kBatch = 25;

std::string Key(uint64_t i) { return "k/" + std::to_string(i % kKeys); }
std::string Value(uint64_t i) { return "v" + std::to_string(i) + std::string(300, 'x'); }

class OnlineBackupsTest : public ::testing::Test {
 protected:
  EngineOptions Options(const std::string& path) {
    EngineOptions options;
    options.db_path = path;
    options.sync = false;
    options.clock = &clock_;
    return options;
  }
  std::unique_ptr<Engine> OpenEngine(const std::string& path) {
    Result<std::unique_ptr<Engine>> engine = Engine::Open(Options(path));
    EXPECT_TRUE(engine.ok()) << engine.status().ToString();
    return engine.ok() ? std::move(engine).value() : nullptr;
  }
  static void Apply(Engine* engine, uint64_t from, uint64_t to) {
    for (uint64_t i = from + 1; i <= to; i++) {
      WriteRequest put = PutRequest{Key(i), Value(i)};
      ASSERT_TRUE(engine->Apply(put, i).ok());
      if (i % kBatch == 0) ASSERT_OK(engine->Commit());
    }
  }
  static std::map<std::string, std::string> Contents(Engine* engine) {
    RangeRequest all;
    all.key = "k/";
    all.range_end = "k0";
    Result<RangeResponse> range = engine->Range(all);
    EXPECT_TRUE(range.ok()) << range.status().ToString();
    std::map<std::string, std::string> got;
    if (range.ok()) {
      for (const KeyValue& kv : range->kvs) got[kv.key] = kv.value;
    }
    return got;
  }
  static std::map<std::string, std::string> ModelAt(uint64_t applied) {
    std::map<std::string, std::string> model;
    for (uint64_t i = 1; i <= applied; i++) model[Key(i)] = Value(i);
    return model;
  }
  OnlineBackupOptions BackupOptions(const std::string& db) {
    OnlineBackupOptions o;
    o.db_path = db;
    o.dir = dir_.path();
    o.idle_timeout_ms = 1'000;
    return o;
  }
  // Begins a backup and waits for its first chunk.
  static Result<BackupChunk> First(OnlineBackups& backups, size_t chunk_bytes) {
    std::mutex mu;
    std::condition_variable cv;
    std::optional<Result<BackupChunk>> first;
    Status s = backups.Begin(chunk_bytes, [&](Result<BackupChunk> r) {
      std::lock_guard<std::mutex> lock(mu);
      first = std::move(r);
      cv.notify_one();
    });
    if (!s.ok()) return s;
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return first.has_value(); });
    return std::move(*first);
  }
  // Reads the whole stream into `path`, chunk by chunk.
  static BackupChunk ReadAll(OnlineBackups& backups, size_t chunk_bytes, const std::string& path,
                             int* chunks) {
    Result<BackupChunk> chunk = First(backups, chunk_bytes);
    EXPECT_TRUE(chunk.ok()) << chunk.status().ToString();
    if (!chunk.ok()) return {};
    const BackupChunk first = *chunk;
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    *chunks = 0;
    for (;;) {
      EXPECT_LE(chunk->blob.size(), chunk_bytes);
      EXPECT_EQ(chunk->offset + chunk->blob.size() + chunk->remaining_bytes, first.total_bytes);
      out.write(chunk->blob.data(), static_cast<std::streamsize>(chunk->blob.size()));
      ++*chunks;
      if (chunk->remaining_bytes == 0) break;
      chunk = backups.Read(first.backup_id, chunk->offset + chunk->blob.size(), chunk_bytes);
      EXPECT_TRUE(chunk.ok()) << chunk.status().ToString();
      if (!chunk.ok()) return {};
    }
    return first;
  }
  static std::string Slurp(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), {});
  }
  static void Spit(const std::string& path, const std::string& bytes) {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f << bytes;
  }

  natcd::testing::TempDir dir_;
  ManualClock clock_;
};

TEST_F(OnlineBackupsTest, BackupUnderWritesRestoresToTheCommitItCopied) {
  const std::string db = dir_.File("natcd.db");
  std::unique_ptr<Engine> engine = OpenEngine(db);
  ASSERT_NE(engine, nullptr);
  constexpr uint64_t kPreloaded = 3'000;
  Apply(engine.get(), 0, kPreloaded);
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> written{kPreloaded};
  std::thread writer([&] {
    for (uint64_t i = kPreloaded + 1; !stop.load(); i++) {
      WriteRequest put = PutRequest{Key(i), Value(i)};
      if (!engine->Apply(put, i).ok()) return;
      if (i % kBatch == 0) {
        if (!engine->Commit().ok()) return;
        written.store(i);
      }
    }
  });
  OnlineBackups backups(BackupOptions(db), &clock_);
  const std::string file = dir_.File("backup.db");
  int chunks = 0;
  const BackupChunk first = ReadAll(backups, 64 << 10, file, &chunks);
  stop = true;
  writer.join();
  ASSERT_NE(first.backup_id, 0u);
  EXPECT_GT(chunks, 5) << "a stream of many chunks";
  EXPECT_GE(first.applied_index, kPreloaded);
  EXPECT_EQ(first.applied_index % kBatch, 0u) << "one commit, never half a batch";
  EXPECT_GT(written.load(), kPreloaded) << "writes went on";
  EXPECT_EQ(first.total_bytes, Slurp(file).size());
  // The same offset read again gives the same bytes (a retried reply).
  Result<BackupChunk> again = backups.Read(first.backup_id, 0, 64 << 10);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->blob, first.blob);
  backups.End(first.backup_id);
  EXPECT_EQ(backups.open_count(), 0u);
  EXPECT_TRUE(backups.Read(first.backup_id, 0, 1).status().IsNotFound());

  Result<RestoredBackup> restored = RestoreBackup(file, dir_.File("restored.db"));
  ASSERT_TRUE(restored.ok()) << restored.status().ToString();
  EXPECT_EQ(restored->facts.revision, first.revision);
  EXPECT_EQ(restored->facts.applied_index, 0u) << "the old cluster's index goes";
  EXPECT_EQ(restored->backup.database_bytes + kBackupTrailerBytes, first.total_bytes);
  std::unique_ptr<Engine> back = OpenEngine(dir_.File("restored.db"));
  ASSERT_NE(back, nullptr);
  EXPECT_EQ(back->revision(), first.revision);
  EXPECT_EQ(Contents(back.get()), ModelAt(first.applied_index));
  raftlog::PosixLogFs fs;
  Result<std::unique_ptr<raft::DurableRaftStorage>> raft =
      back->OpenRaftLog(&fs, raft::DurableRaftStorage::LogDirOf(dir_.File("restored.db")),
                        raftlog::RaftLogOptions{1 << 16});
  ASSERT_TRUE(raft.ok()) << raft.status().ToString();
  EXPECT_FALSE((*raft)->Initialized()) << "a new cluster's member: no Raft state";
  EXPECT_TRUE((*raft)->member_names().empty());
}

TEST_F(OnlineBackupsTest, BoundedAndDroppedWhenIdle) {
  const std::string db = dir_.File("natcd.db");
  std::unique_ptr<Engine> engine = OpenEngine(db);
  ASSERT_NE(engine, nullptr);
  Apply(engine.get(), 0, 100);
  OnlineBackups backups(BackupOptions(db), &clock_);
  Result<BackupChunk> a = First(backups, 4096);
  Result<BackupChunk> b = First(backups, 4096);
  ASSERT_TRUE(a.ok() && b.ok());
  Result<BackupChunk> c = First(backups, 4096);
  EXPECT_EQ(c.status().code(), Status::Code::kTooManyRequests) << c.status().ToString();
  EXPECT_TRUE(backups.Read(a->backup_id, a->total_bytes + 1, 10).status().IsInvalidArgument());
  clock_.AdvanceMs(600);
  ASSERT_TRUE(backups.Read(a->backup_id, 4096, 4096).ok());  // a is read, b is not
  clock_.AdvanceMs(600);
  backups.ExpireIdle();
  EXPECT_EQ(backups.open_count(), 1u);
  EXPECT_TRUE(backups.Read(b->backup_id, 0, 10).status().IsNotFound());
  EXPECT_TRUE(backups.Read(a->backup_id, 0, 10).ok());
  backups.Close();
  EXPECT_EQ(backups.open_count(), 0u);
  EXPECT_EQ(backups.Begin(10, [](Result<BackupChunk>) {}).code(), Status::Code::kUnavailable);
  // No copy is left in the directory.
  for (const auto& entry : std::filesystem::directory_iterator(dir_.path())) {
    EXPECT_EQ(entry.path().filename().string().rfind("natcd-backup-", 0), std::string::npos)
        << entry.path();
  }
}

TEST_F(OnlineBackupsTest, DamagedFilesAreRefused) {
  const std::string db = dir_.File("natcd.db");
  std::unique_ptr<Engine> engine = OpenEngine(db);
  ASSERT_NE(engine, nullptr);
  Apply(engine.get(), 0, 200);
  OnlineBackups backups(BackupOptions(db), &clock_);
  const std::string file = dir_.File("good.db");
  int chunks = 0;
  ASSERT_NE(ReadAll(backups, 1 << 20, file, &chunks).backup_id, 0u);
  const std::string good = Slurp(file);
  EXPECT_EQ(good.size() % 512, 32u);
  ASSERT_TRUE(ExtractBackup(file, dir_.File("x")).ok());

  std::string flipped = good;
  flipped[100] ^= 0x40;
  Spit(dir_.File("flipped.db"), flipped);
  Result<ExtractedBackup> bad = ExtractBackup(dir_.File("flipped.db"), dir_.File("y"));
  EXPECT_EQ(bad.status().code(), Status::Code::kCorruption);
  EXPECT_NE(bad.status().message().find("is damaged: expected sha256"), std::string::npos)
      << bad.status().ToString();
  struct stat st;
  EXPECT_NE(stat(dir_.File("y").c_str(), &st), 0) << "nothing left on error";

  std::string trailer = good;
  trailer[trailer.size() - 1] ^= 0x01;  // the checksum itself
  Spit(dir_.File("trailer.db"), trailer);
  EXPECT_EQ(ExtractBackup(dir_.File("trailer.db"), dir_.File("y")).status().code(),
            Status::Code::kCorruption);

  Spit(dir_.File("cut.db"), good.substr(0, good.size() - 1));
  bad = ExtractBackup(dir_.File("cut.db"), dir_.File("y"));
  EXPECT_EQ(bad.status().code(), Status::Code::kCorruption);
  EXPECT_NE(bad.status().message().find("is truncated or not a snapshot"), std::string::npos);
  Spit(dir_.File("cut2.db"), good.substr(0, good.size() - 4096));
  EXPECT_EQ(RestoreBackup(dir_.File("cut2.db"), dir_.File("r.db")).status().code(),
            Status::Code::kCorruption);
  EXPECT_NE(stat(dir_.File("r.db").c_str(), &st), 0);

  EXPECT_TRUE(ExtractBackup(dir_.File("missing.db"), dir_.File("y")).status().IsNotFound());
  // A restore never replaces a database.
  EXPECT_TRUE(RestoreBackup(file, db).status().IsInvalidArgument());
}

}  // namespace
}  // namespace natcd::server
