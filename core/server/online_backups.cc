#include "server/online_backups.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include "storage/backup_file.h"
#include "storage/durable_file.h"
#include "storage/sha256.h"
#include "storage/sqlite_snapshot.h"

namespace natcd::server {
namespace {

// Copies are named so; a start removes what a crash left.
constexpr std::string_view kCopyPrefix = "natcd-backup-";

void RemoveLeftovers(const std::string& dir) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return;  // no directory yet: nothing left over
  std::vector<std::string> names;
  while (dirent* e = readdir(d)) {
    std::string_view name(e->d_name);
    if (name.substr(0, kCopyPrefix.size()) == kCopyPrefix) names.emplace_back(name);
  }
  closedir(d);
  for (const std::string& name : names) (void)RemoveFileIfExists(dir + "/" + name);
}

Status PreadFully(int fd, char* buf, size_t n, uint64_t offset, const std::string& path) {
  while (n > 0) {
    ssize_t got = pread(fd, buf, n, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return ErrnoStatus("read", path, errno);
    if (got == 0) return Status::Internal("backup copy " + path + " is shorter than it was");
    buf += got;
    n -= static_cast<size_t>(got);
    offset += static_cast<uint64_t>(got);
  }
  return Status::OK();
}

}  // namespace

struct OnlineBackups::Session {
  ~Session() {
    if (fd >= 0) close(fd);
  }
  uint64_t id = 0;
  std::string path;
  std::thread copier;
  // Set by the copier before the session is ready, then fixed.
  int fd = -1;
  uint64_t database_bytes = 0;
  Sha256::Digest trailer{};
  int64_t revision = 0;
  uint64_t applied_index = 0;
  // Guarded by OnlineBackups::mu_.
  bool ready = false;
  int64_t last_used_ms = 0;
};

OnlineBackups::OnlineBackups(OnlineBackupOptions options, Clock* clock)
    : options_(std::move(options)), clock_(clock), rng_(std::random_device{}()) {
  RemoveLeftovers(options_.dir);
}

OnlineBackups::~OnlineBackups() { Close(); }

void OnlineBackups::Close() {
  std::map<uint64_t, std::shared_ptr<Session>> sessions;
  {
    MutexLock lock(&mu_);
    closed_ = true;
    sessions.swap(sessions_);
  }
  for (auto& [id, session] : sessions) Dispose(std::move(session));
}

Status OnlineBackups::Begin(size_t chunk_bytes, Ready ready) {
  if (chunk_bytes == 0) return Status::InvalidArgument("ErrInvalidArgument", "chunk size 0");
  MutexLock lock(&mu_);
  if (closed_) return Status::Unavailable("ErrStopped", "etcdserver: server stopped");
  if (sessions_.size() >= options_.sessions_max) {
    return Status(Status::Code::kTooManyRequests, "ErrTooManyRequests",
                  "etcdserver: too many requests: " + std::to_string(sessions_.size()) +
                      " backups under way on this member");
  }
  auto session = std::make_shared<Session>();
  do {
    session->id = rng_() >> 1;
  } while (session->id == 0 || sessions_.count(session->id) > 0);
  session->path = options_.dir + "/" + std::string(kCopyPrefix) + std::to_string(session->id);
  session->last_used_ms = clock_->MonotonicMs();
  Session* raw = session.get();
  sessions_[session->id] = session;
  // The thread gets the raw pointer: the session outlives it (Dispose
  // joins it before letting go).
  raw->copier = std::thread(
      [this, raw, chunk_bytes, ready = std::move(ready)] { Copy(raw, chunk_bytes, ready); });
  return Status::OK();
}

void OnlineBackups::Copy(Session* session, size_t chunk_bytes, const Ready& ready) {
  auto fail = [&](const Status& why) {
    std::shared_ptr<Session> gone;
    {
      MutexLock lock(&mu_);
      auto it = sessions_.find(session->id);
      if (it != sessions_.end()) {
        gone = std::move(it->second);
        sessions_.erase(it);
      }
    }
    ready(why);
    // Dispose sees it is on this very thread and detaches it.
    if (gone) Dispose(std::move(gone));
  };
  Result<uint64_t> copied = WriteDatabaseSnapshot(options_.db_path, session->path);
  if (!copied.ok()) return fail(copied.status());
  // The revision, read from the copy: the live database has moved on.
  Result<DatabaseFacts> facts = ReadDatabaseFacts(session->path, /*quick_check=*/false);
  if (!facts.ok()) return fail(facts.status());
  const int fd = open(session->path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail(ErrnoStatus("open", session->path, errno));
  session->fd = fd;
  // The trailer: one more pass over the copy, on this thread.
  Sha256 sha;
  std::vector<char> buf(1 << 20);
  uint64_t size = 0;
  for (;;) {
    ssize_t got = pread(fd, buf.data(), buf.size(), static_cast<off_t>(size));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return fail(ErrnoStatus("read", session->path, errno));
    if (got == 0) break;
    sha.Update(buf.data(), static_cast<size_t>(got));
    size += static_cast<uint64_t>(got);
  }
  session->database_bytes = size;
  session->trailer = sha.Final();
  session->revision = facts->revision;
  session->applied_index = facts->applied_index;
  std::shared_ptr<Session> held;
  {
    MutexLock lock(&mu_);
    auto it = sessions_.find(session->id);
    if (it == sessions_.end()) return;  // ended meanwhile (shutdown)
    held = it->second;
    held->ready = true;
    held->last_used_ms = clock_->MonotonicMs();
  }
  ready(ReadFrom(*held, 0, chunk_bytes));
}

Result<BackupChunk> OnlineBackups::Read(uint64_t id, uint64_t offset, size_t chunk_bytes) {
  if (chunk_bytes == 0) return Status::InvalidArgument("ErrInvalidArgument", "chunk size 0");
  std::shared_ptr<Session> session;
  {
    MutexLock lock(&mu_);
    auto it = sessions_.find(id);
    if (it == sessions_.end() || !it->second->ready) {
      return Status::NotFound("ErrBackupNotFound", "no backup " + std::to_string(id) +
                                                       " on this member (ended, or dropped after " +
                                                       std::to_string(options_.idle_timeout_ms) +
                                                       " ms unread)");
    }
    session = it->second;
    session->last_used_ms = clock_->MonotonicMs();
  }
  return ReadFrom(*session, offset, chunk_bytes);
}

Result<BackupChunk> OnlineBackups::ReadFrom(const Session& session, uint64_t offset,
                                            size_t chunk_bytes) {
  const uint64_t total = session.database_bytes + kBackupTrailerBytes;
  if (offset > total) {
    return Status::InvalidArgument("ErrInvalidArgument", "offset " + std::to_string(offset) +
                                                             " is past the backup's " +
                                                             std::to_string(total) + " bytes");
  }
  BackupChunk chunk;
  chunk.backup_id = session.id;
  chunk.offset = offset;
  chunk.total_bytes = total;
  chunk.revision = session.revision;
  chunk.applied_index = session.applied_index;
  const uint64_t n = std::min<uint64_t>(chunk_bytes, total - offset);
  chunk.blob.resize(static_cast<size_t>(n));
  // The database part from the file, the rest from the trailer.
  const uint64_t from_file =
      offset < session.database_bytes ? std::min(n, session.database_bytes - offset) : 0;
  if (from_file > 0) {
    NATCD_RETURN_IF_ERROR(PreadFully(session.fd, chunk.blob.data(), static_cast<size_t>(from_file),
                                     offset, session.path));
  }
  for (uint64_t i = from_file; i < n; ++i) {
    chunk.blob[static_cast<size_t>(i)] = static_cast<char>(
        session.trailer[static_cast<size_t>(offset + i - session.database_bytes)]);
  }
  chunk.remaining_bytes = total - offset - n;
  return chunk;
}

void OnlineBackups::End(uint64_t id) {
  std::shared_ptr<Session> gone;
  {
    MutexLock lock(&mu_);
    auto it = sessions_.find(id);
    // A copy under way is not ended under its copier: its client has not
    // even had the first chunk.
    if (it == sessions_.end() || !it->second->ready) return;
    gone = std::move(it->second);
    sessions_.erase(it);
  }
  Dispose(std::move(gone));
}

void OnlineBackups::ExpireIdle() {
  std::vector<std::shared_ptr<Session>> gone;
  {
    MutexLock lock(&mu_);
    const int64_t now = clock_->MonotonicMs();
    for (auto it = sessions_.begin(); it != sessions_.end();) {
      if (it->second->ready && now - it->second->last_used_ms >= options_.idle_timeout_ms) {
        gone.push_back(std::move(it->second));
        it = sessions_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& session : gone) Dispose(std::move(session));
}

size_t OnlineBackups::open_count() const {
  MutexLock lock(&mu_);
  return sessions_.size();
}

void OnlineBackups::Dispose(std::shared_ptr<Session> session) {
  if (session->copier.joinable()) {
    if (session->copier.get_id() == std::this_thread::get_id()) {
      session->copier.detach();  // its last step: nothing of the session follows
    } else {
      session->copier.join();
    }
  }
  (void)RemoveFileIfExists(session->path);
  (void)RemoveFileIfExists(session->path + ".tmp");
}

}  // namespace natcd::server
