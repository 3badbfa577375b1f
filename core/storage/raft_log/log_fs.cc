#include "storage/raft_log/log_fs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "storage/durable_file.h"

namespace natcd::raftlog {
namespace {

constexpr uint64_t kZeroChunkBytes = 1 << 20;

class PosixLogFile final : public LogFile {
 public:
  PosixLogFile(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  ~PosixLogFile() override { close(fd_); }
  PosixLogFile(const PosixLogFile&) = delete;
  PosixLogFile& operator=(const PosixLogFile&) = delete;

  Status Read(uint64_t offset, size_t n, std::string* out) override {
    out->resize(n);
    size_t done = 0;
    while (done < n) {
      ssize_t r = pread(fd_, out->data() + done, n - done, static_cast<off_t>(offset + done));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) return ErrnoStatus("pread", path_, errno);
      if (r == 0) {
        return Status::IOError("pread " + path_ + ": end of file at offset " +
                               std::to_string(offset + done));
      }
      done += static_cast<size_t>(r);
    }
    return Status::OK();
  }

  Status Write(uint64_t offset, std::string_view data) override {
    size_t done = 0;
    while (done < data.size()) {
      ssize_t r =
          pwrite(fd_, data.data() + done, data.size() - done, static_cast<off_t>(offset + done));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) return ErrnoStatus("pwrite", path_, errno);
      done += static_cast<size_t>(r);
    }
    return Status::OK();
  }

  Status Sync() override {
    if (fdatasync(fd_) != 0) return ErrnoStatus("fdatasync", path_, errno);
    return Status::OK();
  }

  Status Truncate(uint64_t size) override {
    if (ftruncate(fd_, static_cast<off_t>(size)) != 0) {
      return ErrnoStatus("ftruncate", path_, errno);
    }
    return Status::OK();
  }

  Status Preallocate(uint64_t size) override {
    Result<uint64_t> now = Size();
    if (!now.ok()) return now.status();
    if (now.value() >= size) return Status::OK();
    // fallocate first, for blocks allocated together; then zeros written
    // over them, as ext4 leaves fallocated extents "unwritten" and the
    // first write into each would make fdatasync commit the journal.
    if (fallocate(fd_, 0, 0, static_cast<off_t>(size)) != 0) {
      int err = errno;
      if (err != EOPNOTSUPP && err != ENOSYS) return ErrnoStatus("fallocate", path_, err);
    }
    const std::string zeros(std::min<uint64_t>(size - now.value(), kZeroChunkBytes), '\0');
    for (uint64_t at = now.value(); at < size; at += zeros.size()) {
      Status s =
          Write(at, std::string_view(zeros).substr(0, std::min<uint64_t>(size - at, zeros.size())));
      if (!s.ok()) return s;
    }
    return Status::OK();
  }

  Result<uint64_t> Size() override {
    struct stat st;
    if (fstat(fd_, &st) != 0) return ErrnoStatus("fstat", path_, errno);
    return static_cast<uint64_t>(st.st_size);
  }

 private:
  int fd_;
  std::string path_;
};

}  // namespace

Result<std::unique_ptr<LogFile>> PosixLogFs::OpenFile(const std::string& path, bool create) {
  int flags = O_RDWR | O_CLOEXEC | (create ? O_CREAT : 0);
  int fd;
  do {
    fd = open(path.c_str(), flags, 0644);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    int err = errno;
    if (err == ENOENT && !create) return Status::NotFound("ErrNotFound", "no file " + path);
    return ErrnoStatus("open", path, err);
  }
  return std::unique_ptr<LogFile>(std::make_unique<PosixLogFile>(fd, path));
}

Result<std::vector<std::string>> PosixLogFs::ListDir(const std::string& dir) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return ErrnoStatus("opendir", dir, errno);
  std::vector<std::string> names;
  errno = 0;
  while (struct dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(std::move(name));
  }
  int err = errno;
  closedir(d);
  if (err != 0) return ErrnoStatus("readdir", dir, err);
  return names;
}

Status PosixLogFs::CreateDir(const std::string& dir) {
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) return ErrnoStatus("mkdir", dir, errno);
  return Status::OK();
}

Status PosixLogFs::Rename(const std::string& from, const std::string& to) {
  if (rename(from.c_str(), to.c_str()) != 0) {
    int err = errno;  // before the message's allocations can change it
    return ErrnoStatus("rename to " + to + " from", from, err);
  }
  return Status::OK();
}

Status PosixLogFs::Remove(const std::string& path) {
  if (unlink(path.c_str()) != 0) return ErrnoStatus("unlink", path, errno);
  return Status::OK();
}

Status PosixLogFs::SyncDir(const std::string& dir) {
  int fd;
  do {
    fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return ErrnoStatus("open", dir, errno);
  Status s;
  if (fsync(fd) != 0) s = ErrnoStatus("fsync", dir, errno);
  close(fd);
  return s;
}

}  // namespace natcd::raftlog
