#include "core/storage/fault_vfs.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <new>

namespace natcd::testing {

// Lives in the memory SQLite allocates for a file (szOsFile bytes): this
// header, then the wrapped VFS's own file object.
struct FaultVfs::File {
  sqlite3_file base;  // first: SQLite sees a File as a sqlite3_file
  FaultVfs* owner;
  std::string path;  // empty for temporary files, which are not tracked

  sqlite3_file* real();
  static File* Of(sqlite3_file* f) { return reinterpret_cast<File*>(f); }
};

namespace {
// The wrapped file object starts at the first 16-byte boundary after the header.
constexpr size_t kFileHeaderBytes = (sizeof(FaultVfs::File) + 15) / 16 * 16;
}  // namespace

sqlite3_file* FaultVfs::File::real() {
  return reinterpret_cast<sqlite3_file*>(reinterpret_cast<char*>(this) + kFileHeaderBytes);
}

FaultVfs::FaultVfs(std::string name) : name_(std::move(name)), base_(sqlite3_vfs_find(nullptr)) {
  assert(base_ != nullptr);
  vfs_.iVersion = std::min(base_->iVersion, 3);
  vfs_.szOsFile = static_cast<int>(kFileHeaderBytes) + base_->szOsFile;
  vfs_.mxPathname = base_->mxPathname;
  vfs_.zName = name_.c_str();
  vfs_.pAppData = this;
  vfs_.xOpen = XOpen;
  vfs_.xDelete = XDelete;
  vfs_.xAccess = XAccess;
  vfs_.xFullPathname = XFullPathname;
  vfs_.xDlOpen = XDlOpen;
  vfs_.xDlError = XDlError;
  vfs_.xDlSym = XDlSym;
  vfs_.xDlClose = XDlClose;
  vfs_.xRandomness = XRandomness;
  vfs_.xSleep = XSleep;
  vfs_.xCurrentTime = XCurrentTime;
  vfs_.xGetLastError = XGetLastError;
  if (vfs_.iVersion >= 2) vfs_.xCurrentTimeInt64 = XCurrentTimeInt64;
  if (vfs_.iVersion >= 3) {
    vfs_.xSetSystemCall = XSetSystemCall;
    vfs_.xGetSystemCall = XGetSystemCall;
    vfs_.xNextSystemCall = XNextSystemCall;
  }
}

FaultVfs::~FaultVfs() {
  assert(open_files_ == 0 && "a database is still open through the FaultVfs");
  Unregister();
}

void FaultVfs::Register(bool as_default) {
  if (!registered_) previous_default_ = sqlite3_vfs_find(nullptr);
  int rc = sqlite3_vfs_register(&vfs_, as_default ? 1 : 0);
  assert(rc == SQLITE_OK);
  (void)rc;
  registered_ = true;
}

void FaultVfs::Unregister() {
  if (!registered_) return;
  sqlite3_vfs_unregister(&vfs_);
  // Unregistering the default makes an arbitrary VFS the default: restore
  // the one that was.
  if (previous_default_ != nullptr) sqlite3_vfs_register(previous_default_, 1);
  registered_ = false;
}

void FaultVfs::FailNth(Op op, int64_t n, Mode mode) {
  armed_ = true;
  op_ = op;
  fail_at_ = n;
  mode_ = mode;
  fired_ = false;
  counts_[0] = counts_[1] = 0;
}

void FaultVfs::Disarm() { armed_ = false; }

bool FaultVfs::Fail(Op op) {
  int64_t n = ++counts_[static_cast<int>(op)];
  if (!armed_) return false;
  if (Gone()) return true;
  if (op != op_) return false;
  if (fired_) return mode_ == Mode::kPersistent;
  if (n != fail_at_) return false;
  fired_ = true;
  return true;
}

int FaultVfs::RememberOverwrite(File* file, int64_t offset, int64_t size) {
  if (file->path.empty()) return SQLITE_OK;
  sqlite3_file* real = file->real();
  sqlite3_int64 current = 0;
  int rc = real->pMethods->xFileSize(real, &current);
  if (rc != SQLITE_OK) return rc;
  auto [it, added] = unsynced_.try_emplace(file->path);
  if (added) it->second.size_at_sync = current;
  // A truncate removes [offset, current); a write overwrites what exists of
  // [offset, offset + size). Bytes past the old end need no copy: restoring
  // the size drops them.
  int64_t end = size < 0 ? current : std::min<int64_t>(offset + size, current);
  if (offset >= end) return SQLITE_OK;
  std::string old(static_cast<size_t>(end - offset), '\0');
  rc = real->pMethods->xRead(real, old.data(), static_cast<int>(old.size()), offset);
  if (rc != SQLITE_OK) return rc;
  it->second.overwritten.emplace_back(offset, std::move(old));
  return SQLITE_OK;
}

Status FaultVfs::DropUnsyncedData() {
  if (open_files_ != 0) return Status::Internal("DropUnsyncedData with files open");
  dropped_files_ = 0;
  for (const auto& [path, unsynced] : unsynced_) {
    int fd = open(path.c_str(), O_RDWR);
    if (fd < 0) {
      if (errno == ENOENT) continue;  // deleted since: deletes are durable here
      return Status::IOError("open " + path + ": " + strerror(errno));
    }
    bool ok = true;
    for (auto it = unsynced.overwritten.rbegin(); ok && it != unsynced.overwritten.rend(); ++it) {
      ok = pwrite(fd, it->second.data(), it->second.size(), it->first) ==
           static_cast<ssize_t>(it->second.size());
    }
    struct stat st;
    ok = ok && fstat(fd, &st) == 0;
    if (ok && (!unsynced.overwritten.empty() || st.st_size != unsynced.size_at_sync)) {
      ++dropped_files_;
    }
    ok = ok && ftruncate(fd, unsynced.size_at_sync) == 0;
    close(fd);
    if (!ok) return Status::IOError("restore " + path + ": " + strerror(errno));
  }
  unsynced_.clear();
  return Status::OK();
}

Result<std::string> FaultVfs::DurableContents(const std::string& path) const {
  std::string contents;
  int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0) return Status::IOError("open " + path + ": " + strerror(errno));
  char buf[1 << 16];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0) {
      close(fd);
      return Status::IOError("read " + path + ": " + strerror(errno));
    }
    if (n == 0) break;
    contents.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  auto it = unsynced_.find(path);
  if (it == unsynced_.end()) return contents;
  // Undo the writes since the last sync, newest first, then the growth.
  const Unsynced& unsynced = it->second;
  for (auto w = unsynced.overwritten.rbegin(); w != unsynced.overwritten.rend(); ++w) {
    const size_t end = static_cast<size_t>(w->first) + w->second.size();
    if (contents.size() < end) contents.resize(end, '\0');
    contents.replace(static_cast<size_t>(w->first), w->second.size(), w->second);
  }
  contents.resize(static_cast<size_t>(unsynced.size_at_sync), '\0');
  return contents;
}

void FaultVfs::ForgetUnsyncedDataUnder(const std::string& prefix) {
  for (auto it = unsynced_.begin(); it != unsynced_.end();) {
    if (it->first.rfind(prefix, 0) == 0) {
      it = unsynced_.erase(it);
    } else {
      ++it;
    }
  }
}

// ---- VFS methods ------------------------------------------------------------

int FaultVfs::XOpen(sqlite3_vfs* vfs, sqlite3_filename name, sqlite3_file* f, int flags,
                    int* out_flags) {
  FaultVfs* self = Of(vfs);
  File* file = new (f) File{{nullptr}, self, name != nullptr ? std::string(name) : std::string()};
  int rc = self->base_->xOpen(self->base_, name, file->real(), flags, out_flags);
  if (rc != SQLITE_OK || file->real()->pMethods == nullptr) {
    file->~File();
    f->pMethods = nullptr;
    return rc != SQLITE_OK ? rc : SQLITE_CANTOPEN;
  }
  f->pMethods = Methods(file->real()->pMethods->iVersion);
  ++self->open_files_;
  return SQLITE_OK;
}

int FaultVfs::XDelete(sqlite3_vfs* vfs, const char* name, int sync_dir) {
  FaultVfs* self = Of(vfs);
  if (self->armed_ && self->Gone()) return SQLITE_IOERR_DELETE;
  int rc = self->base_->xDelete(self->base_, name, sync_dir);
  if (rc == SQLITE_OK) self->unsynced_.erase(name);
  return rc;
}

int FaultVfs::XAccess(sqlite3_vfs* vfs, const char* name, int flags, int* out) {
  return Of(vfs)->base_->xAccess(Of(vfs)->base_, name, flags, out);
}
int FaultVfs::XFullPathname(sqlite3_vfs* vfs, const char* name, int n, char* out) {
  return Of(vfs)->base_->xFullPathname(Of(vfs)->base_, name, n, out);
}
void* FaultVfs::XDlOpen(sqlite3_vfs* vfs, const char* name) {
  return Of(vfs)->base_->xDlOpen(Of(vfs)->base_, name);
}
void FaultVfs::XDlError(sqlite3_vfs* vfs, int n, char* out) {
  Of(vfs)->base_->xDlError(Of(vfs)->base_, n, out);
}
void (*FaultVfs::XDlSym(sqlite3_vfs* vfs, void* handle, const char* symbol))(void) {
  return Of(vfs)->base_->xDlSym(Of(vfs)->base_, handle, symbol);
}
void FaultVfs::XDlClose(sqlite3_vfs* vfs, void* handle) {
  Of(vfs)->base_->xDlClose(Of(vfs)->base_, handle);
}
int FaultVfs::XRandomness(sqlite3_vfs* vfs, int n, char* out) {
  return Of(vfs)->base_->xRandomness(Of(vfs)->base_, n, out);
}
int FaultVfs::XSleep(sqlite3_vfs* vfs, int micros) {
  return Of(vfs)->base_->xSleep(Of(vfs)->base_, micros);
}
int FaultVfs::XCurrentTime(sqlite3_vfs* vfs, double* out) {
  return Of(vfs)->base_->xCurrentTime(Of(vfs)->base_, out);
}
int FaultVfs::XGetLastError(sqlite3_vfs* vfs, int n, char* out) {
  return Of(vfs)->base_->xGetLastError(Of(vfs)->base_, n, out);
}
int FaultVfs::XCurrentTimeInt64(sqlite3_vfs* vfs, sqlite3_int64* out) {
  return Of(vfs)->base_->xCurrentTimeInt64(Of(vfs)->base_, out);
}
int FaultVfs::XSetSystemCall(sqlite3_vfs* vfs, const char* name, sqlite3_syscall_ptr call) {
  return Of(vfs)->base_->xSetSystemCall(Of(vfs)->base_, name, call);
}
sqlite3_syscall_ptr FaultVfs::XGetSystemCall(sqlite3_vfs* vfs, const char* name) {
  return Of(vfs)->base_->xGetSystemCall(Of(vfs)->base_, name);
}
const char* FaultVfs::XNextSystemCall(sqlite3_vfs* vfs, const char* name) {
  return Of(vfs)->base_->xNextSystemCall(Of(vfs)->base_, name);
}

// ---- file methods -------------------------------------------------------------

const sqlite3_io_methods* FaultVfs::Methods(int version) {
  auto make = [](int v) {
    sqlite3_io_methods m{};
    m.iVersion = v;
    m.xClose = XClose;
    m.xRead = XRead;
    m.xWrite = XWrite;
    m.xTruncate = XTruncate;
    m.xSync = XSync;
    m.xFileSize = XFileSize;
    m.xLock = XLock;
    m.xUnlock = XUnlock;
    m.xCheckReservedLock = XCheckReservedLock;
    m.xFileControl = XFileControl;
    m.xSectorSize = XSectorSize;
    m.xDeviceCharacteristics = XDeviceCharacteristics;
    if (v >= 2) {
      m.xShmMap = XShmMap;
      m.xShmLock = XShmLock;
      m.xShmBarrier = XShmBarrier;
      m.xShmUnmap = XShmUnmap;
    }
    if (v >= 3) {
      m.xFetch = XFetch;
      m.xUnfetch = XUnfetch;
    }
    return m;
  };
  // Immutable after first use.
  static const sqlite3_io_methods kMethods[] = {make(1), make(1), make(2), make(3)};
  return &kMethods[std::clamp(version, 1, 3)];
}

#define NATCD_REAL(f) (File::Of(f)->real())

int FaultVfs::XClose(sqlite3_file* f) {
  File* file = File::Of(f);
  sqlite3_file* real = file->real();
  int rc = real->pMethods->xClose(real);
  --file->owner->open_files_;
  file->~File();
  return rc;
}

int FaultVfs::XRead(sqlite3_file* f, void* out, int amount, sqlite3_int64 offset) {
  return NATCD_REAL(f)->pMethods->xRead(NATCD_REAL(f), out, amount, offset);
}

int FaultVfs::XWrite(sqlite3_file* f, const void* data, int amount, sqlite3_int64 offset) {
  File* file = File::Of(f);
  if (file->owner->Fail(Op::kWrite)) return SQLITE_IOERR_WRITE;
  int rc = file->owner->RememberOverwrite(file, offset, amount);
  if (rc != SQLITE_OK) return rc;
  return file->real()->pMethods->xWrite(file->real(), data, amount, offset);
}

int FaultVfs::XTruncate(sqlite3_file* f, sqlite3_int64 size) {
  File* file = File::Of(f);
  if (file->owner->armed_ && file->owner->Gone()) return SQLITE_IOERR_TRUNCATE;
  int rc = file->owner->RememberOverwrite(file, size, -1);
  if (rc != SQLITE_OK) return rc;
  return file->real()->pMethods->xTruncate(file->real(), size);
}

int FaultVfs::XSync(sqlite3_file* f, int flags) {
  File* file = File::Of(f);
  FaultVfs* self = file->owner;
  if (self->Fail(Op::kSync)) return SQLITE_IOERR_FSYNC;
  int rc = self->real_sync_ ? file->real()->pMethods->xSync(file->real(), flags) : SQLITE_OK;
  if (rc == SQLITE_OK && !file->path.empty()) self->unsynced_.erase(file->path);
  return rc;
}

int FaultVfs::XFileSize(sqlite3_file* f, sqlite3_int64* size) {
  return NATCD_REAL(f)->pMethods->xFileSize(NATCD_REAL(f), size);
}
int FaultVfs::XLock(sqlite3_file* f, int level) {
  return NATCD_REAL(f)->pMethods->xLock(NATCD_REAL(f), level);
}
int FaultVfs::XUnlock(sqlite3_file* f, int level) {
  return NATCD_REAL(f)->pMethods->xUnlock(NATCD_REAL(f), level);
}
int FaultVfs::XCheckReservedLock(sqlite3_file* f, int* out) {
  return NATCD_REAL(f)->pMethods->xCheckReservedLock(NATCD_REAL(f), out);
}
int FaultVfs::XFileControl(sqlite3_file* f, int op, void* arg) {
  return NATCD_REAL(f)->pMethods->xFileControl(NATCD_REAL(f), op, arg);
}
int FaultVfs::XSectorSize(sqlite3_file* f) {
  return NATCD_REAL(f)->pMethods->xSectorSize(NATCD_REAL(f));
}
int FaultVfs::XDeviceCharacteristics(sqlite3_file* f) {
  return NATCD_REAL(f)->pMethods->xDeviceCharacteristics(NATCD_REAL(f));
}
int FaultVfs::XShmMap(sqlite3_file* f, int region, int size, int extend, void volatile** out) {
  return NATCD_REAL(f)->pMethods->xShmMap(NATCD_REAL(f), region, size, extend, out);
}
int FaultVfs::XShmLock(sqlite3_file* f, int offset, int n, int flags) {
  return NATCD_REAL(f)->pMethods->xShmLock(NATCD_REAL(f), offset, n, flags);
}
void FaultVfs::XShmBarrier(sqlite3_file* f) { NATCD_REAL(f)->pMethods->xShmBarrier(NATCD_REAL(f)); }
int FaultVfs::XShmUnmap(sqlite3_file* f, int delete_flag) {
  return NATCD_REAL(f)->pMethods->xShmUnmap(NATCD_REAL(f), delete_flag);
}
int FaultVfs::XFetch(sqlite3_file* f, sqlite3_int64 offset, int amount, void** out) {
  return NATCD_REAL(f)->pMethods->xFetch(NATCD_REAL(f), offset, amount, out);
}
int FaultVfs::XUnfetch(sqlite3_file* f, sqlite3_int64 offset, void* p) {
  return NATCD_REAL(f)->pMethods->xUnfetch(NATCD_REAL(f), offset, p);
}

#undef NATCD_REAL

}  // namespace natcd::testing
