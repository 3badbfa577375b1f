#include "raft/durable_raft_storage.h"

#include <errno.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "storage/durable_file.h"
#include "storage/sqlite_backend.h"

namespace natcd::raft {
namespace {

// raft_state rows "member/<16 hex digits of the ID>" hold member names.
constexpr const char* kMemberNamePrefix = "member/";
// DO NOT CHANGE: persisted. "member-urls/<id in hex>": the member's client
// URLs, one per line.
constexpr const char* kMemberUrlsPrefix = "member-urls/";
// DO NOT CHANGE: persisted. "member-peer-urls/<id in hex>": the peer URLs
// a MemberUpdate set, one per line.
constexpr const char* kMemberPeerUrlsPrefix = "member-peer-urls/";

// raft_log_run held the log in runs of consecutive entries before the log
// file (read only to migrate them now); created so that the statements
// that read and clear it work on any database.
constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS raft_log_run (
  first_idx INTEGER PRIMARY KEY,
  last_idx INTEGER NOT NULL,
  entries BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS raft_state (name TEXT PRIMARY KEY, value BLOB NOT NULL) WITHOUT ROWID;
)sql";

void PutU32(std::string* out, uint32_t v) {
  for (int i = 0; i < 4; i++) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void PutU64(std::string* out, uint64_t v) {
  for (int i = 0; i < 8; i++) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
bool GetU64(std::string_view in, size_t* pos, uint64_t* v) {
  if (*pos + 8 > in.size()) return false;
  *v = 0;
  for (int i = 0; i < 8; i++) {
    *v |= static_cast<uint64_t>(static_cast<uint8_t>(in[*pos + i])) << (8 * i);
  }
  *pos += 8;
  return true;
}
bool GetU32(std::string_view in, size_t* pos, uint32_t* v) {
  if (*pos + 4 > in.size()) return false;
  *v = 0;
  for (int i = 0; i < 4; i++) {
    *v |= static_cast<uint32_t>(static_cast<uint8_t>(in[*pos + i])) << (8 * i);
  }
  *pos += 4;
  return true;
}

// A run's entries, each: term (u64), type (u8), data size (u32), data; all
// little-endian. Their indexes are the run's first_idx, first_idx + 1, ...
void EncodeRunEntry(const Entry& e, std::string* out) {
  PutU64(out, e.term);
  out->push_back(static_cast<char>(e.type));
  PutU32(out, static_cast<uint32_t>(e.data.size()));
  out->append(e.data);
}
// Decodes the entry at *pos into *entry (its index: `index`), advancing *pos.
bool DecodeRunEntry(std::string_view in, size_t* pos, uint64_t index, Entry* entry) {
  uint64_t term = 0;
  uint32_t size = 0;
  if (!GetU64(in, pos, &term) || *pos >= in.size()) return false;
  const auto type = static_cast<uint8_t>(in[(*pos)++]);
  if (!GetU32(in, pos, &size) || size > in.size() - *pos) return false;
  if (type != static_cast<uint8_t>(EntryType::kNormal) &&
      type != static_cast<uint8_t>(EntryType::kConfChange)) {
    return false;
  }
  entry->index = index;
  entry->term = term;
  entry->type = static_cast<EntryType>(type);
  entry->data.assign(in.substr(*pos, size));
  *pos += size;
  return true;
}

void PutIds(std::string* out, const std::vector<NodeId>& ids) {
  PutU64(out, ids.size());
  for (NodeId id : ids) PutU64(out, id);
}
bool GetIds(const std::string& in, size_t* pos, std::vector<NodeId>* ids) {
  uint64_t n = 0;
  if (!GetU64(in, pos, &n) || n > (in.size() - *pos) / 8) return false;
  ids->resize(n);
  for (uint64_t i = 0; i < n; i++) {
    if (!GetU64(in, pos, &(*ids)[i])) return false;
  }
  return true;
}

std::string EncodeSnapshotMeta(const SnapshotMeta& meta) {
  std::string out;
  PutU64(&out, meta.index);
  PutU64(&out, meta.term);
  PutIds(&out, meta.conf_state.voters);
  PutIds(&out, meta.conf_state.learners);
  return out;
}
bool DecodeSnapshotMeta(const std::string& in, SnapshotMeta* meta) {
  size_t pos = 0;
  return GetU64(in, &pos, &meta->index) && GetU64(in, &pos, &meta->term) &&
         GetIds(in, &pos, &meta->conf_state.voters) &&
         GetIds(in, &pos, &meta->conf_state.learners) && pos == in.size();
}

// The ID of a row named prefix + hex ID, or nullopt.
std::optional<NodeId> IdOfRow(const std::string& name, const char* prefix) {
  if (name.rfind(prefix, 0) != 0) return std::nullopt;
  char* end = nullptr;
  const char* hex = name.c_str() + strlen(prefix);
  const NodeId id = strtoull(hex, &end, 16);
  if (end == hex || *end != '\0') return std::nullopt;
  return id;
}

// A URL list row: one URL per line.
std::string EncodeUrls(const std::vector<std::string>& urls) {
  std::string value;
  for (const std::string& url : urls) value += url + "\n";
  return value;
}
std::vector<std::string> DecodeUrls(const std::string& value) {
  std::vector<std::string> urls;
  for (size_t start = 0; start < value.size();) {
    size_t nl = value.find('\n', start);
    if (nl == std::string::npos) nl = value.size();
    if (nl > start) urls.push_back(value.substr(start, nl - start));
    start = nl + 1;
  }
  return urls;
}

class Reset {
 public:
  explicit Reset(sqlite3_stmt* stmt) : stmt_(stmt) {}
  ~Reset() { sqlite3_reset(stmt_); }

 private:
  sqlite3_stmt* stmt_;
};

std::string Column(sqlite3_stmt* stmt, int column) {
  const void* data = sqlite3_column_blob(stmt, column);
  int size = sqlite3_column_bytes(stmt, column);
  return data ? std::string(static_cast<const char*>(data), size) : std::string();
}

}  // namespace

Result<std::unique_ptr<DurableRaftStorage>> DurableRaftStorage::Open(
    SqliteBackend* backend, raftlog::LogFs* fs, const std::string& log_dir,
    const raftlog::RaftLogOptions& log_options) {
  if (backend->in_batch()) return Status::Internal("raft storage opened inside a batch");
  std::unique_ptr<DurableRaftStorage> storage(
      new DurableRaftStorage(backend, fs, log_dir, log_options));
  NATCD_RETURN_IF_ERROR(storage->Init());
  NATCD_RETURN_IF_ERROR(storage->LoadDatabase());
  if (storage->log_in_database_) NATCD_RETURN_IF_ERROR(storage->MoveLogOutOfDatabase());
  NATCD_RETURN_IF_ERROR(storage->OpenLogFile());
  return storage;
}

DurableRaftStorage::~DurableRaftStorage() { sqlite3_finalize(put_state_); }

Status DurableRaftStorage::Init() {
  sqlite3* db = backend_->handle();
  char* err = nullptr;
  int rc = sqlite3_exec(db, kSchema, nullptr, nullptr, &err);
  sqlite3_free(err);
  if (rc != SQLITE_OK) return SqliteStatus(db, rc, "create raft tables");
  const char* sql = "INSERT OR REPLACE INTO raft_state (name, value) VALUES (?, ?)";
  rc = sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &put_state_, nullptr);
  if (rc != SQLITE_OK) return SqliteStatus(db, rc, sql);
  return MigrateEntryTable();
}

// The raft_state rows; and a log from before the log file (runs, hard
// state, log start) into mirror_, as the format before it loaded it.
Status DurableRaftStorage::LoadDatabase() {
  sqlite3* db = backend_->handle();
  std::string hard_state, log_start, snapshot;
  {
    sqlite3_stmt* stmt = nullptr;
    int rc = sqlite3_prepare_v2(db, "SELECT name, value FROM raft_state", -1, &stmt, nullptr);
    if (rc != SQLITE_OK) return SqliteStatus(db, rc, "read raft state");
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
      std::string name = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
      std::string value = Column(stmt, 1);
      if (name == "hard_state") hard_state = value;
      if (name == "log_start") log_start = value;
      if (name == "snapshot") snapshot = value;
      if (name == "boot_existing") booted_over_existing_data_ = true;
      if (std::optional<NodeId> id = IdOfRow(name, kMemberNamePrefix)) member_names_[*id] = value;
      if (std::optional<NodeId> id = IdOfRow(name, kMemberUrlsPrefix)) {
        member_client_urls_[*id] = DecodeUrls(value);
      }
      if (std::optional<NodeId> id = IdOfRow(name, kMemberPeerUrlsPrefix)) {
        member_peer_urls_[*id] = DecodeUrls(value);
      }
    }
    sqlite3_finalize(stmt);
    if (rc != SQLITE_DONE) return SqliteStatus(db, rc, "read raft state");
  }
  // The entry before the first kept one becomes the in-memory dummy.
  if (!log_start.empty()) {
    size_t pos = 0;
    Snapshot start;
    if (!GetU64(log_start, &pos, &start.meta.index) || !GetU64(log_start, &pos, &start.meta.term)) {
      return Status::Corruption("raft log_start does not decode");
    }
    SnapshotMeta meta;
    if (!DecodeSnapshotMeta(snapshot, &meta)) return Status::Corruption("raft snapshot metadata");
    start.meta.conf_state = meta.conf_state;
    if (start.meta.index > 0) NATCD_RETURN_IF_ERROR(mirror_.ApplySnapshot(start));
  }
  {
    sqlite3_stmt* stmt = nullptr;
    int rc = sqlite3_prepare_v2(
        db, "SELECT first_idx, last_idx, entries FROM raft_log_run ORDER BY first_idx", -1, &stmt,
        nullptr);
    if (rc != SQLITE_OK) return SqliteStatus(db, rc, "read raft log");
    std::vector<Entry> entries;
    Status s;
    bool had_runs = false;
    while (s.ok() && (rc = sqlite3_step(stmt)) == SQLITE_ROW) {
      had_runs = true;
      const auto first = static_cast<uint64_t>(sqlite3_column_int64(stmt, 0));
      const auto last = static_cast<uint64_t>(sqlite3_column_int64(stmt, 1));
      const void* blob = sqlite3_column_blob(stmt, 2);
      const std::string_view run(static_cast<const char*>(blob),
                                 blob ? static_cast<size_t>(sqlite3_column_bytes(stmt, 2)) : 0);
      size_t pos = 0;
      for (uint64_t index = first; s.ok() && index >= first && index <= last; ++index) {
        Entry e;
        if (!DecodeRunEntry(run, &pos, index, &e)) {
          s = Status::Corruption("raft log run at " + std::to_string(first) + " does not decode");
        } else if (index < mirror_.FirstIndex()) {
          continue;  // compacted: below the log start
        } else if (!entries.empty() && index != entries.back().index + 1) {
          s = Status::Corruption("raft log has a gap before index " + std::to_string(index));
        } else {
          entries.push_back(std::move(e));
        }
      }
      if (s.ok() && (last < first || pos != run.size())) {
        s = Status::Corruption("raft log run at " + std::to_string(first) + " does not decode");
      }
    }
    sqlite3_finalize(stmt);
    NATCD_RETURN_IF_ERROR(s);
    if (rc != SQLITE_DONE) return SqliteStatus(db, rc, "read raft log");
    if (had_runs) log_in_database_ = true;
    if (!entries.empty() && entries.front().index != mirror_.FirstIndex()) {
      return Status::Corruption("raft log starts at " + std::to_string(entries.front().index) +
                                ", expected " + std::to_string(mirror_.FirstIndex()));
    }
    NATCD_RETURN_IF_ERROR(mirror_.Append(entries));
  }
  if (!hard_state.empty() || !log_start.empty()) log_in_database_ = true;
  if (!snapshot.empty()) {
    SnapshotMeta meta;
    if (!DecodeSnapshotMeta(snapshot, &meta)) return Status::Corruption("raft snapshot metadata");
    snapshot_ = meta;
    // (Into the old log only: a log file's is loaded with it.)
    if (log_in_database_ && meta.index > mirror_.GetSnapshot().value().meta.index) {
      NATCD_RETURN_IF_ERROR(mirror_.CreateSnapshot(meta.index, meta.conf_state, ""));
    }
  }
  if (!hard_state.empty()) {
    size_t pos = 0;
    HardState hs;
    if (!GetU64(hard_state, &pos, &hs.term) || !GetU64(hard_state, &pos, &hs.vote) ||
        !GetU64(hard_state, &pos, &hs.commit)) {
      return Status::Corruption("raft hard state does not decode");
    }
    mirror_.SetHardState(hs);
  }
  return Status::OK();
}

namespace {

bool PathExists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

// Removes a directory of plain files (a migration's leftover).
Status RemoveFlatDir(raftlog::LogFs* fs, const std::string& dir) {
  if (!PathExists(dir)) return Status::OK();
  Result<std::vector<std::string>> names = fs->ListDir(dir);
  if (!names.ok()) return names.status();
  for (const std::string& name : *names) NATCD_RETURN_IF_ERROR(fs->Remove(dir + "/" + name));
  if (rmdir(dir.c_str()) != 0) return ErrnoStatus("rmdir", dir, errno);
  return Status::OK();
}

std::string ParentDir(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// Entries per Append while migrating: bounds the memory of one record.
constexpr size_t kMigratedEntriesPerAppend = 1024;

}  // namespace

Status DurableRaftStorage::MoveLogOutOfDatabase() {
  if (!PathExists(log_dir_)) {
    // Written whole under another name, so that a crash midway leaves no
    // log directory that looks finished.
    const std::string tmp = log_dir_ + ".migrating";
    NATCD_RETURN_IF_ERROR(RemoveFlatDir(fs_, tmp));
    {
      Result<std::unique_ptr<raftlog::RaftLogFile>> opened =
          raftlog::RaftLogFile::Open(fs_, tmp, log_options_);
      if (!opened.ok()) return opened.status();
      raftlog::RaftLogFile& log = **opened;
      const uint64_t start = mirror_.FirstIndex() - 1;
      if (start > 0) {
        NATCD_RETURN_IF_ERROR(log.SaveSnapshot({start, mirror_.Term(start).value()}));
      }
      const uint64_t last = mirror_.LastIndex();
      std::optional<HardState> hs;
      if (!mirror_.InitialHardState().empty()) {
        hs = mirror_.InitialHardState();
        // The format before the file wrote the commit index only with term
        // and vote changes, so it may lag behind the log start; and it is
        // a hint past the log (learned again from the leader).
        hs->commit = std::min(std::max(hs->commit, start), last);
      }
      uint64_t next = start + 1;
      do {
        const uint64_t hi = std::min<uint64_t>(last + 1, next + kMigratedEntriesPerAppend);
        std::vector<Entry> entries;
        if (next < hi) {
          Result<std::vector<Entry>> got = mirror_.Entries(next, hi, UINT64_MAX);
          if (!got.ok()) return got.status();
          entries = std::move(got).value();
        }
        const bool final_batch = hi > last;
        NATCD_RETURN_IF_ERROR(
            log.Append(entries, final_batch ? hs : std::nullopt, /*sync=*/final_batch));
        next = hi;
      } while (next <= last);
    }
    NATCD_RETURN_IF_ERROR(fs_->Rename(tmp, log_dir_));
    NATCD_RETURN_IF_ERROR(fs_->SyncDir(ParentDir(log_dir_)));
  } else {
    // An earlier open wrote the log file and crashed before deleting the
    // rows -- or the directory is another log, which must not be lost
    // either way: the two must agree where the file ends.
    Result<std::unique_ptr<raftlog::RaftLogFile>> opened =
        raftlog::RaftLogFile::Open(fs_, log_dir_, log_options_);
    if (!opened.ok()) return opened.status();
    const raftlog::RaftLogFile& log = **opened;
    const uint64_t last = mirror_.LastIndex();
    const bool agree = log.LastIndex() == last && log.Term(last).ok() &&
                       log.Term(last).value() == mirror_.Term(last).value() &&
                       log.hard_state().term == mirror_.InitialHardState().term &&
                       log.hard_state().vote == mirror_.InitialHardState().vote;
    if (!agree) {
      return Status::Corruption(
          "both the database and " + log_dir_ +
          " hold a Raft log, and they differ: the database's is from before the log file. To "
          "move the database's into a log file, move " +
          log_dir_ +
          " away and start again; to keep the directory's, delete the database's "
          "(DELETE FROM raft_log_run; DELETE FROM raft_state WHERE name IN ('hard_state', "
          "'log_start'))");
    }
  }
  // The log file holds the log now (written above, or by an earlier open
  // that crashed before this): the rows go, in one synced commit.
  NATCD_RETURN_IF_ERROR(backend_->SyncNextCommit());
  NATCD_RETURN_IF_ERROR(backend_->BeginBatch());
  sqlite3* db = backend_->handle();
  char* err = nullptr;
  int rc = sqlite3_exec(
      db,
      "DELETE FROM raft_log_run; DELETE FROM raft_state WHERE name IN ('hard_state', 'log_start');",
      nullptr, nullptr, &err);
  sqlite3_free(err);
  if (rc != SQLITE_OK) {
    Status s = SqliteStatus(db, rc, "delete the raft log moved to its file");
    backend_->RollbackBatch();
    return s;
  }
  NATCD_RETURN_IF_ERROR(backend_->CommitBatch());
  log_in_database_ = false;
  migrated_ = true;
  return Status::OK();
}

Status DurableRaftStorage::OpenLogFile() {
  Result<std::unique_ptr<raftlog::RaftLogFile>> opened =
      raftlog::RaftLogFile::Open(fs_, log_dir_, log_options_);
  if (!opened.ok()) return opened.status();
  log_ = std::move(opened).value();
  const uint64_t start = log_->FirstIndex() - 1;
  if (snapshot_.index < start) {
    return Status::Corruption("the raft log in " + log_dir_ + " starts after index " +
                              std::to_string(start) + " but the database's snapshot is at " +
                              std::to_string(snapshot_.index) +
                              ": the log belongs to another database");
  }
  if (snapshot_.index > start) {
    // The log must hold the snapshot's entry with its term. It does not
    // when the database was shipped by the leader (or a crash came between
    // the two): the snapshot then replaces the log.
    Result<uint64_t> term =
        snapshot_.index <= log_->LastIndex() ? log_->Term(snapshot_.index) : Result<uint64_t>(0);
    if (!term.ok() || term.value() != snapshot_.term) {
      NATCD_RETURN_IF_ERROR(log_->SaveSnapshot({snapshot_.index, snapshot_.term}));
    }
  }
  mirror_ = MemoryStorage();
  const uint64_t first = log_->FirstIndex();
  if (first > 1) {
    Snapshot dummy;
    dummy.meta.index = first - 1;
    Result<uint64_t> term = log_->Term(first - 1);
    if (!term.ok()) return term.status();
    dummy.meta.term = term.value();
    dummy.meta.conf_state = snapshot_.conf_state;
    NATCD_RETURN_IF_ERROR(mirror_.ApplySnapshot(dummy));
  }
  if (log_->LastIndex() >= first) {
    Result<std::vector<Entry>> entries = log_->Entries(first, log_->LastIndex() + 1);
    if (!entries.ok()) return entries.status();
    NATCD_RETURN_IF_ERROR(mirror_.Append(entries.value()));
  }
  if (snapshot_.index > first - 1) {
    NATCD_RETURN_IF_ERROR(mirror_.CreateSnapshot(snapshot_.index, snapshot_.conf_state, ""));
  }
  HardState hs = log_->hard_state();
  if (!hs.empty()) {
    // The stored commit index may lag (Persist writes the hard state with
    // term and vote changes); the snapshot is committed.
    hs.commit = std::max(hs.commit, snapshot_.index);
    mirror_.SetHardState(hs);
  }
  return Status::OK();
}

bool DurableRaftStorage::Initialized() const {
  return !mirror_.InitialHardState().empty() || mirror_.LastIndex() > 0;
}

Status DurableRaftStorage::SetMemberName(NodeId id, const std::string& name) {
  char key[40];
  snprintf(key, sizeof key, "%s%016llx", kMemberNamePrefix, static_cast<unsigned long long>(id));
  NATCD_RETURN_IF_ERROR(PutState(key, name));
  member_names_[id] = name;
  return Status::OK();
}

Status DurableRaftStorage::SetMemberClientUrls(NodeId id, const std::vector<std::string>& urls) {
  char key[40];
  snprintf(key, sizeof key, "%s%016llx", kMemberUrlsPrefix, static_cast<unsigned long long>(id));
  NATCD_RETURN_IF_ERROR(PutState(key, EncodeUrls(urls)));
  member_client_urls_[id] = urls;
  return Status::OK();
}

Status DurableRaftStorage::SetMemberPeerUrls(NodeId id, const std::vector<std::string>& urls) {
  char key[48];
  snprintf(key, sizeof key, "%s%016llx", kMemberPeerUrlsPrefix,
           static_cast<unsigned long long>(id));
  NATCD_RETURN_IF_ERROR(PutState(key, EncodeUrls(urls)));
  member_peer_urls_[id] = urls;
  return Status::OK();
}

Status DurableRaftStorage::ForgetMemberUrls(NodeId id) {
  char client[40];
  char peer[48];
  snprintf(client, sizeof client, "%s%016llx", kMemberUrlsPrefix,
           static_cast<unsigned long long>(id));
  snprintf(peer, sizeof peer, "%s%016llx", kMemberPeerUrlsPrefix,
           static_cast<unsigned long long>(id));
  NATCD_RETURN_IF_ERROR(backend_->BeginBatch());
  sqlite3* db = backend_->handle();
  const char* sql = "DELETE FROM raft_state WHERE name IN (?, ?)";
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr);
  if (rc != SQLITE_OK) return SqliteStatus(db, rc, sql);
  sqlite3_bind_text(stmt, 1, client, -1, SQLITE_STATIC);
  sqlite3_bind_text(stmt, 2, peer, -1, SQLITE_STATIC);
  rc = sqlite3_step(stmt);
  sqlite3_finalize(stmt);
  if (rc != SQLITE_DONE) return SqliteStatus(db, rc, "forget member URLs");
  member_client_urls_.erase(id);
  member_peer_urls_.erase(id);
  return Status::OK();
}

Status DurableRaftStorage::PutState(const char* name, const std::string& value) {
  NATCD_RETURN_IF_ERROR(backend_->BeginBatch());
  Reset reset(put_state_);
  sqlite3_bind_text(put_state_, 1, name, -1, SQLITE_STATIC);
  sqlite3_bind_blob64(put_state_, 2, value.data(), value.size(), SQLITE_STATIC);
  int rc = sqlite3_step(put_state_);
  return rc == SQLITE_DONE ? Status::OK() : SqliteStatus(backend_->handle(), rc, "put raft state");
}

Status DurableRaftStorage::SaveSnapshotRow(const SnapshotMeta& meta) {
  if (backend_->in_batch())
    return Status::Internal("the raft snapshot row needs a batch of its own");
  NATCD_RETURN_IF_ERROR(backend_->SyncNextCommit());
  Status s = PutState("snapshot", EncodeSnapshotMeta(meta));
  if (!s.ok()) {
    backend_->RollbackBatch();
    (void)backend_->EndSkipSync();
    return s;
  }
  NATCD_RETURN_IF_ERROR(backend_->CommitBatch());
  snapshot_ = meta;
  return Status::OK();
}

Status DurableRaftStorage::Persist(const std::vector<Entry>& entries,
                                   const std::optional<HardState>& hard_state, bool sync) {
  const std::vector<Entry>* write = &entries;
  if (!entries.empty() && entries.front().index < log_->FirstIndex()) {
    // Compacted already (what the mirror skips too).
    kept_.clear();
    for (const Entry& e : entries) {
      if (e.index >= log_->FirstIndex()) kept_.push_back(e);
    }
    write = &kept_;
  }
  NATCD_RETURN_IF_ERROR(log_->Append(*write, hard_state, sync));
  NATCD_RETURN_IF_ERROR(mirror_.Append(entries));
  if (hard_state) mirror_.SetHardState(*hard_state);
  return Status::OK();
}

Status DurableRaftStorage::SetHardState(const HardState& hs) { return Persist({}, hs, true); }

Status DurableRaftStorage::CreateSnapshot(const SnapshotMeta& meta, uint64_t compact_to) {
  if (backend_->in_batch())
    return Status::Internal("the raft snapshot row needs a batch of its own");
  NATCD_RETURN_IF_ERROR(mirror_.CreateSnapshot(meta.index, meta.conf_state, ""));
  const SnapshotMeta stored = mirror_.GetSnapshot().value().meta;
  // The database first, durably: the log file may drop entries only once
  // the state they produced can no longer be lost.
  NATCD_RETURN_IF_ERROR(SaveSnapshotRow(stored));
  if (compact_to > mirror_.FirstIndex() - 1 && compact_to <= stored.index) {
    Result<uint64_t> term = mirror_.Term(compact_to);
    if (!term.ok()) return term.status();
    NATCD_RETURN_IF_ERROR(log_->SaveSnapshot({compact_to, term.value()}));
    NATCD_RETURN_IF_ERROR(log_->ReleaseTo(compact_to));
    NATCD_RETURN_IF_ERROR(mirror_.Compact(compact_to));
  }
  return Status::OK();
}

Status DurableRaftStorage::ApplySnapshot(const SnapshotMeta& meta) {
  if (backend_->in_batch()) NATCD_RETURN_IF_ERROR(backend_->CommitBatch());
  // The database first (as CreateSnapshot): a log file that starts after
  // the database's snapshot is refused by Open.
  NATCD_RETURN_IF_ERROR(SaveSnapshotRow(meta));
  NATCD_RETURN_IF_ERROR(log_->SaveSnapshot({meta.index, meta.term}));
  Snapshot snapshot;
  snapshot.meta = meta;
  return mirror_.ApplySnapshot(snapshot);
}

Status DurableRaftStorage::PrepareReceivedSnapshot(const std::string& path,
                                                   const SnapshotMeta& meta) {
  // SqliteBackend::Open would make up an empty database in its place.
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    int err = errno;
    if (err != ENOENT) return ErrnoStatus("stat", path, err);
    return Status::NotFound("ErrNoSnapshot", "received snapshot " + path + " does not exist");
  }
  // sync: this file becomes the member's database; what is prepared here
  // must be on disk before the member acts on it.
  Result<std::unique_ptr<SqliteBackend>> opened = SqliteBackend::Open(BackendOptions{path, true});
  if (!opened.ok()) return opened.status();
  SqliteBackend& backend = *opened.value();
  Result<int64_t> applied = backend.GetMeta(SqliteBackend::kMetaAppliedIndex, 0);
  if (!applied.ok()) return applied.status();
  if (static_cast<uint64_t>(*applied) != meta.index) {
    return Status::Corruption("received snapshot " + path + " holds applied index " +
                              std::to_string(*applied) + ", its metadata says " +
                              std::to_string(meta.index));
  }
  sqlite3* db = backend.handle();
  auto exec = [db](const char* sql) {
    char* err = nullptr;
    int rc = sqlite3_exec(db, sql, nullptr, nullptr, &err);
    sqlite3_free(err);
    return rc == SQLITE_OK ? Status::OK() : SqliteStatus(db, rc, sql);
  };
  auto put = [db](const char* name, const std::string& value) {
    sqlite3_stmt* stmt = nullptr;
    int rc = sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO raft_state (name, value) VALUES (?, ?)",
                                -1, &stmt, nullptr);
    if (rc == SQLITE_OK) {
      sqlite3_bind_text(stmt, 1, name, -1, SQLITE_STATIC);
      sqlite3_bind_blob64(stmt, 2, value.data(), value.size(), SQLITE_STATIC);
      rc = sqlite3_step(stmt);
    }
    sqlite3_finalize(stmt);
    return rc == SQLITE_DONE ? Status::OK() : SqliteStatus(db, rc, "put raft state");
  };
  // The copy of a leader always has the Raft tables; a database written
  // before natcd had Raft would not, and then they start empty.
  NATCD_RETURN_IF_ERROR(exec(kSchema));
  NATCD_RETURN_IF_ERROR(backend.BeginBatch());
  // A leader from before the log file (or before runs) still has its log
  // in the database: it is the leader's, and the snapshot covers it.
  Status s = exec("DELETE FROM raft_log_run");
  if (s.ok()) s = exec("DROP TABLE IF EXISTS raft_log");
  if (s.ok()) {
    s = exec("DELETE FROM raft_state WHERE name IN ('boot_existing', 'hard_state', 'log_start')");
  }
  if (s.ok()) s = put("snapshot", EncodeSnapshotMeta(meta));
  if (s.ok()) s = backend.CommitBatch();
  if (!s.ok()) backend.RollbackBatch();
  return s;
}

Status DurableRaftStorage::MarkBootedOverExistingData() {
  NATCD_RETURN_IF_ERROR(PutState("boot_existing", "1"));
  booted_over_existing_data_ = true;
  return Status::OK();
}

// Before runs the log was a row per entry, in raft_log: read once,
// rewritten as runs and dropped, in one transaction.
Status DurableRaftStorage::MigrateEntryTable() {
  sqlite3* db = backend_->handle();
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(
      db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'raft_log'", -1, &stmt,
      nullptr);
  if (rc != SQLITE_OK) return SqliteStatus(db, rc, "look for the raft entry table");
  rc = sqlite3_step(stmt);
  sqlite3_finalize(stmt);
  if (rc == SQLITE_DONE) return Status::OK();  // nothing to migrate
  if (rc != SQLITE_ROW) return SqliteStatus(db, rc, "look for the raft entry table");

  sqlite3_stmt* insert = nullptr;
  rc = sqlite3_prepare_v2(db,
                          "INSERT OR REPLACE INTO raft_log_run (first_idx, last_idx, entries) "
                          "VALUES (?, ?, ?)",
                          -1, &insert, nullptr);
  if (rc != SQLITE_OK) return SqliteStatus(db, rc, "prepare the raft run insert");
  auto InsertRun = [db, insert](uint64_t first, uint64_t last, const std::string& entries) {
    Reset reset(insert);
    sqlite3_bind_int64(insert, 1, static_cast<int64_t>(first));
    sqlite3_bind_int64(insert, 2, static_cast<int64_t>(last));
    sqlite3_bind_blob64(insert, 3, entries.data(), entries.size(), SQLITE_STATIC);
    int rc = sqlite3_step(insert);
    return rc == SQLITE_DONE ? Status::OK() : SqliteStatus(db, rc, "append raft entries");
  };
  Status begun = backend_->BeginBatch();
  if (!begun.ok()) {
    sqlite3_finalize(insert);
    return begun;
  }
  rc = sqlite3_prepare_v2(db, "SELECT idx, term, type, data FROM raft_log ORDER BY idx", -1, &stmt,
                          nullptr);
  Status s = rc == SQLITE_OK ? Status::OK() : SqliteStatus(db, rc, "read the raft entry table");
  // Consecutive entries become one run (a gap starts another: Load reports it).
  constexpr size_t kRunBytesMax = 1 << 20;
  std::string run;
  uint64_t first = 0;
  uint64_t last = 0;
  while (s.ok() && (rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    Entry e;
    e.index = static_cast<uint64_t>(sqlite3_column_int64(stmt, 0));
    e.term = static_cast<uint64_t>(sqlite3_column_int64(stmt, 1));
    e.type = static_cast<EntryType>(sqlite3_column_int(stmt, 2));
    e.data = Column(stmt, 3);
    if (!run.empty() && (e.index != last + 1 || run.size() >= kRunBytesMax)) {
      s = InsertRun(first, last, run);
      run.clear();
    }
    if (run.empty()) first = e.index;
    last = e.index;
    EncodeRunEntry(e, &run);
  }
  if (s.ok() && rc != SQLITE_DONE) s = SqliteStatus(db, rc, "read the raft entry table");
  sqlite3_finalize(stmt);
  if (s.ok() && !run.empty()) s = InsertRun(first, last, run);
  if (s.ok() &&
      (rc = sqlite3_exec(db, "DROP TABLE raft_log", nullptr, nullptr, nullptr)) != SQLITE_OK) {
    s = SqliteStatus(db, rc, "drop the raft entry table");
  }
  sqlite3_finalize(insert);
  if (!s.ok()) {
    backend_->RollbackBatch();
    return s;
  }
  return backend_->CommitBatch();
}

}  // namespace natcd::raft
