// SqliteRaftStorage: a member's Raft log, hard state and snapshot metadata,
// in the engine's own SQLite database and inside its batches, so that one
// fsync makes both the log entries and the state they produce durable.
//
// Reads come from an in-memory copy of the log (what is left after the last
// compaction), so Raft never waits for SQLite to send an append. Writes go
// to both; they are durable at the backend's next CommitBatch (the engine's
// Commit), which must happen before the Ready's messages are sent.
//
// A snapshot here is metadata only: natcd's state machine snapshot is the
// engine's database itself, shipped whole by the transport when a member
// needs it.
//
// Persisted format (DO NOT CHANGE without a migration):
//   raft_log_run(first_idx INTEGER PRIMARY KEY, last_idx, entries): the
//     entries first_idx..last_idx, one run per Append, each entry as term
//     (u64), type (u8), data size (u32), data, little-endian; a run may
//     reach below the log start (compaction deletes whole runs only).
//     Databases from before runs had raft_log(idx, term, type, data), an
//     entry a row: Open rewrites it as runs and drops it.
//   raft_state(name TEXT PRIMARY KEY, value BLOB):
//     "hard_state" (term, vote, commit; natcd's node writes it when term or
//     vote change or a membership change is applied, so commit may lag
//     behind what was applied), "log_start" (index, term of the
//     entry before the first one kept), "snapshot" (index, term, voters,
//     learners), "boot_existing" (present: see booted_over_existing_data)
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "natcd/status.h"
#include "raft/storage.h"

struct sqlite3_stmt;

namespace natcd {
class SqliteBackend;
}

namespace natcd::raft {

class SqliteRaftStorage final : public Storage {
 public:
  // Creates the tables if missing and loads what they hold.
  static Result<std::unique_ptr<SqliteRaftStorage>> Open(SqliteBackend* backend);
  ~SqliteRaftStorage() override;

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

  // Writes (inside the backend's batch, opened here if needed).
  Status Append(const std::vector<Entry>& entries);
  Status SetHardState(const HardState& hs);
  // The state machine is at meta.index: record it as the snapshot, then
  // drop entries up to compact_to (<= meta.index; the rest stay for
  // followers that are only a little behind).
  Status CreateSnapshot(const SnapshotMeta& meta, uint64_t compact_to);
  // A snapshot received from the leader replaces the whole log.
  Status ApplySnapshot(const SnapshotMeta& meta);

  // Turns a database copy received from the leader (WriteDatabaseSnapshot's
  // output, shipped whole) into this member's database, before anything
  // opens it: the copy's Raft log goes (it is the leader's, and the
  // snapshot covers it), the log starts after meta.index with meta as the
  // snapshot, and the hard state is the receiving member's own -- its term
  // and vote are promises this member made, which the leader's copy knows
  // nothing of -- with commit raised to at least meta.index. A leftover
  // "boot_existing" mark of the leader's is dropped: it describes the
  // leader's boot, not this member's.
  //
  // NotFound when there is no file at path. Corruption when the copy's
  // applied index is not meta.index (the file and the metadata describe
  // different snapshots), or it is no database; its contents are then
  // left unchanged. Errors of SQLite as Statuses. One transaction: on any
  // error nothing of it is applied. The file is closed when this returns.
  static Status PrepareReceivedSnapshot(const std::string& path, const SnapshotMeta& meta,
                                        const HardState& keep_hard_state);

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

 private:
  explicit SqliteRaftStorage(SqliteBackend* backend) : backend_(backend) {}
  Status Init();
  Status Load();
  Status PutState(const char* name, const std::string& value);
  Status MigrateEntryTable();
  Status InsertRun(uint64_t first, uint64_t last, const std::string& entries);
  // Removes entries from `index` on (a run holding it is cut short).
  Status TruncateLogFrom(uint64_t index);
  Status DeleteLogThrough(uint64_t index);
  Status SaveLogStart();

  SqliteBackend* backend_;
  MemoryStorage mirror_;
  bool booted_over_existing_data_ = false;
  std::map<NodeId, std::string> member_names_;
  std::map<NodeId, std::vector<std::string>> member_client_urls_;
  std::string run_;  // Append's encoding buffer
  sqlite3_stmt* insert_run_ = nullptr;
  sqlite3_stmt* run_before_ = nullptr;
  sqlite3_stmt* update_run_ = nullptr;
  sqlite3_stmt* delete_from_ = nullptr;
  sqlite3_stmt* delete_through_ = nullptr;
  sqlite3_stmt* put_state_ = nullptr;
};

}  // namespace natcd::raft
