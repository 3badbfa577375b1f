// OnlineBackups: a member's backups in progress (etcd's Maintenance.
// Snapshot; natcd's P.maint.snapshot). A backup is a consistent copy of the
// member's database (WriteDatabaseSnapshot: one commit's state, taken while
// the engine goes on writing) followed by the SHA-256 of the copy -- the
// layout of a backup file (storage/backup_file.h). Front ends hand it to
// their clients in chunks, each at an offset of that byte stream, as fast
// as the client takes them: nothing but the copy on disk is held, so any
// database size works and a slow reader costs one file, never memory.
//
// The copy runs on a thread of its own (one per backup), not on the member
// thread: Raft keeps ticking and the member keeps serving meanwhile. At
// most sessions_max backups are open at once; one unread for
// idle_timeout_ms is dropped with its file (a client that went away).
//
// Thread safety: every method is thread-safe. Begin's callback runs on the
// copier thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>

#include "natcd/clock.h"
#include "natcd/mutex.h"
#include "natcd/status.h"

namespace natcd::server {

struct OnlineBackupOptions {
  std::string db_path;  // the member's database
  // Where the copies are written (the member's data directory: the same
  // file system, so a copy costs no network and a crash leaves its file
  // where the next start removes it).
  std::string dir;
  size_t sessions_max = 2;
  int64_t idle_timeout_ms = 60'000;
};

// A piece of a backup's byte stream (the database copy, then its SHA-256).
struct BackupChunk {
  uint64_t backup_id = 0;
  uint64_t offset = 0;           // where blob starts in the stream
  std::string blob;              // at most the chunk size asked for
  uint64_t remaining_bytes = 0;  // stream bytes after blob; 0: blob ends the stream
  uint64_t total_bytes = 0;      // the whole stream: database + 32
  int64_t revision = 0;          // the store's revision in the copy
  uint64_t applied_index = 0;    // the Raft index the copy stands for
};

class OnlineBackups {
 public:
  // Removes copies a previous run left in options.dir (a crash mid-backup).
  OnlineBackups(OnlineBackupOptions options, Clock* clock);
  // Close().
  ~OnlineBackups();
  OnlineBackups(const OnlineBackups&) = delete;
  OnlineBackups& operator=(const OnlineBackups&) = delete;

  using Ready = std::function<void(Result<BackupChunk>)>;
  // Starts a backup. `ready` is called once, on the copier thread, with the
  // stream's first chunk (at most chunk_bytes of blob), whose backup_id
  // names the backup for Read; or with why the copy failed.
  // TooManyRequests (ErrTooManyRequests) when sessions_max backups are
  // open; InvalidArgument for chunk_bytes 0. `ready` is not called then.
  Status Begin(size_t chunk_bytes, Ready ready);

  // The chunk of backup `id` at `offset` (at most chunk_bytes of blob; an
  // offset at the end gives an empty blob). Reading the same offset again
  // gives the same bytes, so a client may retry a lost reply. NotFound
  // (ErrBackupNotFound) for a backup unknown, ended or dropped as idle;
  // InvalidArgument for an offset past the end.
  Result<BackupChunk> Read(uint64_t id, uint64_t offset, size_t chunk_bytes);

  // Ends backup `id` (its client has it all, or gave up): its file goes.
  // Unknown ids are ignored.
  void End(uint64_t id);

  // Drops backups unread for idle_timeout_ms (call it now and then).
  void ExpireIdle();

  // Backups open (copying or being read).
  size_t open_count() const;

  // Waits for copies under way (their callbacks run) and removes every
  // backup's file; Begin refuses from then on (ErrStopped). The member
  // calls it as it stops, while the front ends that callbacks answer
  // through still exist. Idempotent.
  void Close();

 private:
  struct Session;
  void Copy(Session* session, size_t chunk_bytes, const Ready& ready);
  // Reads outside mu_ (a chunk is a disk read): a session's file, size and
  // trailer are fixed once it is ready.
  static Result<BackupChunk> ReadFrom(const Session& session, uint64_t offset, size_t chunk_bytes);
  // Joins the copier (unless called on it) and removes the file.
  static void Dispose(std::shared_ptr<Session> session);

  const OnlineBackupOptions options_;
  Clock* const clock_;

  mutable Mutex mu_;
  std::map<uint64_t, std::shared_ptr<Session>> sessions_ GUARDED_BY(mu_);
  std::mt19937_64 rng_ GUARDED_BY(mu_);
  bool closed_ GUARDED_BY(mu_) = false;
};

}  // namespace natcd::server
