// FaultVfs: a test-only sqlite3_vfs that wraps the default VFS and injects
// faults at the SQLite seam (STYLE.md item 17; SQLite's test_vfs.c, leveldb's
// fault_injection_test.cc).
//
// Faults: FailNth(op, n, mode) makes the nth xWrite or xSync from then on
// (counted over every file opened through this VFS, 1-based) fail with
// SQLITE_IOERR_WRITE or SQLITE_IOERR_FSYNC without touching the file. A
// transient fault fails that one call; a persistent one fails it and every
// later call of the same kind; "disk gone" fails it and every later write,
// truncate, sync and delete, so nothing after the fault reaches the disk.
//
// Durability: a file's contents are durable up to its last successful xSync.
// The VFS remembers, for every file written through it, what each write or
// truncate since then overwrote, so DropUnsyncedData() can put every file back
// as it was at its last sync: a power loss after the process died. Because
// durability is simulated, xSync does not call the real fsync unless
// set_real_sync(true): the tests stay fast on any disk.
//
// Registration: the engine opens SQLite with the default VFS (a null VFS name),
// so a test registers this one as the default (Register(true)) for as long as
// the engine should use it; Unregister() (and the destructor) make the
// previous default the default again.
//
// Thread safety: none. One test thread, and SQLite opened in its
// single-connection (NOMUTEX) mode, as the engine does.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "natcd/status.h"

namespace natcd::testing {

class FaultVfs {
 public:
  enum class Op : uint8_t { kWrite = 0, kSync = 1 };
  enum class Mode : uint8_t { kTransient = 0, kPersistent = 1, kDiskGone = 2 };

  // Wraps the VFS that is the default now. Not registered yet.
  explicit FaultVfs(std::string name = "natcd-fault");
  ~FaultVfs();
  FaultVfs(const FaultVfs&) = delete;
  FaultVfs& operator=(const FaultVfs&) = delete;

  // Registers with SQLite under name(); as_default: sqlite3_open_v2 with a
  // null VFS name now uses this one.
  void Register(bool as_default);
  // Unregisters; the VFS that was the default before Register is again.
  void Unregister();

  // Arms one fault and restarts the counts: the nth call of op from now on
  // fails. Replaces any armed fault.
  void FailNth(Op op, int64_t n, Mode mode);
  // No more faults (a persistent one stops too). Counts go on.
  void Disarm();
  // The armed fault has fired.
  bool fired() const { return fired_; }
  // Calls since the last FailNth (failed ones included).
  int64_t writes() const { return counts_[0]; }
  int64_t syncs() const { return counts_[1]; }

  // Power loss: every file written through this VFS gets back its contents
  // as of its last successful xSync (a file first written after its last
  // sync goes back to its size then). No file may be open through this VFS.
  Status DropUnsyncedData();
  // Files whose contents the last DropUnsyncedData changed.
  int dropped_files() const { return dropped_files_; }
  // Forgets what is unsynced (as if everything had been synced).
  void ForgetUnsyncedData() { unsynced_.clear(); }

  // Power loss of one machine among several sharing this VFS (the cluster
  // simulator): what `path` would hold after a power loss now, its contents
  // as of its last successful xSync (a file not written through this VFS
  // since: what it holds now). Files may be open.
  Result<std::string> DurableContents(const std::string& path) const;
  // Forgets what is unsynced in the files whose path starts with `prefix`.
  void ForgetUnsyncedDataUnder(const std::string& prefix);

  void set_real_sync(bool real_sync) { real_sync_ = real_sync; }
  const std::string& name() const { return name_; }
  int open_files() const { return open_files_; }

  // A file opened through this VFS (defined in fault_vfs.cc).
  struct File;

 private:
  // What a file's writes since its last successful sync overwrote.
  struct Unsynced {
    int64_t size_at_sync = 0;
    std::vector<std::pair<int64_t, std::string>> overwritten;  // (offset, old bytes)
  };

  // Counts a call of op; true when it must fail.
  bool Fail(Op op);
  // A truncate or delete: fails only once the disk is gone.
  bool Gone() const { return fired_ && mode_ == Mode::kDiskGone; }
  // Records what [offset, offset + size) of the file holds before a write,
  // or what a truncate to offset removes (size < 0).
  int RememberOverwrite(File* file, int64_t offset, int64_t size);

  static FaultVfs* Of(sqlite3_vfs* vfs) { return static_cast<FaultVfs*>(vfs->pAppData); }
  static int XOpen(sqlite3_vfs* vfs, sqlite3_filename name, sqlite3_file* file, int flags,
                   int* out_flags);
  static int XDelete(sqlite3_vfs* vfs, const char* name, int sync_dir);
  static int XAccess(sqlite3_vfs* vfs, const char* name, int flags, int* out);
  static int XFullPathname(sqlite3_vfs* vfs, const char* name, int n, char* out);
  static void* XDlOpen(sqlite3_vfs* vfs, const char* name);
  static void XDlError(sqlite3_vfs* vfs, int n, char* out);
  static void (*XDlSym(sqlite3_vfs* vfs, void* handle, const char* symbol))(void);
  static void XDlClose(sqlite3_vfs* vfs, void* handle);
  static int XRandomness(sqlite3_vfs* vfs, int n, char* out);
  static int XSleep(sqlite3_vfs* vfs, int micros);
  static int XCurrentTime(sqlite3_vfs* vfs, double* out);
  static int XGetLastError(sqlite3_vfs* vfs, int n, char* out);
  static int XCurrentTimeInt64(sqlite3_vfs* vfs, sqlite3_int64* out);
  static int XSetSystemCall(sqlite3_vfs* vfs, const char* name, sqlite3_syscall_ptr call);
  static sqlite3_syscall_ptr XGetSystemCall(sqlite3_vfs* vfs, const char* name);
  static const char* XNextSystemCall(sqlite3_vfs* vfs, const char* name);

  // File methods.
  static const sqlite3_io_methods* Methods(int version);
  static int XClose(sqlite3_file* f);
  static int XRead(sqlite3_file* f, void* out, int amount, sqlite3_int64 offset);
  static int XWrite(sqlite3_file* f, const void* data, int amount, sqlite3_int64 offset);
  static int XTruncate(sqlite3_file* f, sqlite3_int64 size);
  static int XSync(sqlite3_file* f, int flags);
  static int XFileSize(sqlite3_file* f, sqlite3_int64* size);
  static int XLock(sqlite3_file* f, int level);
  static int XUnlock(sqlite3_file* f, int level);
  static int XCheckReservedLock(sqlite3_file* f, int* out);
  static int XFileControl(sqlite3_file* f, int op, void* arg);
  static int XSectorSize(sqlite3_file* f);
  static int XDeviceCharacteristics(sqlite3_file* f);
  static int XShmMap(sqlite3_file* f, int region, int size, int extend, void volatile** out);
  static int XShmLock(sqlite3_file* f, int offset, int n, int flags);
  static void XShmBarrier(sqlite3_file* f);
  static int XShmUnmap(sqlite3_file* f, int delete_flag);
  static int XFetch(sqlite3_file* f, sqlite3_int64 offset, int amount, void** out);
  static int XUnfetch(sqlite3_file* f, sqlite3_int64 offset, void* p);

  std::string name_;
  sqlite3_vfs* base_;
  sqlite3_vfs vfs_{};
  sqlite3_vfs* previous_default_ = nullptr;
  bool registered_ = false;
  bool real_sync_ = false;

  bool armed_ = false;
  Op op_ = Op::kWrite;
  Mode mode_ = Mode::kTransient;
  int64_t fail_at_ = 0;
  bool fired_ = false;
  int64_t counts_[2] = {0, 0};

  int open_files_ = 0;
  int dropped_files_ = 0;
  std::map<std::string, Unsynced> unsynced_;  // by path
};

}  // namespace natcd::testing
