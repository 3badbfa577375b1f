// DurableRaftStorage: a member's Raft log and hard state in a Raft log
// file of natcd's own (storage/raft_log/raft_log_file.h, a directory beside
// the database), and the rest of its Raft state -- the snapshot's metadata
// with its configuration, member names, client and peer URLs -- in the engine's
// SQLite database, as state applied from the log.
//
// Writes. Persist(entries, hard_state, sync) is one Ready: one write and,
// when sync, one fdatasync of the log file; it is durable when it returns.
// The engine's SQLite state is applied after it and committed, in batches
// (core/include/natcd/engine.h), without an
// fsync (Engine::SetCommitsSynced(false)): after a power loss the database
// is a prefix of its commits, and its applied index says where Raft's
// replay of the log resumes. So the log must keep every entry the
// database may not hold durably: CreateSnapshot commits the database with
// an fsync (SqliteBackend::SyncNextCommit) before the log file drops
// anything.
//
// Reads come from an in-memory copy of the log (what is left after the
// last compaction), so Raft never waits for a file to send an append.
//
// A snapshot here is metadata only: natcd's state machine snapshot is the
// engine's database itself, shipped whole by the transport when a member
// needs it. The database's snapshot row is the authority: Open makes the
// log file agree with it (a database shipped by the leader replaces the
// log), and a log that starts after it belongs to another database
// (Corruption).
//
// Migration. Databases written before the log file held the log in
// raft_log_run and the raft_state rows "hard_state" and "log_start". Open
// moves them: the log file is written whole under a temporary name
// (<log dir>.migrating), synced and renamed into place, then the rows are
// deleted in one synced commit. A crash before the rename redoes it; one
// after it finds the log in place and only deletes the rows.
//
// Persisted format (DO NOT CHANGE without a migration):
//   the log directory: raft_log_file.h (pinned by its tests);
//   raft_state(name TEXT PRIMARY KEY, value BLOB), in the database:
//     "snapshot" (index, term, voters, learners: u64 each, lists as a
//     count then the IDs, little-endian), "boot_existing" (present: see
//     booted_over_existing_data), "member/<16 hex digits of the ID>" (the
//     member's name), "member-urls/<id in hex>" (its client URLs, one per
//     line), "member-peer-urls/<id in hex>" (the peer URLs a MemberAdd or
//     MemberUpdate set, one per line; both URL rows go when the member is
//     removed);
//   read only to migrate them, never written: raft_log_run(first_idx
//     INTEGER PRIMARY KEY, last_idx, entries) -- the entries first_idx..
//     last_idx, each as term (u64), type (u8), data size (u32), data --
//     raft_state "hard_state" (term, vote, commit) and "log_start" (index,
//     term of the entry before the first one kept); and raft_log(idx,
//     term, type, data), an entry a row, older still.
//
// Thread safety: none; the member thread.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "natcd/status.h"
#include "raft/storage.h"
#include "storage/raft_log/raft_log_file.h"

struct sqlite3_stmt;

namespace natcd {
class SqliteBackend;
}

namespace natcd::raft {

class DurableRaftStorage final : public Storage {
 public:
  // Creates the tables if missing, opens (or creates) the log file in
  // log_dir, migrates a log still in the database (above) and loads. The
  // backend must have no batch open. fs and backend must outlive it.
  static Result<std::unique_ptr<DurableRaftStorage>> Open(
      SqliteBackend* backend, raftlog::LogFs* fs, const std::string& log_dir,
      const raftlog::RaftLogOptions& log_options = {});
  ~DurableRaftStorage() override;

  // The member's log directory beside its database: "<db_path>.raftlog".
  // DO NOT CHANGE: persisted (a data directory is found by this name).
  static std::string LogDirOf(const std::string& db_path) { return db_path + ".raftlog"; }

  HardState InitialHardState() const override { return mirror_.InitialHardState(); }
  ConfState InitialConfState() const override { return mirror_.InitialConfState(); }
  Result<std::vector<Entry>> Entries(uint64_t lo, uint64_t hi, uint64_t max_bytes) const override {
    return mirror_.Entries(lo, hi, max_bytes);
  }
  Result<uint64_t> Term(uint64_t i) const override { return mirror_.Term(i); }
  uint64_t FirstIndex() const override { return mirror_.FirstIndex(); }
  uint64_t LastIndex() const override { return mirror_.LastIndex(); }
  Result<Snapshot> GetSnapshot() const override { return mirror_.GetSnapshot(); }

  // Whether this member has any Raft state (false: a new member, to be
  // bootstrapped or to join).
  bool Initialized() const;

  // One Ready: its entries (those below the log's first index skipped:
  // compacted) and hard state in one write to the log file, and one
  // fdatasync when sync. Errors of RaftLogFile::Append; after an IOError
  // the log is poisoned and the member must be reopened.
  Status Persist(const std::vector<Entry>& entries, const std::optional<HardState>& hard_state,
                 bool sync);
  // After Persist failed: RaftLogFile::DiscardUnsynced, before reopening.
  Status DiscardUnsynced() { return log_->DiscardUnsynced(); }
  // Persist(nothing, hs, sync=true).
  Status SetHardState(const HardState& hs);
  // The state machine is at meta.index: record it as the snapshot, in a
  // synced commit of the database (no batch may be open: Internal), then
  // drop entries up to compact_to (<= meta.index; the rest stay for
  // followers that are only a little behind) from the log file.
  Status CreateSnapshot(const SnapshotMeta& meta, uint64_t compact_to);
  // A snapshot received from the leader (the cluster's first, the empty
  // state) replaces the whole log. Commits the open batch, which must hold
  // no applied entries, then the snapshot row with an fsync, then the log.
  Status ApplySnapshot(const SnapshotMeta& meta);

  // Turns a database copy received from the leader (WriteDatabaseSnapshot's
  // output, shipped whole) into this member's database, before anything
  // opens it: the copy's Raft state goes (a log from before the log file,
  // its "boot_existing" mark, which describes the leader's boot) and meta
  // becomes the snapshot. The receiving member's term, vote and log are in
  // its own log file, which Open then makes agree with meta.
  //
  // NotFound when there is no file at path. Corruption when the copy's
  // applied index is not meta.index (the file and the metadata describe
  // different snapshots), or it is no database; its contents are then
  // left unchanged. Errors of SQLite as Statuses. One transaction: on any
  // error nothing of it is applied. The file is closed when this returns.
  static Status PrepareReceivedSnapshot(const std::string& path, const SnapshotMeta& meta);

  // Whether the cluster's first snapshot (index 1) was taken over a
  // database that already held data (one written before it had Raft): then
  // that snapshot is not the empty state and cannot stand for it.
  bool booted_over_existing_data() const { return booted_over_existing_data_; }
  Status MarkBootedOverExistingData();

  // Member names (natcd's, not Raft's: Raft knows IDs), kept beside the
  // configuration so that they survive restarts, log compaction and a
  // database shipped to a new member. Written inside the backend's batch.
  Status SetMemberName(NodeId id, const std::string& name);
  const std::map<NodeId, std::string>& member_names() const { return member_names_; }
  // Members' client URLs (etcd's advertised client URLs), as applied.
  Status SetMemberClientUrls(NodeId id, const std::vector<std::string>& urls);
  const std::map<NodeId, std::vector<std::string>>& member_client_urls() const {
    return member_client_urls_;
  }
  // Members' peer URLs (etcd's MemberAdd and MemberUpdate), as applied.
  Status SetMemberPeerUrls(NodeId id, const std::vector<std::string>& urls);
  // A removed member's client and peer URL rows go (its name stays).
  Status ForgetMemberUrls(NodeId id);
  const std::map<NodeId, std::vector<std::string>>& member_peer_urls() const {
    return member_peer_urls_;
  }

  // Whether Open moved a log out of the database (tests, and the log line
  // that says so).
  bool migrated() const { return migrated_; }
  const raftlog::RaftLogFile& log_file() const { return *log_; }

 private:
  DurableRaftStorage(SqliteBackend* backend, raftlog::LogFs* fs, std::string log_dir,
                     const raftlog::RaftLogOptions& log_options)
      : backend_(backend), fs_(fs), log_dir_(std::move(log_dir)), log_options_(log_options) {}
  Status Init();
  // The raft_state rows, and a log still in the database into mirror_.
  Status LoadDatabase();
  Status MigrateEntryTable();
  // Writes mirror_ (the database's log) as the log file, then deletes it
  // from the database.
  Status MoveLogOutOfDatabase();
  // Opens the log file, makes it agree with the snapshot row, and loads
  // mirror_ from it.
  Status OpenLogFile();
  Status PutState(const char* name, const std::string& value);
  // The snapshot row, in a batch of its own committed with an fsync.
  Status SaveSnapshotRow(const SnapshotMeta& meta);

  SqliteBackend* const backend_;
  raftlog::LogFs* const fs_;
  const std::string log_dir_;
  const raftlog::RaftLogOptions log_options_;
  std::unique_ptr<raftlog::RaftLogFile> log_;
  MemoryStorage mirror_;
  // The snapshot row as stored (index 0: none).
  SnapshotMeta snapshot_;
  // Whether the database still held a log (the format before the file).
  bool log_in_database_ = false;
  bool migrated_ = false;
  bool booted_over_existing_data_ = false;
  std::map<NodeId, std::string> member_names_;
  std::map<NodeId, std::vector<std::string>> member_client_urls_;
  std::map<NodeId, std::vector<std::string>> member_peer_urls_;
  std::vector<Entry> kept_;  // Persist's buffer when it skips compacted entries
  sqlite3_stmt* put_state_ = nullptr;
};

}  // namespace natcd::raft
